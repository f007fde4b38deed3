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
    volatility: number
  ) {
    this.logits = Array.from({ length: markets }, () => {
      const p = rng.int(Math.min(...initialBps), Math.max(...initialBps)) / 10_000
      return Math.log(p / (1 - p))
    })
    const sigma = volatility * Math.sqrt(STEP_SEC / 3600)
    if (sigma > 0) {
      scheduler.every(STEP_SEC * 1000, () => {
        for (let i = 0; i < this.logits.length; i++) this.logits[i] = clampLogit(this.logits[i]! + sigma * this.rng.normal())
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
