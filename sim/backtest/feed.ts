// The strategy's market-data feed: for each data event, when the strategy sees it (after the feed
// latency, on its tick for a ticked bot, FIFO) and what it sees — the mid as the live bot computes
// it, our inventory and PnL right after the event.
import type { LatencySpec } from "./config.ts"
import { latencyMs } from "./driver.ts"
import type { Rng } from "../world/random.ts"
import type { MarketState } from "./venue.ts"

export class Feed {
  private readonly atMs: Float64Array
  private readonly mid2: Int32Array
  private readonly netYes: Float64Array
  private readonly pnlMicro: Float64Array
  private fed = 0
  private fp = 0
  private lastAtMs = 0

  constructor(
    private readonly marketOf: (i: number) => MarketState,
    events: number,
    private readonly spec: LatencySpec,
    private readonly rng: Rng,
    private readonly tickMs: number
  ) {
    this.atMs = new Float64Array(events)
    this.mid2 = new Int32Array(events)
    this.netYes = new Float64Array(events)
    this.pnlMicro = new Float64Array(events)
  }

  /** Data event i, applied at tMs in its market: its delivery time and what it shows. Returns the mid it shows (half-bps, -1 for none). */
  record(i: number, tMs: number, ms: MarketState): number {
    const seenAt = tMs + latencyMs(this.spec, this.rng)
    // A tick sees what happened before it: an event at the tick's own instant waits for the next one.
    this.lastAtMs = Math.max(this.lastAtMs, this.tickMs > 0 ? (Math.floor(seenAt / this.tickMs) + 1) * this.tickMs : seenAt)
    this.atMs[i] = this.lastAtMs
    // As the live bot (src/service/lp-bot-market.ts): the others' mid, else the last trade's price, else none.
    const mid2 = ms.bidTop >= 0 && ms.askTop >= 0 ? ms.bidTop + ms.askTop : ms.lastTradeBps >= 0 ? 2 * ms.lastTradeBps : -1
    this.mid2[i] = mid2
    this.netYes[i] = ms.netYes
    this.pnlMicro[i] = ms.pnlMicro
    this.fed = i + 1
    return mid2
  }

  /** When the next recorded event reaches the strategy, +∞ when none is waiting. */
  get nextMs(): number {
    return this.fp < this.fed ? this.atMs[this.fp]! : Number.POSITIVE_INFINITY
  }

  /** The next event reaches the strategy: its market's observed mid, inventory and PnL become the event's. */
  deliverNext(): MarketState {
    const j = this.fp++
    const ms = this.marketOf(j)
    ms.obsMid2 = this.mid2[j]!
    ms.obsNetYes = this.netYes[j]!
    ms.obsPnlMicro = this.pnlMicro[j]!
    return ms
  }
}
