// The background book from an order-level (L3) tape: every competitor order is placed when the
// tape says it came to rest and cancelled when the tape says it left, each in its owner's
// wallet. Our orders then sit in the engine's FIFO exactly where their arrival puts them, so
// the queue ahead of us is a record, not a model, and the queue model is not used.
//
// With every order's arrival in the tape (`new`: limit, size, type) the order flow itself is
// replayed: each order enters the engine as it entered the exchange, takers included, and the
// engine does the matching, so a taker that found only worse prices without us trades with our
// better quote up to its own limit and size. The tape's trades are then an outcome, not an input.
// With adds and cancels only (an L3 feed without taker intent), trades are replayed as IOCs at
// the print (venue.take) and matched by the engine: when our order is ahead of the order the
// print consumed in the tape, we are filled and that order keeps its contracts, as it would
// have with us in the book. Fills are never applied to background orders from the tape; only
// cancels, by the tape's order id, and the withdrawal of an order the tape used up while it still
// rests here, at its owner's next order event in the market (`filledInTape`, `ownerActs`).
import type { Account, Order } from "../../src/engine/state.ts"
import type { OrderType } from "../../src/engine/types.ts"
import { type FollowCounters, followedPrice, ownerMarketKey, TapeBook } from "./follow.ts"
import { CAUSE_TRADE, type MarketState, type Venue } from "./venue.ts"

/** Counters the report shows under "queue" (Background has the same two). */
export interface QueueCounters {
  decreasesAtOurLevel: number
  decreasesAhead: number
}

/** Makers that follow the book (follow.ts): the fitted slope and which of the tape's owners re-quote. */
export interface Following {
  readonly slope: number
  readonly followers: Uint8Array
}

/** Most background wallets the owners of an order-level tape get; more owners share them round-robin. */
export const MAX_OWNER_WALLETS = 64

export class OrderLevelBook {
  /** The tape's resting orders by the tape's id (filled ones are dropped at their cancel or left to rest at zero). */
  private readonly live = new Map<number, Order>()
  /** Tape orders the engine refused (post-only across one of our quotes): their cancels are ignored. */
  refused = 0
  /** Orders placed by `arrive` whose tape `add` is still to come: the engine already decided whether they rest. */
  private readonly arrived = new Set<number>()
  /** The tape's resting orders at the tape's prices, with what each still rests with in the tape (its add, less the trades that name it). */
  private readonly tapeBook = new TapeBook()
  /** Tape orders the tape shows used up while they still rest here (our quote took their takers), by `ownerMarketKey`. */
  private readonly spent = new Map<number, number[]>()
  /** Such orders withdrawn when their owner next acted in the market, and the contracts they still had. */
  spentWithdrawn = 0
  spentContractsWithdrawn = 0
  readonly followCounts: FollowCounters = { placed: 0, moved: 0, movedTicks: 0 }

  constructor(
    private readonly v: Venue,
    private readonly counters: QueueCounters,
    private readonly follow: Following | null = null
  ) {}

  /** An order arrives (flow replay): placed as it was (a follower's limit order moved with the book), in its owner's wallet; kept if it rests. */
  arrive(ms: MarketState, tapeId: number, isBid: boolean, tapePriceBps: number, size: number, orderType: OrderType, owner: number): void {
    const wallet = this.v.bgMakers[owner % this.v.bgMakers.length]!
    const yesPriceBps = this.followed(ms, tapePriceBps, orderType, owner, wallet)
    const order = this.v.placeAs(ms, wallet, isBid, yesPriceBps, size, orderType, CAUSE_TRADE)
    if (order !== null && order.remaining > 0) this.live.set(tapeId, order)
    if (orderType === "gtc" || orderType === "post_only") this.arrived.add(tapeId)
    if (order === null && orderType === "post_only") this.refused++
  }

  /** A follower's limit order at the tape's price moved by the fitted slope × how far the rest of the book here stands from the tape's. */
  private followed(ms: MarketState, tapePriceBps: number, orderType: OrderType, owner: number, wallet: string): number {
    const f = this.follow
    if (f === null || f.followers[owner] !== 1 || (orderType !== "gtc" && orderType !== "post_only")) return tapePriceBps
    this.followCounts.placed++
    // The rest of the book here is the engine's (ours and the other followers' moved orders in it): who follows follows everyone, as on a live tape.
    const account = this.v.engine.accounts.get(wallet)
    const here = account === undefined ? -1 : this.restMid2(ms, account)
    const price = followedPrice(tapePriceBps, f.slope, here, this.tapeBook.restMid2(ms.idx, owner), ms.tickBps)
    if (price !== tapePriceBps) {
      this.followCounts.moved++
      this.followCounts.movedTicks += Math.abs(price - tapePriceBps) / ms.tickBps
    }
    return price
  }

  /** Best bid + best ask here of every resting order but one account's (ours included), or -1 when a side has none. */
  private restMid2(ms: MarketState, account: Account): number {
    const bid = this.bestBut(ms, true, account)
    const ask = this.bestBut(ms, false, account)
    return bid < 0 || ask < 0 ? -1 : bid + ask
  }

  private bestBut(ms: MarketState, isBid: boolean, account: Account): number {
    const side = isBid ? ms.market.bids : ms.market.asks
    for (let p = side.best; p !== -1; p = side.nextPrice(p)) {
      for (let o = side.levels[p]!.head; o !== null; o = o.next) if (o.account !== account && o.remaining > 0) return p
    }
    return -1
  }

  /** An order came to rest in the tape; one that arrived here already rests or not by the engine's matching. */
  add(ms: MarketState, tapeId: number, isBid: boolean, yesPriceBps: number, size: number, owner: number): void {
    this.tapeBook.add(ms.idx, tapeId, owner, isBid, yesPriceBps, size)
    if (this.arrived.delete(tapeId)) return
    if (size <= 0) return
    const wallet = this.v.bgMakers[owner % this.v.bgMakers.length]!
    const order = this.v.placeBg(ms, isBid, yesPriceBps, size, wallet)
    if (order === null) this.refused++
    else this.live.set(tapeId, order)
  }

  /**
   * A tape trade filled `size` of the tape's order `tapeId`. Once the tape's order is used up while it
   * still rests here (our quote took the takers that used it up in the tape), its owner, who in the tape
   * saw it filled, acts on the market without it: it is withdrawn at the owner's next order event there.
   */
  filledInTape(ms: MarketState, tapeId: number, size: number): void {
    // A trade naming an order of another market (a bad tape) says nothing about that order.
    const owner = this.tapeBook.filled(ms.idx, tapeId, size)
    if (owner < 0) return
    const key = ownerMarketKey(owner, ms.idx)
    const order = this.live.get(tapeId)
    if (order === undefined || order.remaining === 0) return
    const list = this.spent.get(key)
    if (list === undefined) this.spent.set(key, [tapeId])
    else list.push(tapeId)
  }

  /** The owner acts on the market (an order arrives, rests or leaves): what the tape had used up of its orders is withdrawn first. */
  ownerActs(ms: MarketState, owner: number): void {
    if (this.spent.size === 0) return
    const key = ownerMarketKey(owner, ms.idx)
    const list = this.spent.get(key)
    if (list === undefined) return
    this.spent.delete(key)
    for (const tapeId of list) {
      const order = this.live.get(tapeId)
      this.live.delete(tapeId)
      if (order === undefined || order.remaining === 0) continue
      this.spentWithdrawn++
      this.spentContractsWithdrawn += order.remaining
      this.v.cancel(ms, order)
    }
  }

  cancel(ms: MarketState, tapeId: number): void {
    this.tapeBook.cancel(tapeId)
    const order = this.live.get(tapeId)
    if (order === undefined) return
    this.live.delete(tapeId)
    if (order.remaining === 0) return
    const place = this.placeAgainstOurs(order)
    if (place !== 0) {
      this.counters.decreasesAtOurLevel++
      if (place < 0) this.counters.decreasesAhead++
    }
    this.v.cancel(ms, order)
  }

  /** -1: ahead of one of our orders at its level; 1: behind ours only; 0: no order of ours there. */
  private placeAgainstOurs(order: Order): number {
    const lp = this.v.lpAccount
    let ours = false
    for (let o: Order | null = order.next; o !== null; o = o.next) if (o.account === lp) return -1
    for (let o: Order | null = order.prev; o !== null; o = o.prev) if (o.account === lp) ours = true
    return ours ? 1 : 0
  }

  /** The best background bid and ask (ours left out: the counterfactual market's touch), and the mid. */
  tops(ms: MarketState): void {
    ms.bidTop = this.best(ms, true)
    ms.askTop = this.best(ms, false)
    if (ms.bidTop >= 0 && ms.askTop >= 0) ms.mid2 = ms.bidTop + ms.askTop
  }

  private best(ms: MarketState, isBid: boolean): number {
    const side = isBid ? ms.market.bids : ms.market.asks
    for (let p = side.best; p !== -1; p = side.nextPrice(p)) if (this.v.bgAt(ms, isBid, p) > 0) return p
    return -1
  }
}
