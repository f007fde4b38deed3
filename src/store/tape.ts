// The market tape: what a backtest reads (docs/backtesting.md "Tape format"). Built from
// journal records replayed through an Exchange, so the simulator (`npm run sim -- --tape`)
// and a live DATA_DIR (`npm run export`) write the same thing by the same code:
//
//   trades.<fmt>  ts_ms, market_id, price_bps (YES), size, taker_side (YES terms), trade_id
//   book.<fmt>    ts_ms, market_id, side (bid|ask), price_bps (YES), size: every resting
//                 level of a market, at each interval boundary where its book changed, or
//                 (interval 0) before every record that follows a change
//   tape.json     markets, time span, the fee schedule and the LP rewards configuration
//
// The journal stamps whole seconds. ts_ms is that second plus the record's place among the
// records of its second (0, 1, 2 … ms, at most 999), so the tape keeps the journal's order.
// A snapshot is the book as it stood before the record it is stamped with, so it sorts
// before that record's trades exactly as the backtester orders them.
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { DuckDBInstance } from "@duckdb/node-api"
import type { BookSide } from "../engine/book.ts"
import type { EngineEvent, FillEvent } from "../engine/types.ts"
import type { JournalRecord, RewardsParams } from "../service/commands.ts"
import { Exchange, type JournalSink } from "../service/exchange.ts"

export const TAPE_FORMAT = "twinbook-tape"
export const TAPE_VERSION = 1
export const TAPE_FORMATS = ["csv", "parquet"] as const
export type TapeFileFormat = (typeof TAPE_FORMATS)[number]

export interface TapeTrade {
  readonly tsMs: number
  readonly marketId: string
  readonly priceBps: number
  readonly size: number
  /** The taker's side in YES terms: buy YES or sell NO → buy; sell YES or buy NO → sell. */
  readonly takerSide: "buy" | "sell"
  readonly tradeId: number
}

export interface TapeLevel {
  readonly tsMs: number
  readonly marketId: string
  readonly side: "bid" | "ask"
  readonly priceBps: number
  readonly size: number
}

export interface TapeMeta {
  readonly format: typeof TAPE_FORMAT
  readonly version: number
  readonly source: string
  readonly from_sec: number
  readonly to_sec: number
  /** Book snapshots every this many seconds where a book changed; 0: before every record that follows a change; null: none. */
  readonly snapshot_interval_sec: number | null
  readonly markets: ReadonlyArray<string>
  /** The engine's fee schedule at the end of the tape (docs/engine.md): rebates are paid out of taker fees only. */
  readonly fees: { readonly maker_rebate_bps: number; readonly default_taker_fee_bps: number; readonly taker_fee_bps: Readonly<Record<string, number>> }
  /** The service's journaled LP rewards configuration, or null when none was set. */
  readonly rewards: RewardsParams | null
  /** Users whose orders were left out of the tape (none for a plain tape). */
  readonly excluded_users: ReadonlyArray<string>
  readonly trades: number
  readonly snapshots: number
}

export interface Tape {
  readonly trades: TapeTrade[]
  readonly levels: TapeLevel[]
  meta: TapeMeta
}

/** The taker's side in YES terms. */
export const takerSideYes = (f: Pick<FillEvent, "takerSide" | "takerOutcome">): "buy" | "sell" =>
  (f.takerSide === "buy") === (f.takerOutcome === "yes") ? "buy" : "sell"

const sideLevels = (side: BookSide): Array<[number, number]> => {
  const out: Array<[number, number]> = []
  for (let p = side.best; p !== -1; p = side.nextPrice(p)) {
    const size = side.levels[p]?.size ?? 0
    if (size > 0) out.push([p, size])
  }
  return out
}

/**
 * Records a tape from an Exchange as journal records are applied to it: call `before(record)`
 * ahead of each `apply` (snapshots at the boundaries crossed), and `finish()` at the end.
 */
export class TapeRecorder {
  readonly trades: TapeTrade[] = []
  readonly levels: TapeLevel[] = []
  private readonly lastBook = new Map<string, string>()
  private nextBoundary: number | null = null
  private fromSec: number | null = null
  private toSec = 0
  /** The current record's tape time: its second, plus its place among that second's records. */
  private nowMs = 0
  private lastSec = -1
  private ordinal = 0
  snapshots = 0

  constructor(
    private readonly x: Exchange,
    /** Seconds between snapshots; 0: every change; null: trades only. */
    private readonly intervalSec: number | null
  ) {
    x.onApply((_record, result) => this.onEvents(result.events))
  }

  private onEvents(events: ReadonlyArray<EngineEvent>): void {
    for (const ev of events) {
      if (ev.type !== "fill") continue
      this.trades.push({ tsMs: this.nowMs, marketId: ev.marketId, priceBps: ev.yesPriceBps, size: ev.size, takerSide: takerSideYes(ev), tradeId: ev.tradeId })
    }
  }

  before(record: JournalRecord): void {
    const t = record.tsSec
    this.fromSec ??= t
    this.toSec = Math.max(this.toSec, t)
    this.ordinal = t === this.lastSec ? this.ordinal + 1 : 0
    this.lastSec = t
    this.nowMs = t * 1000 + Math.min(this.ordinal, 999)
    if (this.intervalSec === null) return
    // Past the 999th record of a second the stamps repeat: the next second's first snapshot catches up.
    if (this.intervalSec === 0) return this.ordinal < 999 ? this.snapshot(this.nowMs) : undefined
    this.nextBoundary ??= Math.ceil(t / this.intervalSec) * this.intervalSec
    // Nothing changes between records: the book at every boundary up to t is the current one, so only the last needs a look.
    if (t < this.nextBoundary) return
    const boundary = Math.floor(t / this.intervalSec) * this.intervalSec
    this.snapshot(boundary * 1000)
    this.nextBoundary = boundary + this.intervalSec
  }

  private snapshot(tsMs: number): void {
    for (const id of [...this.x.engine.markets.keys()].sort()) {
      const m = this.x.engine.markets.get(id)!
      const bids = sideLevels(m.bids)
      const asks = sideLevels(m.asks)
      const key = `${bids.join(";")}|${asks.join(";")}`
      if (this.lastBook.get(id) === key) continue
      this.lastBook.set(id, key)
      this.snapshots++
      // An empty book writes no rows, so a reader keeps the previous snapshot (docs/backtesting.md "Limits").
      for (const [priceBps, size] of bids) this.levels.push({ tsMs, marketId: id, side: "bid", priceBps, size })
      for (const [priceBps, size] of asks) this.levels.push({ tsMs, marketId: id, side: "ask", priceBps, size })
    }
  }

  finish(source: string, excludedUsers: ReadonlyArray<string> = []): Tape {
    const e = this.x.engine
    const taker: Record<string, number> = {}
    const markets = [...e.markets.keys()].sort()
    for (const id of markets) taker[id] = e.markets.get(id)!.takerFeeBps
    return {
      trades: this.trades,
      levels: this.levels,
      meta: {
        format: TAPE_FORMAT,
        version: TAPE_VERSION,
        source,
        from_sec: this.fromSec ?? 0,
        to_sec: this.toSec,
        snapshot_interval_sec: this.intervalSec,
        markets,
        fees: { maker_rebate_bps: e.makerRebateBps, default_taker_fee_bps: e.defaultTakerFeeBps, taker_fee_bps: taker },
        rewards: this.x.rewards.config === null ? null : { ...this.x.rewards.config },
        excluded_users: [...excludedUsers],
        trades: this.trades.length,
        snapshots: this.snapshots
      }
    }
  }
}

const refusingSink: JournalSink = { append: () => Promise.reject(new Error("a tape replays the journal; it never appends")) }

/** Replays journal records (from seq 1) through a fresh Exchange and records their tape. */
export const tapeFromRecords = (records: Iterable<JournalRecord>, opts: { intervalSec: number | null; source: string }): Tape => {
  const x = new Exchange(() => 0, refusingSink)
  x.history.seed([], Number.POSITIVE_INFINITY)
  const rec = new TapeRecorder(x, opts.intervalSec)
  for (const r of records) {
    rec.before(r)
    x.apply(r)
  }
  return rec.finish(opts.source)
}

const csvField = (s: string): string => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s)

export const TRADE_HEADER = "ts_ms,market_id,price_bps,size,taker_side,trade_id"
export const BOOK_HEADER = "ts_ms,market_id,side,price_bps,size"

const tradesCsv = (t: ReadonlyArray<TapeTrade>): string =>
  `${TRADE_HEADER}\n${t.map((r) => `${r.tsMs},${csvField(r.marketId)},${r.priceBps},${r.size},${r.takerSide},${r.tradeId}\n`).join("")}`
const bookCsv = (l: ReadonlyArray<TapeLevel>): string =>
  `${BOOK_HEADER}\n${l.map((r) => `${r.tsMs},${csvField(r.marketId)},${r.side},${r.priceBps},${r.size}\n`).join("")}`

const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`

/** Writes trades, book (when there are snapshots) and tape.json into `dir`; returns the files written. */
export const writeTape = async (dir: string, tape: Tape, format: TapeFileFormat): Promise<string[]> => {
  mkdirSync(dir, { recursive: true })
  const files: string[] = []
  const csv: Array<[string, string, string]> = [["trades", tradesCsv(tape.trades), "ts_ms BIGINT, market_id VARCHAR, price_bps INTEGER, size BIGINT, taker_side VARCHAR, trade_id BIGINT"]]
  if (tape.levels.length > 0) csv.push(["book", bookCsv(tape.levels), "ts_ms BIGINT, market_id VARCHAR, side VARCHAR, price_bps INTEGER, size BIGINT"])
  for (const stale of ["trades", "book"]) for (const f of TAPE_FORMATS) rmSync(join(dir, `${stale}.${f}`), { force: true })
  if (format === "csv") {
    for (const [name, text] of csv) {
      writeFileSync(join(dir, `${name}.csv`), text)
      files.push(join(dir, `${name}.csv`))
    }
  } else {
    const db = await DuckDBInstance.create(":memory:")
    const conn = await db.connect()
    try {
      for (const [name, text, columns] of csv) {
        const tmp = join(dir, `.${name}.tmp.csv`)
        writeFileSync(tmp, text)
        const cols = columns.split(", ").map((c) => c.split(" ")).map(([n, t]) => `'${n}': '${t}'`).join(", ")
        const out = join(dir, `${name}.parquet`)
        await conn.run(`COPY (SELECT * FROM read_csv(${sqlString(tmp)}, header = true, columns = {${cols}})) TO ${sqlString(out)} (FORMAT parquet, COMPRESSION zstd)`)
        rmSync(tmp, { force: true })
        files.push(out)
      }
    } finally {
      conn.closeSync()
      db.closeSync()
    }
  }
  writeFileSync(join(dir, "tape.json"), `${JSON.stringify(tape.meta, null, 2)}\n`)
  files.push(join(dir, "tape.json"))
  return files
}
