// The hidden "true probability" of each market: a seeded random walk in logit
// space, stepped once a simulated minute. Informed traders see it; everyone else
// only sees the book.
import type { Rng } from "./random.ts"
import type { Scheduler } from "./scheduler.ts"

const STEP_SEC = 60

export class Truth {
  private readonly logits: number[]

  constructor(
    scheduler: Scheduler,
    private readonly rng: Rng,
    markets: number,
    initialBps: readonly [number, number],
    /** Logit units per √hour. */
    volatility: number,
    /** News: a jump of size × N(0, 1) logits with probability perHour / 60 at each step; none when absent. */
    jumps?: { readonly perHour: number; readonly size: number }
  ) {
    this.logits = Array.from({ length: markets }, () => {
      const p = rng.int(Math.min(...initialBps), Math.max(...initialBps)) / 10_000
      return Math.log(p / (1 - p))
    })
    const sigma = volatility * Math.sqrt(STEP_SEC / 3600)
    // Draws only for what is configured, so a scenario without jumps keeps its random stream (and hashes).
    const jumpChance = jumps === undefined || jumps.size === 0 ? 0 : jumps.perHour / (3600 / STEP_SEC)
    if (sigma > 0 || jumpChance > 0) {
      scheduler.every(STEP_SEC * 1000, () => {
        for (let i = 0; i < this.logits.length; i++) {
          let x = this.logits[i]!
          if (sigma > 0) x += sigma * this.rng.normal()
          if (jumpChance > 0 && this.rng.chance(jumpChance)) x += jumps!.size * this.rng.normal()
          this.logits[i] = clampLogit(x)
        }
      })
    }
  }

  /** The true probability of market `i` now, in bps (100..9900). */
  bps(i: number): number {
    return Math.round(10_000 / (1 + Math.exp(-this.logits[i]!)))
  }
}

/** Keeps probabilities within 1%..99%: the walk never pins a market at certainty. */
const clampLogit = (x: number): number => Math.max(-4.59, Math.min(4.59, x))
