// In-memory projections of fills: trade lists per market and per user, and
// candles per market and interval. Fed by engine events in journal order.
// In durable mode the history store (src/store/history-db.ts) seeds it at
// start-up with every trade it holds, through journal seq P, and the replay that
// follows skips fills of records ≤ P, so each trade is here exactly once.
import type { FillEvent } from "../engine/types.ts"

/** The spec's Trade (SPEC §2) plus extensions `outcome`, `yes_price`, `kind`. */
export interface TradeRecord {
  readonly id: number
  /** Taker's own-outcome price, bps. */
  readonly price: number
  readonly size: number
  /** Taker's side. */
  readonly side: "buy" | "sell"
  readonly time: number
  readonly market_id: string
  readonly maker: string
  readonly taker: string
  /** Taker fee, micro-USDC. */
  readonly fee: number
  /** Builder fees of both sides, micro-USDC. */
  readonly builder_fee: number
  readonly outcome: "yes" | "no"
  readonly yes_price: number
  readonly kind: "normal" | "mint" | "merge"
  /** Maker's rebate, micro-USDC. */
  readonly maker_rebate: number
}

export const INTERVALS = { "1m": 60, "5m": 300, "1h": 3600, "1d": 86400 } as const
export type Interval = keyof typeof INTERVALS
/** The intervals in a fixed order: a market's candle series are kept in this order (no per-trade key strings). */
const INTERVAL_NAMES = Object.keys(INTERVALS) as Interval[]
const INTERVAL_WIDTHS = INTERVAL_NAMES.map((name) => INTERVALS[name])

export interface Candle {
  readonly t: number
  o: number
  h: number
  l: number
  c: number
  v: number
  n: number
}

export const tradeFromFill = (f: FillEvent): TradeRecord => ({
  id: f.tradeId,
  price: f.takerPriceBps,
  size: f.size,
  side: f.takerSide,
  time: f.tsSec,
  market_id: f.marketId,
  maker: f.makerUser,
  taker: f.takerUser,
  fee: f.takerFeeMicro,
  builder_fee: f.takerBuilderFeeMicro + f.makerBuilderFeeMicro,
  outcome: f.takerOutcome,
  yes_price: f.yesPriceBps,
  kind: f.kind,
  maker_rebate: f.makerRebateMicro
})

/** Index of the first element of a time-sorted array with key >= t. */
const lowerBound = <T>(items: ReadonlyArray<T>, t: number, key: (x: T) => number): number => {
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (key(items[mid]!) < t) lo = mid + 1
    else hi = mid
  }
  return lo
}

export class History {
  private readonly byMarket = new Map<string, TradeRecord[]>()
  private readonly byUser = new Map<string, TradeRecord[]>()
  /** Per market, one candle series per interval, in INTERVAL_NAMES order. */
  private readonly candles = new Map<string, Candle[][]>()
  private seededThrough = 0

  /** Journal seq through which `seed` supplied the trades (0: not seeded). */
  get seededThroughSeq(): number {
    return this.seededThrough
  }

  /**
   * Loads the trades of journal records 1..throughSeq (in trade-id order) before a
   * replay; `record` then ignores fills of records with seq ≤ throughSeq, which the
   * replay from an older snapshot would otherwise add a second time.
   */
  seed(trades: Iterable<TradeRecord>, throughSeq: number): void {
    for (const t of trades) this.add(t)
    this.seededThrough = Math.max(this.seededThrough, throughSeq)
  }

  /** Forgets everything, the seed mark included (a history store rebuilt at start-up re-seeds). */
  clear(): void {
    this.byMarket.clear()
    this.byUser.clear()
    this.candles.clear()
    this.seededThrough = 0
  }

  /** Adds a trade produced by journal record `seq`, unless the seed already holds that record's trades. */
  record(trade: TradeRecord, seq: number = Number.POSITIVE_INFINITY): void {
    if (seq <= this.seededThrough) return
    this.add(trade)
  }

  private add(trade: TradeRecord): void {
    push(this.byMarket, trade.market_id, trade)
    push(this.byUser, trade.maker, trade)
    if (trade.taker !== trade.maker) push(this.byUser, trade.taker, trade)
    const p = trade.yes_price / 10_000
    let all = this.candles.get(trade.market_id)
    if (all === undefined) this.candles.set(trade.market_id, (all = INTERVAL_WIDTHS.map((): Candle[] => [])))
    for (let k = 0; k < INTERVAL_WIDTHS.length; k++) {
      const width = INTERVAL_WIDTHS[k]!
      const series = all[k]!
      const t = trade.time - (trade.time % width)
      const last = series[series.length - 1]
      if (last !== undefined && last.t === t) {
        last.h = Math.max(last.h, p)
        last.l = Math.min(last.l, p)
        last.c = p
        last.v += trade.size
        last.n++
      } else series.push({ t, o: p, h: p, l: p, c: p, v: trade.size, n: 1 })
    }
  }

  /** Newest first. */
  marketTrades(marketId: string, limit: number, offset = 0): { trades: TradeRecord[]; total: number } {
    return page(this.byMarket.get(marketId), limit, offset)
  }

  userTrades(user: string, limit: number, offset: number): { trades: TradeRecord[]; total: number } {
    return page(this.byUser.get(user), limit, offset)
  }

  lastTrade(marketId: string): TradeRecord | undefined {
    const list = this.byMarket.get(marketId)
    return list?.[list.length - 1]
  }

  /** Buckets with trades in [fromSec, toSec). */
  candleRange(marketId: string, interval: Interval, fromSec: number, toSec: number): Candle[] {
    const series = this.candles.get(marketId)?.[INTERVAL_NAMES.indexOf(interval)]
    if (series === undefined) return []
    const start = lowerBound(series, fromSec, (c) => c.t)
    const end = lowerBound(series, toSec, (c) => c.t)
    return series.slice(start, end).map((c) => ({ ...c }))
  }
}

const push = <T>(map: Map<string, T[]>, key: string, value: T): void => {
  const list = map.get(key)
  if (list === undefined) map.set(key, [value])
  else list.push(value)
}

const page = (list: TradeRecord[] | undefined, limit: number, offset: number): { trades: TradeRecord[]; total: number } => {
  if (list === undefined) return { trades: [], total: 0 }
  const end = list.length - offset
  const start = Math.max(0, end - limit)
  return { trades: end <= 0 ? [] : list.slice(start, end).reverse(), total: list.length }
}

/**
 * A history that keeps only each market's last trade (the bot's mid when a side is empty,
 * src/service/lp-bot-market.ts): for an exchange whose trade lists and candles nobody reads (the backtester's).
 */
export class LastTradeOnly extends History {
  private readonly last = new Map<string, TradeRecord>()

  override record(trade: TradeRecord): void {
    this.last.set(trade.market_id, trade)
  }

  override lastTrade(marketId: string): TradeRecord | undefined {
    return this.last.get(marketId)
  }
}
