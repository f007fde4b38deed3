// Response takers in a backtest: the takers our quote attracts and the tape cannot have.
// While our best quote on a side is alone at a better price than the tape's own book there,
// takers that hit that side arrive at the difference of the fitted rates, as a Poisson process
// (rates are constant between changes of the book and of the tape's future mid: the hazard is
// integrated piecewise and an arrival fires where it crosses an Exp(1) draw).
// Version 2 (edge form): λ(edge at our price) − λ(edge at the book's price), the edge taken
// against the tape's mid H later; the edge carries the information, nothing else weights it.
// Version 1 (the old spread form): λ(spread with our quote) − λ(spread of the tape's book),
// weighted (1 − π) + π·(2 if the tape's mid moves the taker's way within the horizon, 1 if it
// does not move, 0 if it moves the other way), π the fitted informed share.
// A taker sends an IOC at our price for a size drawn from the fitted distribution (version 3: the
// distribution of the takers whose edge against the tape's mid minutes later was like the one our
// price offers), through the real engine as the taker account.
import type { Dataset } from "../dataset.ts"
import type { Rng } from "../../world/random.ts"
import { CAUSE_RESPONSE, type MarketState, type Venue } from "../venue.ts"
import { arrivalRate, edgeRate, type EdgeArrival, type ResponseModel, sizeOf } from "./model.ts"
import { indexAt, mid2At, type TouchPath, touchPaths } from "./touch.ts"

interface SideState {
  /** Integrated hazard since the last arrival, and the Exp(1) level the next arrival fires at. */
  acc: number
  level: number
  /** Candidate arrivals per ms (the thinning bound: the response rate × (1 + π)). */
  rate: number
  lastMs: number
  nextMs: number
}

export interface ResponseCounts {
  /** Response takers that sent an order, and those classed informed (version 2: the tape's mid H later beyond our price; version 1: by the weighting). */
  takers: number
  informed: number
}

export class ResponseFlow {
  nextMs = Number.POSITIVE_INFINITY
  readonly counts: ResponseCounts = { takers: 0, informed: 0 }
  private readonly paths: TouchPath[]
  private readonly sides: SideState[][]
  private readonly pi: number
  private readonly horizonMs: number
  /** The edge form (version 2), or null for the spread form. */
  private readonly edge: EdgeArrival | null
  /** Per market, when the tape's mid H ahead next changes (the edge form's rates change then too). */
  private readonly futureMs: number[]

  constructor(
    private readonly model: ResponseModel,
    d: Dataset,
    private readonly markets: ReadonlyArray<MarketState>,
    private readonly v: Venue,
    private readonly rng: Rng
  ) {
    this.paths = touchPaths(d)
    this.edge = model.edge
    this.pi = this.edge === null ? model.information.informed_share : 0
    this.horizonMs = (this.edge === null ? model.information.horizon_sec : this.edge.horizon_sec) * 1000
    this.futureMs = markets.map(() => Number.POSITIVE_INFINITY)
    this.sides = markets.map(() => [0, 1].map(() => ({ acc: 0, level: rng.exponential(1), rate: 0, lastMs: 0, nextMs: Number.POSITIVE_INFINITY })))
  }

  /** Our best resting price on a side (bid: highest, ask: lowest), or −1. */
  private ourBest(ms: MarketState, isBid: boolean): number {
    let best = -1
    for (const o of ms.ours) {
      if (o.remaining === 0 || o.isBid !== isBid) continue
      if (best < 0 || (isBid ? o.yesPriceBps > best : o.yesPriceBps < best)) best = o.yesPriceBps
    }
    return best
  }

  /** Extra takers per second on a side (0: takers buying, at our ask; 1: selling, at our bid), our price there, and the edge it offers (ticks; version 2). */
  private extraRate(ms: MarketState, side: 0 | 1, nowMs: number): { perSec: number; priceBps: number; edgeTicks: number; better: boolean } {
    const none = { perSec: 0, priceBps: -1, edgeTicks: 0, better: false }
    if (!ms.quoting || ms.bidTop < 0 || ms.askTop < 0) return none
    const ourBid = this.ourBest(ms, true)
    const ourAsk = this.ourBest(ms, false)
    const price = side === 0 ? ourAsk : ourBid
    if (price < 0 || (side === 0 ? price >= ms.askTop : price <= ms.bidTop)) return none
    if (this.edge !== null) {
      // Our quote betters the book here: the rate may change with the future mid alone.
      const better = { ...none, better: true }
      // The edge a buyer finds is (mid H later − ask); a seller's (bid − mid H later): ours against the book's.
      const future2 = mid2At(this.paths[ms.idx]!, nowMs + this.horizonMs)
      if (future2 < 0) return better
      const tick2 = 2 * ms.tickBps
      const ours = side === 0 ? (future2 - 2 * price) / tick2 : (2 * price - future2) / tick2
      const book = side === 0 ? (future2 - 2 * ms.askTop) / tick2 : (2 * ms.bidTop - future2) / tick2
      const curve = side === 0 ? this.edge.buy : this.edge.sell
      const extra = edgeRate(curve, ours) - edgeRate(curve, book)
      return extra > 0 ? { perSec: extra, priceBps: price, edgeTicks: ours, better: true } : better
    }
    const bid = Math.max(ourBid, ms.bidTop)
    const ask = ourAsk < 0 ? ms.askTop : Math.min(ourAsk, ms.askTop)
    const tick = ms.tickBps
    const extra = arrivalRate(this.model, side, (ask - bid) / tick) - arrivalRate(this.model, side, (ms.askTop - ms.bidTop) / tick)
    return extra > 0 ? { perSec: extra, priceBps: price, edgeTicks: 0, better: true } : none
  }

  /** The book of `ms` may have changed at nowMs: integrate the old rate up to now and set the new one. */
  refresh(ms: MarketState, nowMs: number): void {
    const sides = this.sides[ms.idx]!
    let better = false
    for (const side of [0, 1] as const) {
      const s = sides[side]!
      s.acc += s.rate * (nowMs - s.lastMs)
      s.lastMs = nowMs
      const x = this.extraRate(ms, side, nowMs)
      better ||= x.better
      s.rate = (x.perSec * (1 + this.pi)) / 1000
      s.nextMs = s.rate > 0 ? Math.max(nowMs, Math.ceil(nowMs + (s.level - s.acc) / s.rate)) : Number.POSITIVE_INFINITY
    }
    // Until the book or our quotes change (each refreshes), only the future mid can change the edge form's rates.
    this.futureMs[ms.idx] = this.edge !== null && better ? this.nextFutureChange(ms.idx, nowMs) : Number.POSITIVE_INFINITY
    this.updateNext()
  }

  /** The first time after nowMs at which the tape's mid H ahead changes (a snapshot at or after nowMs + H, strictly later). */
  private nextFutureChange(m: number, nowMs: number): number {
    const p = this.paths[m]!
    const j = indexAt(p, nowMs + this.horizonMs) + 1
    return j < p.tMs.length ? Math.max(nowMs + 1, p.tMs[j]! - this.horizonMs) : Number.POSITIVE_INFINITY
  }

  private updateNext(): void {
    let next = Number.POSITIVE_INFINITY
    for (const sides of this.sides) for (const s of sides) if (s.nextMs < next) next = s.nextMs
    for (const t of this.futureMs) if (t < next) next = t
    this.nextMs = next
  }

  /** Fires the candidate arrivals due at nowMs, then re-rates the markets whose future mid changes now (the venue's clock is set by the caller). */
  fire(nowMs: number): void {
    for (const ms of this.markets) {
      const sides = this.sides[ms.idx]!
      for (const side of [0, 1] as const) {
        const s = sides[side]!
        if (s.nextMs !== nowMs) continue
        s.acc = 0
        s.lastMs = nowMs
        s.level = this.rng.exponential(1)
        this.candidate(ms, side, nowMs)
        this.refresh(ms, nowMs)
      }
      // (A refresh above already took in a change of the future mid at nowMs.)
      if (this.futureMs[ms.idx] === nowMs) this.refresh(ms, nowMs)
    }
    this.updateNext()
  }

  /** Version 3: the edge (ticks) our price offers against the tape's mid the sizes' horizon later; null without it (past the tape, one-sided, or before version 3). */
  private longEdge(ms: MarketState, side: 0 | 1, priceBps: number, nowMs: number): number | null {
    const by = this.model.size_by_edge
    if (by === null) return null
    const future2 = mid2At(this.paths[ms.idx]!, nowMs + by.horizon_sec * 1000)
    if (future2 < 0) return null
    return side === 0 ? (future2 - 2 * priceBps) / (2 * ms.tickBps) : (2 * priceBps - future2) / (2 * ms.tickBps)
  }

  /** One candidate: (version 1) kept with weight w / (1 + π) by where the tape's mid goes; a kept one takes our quote. */
  private candidate(ms: MarketState, side: 0 | 1, nowMs: number): void {
    const { priceBps, edgeTicks } = this.extraRate(ms, side, nowMs)
    if (priceBps < 0) return
    if (this.edge !== null) {
      this.counts.takers++
      if (edgeTicks > 0) this.counts.informed++
      this.v.take(ms, side === 0, priceBps, sizeOf(this.model, this.rng.next(), this.longEdge(ms, side, priceBps, nowMs)), CAUSE_RESPONSE)
      return
    }
    const path = this.paths[ms.idx]!
    const now2 = mid2At(path, nowMs)
    const later2 = mid2At(path, nowMs + this.horizonMs)
    const way = now2 < 0 || later2 < 0 || later2 === now2 ? 1 : (later2 > now2) === (side === 0) ? 2 : 0
    const w = 1 - this.pi + this.pi * way
    const u = this.rng.next() * (1 + this.pi)
    if (u >= w) return
    this.counts.takers++
    if (way === 2 && u < 2 * this.pi) this.counts.informed++
    this.v.take(ms, side === 0, priceBps, sizeOf(this.model, this.rng.next()), CAUSE_RESPONSE)
  }
}
