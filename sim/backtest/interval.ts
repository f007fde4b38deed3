// An interval for a backtest's trading PnL and fills, not only a number (docs/backtesting.md
// "Intervals and coverage"). Two sources of uncertainty:
//  * the path: the run's per-sample increments (trading PnL change, fills) from the strategy's
//    start are resampled with a circular block bootstrap (Politis & Romano 1992): blocks of
//    `blockSec` consecutive samples, each starting at a uniform position and wrapping around the
//    end, laid end to end to the run's length; B resamples, each a total;
//  * the market-response model, when the run has one: R more runs, each with the model's
//    parameters drawn from their standard errors (response/draw.ts) and its own arrival stream;
//    each draw is bootstrapped as above (B per draw) and the totals pooled.
// The interval is the level's central quantiles of the pooled totals (Hyndman–Fan type 7,
// rounded outward to whole micro-USDC and whole fills). Every draw comes from the run's seed.
// runWithInterval (interval-run.ts) makes the runs; this module is the arithmetic and the wording.
import { Rng } from "../world/random.ts"
import type { OutcomePath } from "./report.ts"

export interface IntervalSpec {
  /** The interval's level, in (0, 1): 0.9 is the 5 % and 95 % quantiles. */
  readonly level: number
  /** Market-response model draws (runs with drawn parameters and their own arrival stream); used only when the run has a model. */
  readonly draws: number
  /** Bootstrap resamples per draw. */
  readonly resamples: number
  /** The bootstrap's block length, seconds (a whole number of samples, at least one). */
  readonly blockSec: number
}

/**
 * 10-minute blocks: far longer than what ties the bot's consecutive minutes together (its
 * 15 s re-quote cadence, markouts that settle within 2 min), so a block keeps that dependence
 * whole, while a 4-hour run still holds about 24 of them (near the n^(1/3) rule for the block
 * length of a distribution's quantiles: 240^(1/3) ≈ 6 one-minute samples).
 */
export const DEFAULT_INTERVAL: IntervalSpec = { level: 0.9, draws: 0, resamples: 1000, blockSec: 600 }
/** Response draws when a model is given and --draws is not. */
export const DEFAULT_RESPONSE_DRAWS = 20

export interface OutcomeInterval {
  readonly level: number
  /** [lo, hi]: the level's central quantiles of the pooled totals, rounded outward. */
  readonly trading_pnl_micro: readonly [number, number]
  readonly fills: readonly [number, number]
  /** The run's own figures (the point estimate): its trading PnL and fills in the quoted markets. */
  readonly point: { readonly trading_pnl_micro: number; readonly fills: number }
  /** Response-model draws pooled (0: none, the run itself is bootstrapped). */
  readonly draws: number
  /** Bootstrap resamples per draw (or of the run). */
  readonly resamples: number
  readonly block_sec: number
  readonly sample_sec: number
  /** The per-sample increments bootstrapped (from the strategy's start) and the blocks a resample is made of. */
  readonly increments: number
  readonly blocks: number
  /** How the interval was made, one line. */
  readonly method: string
}

/** The per-sample increments of one figure from the strategy's start: the first from 0 (nothing happens before it). */
export const incrementsOf = (path: OutcomePath, values: ReadonlyArray<number>): number[] => {
  const out: number[] = []
  let prev = 0
  for (let i = 0; i < path.tSec.length; i++) {
    if (path.tSec[i]! <= path.fromSec) continue
    out.push(values[i]! - prev)
    prev = values[i]!
  }
  return out
}

/**
 * B totals of a circular block bootstrap of `increments`: each resample lays blocks of `blockLen`
 * consecutive increments (wrapping around the end), each from a uniform start, end to end until
 * it is as long as the series, and sums them. With one block as long as the series every total
 * is the series' own.
 */
export const blockBootstrapTotals = (increments: ReadonlyArray<number>, blockLen: number, resamples: number, rng: Rng): number[] => {
  const n = increments.length
  if (n === 0) return new Array<number>(resamples).fill(0)
  const len = Math.max(1, Math.min(Math.floor(blockLen), n))
  // prefix[k] = Σ increments[0..k) over the series twice, so a wrapped block is one difference.
  const prefix = new Float64Array(2 * n + 1)
  for (let k = 0; k < 2 * n; k++) prefix[k + 1] = prefix[k]! + increments[k % n]!
  const out: number[] = []
  for (let b = 0; b < resamples; b++) {
    let total = 0
    for (let filled = 0; filled < n; filled += len) {
      const take = Math.min(len, n - filled)
      const start = rng.int(0, n - 1)
      total += prefix[start + take]! - prefix[start]!
    }
    out.push(total)
  }
  return out
}

/** The q-quantile of sorted xs (Hyndman–Fan type 7: linear between order statistics). */
const quantile = (sorted: ReadonlyArray<number>, q: number): number => {
  const h = (sorted.length - 1) * q
  const lo = Math.floor(h)
  const hi = Math.min(lo + 1, sorted.length - 1)
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!)
}

/** The level's central quantiles of xs, rounded outward to integers. */
export const centralRange = (xs: ReadonlyArray<number>, level: number): [number, number] => {
  const sorted = [...xs].sort((a, b) => a - b)
  const tail = (1 - level) / 2
  return [Math.floor(quantile(sorted, tail) + 1e-9), Math.ceil(quantile(sorted, 1 - tail) - 1e-9)]
}

/** The interval from one outcome path per draw (streams `interval/bootstrap/<i>` of the run's seed) (the run's own when there are no draws), B bootstrap totals each, pooled. */
export const intervalOf = (paths: ReadonlyArray<OutcomePath>, point: OutcomeInterval["point"], spec: IntervalSpec, draws: number, sampleSec: number, seed: string): OutcomeInterval => {
  const blockLen = Math.max(1, Math.round(spec.blockSec / sampleSec))
  const pnl: number[] = []
  const fills: number[] = []
  let increments = 0
  paths.forEach((path, i) => {
    const pnlInc = incrementsOf(path, path.tradingPnlMicro)
    const fillInc = incrementsOf(path, path.fills)
    increments = Math.max(increments, pnlInc.length)
    // One stream per draw, and the same block starts for both figures: they are one resampled path.
    const starts = new Rng(seed, `interval/bootstrap/${i}`)
    const again = new Rng(seed, `interval/bootstrap/${i}`)
    pnl.push(...blockBootstrapTotals(pnlInc, blockLen, spec.resamples, starts))
    fills.push(...blockBootstrapTotals(fillInc, blockLen, spec.resamples, again))
  })
  const blocks = increments === 0 ? 0 : Math.ceil(increments / Math.min(blockLen, increments))
  const pct = `${Math.round(spec.level * 1000) / 10}%`
  const method =
    `${pct} central range of ${pnl.length.toLocaleString("en-US")} totals: a circular block bootstrap of the run's ${increments} per-${sampleSec}-s increments ` +
    `from the strategy's start, ${blocks} blocks of ${spec.blockSec} s a resample, ${spec.resamples.toLocaleString("en-US")} resamples` +
    (draws > 0 ? ` for each of ${draws} market-response model draws (parameters from their standard errors, own arrival stream)` : "")
  return {
    level: spec.level, trading_pnl_micro: centralRange(pnl, spec.level), fills: centralRange(fills, spec.level), point,
    draws, resamples: spec.resamples, block_sec: spec.blockSec, sample_sec: sampleSec, increments, blocks, method
  }
}

/** The run's own figures: its trading PnL and fills in the quoted markets (the outcome path ends on them). */
export const pointOf = (p: OutcomePath): OutcomeInterval["point"] => ({ trading_pnl_micro: p.tradingPnlMicro.at(-1) ?? 0, fills: p.fills.at(-1) ?? 0 })

const usdc = (micro: number): string => (micro / 1e6).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })

/** The interval as label/value lines: the console summary and the HTML page's first table. */
export const intervalLines = (x: OutcomeInterval): Array<[string, string]> => {
  const pct = `${Math.round(x.level * 1000) / 10}%`
  return [
    [`${pct} interval`, `trading PnL ${usdc(x.trading_pnl_micro[0])} … ${usdc(x.trading_pnl_micro[1])} USDC (run ${usdc(x.point.trading_pnl_micro)}), fills ${x.fills[0].toLocaleString("en-US")} … ${x.fills[1].toLocaleString("en-US")} (run ${x.point.fills.toLocaleString("en-US")})`],
    ["  made by", x.method]
  ]
}
