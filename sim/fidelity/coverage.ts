// The interval's coverage (docs/backtesting.md "Intervals and coverage"): each bot-run's headline
// backtest carries a range for its trading PnL and fills (sim/backtest/interval.ts); the share of
// bot-runs whose realised figure fell inside it says whether a stated 90 % means 90 %.
import type { OutcomeInterval } from "../backtest/interval.ts"
import type { Side } from "./fidelity.ts"

/** One bot-run's interval as `npm run fidelity -- --json` prints it (USDC, fills, and how it was made). */
export interface RunInterval {
  readonly pnl_usdc: readonly [number, number]
  readonly fills: readonly [number, number]
  readonly level: number
  /** Market-response model draws pooled (0: the run's own path only). */
  readonly draws: number
  /** Bootstrap resamples per draw. */
  readonly resamples: number
  readonly block_sec: number
}

export const runIntervalOf = (x: OutcomeInterval): RunInterval => ({
  pnl_usdc: [x.trading_pnl_micro[0] / 1e6, x.trading_pnl_micro[1] / 1e6], fills: x.fills, level: x.level, draws: x.draws, resamples: x.resamples, block_sec: x.block_sec
})

export interface CoverageCount {
  /** inside ÷ runs (null with no run). */
  readonly share: number | null
  /** Realised figure within [lo, hi], both ends in. */
  readonly inside: number
  /** Below lo: the backtest's range was too optimistic for PnL, too high for fills. */
  readonly below: number
  readonly above: number
  /** Bot-runs with an interval. */
  readonly runs: number
}

export interface Coverage {
  /** The level the intervals state (null when no run has one). */
  readonly level: number | null
  /** Realised trading PnL at the live market's final marks (the headline figure the PnL comparison uses). */
  readonly trading_pnl: CoverageCount
  readonly fills: CoverageCount
  /** The realised trading PnL at the counterfactual's final marks (the backtest's own), for comparison. */
  readonly trading_pnl_at_counterfactual_marks: CoverageCount
  /** Bot-runs with no interval (not counted above). */
  readonly runs_without_interval: number
}

/** One bot-run as coverage sees it: its realised side and the headline backtest's interval. */
export interface CoveragePair {
  readonly realised: Side
  readonly realisedTradingPnlAtCounterfactualMarksMicro: number
  readonly interval: RunInterval | null
}

/** How many values fell inside their range, ends in; a null end is unbounded (a calibrated range with too few runs for it). */
export const countInside = (xs: ReadonlyArray<{ value: number; range: readonly [number | null, number | null] }>): CoverageCount => {
  let inside = 0
  let below = 0
  for (const { value, range } of xs) {
    if (range[0] !== null && value < range[0]) below++
    else if (range[1] === null || value <= range[1]) inside++
  }
  return { share: xs.length === 0 ? null : inside / xs.length, inside, below, above: xs.length - inside - below, runs: xs.length }
}

/** PnL is compared in whole micro-USDC (the ends are whole micro, printed in USDC). */
const micro = (range: readonly [number, number]): [number, number] => [Math.round(range[0] * 1e6), Math.round(range[1] * 1e6)]

export const coverageOf = (pairs: ReadonlyArray<CoveragePair>): Coverage => {
  const rated = pairs.filter((p): p is CoveragePair & { interval: RunInterval } => p.interval !== null)
  return {
    level: rated[0]?.interval.level ?? null,
    trading_pnl: countInside(rated.map((p) => ({ value: p.realised.tradingPnlMicro, range: micro(p.interval.pnl_usdc) }))),
    fills: countInside(rated.map((p) => ({ value: p.realised.fills, range: p.interval.fills }))),
    trading_pnl_at_counterfactual_marks: countInside(rated.map((p) => ({ value: p.realisedTradingPnlAtCounterfactualMarksMicro, range: micro(p.interval.pnl_usdc) }))),
    runs_without_interval: pairs.length - rated.length
  }
}

const pct = (x: number | null): string => (x === null ? "-" : `${Math.round(x * 100)}%`)
export const coverageCountText = (name: string, c: CoverageCount): string => `${name} inside ${c.inside}/${c.runs} (${pct(c.share)}; ${c.below} below, ${c.above} above)`

/** The coverage line(s) of the text table. */
export const coverageLines = (c: Coverage, runs: ReadonlyArray<{ interval?: RunInterval | null }>): string[] => {
  const first = runs.find((r) => r.interval != null)?.interval
  if (c.level === null || first == null) return ["  interval coverage: no run has an interval"]
  const how = `${pct(c.level)} intervals: block bootstrap of ${first.block_sec / 60}-min blocks, ${first.resamples} resamples${first.draws > 0 ? ` × ${first.draws} response-model draws` : ", no response-model draws"}`
  return [
    `  interval coverage (${how}): realised ${coverageCountText("trading PnL", c.trading_pnl)}, ${coverageCountText("fills", c.fills)}; PnL at the counterfactual's marks ${c.trading_pnl_at_counterfactual_marks.inside}/${c.trading_pnl_at_counterfactual_marks.runs}${c.runs_without_interval > 0 ? `; ${c.runs_without_interval} run(s) without an interval` : ""}`
  ]
}
