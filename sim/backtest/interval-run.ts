// The backtest with its interval (docs/backtesting.md "Intervals and coverage"; the arithmetic
// is interval.ts): the run itself, then, with a market-response model, its draws.
import { Rng } from "../world/random.ts"
import type { BacktestConfig } from "./config.ts"
import type { Dataset } from "./dataset.ts"
import { type IntervalSpec, intervalOf, pointOf } from "./interval.ts"
import type { OutcomePath } from "./report.ts"
import { drawResponseModel } from "./response/draw.ts"
import { type RunOptions, type RunResult, runBacktest } from "./runner.ts"

export interface IntervalOptions extends RunOptions {
  /** Called after each response-model draw (a whole backtest each). */
  readonly onDraw?: (done: number, total: number) => void
}

/** The backtest and its interval: the run itself, then its interval (below). */
export const runWithInterval = (d: Dataset, config: BacktestConfig, spec: IntervalSpec, opts: IntervalOptions = {}): RunResult =>
  withInterval(d, config, runBacktest(d, config, opts), spec, opts)

/**
 * A run's report with its interval: from the run's own path, or (with a market-response model
 * and spec.draws > 0) from the response draws, each a whole run with the same data and config.
 */
export const withInterval = (d: Dataset, config: BacktestConfig, main: RunResult, spec: IntervalSpec, opts: Pick<IntervalOptions, "onDraw"> = {}): RunResult => {
  const draws = config.response === null ? 0 : spec.draws
  const paths: OutcomePath[] = []
  if (draws === 0) paths.push(main.report.outcome_path)
  for (let i = 1; i <= draws; i++) {
    const model = drawResponseModel(config.response!, new Rng(config.seed, `interval/model/${i}`))
    paths.push(runBacktest(d, { ...config, response: model, responseDraw: i }).report.outcome_path)
    opts.onDraw?.(i, draws)
  }
  const interval = intervalOf(paths, pointOf(main.report.outcome_path), spec, draws, config.sampleSec, config.seed)
  return { ...main, report: { ...main.report, interval } }
}
