// Makers that follow the book (docs/backtesting.md "Makers that follow the book"). Every maker on a
// live tape re-quotes centred on the mid of the rest of the book, ours included, so live the others'
// quotes move with ours; a tape recorded without us shows where they quoted around a book without
// us. Replaying the order flow, a follower's resting order is moved by slope × (the rest-of-book mid
// here − the rest-of-book mid in the tape), both without the owner's own orders, in whole ticks:
// the slope is fitted from tapes alone (response/follow-fit.ts). Cancels still name the tape's id.
import { type Dataset, KIND_ADD, KIND_NEW, ORDER_TYPES } from "./dataset.ts"

/** An owner follows the book when it placed at least this many orders, ... */
export const FOLLOWER_MIN_ORDERS = 50
/** ... of which at least this share were limit orders that came to rest in the tape (a re-quoting maker, not a taker). */
export const FOLLOWER_RESTING_SHARE = 0.9

/** Which owners of a tape re-quote (1) and which do not (0), by index into `d.owners`: read from the tape's own order events. */
export const followersOf = (d: Dataset): Uint8Array => {
  const placed = new Int32Array(d.owners.length)
  const rested = new Int32Array(d.owners.length)
  const limitIds = new Set<number>()
  for (let i = 0; i < d.count; i++) {
    const k = d.kind[i]!
    if (k === KIND_NEW) {
      placed[d.owner[i]!]!++
      const t = ORDER_TYPES[d.orderType[i]!]
      if (t === "gtc" || t === "post_only") limitIds.add(d.orderId[i]!)
    } else if (k === KIND_ADD && limitIds.delete(d.orderId[i]!)) rested[d.owner[i]!]!++
  }
  return Uint8Array.from(placed, (n, o) => (n >= FOLLOWER_MIN_ORDERS && rested[o]! >= FOLLOWER_RESTING_SHARE * n ? 1 : 0))
}

interface TapeOrder {
  readonly owner: number
  readonly isBid: boolean
  readonly priceBps: number
  left: number
}

/** Market indices are Uint16: a key of an owner and a market is owner × 65,536 + market. */
export const ownerMarketKey = (owner: number, market: number): number => owner * 65_536 + market

/** The tape's own resting orders at the tape's own prices, per market: the book the tape's makers saw (and what each order has left there). */
export class TapeBook {
  private readonly byMarket = new Map<number, Map<number, TapeOrder>>()
  private readonly marketOf = new Map<number, number>()

  add(market: number, tapeId: number, owner: number, isBid: boolean, priceBps: number, size: number): void {
    if (size <= 0) return
    let m = this.byMarket.get(market)
    if (m === undefined) this.byMarket.set(market, (m = new Map()))
    m.set(tapeId, { owner, isBid, priceBps, left: size })
    this.marketOf.set(tapeId, market)
  }

  /**
   * A tape trade in `market` filled `size` of the order: the order's owner when that used it up (it
   * leaves the tape's book), else -1 (contracts left, or no such order in this market: a trade naming
   * another market's order, a bad tape, is ignored).
   */
  filled(market: number, tapeId: number, size: number): number {
    if (this.marketOf.get(tapeId) !== market) return -1
    const o = this.byMarket.get(market)!.get(tapeId)!
    o.left -= size
    if (o.left > 0) return -1
    this.cancel(tapeId)
    return o.owner
  }

  cancel(tapeId: number): void {
    const market = this.marketOf.get(tapeId)
    if (market === undefined) return
    this.marketOf.delete(tapeId)
    this.byMarket.get(market)!.delete(tapeId)
  }

  /** Best bid + best ask of everyone's resting orders in the market but `owner`'s (twice the mid, bps), or -1 when a side is empty. */
  restMid2(market: number, owner: number): number {
    return mid2(this.tops(market, owner, false))
  }

  /** Best bid + best ask of `owner`'s own resting orders in the market, or -1 when it has a side empty. */
  ownMid2(market: number, owner: number): number {
    return mid2(this.tops(market, owner, true))
  }

  /** Best bid and ask (-1: none) of `owner`'s own orders (`own`) or of everyone else's. */
  tops(market: number, owner: number, own: boolean): [number, number] {
    const m = this.byMarket.get(market)
    if (m === undefined) return [-1, -1]
    let bid = -1
    let ask = -1
    for (const o of m.values()) {
      if ((o.owner === owner) !== own) continue
      if (o.isBid) bid = Math.max(bid, o.priceBps)
      else if (ask < 0 || o.priceBps < ask) ask = o.priceBps
    }
    return [bid, ask]
  }
}

const mid2 = ([bid, ask]: [number, number]): number => (bid < 0 || ask < 0 ? -1 : bid + ask)

/** Counters the report shows: follower orders placed, those moved, and the ticks they moved by in all (absolute). */
export interface FollowCounters {
  placed: number
  moved: number
  movedTicks: number
}

/** Where a follower's order goes: its tape price moved by slope × (here − tape) of the rest-of-book mid, whole ticks, inside the price range. */
export const followedPrice = (tapePriceBps: number, slope: number, hereMid2: number, tapeMid2: number, tickBps: number): number => {
  if (hereMid2 < 0 || tapeMid2 < 0) return tapePriceBps
  const moveTicks = Math.round((slope * (hereMid2 - tapeMid2)) / 2 / tickBps)
  if (moveTicks === 0) return tapePriceBps
  const lo = tickBps
  const hi = 10_000 - tickBps
  return Math.min(hi, Math.max(lo, tapePriceBps + moveTicks * tickBps))
}
