// Deposit and withdrawal rows for the history store: one row per journal record
// that changed a deposit or a withdrawal, carrying its state right after that
// record (read from the exchange inside its apply listener, so it is exact).
import { type DuckDBAppender, type DuckDBConnection, DuckDBDateValue } from "@duckdb/node-api"
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

/** The rows a just-applied record produced (none for records that touch neither book). */
export const ledgerRows = (r: JournalRecord, x: Exchange): { deposits: DepositRow[]; withdrawals: WithdrawalRow[] } => {
  const deposits: DepositRow[] = []
  const withdrawals: WithdrawalRow[] = []
  const cmd = r.cmd
  const deposit = (key: string): void => {
    const d = x.deposits.byKey.get(key)
    if (d !== undefined) deposits.push(depositRow(r, d))
  }
  const withdrawal = (id: string): void => {
    const w = x.withdrawals.byId.get(id)
    if (w !== undefined) withdrawals.push(withdrawalRow(r, w))
  }
  switch (cmd.type) {
    case "deposit_detected":
      deposit(`${cmd.txHash}:${cmd.logIndex}`)
      break
    case "deposit_confirming":
    case "deposit_confirmed":
      deposit(cmd.key)
      break
    case "deposit_reorged":
      if (!x.deposits.byKey.has(cmd.key)) {
        const at = cmd.key.lastIndexOf(":")
        deposits.push({
          seq: r.seq, time: r.tsSec, depositKey: cmd.key, txSignature: cmd.key.slice(0, at), logIndex: Number(cmd.key.slice(at + 1)),
          wallet: null, user: null, token: null, amountMicro: null, stage: "reorged", error: null, seenAt: null, creditedAt: null
        })
      }
      break
    case "link_wallet":
      // Deposits waiting for this link are credited by it.
      for (const d of x.deposits.ofWallet(cmd.wallet)) if (d.creditedAtSec === r.tsSec && d.user === cmd.user) deposits.push(depositRow(r, d))
      break
    case "withdraw":
      if (x.withdrawals.byId.get(withdrawalId(cmd.user, cmd.withdrawNonce))?.createdAtSec === r.tsSec) withdrawal(withdrawalId(cmd.user, cmd.withdrawNonce))
      break
    case "withdrawal_sent":
    case "withdrawal_confirmed":
    case "withdrawal_refunded":
      withdrawal(cmd.id)
      break
  }
  return { deposits, withdrawals }
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
  app.appendDate(new DuckDBDateValue(w.day))
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
