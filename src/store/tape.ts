// The market tape: what a backtest reads (docs/backtesting.md "Tape format"). Built from
// journal records replayed through an Exchange, so the simulator (`npm run sim -- --tape`)
// and a live DATA_DIR (`npm run export`) write the same thing by the same code:
//
//   trades.<fmt>  ts_ms, market_id, price_bps (YES), size, taker_side (YES terms), trade_id,
//                 maker_order_id (the resting order it filled: links a trade to orders.<fmt>)
//   book.<fmt>    ts_ms, market_id, side (bid|ask), price_bps (YES), size: every resting
//                 level of a market, at each interval boundary where its book changed, or
//                 (interval 0) before every record that follows a change
//   orders.<fmt>  ts_ms, market_id, order_id, event (new|add|cancel), side, price_bps (YES),
//                 size, order_type, owner: every order as it arrived (its limit and size, taker
//                 or not), every one that came to rest, and every cancel of one (order-level,
//                 L3): a backtest can replay the order flow itself through the matching engine
//   tape.json     markets, time span, the fee schedule and the LP rewards configuration
//
// The journal stamps whole seconds. ts_ms is that second plus the record's place among the
// records of its second (0, 1, 2 … ms, at most 999), so the tape keeps the journal's order.
// A snapshot is the book as it stood before the record it is stamped with, so it sorts
// before that record's trades exactly as the backtester orders them.
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { duckdb } from "./duckdb.ts"
import type { BookSide } from "../engine/book.ts"
import { MAX_PRICE_BPS } from "../engine/money.ts"
import type { EngineEvent, FillEvent, OrderAcceptedEvent, OrderType } from "../engine/types.ts"
import type { JournalRecord, RewardsParams } from "../service/commands.ts"
import { Exchange, type JournalSink } from "../service/exchange.ts"

export const TAPE_FORMAT = "twinbook-tape"
/** 2: adds orders.<fmt> (order-level events). Readers accept 1 (no orders file) too. */
export const TAPE_VERSION = 2
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
  readonly makerOrderId: number
  readonly takerOrderId: number
}

export interface TapeLevel {
  readonly tsMs: number
  readonly marketId: string
  readonly side: "bid" | "ask"
  readonly priceBps: number
  readonly size: number
}

/**
 * One order-level event. `new`: an order arrived, with its limit (YES terms), its whole size and
 * its type: the intent, before any matching (a taker's too). `add`: an order came to rest with
 * `size` contracts (after any part that traded on arrival). `cancel`: a resting order left the
 * book with `size` still unfilled (a cancel, a halt or a self-trade cancel). Fills are not
 * repeated here: they are the trades (`maker_order_id`, `taker_order_id`). `owner` is a
 * pseudonym (`m1`, `m2`, … in order of first appearance): makers can be told apart, not named.
 */
export interface TapeOrderEvent {
  readonly tsMs: number
  readonly marketId: string
  readonly orderId: number
  readonly event: "new" | "add" | "cancel"
  readonly side: "bid" | "ask"
  readonly priceBps: number
  readonly size: number
  readonly orderType: OrderType
  readonly owner: string
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
  /**
   * The owners (pseudonyms) of the users that started a server-managed LP bot, in the order the
   * bot runner steps them in its once-a-second pass (by user id): a bot sees the quotes of the
   * bots ahead of it in the same pass (docs/backtesting.md "The bot runner's pass"). Excluded
   * users left out. Absent in tapes written before it was added.
   */
  readonly lp_bots?: ReadonlyArray<string>
  readonly trades: number
  readonly snapshots: number
  /** Order-level events in orders.<fmt> (version 2). */
  readonly orders: number
}

export interface Tape {
  readonly trades: TapeTrade[]
  readonly levels: TapeLevel[]
  readonly orders: TapeOrderEvent[]
  meta: TapeMeta
}

/** The taker's side in YES terms. */
export const takerSideYes = (f: Pick<FillEvent, "takerSide" | "takerOutcome">): "buy" | "sell" =>
  (f.takerSide === "buy") === (f.takerOutcome === "yes") ? "buy" : "sell"

const sideLevels = (side: BookSide, exclude: ReadonlySet<string>): Array<[number, number]> => {
  const out: Array<[number, number]> = []
  for (let p = side.best; p !== -1; p = side.nextPrice(p)) {
    const level = side.levels[p]
    let size = level?.size ?? 0
    if (exclude.size > 0 && level !== undefined) for (let o = level.head; o !== null; o = o.next) if (exclude.has(o.account.user)) size -= o.remaining
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
  readonly orders: TapeOrderEvent[] = []
  /** Orders resting now (rested and neither cancelled nor filled), by id: their side, price and owner for the cancel row. */
  private readonly resting = new Map<number, { marketId: string; side: "bid" | "ask"; priceBps: number; orderType: OrderType; owner: string }>()
  private readonly owners = new Map<string, string>()
  /** Users that started an LP bot (lp_start), for tape.json's lp_bots. */
  private readonly botUsers = new Set<string>()
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
    private readonly intervalSec: number | null,
    /** Users left out: their orders, the trades they were part of, and their contracts in snapshots (a live tape "without me"). */
    private readonly exclude: ReadonlySet<string> = new Set()
  ) {
    x.onApply((_record, result) => this.onEvents(result.events))
  }

  private onEvents(events: ReadonlyArray<EngineEvent>): void {
    for (const ev of events) {
      if (ev.type === "fill") {
        if (ev.makerRemaining === 0) this.resting.delete(ev.makerOrderId)
        if (this.exclude.has(ev.makerUser) || this.exclude.has(ev.takerUser)) continue
        this.trades.push({ tsMs: this.nowMs, marketId: ev.marketId, priceBps: ev.yesPriceBps, size: ev.size, takerSide: takerSideYes(ev), tradeId: ev.tradeId, makerOrderId: ev.makerOrderId, takerOrderId: ev.takerOrderId })
      } else if (ev.type === "order_accepted") this.arrived(ev)
      else if (ev.type === "order_rested") this.rested(ev.orderId, ev.remaining)
      else if (ev.type === "order_cancelled") {
        const o = this.resting.get(ev.orderId)
        if (o === undefined) continue // an IOC's or FOK's unfilled rest: it never rested
        this.resting.delete(ev.orderId)
        this.orders.push({ tsMs: this.nowMs, orderId: ev.orderId, event: "cancel", size: ev.remaining, ...o })
      }
    }
  }

  private ownerOf(user: string): string {
    let owner = this.owners.get(user)
    if (owner === undefined) {
      owner = `m${this.owners.size + 1}`
      this.owners.set(user, owner)
    }
    return owner
  }

  /** Buying YES or selling NO bids for YES; the price in YES terms is the NO price's complement. */
  private arrived(ev: OrderAcceptedEvent): void {
    if (this.exclude.has(ev.user)) return
    const isBid = (ev.side === "buy") === (ev.outcome === "yes")
    const priceBps = ev.outcome === "yes" ? ev.priceBps : MAX_PRICE_BPS - ev.priceBps
    this.orders.push({
      tsMs: this.nowMs, marketId: ev.marketId, orderId: ev.orderId, event: "new", side: isBid ? "bid" : "ask", priceBps, size: ev.size,
      orderType: ev.orderType, owner: this.ownerOf(ev.user)
    })
  }

  /** The order is in the engine until a later record removes it, so its place in the book is read there. */
  private rested(orderId: number, remaining: number): void {
    const order = this.x.engine.orders.get(orderId)
    if (order === undefined || remaining <= 0 || this.exclude.has(order.account.user)) return
    const row = {
      marketId: order.market.id, side: order.isBid ? ("bid" as const) : ("ask" as const), priceBps: order.yesPriceBps, orderType: order.orderType,
      owner: this.ownerOf(order.account.user)
    }
    this.resting.set(orderId, row)
    this.orders.push({ tsMs: this.nowMs, orderId, event: "add", size: remaining, ...row })
  }

  before(record: JournalRecord): void {
    if (record.cmd.type === "lp_start" && !this.exclude.has(record.cmd.user)) this.botUsers.add(record.cmd.user)
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
      const bids = sideLevels(m.bids, this.exclude)
      const asks = sideLevels(m.asks, this.exclude)
      const key = `${bids.join(";")}|${asks.join(";")}`
      if (this.lastBook.get(id) === key) continue
      this.lastBook.set(id, key)
      this.snapshots++
      // An empty book writes no rows, so a reader keeps the previous snapshot (docs/backtesting.md "Limits").
      for (const [priceBps, size] of bids) this.levels.push({ tsMs, marketId: id, side: "bid", priceBps, size })
      for (const [priceBps, size] of asks) this.levels.push({ tsMs, marketId: id, side: "ask", priceBps, size })
    }
  }

  finish(source: string): Tape {
    const e = this.x.engine
    const taker: Record<string, number> = {}
    const markets = [...e.markets.keys()].sort()
    for (const id of markets) taker[id] = e.markets.get(id)!.takerFeeBps
    return {
      trades: this.trades,
      levels: this.levels,
      orders: this.orders,
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
        excluded_users: [...this.exclude].sort(),
        // The runner's pass order (src/service/lp-book.ts runningBots): by user id.
        lp_bots: [...this.botUsers].sort((a, b) => (a < b ? -1 : 1)).map((u) => this.ownerOf(u)),
        trades: this.trades.length,
        snapshots: this.snapshots,
        orders: this.orders.length
      }
    }
  }
}

const refusingSink: JournalSink = { append: () => Promise.reject(new Error("a tape replays the journal; it never appends")) }

/** Replays journal records (from seq 1) through a fresh Exchange and records their tape. */
export const tapeFromRecords = (records: Iterable<JournalRecord>, opts: { intervalSec: number | null; source: string; exclude?: ReadonlyArray<string> }): Tape => {
  const x = new Exchange(() => 0, refusingSink)
  x.history.seed([], Number.POSITIVE_INFINITY)
  const rec = new TapeRecorder(x, opts.intervalSec, new Set(opts.exclude ?? []))
  for (const r of records) {
    rec.before(r)
    x.apply(r)
  }
  return rec.finish(opts.source)
}

const csvField = (s: string): string => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s)

export const TRADE_HEADER = "ts_ms,market_id,price_bps,size,taker_side,trade_id,maker_order_id,taker_order_id"
export const BOOK_HEADER = "ts_ms,market_id,side,price_bps,size"
export const ORDERS_HEADER = "ts_ms,market_id,order_id,event,side,price_bps,size,order_type,owner"

const tradesCsv = (t: ReadonlyArray<TapeTrade>): string =>
  `${TRADE_HEADER}\n${t.map((r) => `${r.tsMs},${csvField(r.marketId)},${r.priceBps},${r.size},${r.takerSide},${r.tradeId},${r.makerOrderId},${r.takerOrderId}\n`).join("")}`
const bookCsv = (l: ReadonlyArray<TapeLevel>): string =>
  `${BOOK_HEADER}\n${l.map((r) => `${r.tsMs},${csvField(r.marketId)},${r.side},${r.priceBps},${r.size}\n`).join("")}`

const ordersCsv = (o: ReadonlyArray<TapeOrderEvent>): string =>
  `${ORDERS_HEADER}\n${o.map((r) => `${r.tsMs},${csvField(r.marketId)},${r.orderId},${r.event},${r.side},${r.priceBps},${r.size},${r.orderType},${r.owner}\n`).join("")}`

const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`

/** Writes trades, book (when there are snapshots) and tape.json into `dir`; returns the files written. */
export const writeTape = async (dir: string, tape: Tape, format: TapeFileFormat): Promise<string[]> => {
  mkdirSync(dir, { recursive: true })
  const files: string[] = []
  const csv: Array<[string, string, string]> = [["trades", tradesCsv(tape.trades), "ts_ms BIGINT, market_id VARCHAR, price_bps INTEGER, size BIGINT, taker_side VARCHAR, trade_id BIGINT, maker_order_id BIGINT, taker_order_id BIGINT"]]
  if (tape.levels.length > 0) csv.push(["book", bookCsv(tape.levels), "ts_ms BIGINT, market_id VARCHAR, side VARCHAR, price_bps INTEGER, size BIGINT"])
  if (tape.orders.length > 0) {
    csv.push(["orders", ordersCsv(tape.orders), "ts_ms BIGINT, market_id VARCHAR, order_id BIGINT, event VARCHAR, side VARCHAR, price_bps INTEGER, size BIGINT, order_type VARCHAR, owner VARCHAR"])
  }
  for (const stale of ["trades", "book", "orders"]) for (const f of TAPE_FORMATS) rmSync(join(dir, `${stale}.${f}`), { force: true })
  if (format === "csv") {
    for (const [name, text] of csv) {
      writeFileSync(join(dir, `${name}.csv`), text)
      files.push(join(dir, `${name}.csv`))
    }
  } else {
    const db = await duckdb().DuckDBInstance.create(":memory:")
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
