// Deposit and withdrawal rows for the history store: one row per journal record
// that changed a deposit or a withdrawal, carrying its state right after that
// record (read from the exchange inside its apply listener, so it is exact).
import type { DuckDBAppender, DuckDBConnection } from "@duckdb/node-api"
import { duckdb } from "./duckdb.ts"
import type { JournalRecord } from "../service/commands.ts"
import type { DepositRecord } from "../service/deposits.ts"
import type { Exchange } from "../service/exchange.ts"
import type { PaidDay } from "../service/rewards-book.ts"
import { type WithdrawalRecord, withdrawalId } from "../service/withdrawals.ts"

export interface DepositRow {
  readonly seq: number
  readonly time: number
  readonly depositKey: string
  readonly txSignature: string
  readonly logIndex: number
  readonly wallet: string | null
  readonly user: string | null
  readonly token: string | null
  readonly amountMicro: number | null
  /** The deposit's stage, or `reorged` when the record removed it. */
  readonly stage: string
  readonly error: string | null
  readonly seenAt: number | null
  readonly creditedAt: number | null
}

export interface WithdrawalRow {
  readonly seq: number
  readonly time: number
  readonly id: string
  readonly user: string
  readonly recipient: string
  readonly amountMicro: number
  readonly withdrawNonce: number
  readonly status: string
  readonly txSignature: string | null
  readonly createdAt: number
  readonly confirmedAt: number | null
  readonly error: string | null
}

const depositRow = (r: JournalRecord, d: DepositRecord): DepositRow => ({
  seq: r.seq,
  time: r.tsSec,
  depositKey: d.key,
  txSignature: d.txHash,
  logIndex: Number(d.key.slice(d.key.lastIndexOf(":") + 1)),
  wallet: d.wallet,
  user: d.user,
  token: d.token,
  amountMicro: d.amountMicro,
  stage: d.stage,
  error: d.error,
  seenAt: d.seenAtSec,
  creditedAt: d.creditedAtSec
})

const withdrawalRow = (r: JournalRecord, w: WithdrawalRecord): WithdrawalRow => ({
  seq: r.seq,
  time: r.tsSec,
  id: w.id,
  user: w.user,
  recipient: w.recipient,
  amountMicro: w.amountMicro,
  withdrawNonce: w.nonce,
  status: w.status,
  txSignature: w.txHash,
  createdAt: w.createdAtSec,
  confirmedAt: w.confirmedAtSec,
  error: w.error
})

/** The rows of records that touch neither book (orders, cancels, most records): shared, never written to. */
const NO_ROWS: { readonly deposits: readonly DepositRow[]; readonly withdrawals: readonly WithdrawalRow[] } = Object.freeze({
  deposits: Object.freeze([]),
  withdrawals: Object.freeze([])
})

const depositRows = (r: JournalRecord, x: Exchange, key: string): DepositRow[] => {
  const d = x.deposits.byKey.get(key)
  return d === undefined ? [] : [depositRow(r, d)]
}

const withdrawalRows = (r: JournalRecord, x: Exchange, id: string): WithdrawalRow[] => {
  const w = x.withdrawals.byId.get(id)
  return w === undefined ? [] : [withdrawalRow(r, w)]
}

/**
 * The rows a just-applied record produced (none for records that touch neither book). Runs for
 * every record: no closures made per call (each cost a `__name` under tsx, ~2% of a signed
 * order's main-thread time), and one shared empty answer for the records that touch neither.
 */
export const ledgerRows = (r: JournalRecord, x: Exchange): { readonly deposits: readonly DepositRow[]; readonly withdrawals: readonly WithdrawalRow[] } => {
  const cmd = r.cmd
  switch (cmd.type) {
    case "deposit_detected":
      return { deposits: depositRows(r, x, `${cmd.txHash}:${cmd.logIndex}`), withdrawals: [] }
    case "deposit_confirming":
    case "deposit_confirmed":
      return { deposits: depositRows(r, x, cmd.key), withdrawals: [] }
    case "deposit_reorged": {
      if (x.deposits.byKey.has(cmd.key)) return NO_ROWS
      const at = cmd.key.lastIndexOf(":")
      const row: DepositRow = {
        seq: r.seq, time: r.tsSec, depositKey: cmd.key, txSignature: cmd.key.slice(0, at), logIndex: Number(cmd.key.slice(at + 1)),
        wallet: null, user: null, token: null, amountMicro: null, stage: "reorged", error: null, seenAt: null, creditedAt: null
      }
      return { deposits: [row], withdrawals: [] }
    }
    case "link_wallet": {
      // Deposits waiting for this link are credited by it.
      const deposits: DepositRow[] = []
      for (const d of x.deposits.ofWallet(cmd.wallet)) if (d.creditedAtSec === r.tsSec && d.user === cmd.user) deposits.push(depositRow(r, d))
      return { deposits, withdrawals: [] }
    }
    case "withdraw": {
      const id = withdrawalId(cmd.user, cmd.withdrawNonce)
      return x.withdrawals.byId.get(id)?.createdAtSec === r.tsSec ? { deposits: [], withdrawals: withdrawalRows(r, x, id) } : NO_ROWS
    }
    case "withdrawal_sent":
    case "withdrawal_confirmed":
    case "withdrawal_refunded":
      return { deposits: [], withdrawals: withdrawalRows(r, x, cmd.id) }
    default:
      return NO_ROWS
  }
}

/** One paid maker of one UTC day (`day`: days since 1970-01-01), written by the record that paid it. */
export interface RewardRow {
  readonly seq: number
  readonly day: number
  readonly maker: string
  readonly microUsdc: number
  readonly score: number
}

export const rewardRows = (r: JournalRecord, paid: PaidDay | undefined): RewardRow[] =>
  paid === undefined ? [] : paid.payouts.map((p) => ({ seq: r.seq, day: paid.day, maker: p.maker, microUsdc: p.amountMicro, score: p.score }))

/** One `rewards` row, in the table's column order. */
export const appendRewardRow = (app: DuckDBAppender, w: RewardRow): void => {
  app.appendBigInt(BigInt(w.seq))
  app.appendDate(new (duckdb().DuckDBDateValue)(w.day))
  app.appendVarchar(w.maker)
  app.appendBigInt(BigInt(w.microUsdc))
  app.appendDouble(w.score)
}

/** Appends a value or SQL NULL. */
const nullable = <T>(app: DuckDBAppender, value: T | null, append: (v: T) => void): void => {
  if (value === null) app.appendNull()
  else append(value)
}
const big = (n: number | null): bigint | null => (n === null ? null : BigInt(n))

/** One `deposits` row, in the table's column order. */
export const appendDepositRow = (app: DuckDBAppender, d: DepositRow): void => {
  app.appendBigInt(BigInt(d.seq))
  app.appendBigInt(BigInt(d.time))
  app.appendVarchar(d.depositKey)
  app.appendVarchar(d.txSignature)
  app.appendInteger(d.logIndex)
  nullable(app, d.wallet, (v) => app.appendVarchar(v))
  nullable(app, d.user, (v) => app.appendVarchar(v))
  nullable(app, d.token, (v) => app.appendVarchar(v))
  nullable(app, big(d.amountMicro), (v) => app.appendBigInt(v))
  app.appendVarchar(d.stage)
  nullable(app, d.error, (v) => app.appendVarchar(v))
  nullable(app, big(d.seenAt), (v) => app.appendBigInt(v))
  nullable(app, big(d.creditedAt), (v) => app.appendBigInt(v))
}

/** One `withdrawals` row, in the table's column order. */
export const appendWithdrawalRow = (app: DuckDBAppender, w: WithdrawalRow): void => {
  app.appendBigInt(BigInt(w.seq))
  app.appendBigInt(BigInt(w.time))
  app.appendVarchar(w.id)
  app.appendVarchar(w.user)
  app.appendVarchar(w.recipient)
  app.appendVarchar("native")
  app.appendBigInt(BigInt(w.amountMicro))
  app.appendBigInt(BigInt(w.withdrawNonce))
  app.appendVarchar(w.status)
  nullable(app, w.txSignature, (v) => app.appendVarchar(v))
  app.appendBigInt(BigInt(w.createdAt))
  nullable(app, big(w.confirmedAt), (v) => app.appendBigInt(v))
  nullable(app, w.error, (v) => app.appendVarchar(v))
}

/** Bulk-appends rows to `table` with DuckDB's appender. */
export const appendRows = async <R>(conn: DuckDBConnection, table: string, rows: ReadonlyArray<R>, append: (app: DuckDBAppender, row: R) => void): Promise<void> => {
  const app = await conn.createAppender(table)
  try {
    for (const row of rows) {
      append(app, row)
      app.endRow()
    }
    app.flushSync()
  } finally {
    app.closeSync()
  }
}
