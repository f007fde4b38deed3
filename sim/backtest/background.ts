// The background book: the market's other makers, rebuilt in the engine from the data so
// our quotes compete with them for price-time priority.
//
// * Before each trade the book is made to agree with the print: a taker buy at P means
//   the best ask was P (stale background asks below P and bids at or above it go), and
//   level P holds at least the trade's size (topped up behind the queue). The trade then
//   crosses the book as an IOC, filling any better-priced quotes of ours first.
// * Snapshots (when the data has them) are reconciled level by level: decreases through
//   the queue model, increases appended at the back of the level.
// * Without snapshots, synthetic depth: `levels` levels a side, one tick apart from the
//   recent trade prices, each drawn around the market's base depth; after a share of the
//   trades one random level is redrawn, so background adds and cancels reach our levels.
// Background orders placed across one of our quotes trade with it: the market moved
// through our price, and we are the maker.
import { MAX_PRICE_BPS } from "../../src/engine/money.ts"
import type { Order } from "../../src/engine/state.ts"
import type { Dataset } from "./dataset.ts"
import type { QueueModel } from "./queue.ts"
import type { Rng } from "../world/random.ts"
import type { MarketState, Venue } from "./venue.ts"

const isDust = (isBid: boolean, yesPriceBps: number, size: number): boolean =>
  size * (isBid ? yesPriceBps : MAX_PRICE_BPS - yesPriceBps) < 100

export class Background {
  /** Background decreases at one of our levels, and how many the queue model put ahead of us. */
  decreasesAtOurLevel = 0
  decreasesAhead = 0
  rebuilds = 0

  constructor(
    private readonly v: Venue,
    private readonly queue: QueueModel,
    private readonly rng: Rng,
    private readonly levels: number,
    private readonly churnPct: number
  ) {}

  beforeTrade(ms: MarketState, takerBuys: boolean, priceBps: number, size: number): void {
    const tick = ms.tickBps
    let bidMoved = false
    let askMoved = false
    const fresh = ms.snapshotMode ? false : ms.bidTop < 0 && ms.askTop < 0
    if (takerBuys) {
      if (ms.askTop !== priceBps) {
        ms.askTop = priceBps
        askMoved = true
      }
      if (ms.bidTop >= priceBps || fresh) {
        ms.bidTop = priceBps - tick >= 1 ? priceBps - tick : -1
        bidMoved = true
      }
    } else {
      if (ms.bidTop !== priceBps) {
        ms.bidTop = priceBps
        bidMoved = true
      }
      if ((ms.askTop >= 0 && ms.askTop <= priceBps) || fresh) {
        ms.askTop = priceBps + tick <= MAX_PRICE_BPS - 1 ? priceBps + tick : -1
        askMoved = true
      }
    }
    if (askMoved) this.clearBetterThan(ms, false, ms.askTop)
    if (bidMoved) this.clearBetterThan(ms, true, ms.bidTop)
    if (!ms.snapshotMode) {
      if (askMoved) this.fillWindow(ms, false)
      if (bidMoved) this.fillWindow(ms, true)
    }
    this.topUp(ms, !takerBuys, priceBps, size, ms.snapshotMode ? size : Math.max(size, this.depth(ms, 0)))
    if (!ms.snapshotMode && this.churnPct > 0 && this.rng.next() * 100 < this.churnPct) this.churn(ms)
    if (ms.bidTop >= 0 && ms.askTop >= 0) ms.mid2 = ms.bidTop + ms.askTop
  }

  /** Reconciles the background with snapshot levels [start, start + count). */
  snapshot(ms: MarketState, d: Dataset, start: number, count: number): void {
    const targets = [new Map<number, number>(), new Map<number, number>()] // [asks, bids] by isBid index
    for (let j = start; j < start + count; j++) targets[d.levelIsAsk[j] === 1 ? 0 : 1]!.set(d.levelPrice[j]!, d.levelSize[j]!)
    // Decreases first, on both sides, so a new level never meets a stale background order.
    for (const isBid of [true, false]) {
      const side = isBid ? ms.market.bids : ms.market.asks
      const target = targets[isBid ? 1 : 0]!
      const prices: number[] = []
      for (let p = side.best; p !== -1; p = side.nextPrice(p)) prices.push(p)
      for (const p of prices) {
        const bg = this.v.bgAt(ms, isBid, p)
        const want = target.get(p) ?? 0
        if (bg > want) this.reduce(ms, isBid, p, bg - want)
      }
    }
    ms.bidTop = -1
    ms.askTop = -1
    let bidRank = 0
    let askRank = 0
    for (let j = start; j < start + count; j++) {
      const isBid = d.levelIsAsk[j] === 0
      const p = d.levelPrice[j]!
      if (isBid && ms.bidTop < 0) ms.bidTop = p
      if (!isBid && ms.askTop < 0) ms.askTop = p
      // An L2 level does not say whose it is. Makers quote ladders on both sides, so level k of
      // each side goes to the same wallet: the rewards score (two-sided Q_min, the cap) sees
      // two-sided competitors rather than depth scattered over one-sided wallets.
      const rank = isBid ? bidRank++ : askRank++
      const bg = this.v.bgAt(ms, isBid, p)
      if (d.levelSize[j]! > bg) this.v.placeBg(ms, isBid, p, d.levelSize[j]! - bg, this.v.bgMakers[rank % this.v.bgMakers.length])
    }
    if (ms.bidTop >= 0 && ms.askTop >= 0) ms.mid2 = ms.bidTop + ms.askTop
  }

  /**
   * Removes `amount` background contracts at one level. Without an order of ours there it
   * comes off the back; with one, the queue model picks the side of us it comes from
   * first (the rest, if that side is too short, from the other).
   */
  reduce(ms: MarketState, isBid: boolean, priceBps: number, amount: number): void {
    const level = (isBid ? ms.market.bids : ms.market.asks).levels[priceBps]
    if (level === undefined || amount <= 0) return
    const lp = this.v.lpAccount
    const ahead: Order[] = []
    const behind: Order[] = []
    let ours = 0
    for (let o = level.head; o !== null; o = o.next) {
      if (o.account === lp) ours++
      else if (ours === 0) ahead.push(o)
      else behind.push(o)
    }
    if (ours === 0) return this.takeFromTail(ms, isBid, priceBps, ahead, amount)
    let front = 0
    for (const o of ahead) front += o.remaining
    let back = 0
    for (const o of behind) back += o.remaining
    const x = Math.min(amount, front + back)
    this.decreasesAtOurLevel++
    const fromAhead = this.queue.aheadFirst(front, back) ? Math.min(x, front) : x - Math.min(x, back)
    if (fromAhead > 0) this.decreasesAhead++
    if (x - fromAhead > 0) this.takeFromTail(ms, isBid, priceBps, behind, x - fromAhead)
    if (fromAhead > 0) this.takeAhead(ms, isBid, priceBps, ahead, fromAhead)
  }

  /** Cancels from the back of `list`; a partly kept order is re-placed at the back of the level (it was behind us anyway). */
  private takeFromTail(ms: MarketState, isBid: boolean, priceBps: number, list: Order[], amount: number): void {
    let x = amount
    for (let i = list.length - 1; i >= 0 && x > 0; i--) {
      const o = list[i]!
      const r = o.remaining
      const maker = o.account.user
      this.v.cancel(ms, o)
      if (r > x) {
        if (!isDust(isBid, priceBps, r - x)) this.v.placeBg(ms, isBid, priceBps, r - x, maker)
        x = 0
      } else x -= r
    }
  }

  /**
   * Cancels queue ahead of us, nearest first. The engine cannot shrink an order in place, so
   * a partly kept order ahead is rebuilt with everything behind it (itself, ours, the rest)
   * in the same FIFO order: the queue keeps its shape, only that order is smaller.
   */
  private takeAhead(ms: MarketState, isBid: boolean, priceBps: number, ahead: Order[], amount: number): void {
    let x = amount
    for (let i = ahead.length - 1; i >= 0 && x > 0; i--) {
      const o = ahead[i]!
      if (o.remaining <= x) {
        x -= o.remaining
        this.v.cancel(ms, o)
        continue
      }
      this.rebuilds++
      const tail: Array<{ order: Order; size: number }> = []
      for (let q: Order | null = o; q !== null; q = q.next) tail.push({ order: q, size: q === o ? q.remaining - x : q.remaining })
      const lp = this.v.lpAccount
      for (const { order } of tail) this.v.cancel(ms, order)
      ms.ours = ms.ours.filter((q) => !tail.some((t) => t.order === q))
      for (const { order, size } of tail) {
        if (order.account === lp) this.v.placeLp(ms, { side: order.side, outcome: order.outcome, priceBps: order.priceBps, size })
        else if (!isDust(isBid, priceBps, size)) this.v.placeBg(ms, isBid, priceBps, size, order.account.user)
      }
      x = 0
    }
  }

  /** Cancels background orders priced better than `boundary` (all of that side when -1): stale after a print. */
  private clearBetterThan(ms: MarketState, isBid: boolean, boundary: number): void {
    const side = isBid ? ms.market.bids : ms.market.asks
    const lp = this.v.lpAccount
    const stale: Order[] = []
    for (let p = side.best; p !== -1 && (boundary < 0 || (isBid ? p > boundary : p < boundary)); p = side.nextPrice(p)) {
      for (let o = side.levels[p]!.head; o !== null; o = o.next) if (o.account !== lp) stale.push(o)
    }
    for (const o of stale) this.v.cancel(ms, o)
  }

  /** Synthetic depth: any empty level of the window from the top outward gets a fresh draw. */
  private fillWindow(ms: MarketState, isBid: boolean): void {
    const top = isBid ? ms.bidTop : ms.askTop
    if (top < 0) return
    for (let k = 0; k < this.levels; k++) {
      const p = isBid ? top - k * ms.tickBps : top + k * ms.tickBps
      if (p < 1 || p > MAX_PRICE_BPS - 1) break
      if (this.v.bgAt(ms, isBid, p) === 0) this.v.placeBg(ms, isBid, p, this.depth(ms, k))
    }
  }

  /** Makes level p hold at least `need` background contracts (to `target`); a few tries, since a crossing top-up may first trade with us. */
  private topUp(ms: MarketState, isBid: boolean, priceBps: number, need: number, target: number): void {
    for (let attempt = 0; attempt < 3; attempt++) {
      const bg = this.v.bgAt(ms, isBid, priceBps)
      if (bg >= need) return
      this.v.placeBg(ms, isBid, priceBps, target - bg)
    }
  }

  /** Depth of synthetic level k: base · (1 + k/2) · U(0.5, 1.5), whole contracts. */
  private depth(ms: MarketState, k: number): number {
    return Math.max(1, Math.round((ms.depthBase * (2 + k) * (0.5 + this.rng.next())) / 2))
  }

  /** Redraws one random synthetic level: an add at the back, or a decrease through the queue model. */
  private churn(ms: MarketState): void {
    const isBid = this.rng.next() < 0.5
    const k = this.rng.int(0, this.levels - 1)
    const top = isBid ? ms.bidTop : ms.askTop
    if (top < 0) return
    const p = isBid ? top - k * ms.tickBps : top + k * ms.tickBps
    if (p < 1 || p > MAX_PRICE_BPS - 1) return
    const want = this.depth(ms, k)
    const bg = this.v.bgAt(ms, isBid, p)
    if (want > bg) this.v.placeBg(ms, isBid, p, want - bg)
    else if (want < bg) this.reduce(ms, isBid, p, bg - want)
  }
}
