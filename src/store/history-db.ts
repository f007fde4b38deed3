// The history store: trades, deposits, withdrawals and paid LP rewards projected
// from the journal into a DuckDB file, DATA_DIR/history.duckdb, for start-up seeding of
// the in-memory History, rebuilds and analyst exports (Parquet / CSV).
//
// Exactly once. `meta.projected_seq` (P) is the journal seq through which every
// record's rows are in the file. `record` buffers the rows of records with seq > P;
// `flush` appends them with the Appender and sets P in one transaction. `open` also
// deletes any row with seq > P, so a file in which rows landed without their P update
// (a crash between the two, had they been separate) re-projects those records cleanly
// instead of duplicating them. Trade ids are a primary key besides.
//
// The caller decides what may be flushed: only records that are durable in the
// journal (see `flush(throughSeq)`), so the store is never ahead of the journal.
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import type { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement, DuckDBValue } from "@duckdb/node-api"
import { duckdb } from "./duckdb.ts"
import type { FillEvent } from "../engine/types.ts"
import type { JournalRecord } from "../service/commands.ts"
import type { ApplyResult, Exchange } from "../service/exchange.ts"
import { appendDepositRow, appendRewardRow, appendRows, appendWithdrawalRow, type DepositRow, ledgerRows, type RewardRow, rewardRows, type WithdrawalRow } from "./ledger-rows.ts"
import { type Candle, INTERVALS, type Interval, type TradeRecord, tradeFromFill } from "../service/history.ts"

export const HISTORY_SCHEMA_VERSION = 2

/** A trade as stored: the TradeRecord, the journal seq that produced it, and the maker's side of the fill. */
export interface TradeRow extends TradeRecord {
  readonly seq: number
  readonly taker_order_id: number
  readonly maker_order_id: number
  readonly maker_side: "buy" | "sell"
  readonly maker_outcome: "yes" | "no"
  /** Maker's own-outcome price, bps. */
  readonly maker_price: number
  readonly taker_builder_fee: number
  readonly maker_builder_fee: number
}

// Column order is the appender's order.
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS trades (
    id BIGINT PRIMARY KEY,
    seq BIGINT NOT NULL,
    price INTEGER NOT NULL,
    size BIGINT NOT NULL,
    side VARCHAR NOT NULL,
    time BIGINT NOT NULL,
    market_id VARCHAR NOT NULL,
    maker VARCHAR NOT NULL,
    taker VARCHAR NOT NULL,
    fee BIGINT NOT NULL,
    builder_fee BIGINT NOT NULL,
    outcome VARCHAR NOT NULL,
    yes_price INTEGER NOT NULL,
    kind VARCHAR NOT NULL,
    maker_rebate BIGINT NOT NULL,
    taker_order_id BIGINT NOT NULL,
    maker_order_id BIGINT NOT NULL,
    maker_side VARCHAR NOT NULL,
    maker_outcome VARCHAR NOT NULL,
    maker_price INTEGER NOT NULL,
    taker_builder_fee BIGINT NOT NULL,
    maker_builder_fee BIGINT NOT NULL
  )`,
  // Deposits as a change log: one row per journal record that changed a deposit, with its
  // state after that record (stage `reorged` when a reorg removed it). deposits_latest is the
  // current state, in SPEC §2's row shape plus the key, stage and error.
  `CREATE TABLE IF NOT EXISTS deposits (
    seq BIGINT NOT NULL,
    time BIGINT NOT NULL,
    deposit_key VARCHAR NOT NULL,
    tx_signature VARCHAR NOT NULL,
    log_index INTEGER NOT NULL,
    wallet VARCHAR,
    user VARCHAR,
    token VARCHAR,
    amount_micro BIGINT,
    stage VARCHAR NOT NULL,
    error VARCHAR,
    seen_at BIGINT,
    credited_at BIGINT
  )`,
  `CREATE OR REPLACE VIEW deposits_latest AS
    SELECT deposit_key, tx_signature, log_index, wallet, user, token, amount_micro, seen_at, credited_at, stage,
           CASE stage WHEN 'credited' THEN 'credited' WHEN 'error' THEN 'error' ELSE 'pending' END AS status, error, seq
    FROM (SELECT *, row_number() OVER (PARTITION BY deposit_key ORDER BY seq DESC) AS rn FROM deposits)
    WHERE rn = 1 AND stage <> 'reorged'`,
  // Withdrawals as a change log, like deposits; withdrawals_latest in SPEC §2's row shape.
  `CREATE TABLE IF NOT EXISTS withdrawals (
    seq BIGINT NOT NULL,
    time BIGINT NOT NULL,
    id VARCHAR NOT NULL,
    user VARCHAR NOT NULL,
    recipient VARCHAR NOT NULL,
    chain VARCHAR NOT NULL,
    amount_micro BIGINT NOT NULL,
    withdraw_nonce BIGINT NOT NULL,
    status VARCHAR NOT NULL,
    tx_signature VARCHAR,
    created_at BIGINT NOT NULL,
    confirmed_at BIGINT,
    error VARCHAR
  )`,
  `CREATE OR REPLACE VIEW withdrawals_latest AS
    SELECT id, user, recipient, chain, amount_micro, withdraw_nonce, status, tx_signature, created_at, confirmed_at, error, seq
    FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY seq DESC) AS rn FROM withdrawals)
    WHERE rn = 1`,
  // One row per maker per UTC day paid; the leaderboard (rank, maker, micro_usdc, score,
  // days_active) is an aggregate over these.
  `CREATE TABLE IF NOT EXISTS rewards (
    seq BIGINT NOT NULL,
    day DATE NOT NULL,
    maker VARCHAR NOT NULL,
    micro_usdc BIGINT NOT NULL,
    score DOUBLE NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS meta (projected_seq BIGINT NOT NULL, schema_version INTEGER NOT NULL)`,
  // Per-user fills: each trade seen from the taker's and from the maker's side.
  `CREATE OR REPLACE VIEW fills AS
    SELECT seq, id AS trade_id, time, market_id, taker AS user, 'taker' AS role, side, outcome, price, size,
           fee, taker_builder_fee AS builder_fee, 0::BIGINT AS rebate, kind
    FROM trades
    UNION ALL
    SELECT seq, id, time, market_id, maker, 'maker', maker_side, maker_outcome, maker_price, size,
           0::BIGINT, maker_builder_fee, maker_rebate, kind
    FROM trades`,
  // candles(width_sec): every market's candles, as History computes them.
  `CREATE OR REPLACE MACRO candles(width) AS TABLE ${candleSelect("width", "TRUE", true)}`
]

/**
 * Candles over `trades`, History's rule: bucket t = time − time mod width; YES price =
 * yes_price / 10000; o / c = the first / last trade by id; v = contracts, n = trades.
 */
function candleSelect(width: string, where: string, withMarket: boolean): string {
  return `SELECT ${withMarket ? "market_id, " : ""}time - time % ${width} AS t,
      arg_min(yes_price, id)::DOUBLE / 10000 AS o,
      max(yes_price)::DOUBLE / 10000 AS h,
      min(yes_price)::DOUBLE / 10000 AS l,
      arg_max(yes_price, id)::DOUBLE / 10000 AS c,
      sum(size)::BIGINT AS v,
      count(*)::BIGINT AS n
    FROM trades WHERE ${where}
    GROUP BY ${withMarket ? "market_id, " : ""}t
    ORDER BY ${withMarket ? "market_id, " : ""}t`
}

const TRADE_COLUMNS = "id, price, size, side, time, market_id, maker, taker, fee, builder_fee, outcome, yes_price, kind, maker_rebate"

const num = (v: DuckDBValue): number => (typeof v === "bigint" ? Number(v) : (v as number))
const str = <T extends string>(v: DuckDBValue): T => v as T

/** Same keys in the same order as `tradeFromFill`, so JSON of a seeded trade equals the live one. */
const tradeFromRow = (r: DuckDBValue[]): TradeRecord => ({
  id: num(r[0]!),
  price: num(r[1]!),
  size: num(r[2]!),
  side: str(r[3]!),
  time: num(r[4]!),
  market_id: str(r[5]!),
  maker: str(r[6]!),
  taker: str(r[7]!),
  fee: num(r[8]!),
  builder_fee: num(r[9]!),
  outcome: str(r[10]!),
  yes_price: num(r[11]!),
  kind: str(r[12]!),
  maker_rebate: num(r[13]!)
})

interface PendingFill {
  readonly seq: number
  readonly fill: FillEvent
}

export interface OpenReport {
  /** Rows found past `projected_seq` and deleted at open (left by an interrupted write). */
  readonly discardedRows: number
}

export class HistoryStore {
  private pending: PendingFill[] = []
  private pendingDeposits: DepositRow[] = []
  private pendingWithdrawals: WithdrawalRow[] = []
  private pendingRewards: RewardRow[] = []
  private recorded: number
  private projected: number
  private failure: Error | null = null
  private queue: Promise<unknown> = Promise.resolve()
  private closed = false
  private closing: Promise<void> | null = null
  private readonly statements = new Map<string, DuckDBPreparedStatement>()

  private constructor(
    readonly path: string,
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
    projectedSeq: number,
    readonly openReport: OpenReport
  ) {
    this.projected = projectedSeq
    this.recorded = projectedSeq
  }

  /** Opens (creating when absent) the store at `path`; drops rows an interrupted write left past `projected_seq`. */
  static async open(path: string, opts: { readOnly?: boolean } = {}): Promise<HistoryStore> {
    if (opts.readOnly !== true) mkdirSync(dirname(path), { recursive: true })
    const instance = await duckdb().DuckDBInstance.create(path, opts.readOnly === true ? { access_mode: "READ_ONLY" } : {})
    let conn: DuckDBConnection | null = null
    try {
      conn = await instance.connect()
      if (opts.readOnly !== true) {
        // Version 1 files had deposits/withdrawals tables that were never written: replace them.
        const old = await conn.runAndReadAll("SELECT 1 FROM information_schema.tables WHERE table_name = 'meta'")
        if (old.getRows().length === 1 && num((await conn.runAndReadAll("SELECT schema_version FROM meta")).getRows()[0]![0]!) === 1) {
          await conn.run("DROP TABLE IF EXISTS deposits")
          await conn.run("DROP TABLE IF EXISTS withdrawals")
          await conn.run(`UPDATE meta SET schema_version = ${HISTORY_SCHEMA_VERSION}`)
        }
        for (const sql of SCHEMA) await conn.run(sql)
        await conn.run(`INSERT INTO meta SELECT 0, ${HISTORY_SCHEMA_VERSION} WHERE NOT EXISTS (SELECT 1 FROM meta)`)
      }
      const meta = (await conn.runAndReadAll("SELECT projected_seq, schema_version FROM meta")).getRows()
      if (meta.length !== 1) throw new Error(`history store ${path}: meta has ${meta.length} rows, expected 1`)
      const [seqValue, version] = meta[0]!
      if (num(version!) !== HISTORY_SCHEMA_VERSION) {
        throw new Error(`history store ${path}: schema version ${String(version)}, expected ${HISTORY_SCHEMA_VERSION} (run npm run rebuild-history)`)
      }
      const projected = num(seqValue!)
      let discardedRows = 0
      if (opts.readOnly !== true) {
        await conn.run("BEGIN TRANSACTION")
        for (const table of ["trades", "deposits", "withdrawals", "rewards"]) {
          discardedRows += (await conn.run(`DELETE FROM ${table} WHERE seq > $1`, [BigInt(projected)])).rowsChanged
        }
        await conn.run("COMMIT")
      }
      return new HistoryStore(path, instance, conn, projected, { discardedRows })
    } catch (err) {
      conn?.closeSync()
      instance.closeSync()
      throw err
    }
  }

  /** Journal seq through which the file holds every record's rows. */
  get projectedSeq(): number {
    return this.projected
  }

  /** Highest journal seq handed to `record` (buffered or flushed). */
  get recordedSeq(): number {
    return this.recorded
  }

  get pendingRows(): number {
    return this.pending.length
  }

  /**
   * An `Exchange.onApply` listener: buffers the fills of a record not yet projected, and —
   * given the exchange, read right after the record applied — its deposit and withdrawal rows;
   * a `pay_rewards` record's paid makers.
   */
  record(record: JournalRecord, result: ApplyResult, exchange?: Exchange): void {
    if (record.seq <= this.recorded || this.failure !== null) return
    if (record.seq !== this.recorded + 1) {
      // A missed record would silently lose its trades: stop projecting; `flush` reports it.
      this.failure = new Error(`history store: record ${record.seq} after ${this.recorded}; record ${this.recorded + 1} was never projected`)
      return
    }
    this.recorded = record.seq
    for (const ev of result.events) if (ev.type === "fill") this.pending.push({ seq: record.seq, fill: ev })
    if (exchange !== undefined) {
      const rows = ledgerRows(record, exchange)
      for (const d of rows.deposits) this.pendingDeposits.push(d)
      for (const w of rows.withdrawals) this.pendingWithdrawals.push(w)
    }
    if (result.paid !== undefined) for (const row of rewardRows(record, result.paid)) this.pendingRewards.push(row)
  }

  /** Appends buffered deposit, withdrawal and reward rows through `target` (inside flush's transaction). */
  private async appendLedgerRows(target: number): Promise<[number, number, number]> {
    let nd = 0
    while (nd < this.pendingDeposits.length && this.pendingDeposits[nd]!.seq <= target) nd++
    let nw = 0
    while (nw < this.pendingWithdrawals.length && this.pendingWithdrawals[nw]!.seq <= target) nw++
    if (nd > 0) await appendRows(this.conn, "deposits", this.pendingDeposits.slice(0, nd), appendDepositRow)
    if (nw > 0) await appendRows(this.conn, "withdrawals", this.pendingWithdrawals.slice(0, nw), appendWithdrawalRow)
    let nr = 0
    while (nr < this.pendingRewards.length && this.pendingRewards[nr]!.seq <= target) nr++
    if (nr > 0) await appendRows(this.conn, "rewards", this.pendingRewards.slice(0, nr), appendRewardRow)
    return [nd, nw, nr]
  }

  /**
   * Appends the buffered rows of records with seq ≤ `throughSeq` (bulk, via the
   * Appender) and advances `projected_seq`, in one transaction. Pass the highest seq
   * known to be durable in the journal.
   */
  flush(throughSeq: number = Number.POSITIVE_INFINITY): Promise<void> {
    return this.exclusive(async () => {
      if (this.failure !== null) throw this.failure
      const target = Math.min(throughSeq, this.recorded)
      if (target <= this.projected) return
      let n = 0
      while (n < this.pending.length && this.pending[n]!.seq <= target) n++
      const rows = this.pending.slice(0, n)
      await this.conn.run("BEGIN TRANSACTION")
      try {
        if (rows.length > 0) {
          const app = await this.conn.createAppender("trades")
          try {
            for (const { seq, fill: f } of rows) {
              // The TradeRecord columns come from tradeFromFill: one mapping, live and stored.
              const t = tradeFromFill(f)
              app.appendBigInt(BigInt(t.id))
              app.appendBigInt(BigInt(seq))
              app.appendInteger(t.price)
              app.appendBigInt(BigInt(t.size))
              app.appendVarchar(t.side)
              app.appendBigInt(BigInt(t.time))
              app.appendVarchar(t.market_id)
              app.appendVarchar(t.maker)
              app.appendVarchar(t.taker)
              app.appendBigInt(BigInt(t.fee))
              app.appendBigInt(BigInt(t.builder_fee))
              app.appendVarchar(t.outcome)
              app.appendInteger(t.yes_price)
              app.appendVarchar(t.kind)
              app.appendBigInt(BigInt(t.maker_rebate))
              app.appendBigInt(BigInt(f.takerOrderId))
              app.appendBigInt(BigInt(f.makerOrderId))
              app.appendVarchar(f.makerSide)
              app.appendVarchar(f.makerOutcome)
              app.appendInteger(f.makerPriceBps)
              app.appendBigInt(BigInt(f.takerBuilderFeeMicro))
              app.appendBigInt(BigInt(f.makerBuilderFeeMicro))
              app.endRow()
            }
            app.flushSync()
          } finally {
            app.closeSync()
          }
        }
        const [nd, nw, nr] = await this.appendLedgerRows(target)
        await this.conn.run("UPDATE meta SET projected_seq = $1", [BigInt(target)])
        await this.conn.run("COMMIT")
        this.pendingDeposits.splice(0, nd)
        this.pendingWithdrawals.splice(0, nw)
        this.pendingRewards.splice(0, nr)
      } catch (err) {
        await this.conn.run("ROLLBACK").catch(() => undefined)
        throw err
      }
      // Records buffered while the transaction ran were pushed behind these rows.
      this.pending.splice(0, n)
      this.projected = target
    })
  }

  /**
   * Every stored trade in id order (journal order), as the in-memory History holds them.
   * Read as JSON text, `chunk` trades a query: DuckDB renders and V8 parses it ~3× faster
   * than converting each value through the client (the start-up seed of every trade).
   */
  trades(chunk = 100_000): Promise<TradeRecord[]> {
    return this.exclusive(async () => {
      const out: TradeRecord[] = []
      const stmt = await this.prepared(
        `seed-${chunk}`,
        `SELECT string_agg(json_array(${TRADE_COLUMNS})::VARCHAR, ',' ORDER BY id), count(*)
         FROM (SELECT ${TRADE_COLUMNS} FROM trades WHERE id > $1 ORDER BY id LIMIT ${chunk})`
      )
      let after = 0
      for (;;) {
        stmt.bindBigInt(1, BigInt(after))
        const [text, count] = (await stmt.runAndReadAll()).getRows()[0]!
        if (num(count!) === 0) break
        for (const r of JSON.parse(`[${text as string}]`) as DuckDBValue[][]) out.push(tradeFromRow(r))
        after = out[out.length - 1]!.id
        if (num(count!) < chunk) break
      }
      return out
    })
  }

  /** Every stored trade with all its columns, in id order. */
  tradeRows(): Promise<TradeRow[]> {
    return this.exclusive(async () => {
      const reader = await this.conn.runAndReadAll("SELECT * FROM trades ORDER BY id")
      return reader.getRowObjects().map((r) => {
        const out: Record<string, number | string> = {}
        for (const [k, v] of Object.entries(r)) out[k] = typeof v === "bigint" ? Number(v) : (v as number | string)
        return out as unknown as TradeRow
      })
    })
  }

  /** The store's equivalent of History.marketTrades: newest first. */
  marketTrades(marketId: string, limit: number, offset = 0): Promise<{ trades: TradeRecord[]; total: number }> {
    return this.pageOf("market_id = $1", marketId, limit, offset)
  }

  /** The store's equivalent of History.userTrades: newest first. */
  userTrades(user: string, limit: number, offset: number): Promise<{ trades: TradeRecord[]; total: number }> {
    return this.pageOf("(maker = $1 OR taker = $1)", user, limit, offset)
  }

  /** What History.candleRange returns: buckets with trades whose start is in [fromSec, toSec). */
  candles(marketId: string, interval: Interval, fromSec: number, toSec: number): Promise<Candle[]> {
    const width = INTERVALS[interval]
    return this.exclusive(async () => {
      // time ≥ from and time < to + width bound the bucket test so DuckDB can skip row groups.
      const stmt = await this.prepared(
        `candles-${width}`,
        candleSelect(String(width), `market_id = $1 AND time >= $2 AND time < $3 + ${width} AND time - time % ${width} >= $2 AND time - time % ${width} < $3`, false)
      )
      stmt.bindVarchar(1, marketId)
      stmt.bindBigInt(2, BigInt(fromSec))
      stmt.bindBigInt(3, BigInt(toSec))
      const rows = (await stmt.runAndReadAll()).getRows()
      return rows.map((r) => ({ t: num(r[0]!), o: num(r[1]!), h: num(r[2]!), l: num(r[3]!), c: num(r[4]!), v: num(r[5]!), n: num(r[6]!) }))
    })
  }

  /** Runs SQL on the store's connection (exports, checkpoints, ad-hoc reads). */
  run(sql: string): Promise<DuckDBValue[][]> {
    return this.exclusive(async () => (await this.conn.runAndReadAll(sql)).getRows())
  }

  /** Closes the file. Buffered rows not yet flushed are dropped: they re-project from the journal. */
  close(): Promise<void> {
    this.closing ??= this.exclusive(async () => {
      this.closed = true
      for (const s of this.statements.values()) s.destroySync()
      this.statements.clear()
      this.conn.closeSync()
      this.instance.closeSync()
    })
    return this.closing
  }

  private pageOf(where: string, key: string, limit: number, offset: number): Promise<{ trades: TradeRecord[]; total: number }> {
    return this.exclusive(async () => {
      const count = await this.prepared(`count:${where}`, `SELECT count(*) FROM trades WHERE ${where}`)
      count.bindVarchar(1, key)
      const total = num((await count.runAndReadAll()).getRows()[0]![0]!)
      const page = await this.prepared(`page:${where}`, `SELECT ${TRADE_COLUMNS} FROM trades WHERE ${where} ORDER BY id DESC LIMIT $2 OFFSET $3`)
      page.bindVarchar(1, key)
      page.bindBigInt(2, BigInt(Math.max(0, limit)))
      page.bindBigInt(3, BigInt(Math.max(0, offset)))
      return { trades: (await page.runAndReadAll()).getRows().map(tradeFromRow), total }
    })
  }

  private async prepared(key: string, sql: string): Promise<DuckDBPreparedStatement> {
    let stmt = this.statements.get(key)
    if (stmt === undefined) {
      stmt = await this.conn.prepare(sql)
      this.statements.set(key, stmt)
    }
    return stmt
  }

  /** One operation at a time on the connection (a flush's transaction must not interleave). */
  private exclusive<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new Error(`history store ${this.path} is closed`)
      return op()
    })
    this.queue = run.catch(() => undefined)
    return run
  }
}
