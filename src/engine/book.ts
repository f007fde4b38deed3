// One side of a market's book in YES terms. Levels live in a flat array
// indexed by price (0..10000); a bitmap of non-empty levels finds the next
// best price with a few word scans instead of walking 10,001 slots.
import type { Order } from "./state.ts"

const LEVELS = 10_001
const WORDS = Math.ceil(LEVELS / 32)

export class Level {
  head: Order | null = null
  tail: Order | null = null
  /** Sum of `remaining` over the queue. */
  size = 0
  count = 0
}

export class BookSide {
  readonly levels: Array<Level | undefined> = new Array(LEVELS)
  /** Every price whose Level exists (levels are made once and kept), in the order made: the invariant check walks these, not all 10,001 slots. */
  readonly levelPrices: number[] = []
  private readonly bitmap = new Uint32Array(WORDS)
  /** Best price, or -1 when the side is empty. Bids: highest; asks: lowest. */
  best = -1
  orderCount = 0
  /** Counts every change to the side (an order added, removed or traded down): equal counts, equal book. Not state: never snapshotted. */
  changes = 0
  constructor(readonly isBid: boolean) {}

  append(order: Order): void {
    const price = order.yesPriceBps
    let level = this.levels[price]
    if (level === undefined) {
      level = new Level()
      this.levels[price] = level
      this.levelPrices.push(price)
    }
    if (level.tail === null) {
      level.head = order
      this.bitmap[price >>> 5]! |= 1 << (price & 31)
      if (this.best === -1 || (this.isBid ? price > this.best : price < this.best)) this.best = price
    } else {
      level.tail.next = order
      order.prev = level.tail
    }
    level.tail = order
    level.size += order.remaining
    level.count++
    this.orderCount++
    this.changes++
  }

  remove(order: Order): void {
    const price = order.yesPriceBps
    const level = this.levels[price]!
    if (order.prev === null) level.head = order.next
    else order.prev.next = order.next
    if (order.next === null) level.tail = order.prev
    else order.next.prev = order.prev
    order.prev = null
    order.next = null
    level.size -= order.remaining
    level.count--
    this.orderCount--
    this.changes++
    if (level.head === null) {
      this.bitmap[price >>> 5]! &= ~(1 << (price & 31))
      if (price === this.best) this.best = this.isBid ? this.scanDown(price) : this.scanUp(price)
    }
  }

  /** A resting order traded `size` contracts; keeps the level total exact. */
  reduce(order: Order, size: number): void {
    this.levels[order.yesPriceBps]!.size -= size
    this.changes++
  }

  /** Highest non-empty price strictly below `from`, or -1. */
  private scanDown(from: number): number {
    let p = from - 1
    if (p < 0) return -1
    let word = p >>> 5
    let bits = this.bitmap[word]! & (0xffffffff >>> (31 - (p & 31)))
    for (;;) {
      if (bits !== 0) return (word << 5) + (31 - Math.clz32(bits))
      if (word === 0) return -1
      bits = this.bitmap[--word]!
    }
  }

  /** Lowest non-empty price strictly above `from`, or -1. */
  private scanUp(from: number): number {
    const p = from + 1
    if (p >= LEVELS) return -1
    let word = p >>> 5
    let bits = this.bitmap[word]! & (0xffffffff << (p & 31))
    for (;;) {
      if (bits !== 0) return (word << 5) + (31 - Math.clz32(bits & -bits))
      if (++word >= WORDS) return -1
      bits = this.bitmap[word]!
    }
  }

  /** Next non-empty price after `price` moving away from the top of the book. */
  nextPrice(price: number): number {
    return this.isBid ? this.scanDown(price) : this.scanUp(price)
  }

  /** Aggregated levels from the best price outward: [priceBps, size] pairs. */
  depth(maxLevels: number): Array<[number, number]> {
    const out: Array<[number, number]> = []
    let price = this.best
    while (price !== -1 && out.length < maxLevels) {
      out.push([price, this.levels[price]!.size])
      price = this.nextPrice(price)
    }
    return out
  }
}
