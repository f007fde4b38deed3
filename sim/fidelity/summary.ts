// The fidelity summary: per queue × latency model the medians of backtest ÷ realised and of the
// PnL difference, the replay's, and for the headline model the per-run figures, coverage, PnL
// split and bias (figures.ts, coverage.ts, bias.ts).
import { type PnlAttribution, poolAttribution } from "../backtest/attribution.ts"
import { type BiasFigures, biasFigures } from "./bias.ts"
import { type Coverage, coverageOf } from "./coverage.ts"
import { type BotRun, HEADLINE, type ModelResult, type Side } from "./fidelity.ts"
import { type PerRunFigures, perRunFigures } from "./figures.ts"
import { type MarksApart, marksApart } from "./marks.ts"

/** The median of the values that have a ratio: NaN (0/0) is left out; +Infinity (x/0) is kept, as the largest. */
const median = (xs: ReadonlyArray<number>): number | null => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b)
  if (s.length === 0) return null
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** backtest ÷ realised; 0/0 has no ratio (NaN: left out of the medians, never counted as 1), x/0 is +Infinity. */
const ratio = (b: number, r: number): number => (r === 0 ? (b === 0 ? Number.NaN : Number.POSITIVE_INFINITY) : b / r)

/** The ratios a median is taken of, per figure. */
export type RatioKey = "fills" | "filled_contracts" | "rewards" | "rebates"
const RATIO_FIELDS: ReadonlyArray<readonly [RatioKey, Exclude<keyof Side, "tradingPnlMicro">]> = [
  ["fills", "fills"], ["filled_contracts", "filledContracts"], ["rewards", "rewardsMicro"], ["rebates", "rebatesMicro"]
]

/** Medians of backtest ÷ realised per figure (0/0 runs left out and counted), and of backtest − realised trading PnL at both marks. */
export interface Medians {
  readonly fills: number | null
  readonly filled_contracts: number | null
  readonly rewards: number | null
  readonly rebates: number | null
  /** Backtest − realised trading PnL, the realised side at the live market's final marks (USDC). */
  readonly pnl_diff_usdc: number | null
  /** The same with the realised side at the counterfactual's final marks (the backtest's own). */
  readonly pnl_diff_usdc_at_counterfactual_marks: number | null
  /** Runs with 0 on both sides of a ratio: left out of that median. */
  readonly excluded_zero_zero: Readonly<Record<RatioKey, number>>
}

/** One model's medians over bot-runs; `realisedCf` is the realised PnL each run is compared with at the counterfactual marks. */
const mediansOf = (pairs: ReadonlyArray<{ realised: Side; backtest: Side; realisedPnlCfMicro: number }>): Medians => {
  const out: Record<string, unknown> = {}
  const excluded: Record<string, number> = {}
  for (const [key, k] of RATIO_FIELDS) {
    const xs = pairs.map((p) => ratio(p.backtest[k], p.realised[k]))
    out[key] = median(xs)
    excluded[key] = xs.filter((x) => Number.isNaN(x)).length
  }
  return {
    ...(out as Record<RatioKey, number | null>),
    pnl_diff_usdc: median(pairs.map((p) => (p.backtest.tradingPnlMicro - p.realised.tradingPnlMicro) / 1e6)),
    pnl_diff_usdc_at_counterfactual_marks: median(pairs.map((p) => (p.backtest.tradingPnlMicro - p.realisedPnlCfMicro) / 1e6)),
    excluded_zero_zero: excluded as Record<RatioKey, number>
  }
}

/** The summary: medians, and the headline model's per-run figures (sim/fidelity/figures.ts). */
export interface FidelitySummary extends PerRunFigures {
  readonly scenario: string
  readonly seeds: ReadonlyArray<number>
  /** Book snapshots of the counterfactual tapes: every this many seconds, 0 = at every change. */
  readonly snapshot_interval_sec: number
  readonly headline: { readonly queue: string; readonly latency: string }
  /** The headline model's medians of backtest ÷ realised; a 0/0 run is left out (counted in `median_excluded_zero_zero`), an x/0 run counts as +∞. */
  readonly median_ratio: { readonly fills: number | null; readonly filled_contracts: number | null; readonly rewards: number | null; readonly rebates: number | null }
  /** Per figure of `median_ratio`: the bot-runs left out of its median because both sides are 0. */
  readonly median_excluded_zero_zero: Readonly<Record<RatioKey, number>>
  /** Backtest − realised trading PnL, median over bot-runs, the realised side at the live market's final marks (the headline). */
  readonly median_pnl_diff_usdc: number | null
  /** The same with the realised side at the counterfactual's final marks: both sides at one set of prices. */
  readonly median_pnl_diff_usdc_at_counterfactual_marks: number | null
  /** Medians for every queue × latency model, same fields. */
  readonly by_model: ReadonlyArray<{ queue: string; latency: string } & Medians>
  /** The same medians for the headline model replaying the live tape without the bot (null when not run): the backtester's own error. Its PnL is compared at its own final marks (both PnL fields). */
  readonly replay: Medians | null
  /** Bot-runs with a reward day only one side paid (that day is not compared), and how many such days. */
  readonly reward_days_one_side: { readonly runs: number; readonly realised_only: number; readonly backtest_only: number }
  readonly target: { readonly ratio: readonly [number, number]; readonly pnl_diff_usdc: number }
  /** The share of bot-runs whose realised trading PnL (at the live market's marks) and fills fell inside their headline backtest's interval. */
  readonly coverage: Coverage
  /** The headline model's trading PnL split, summed over bot-runs: realised, backtest, replay (null where none ran). */
  readonly pnl_attribution: { readonly realised: PnlAttribution | null; readonly backtest: PnlAttribution | null; readonly replay: PnlAttribution | null }
  /** Which of the headline's per-run differences are systematic and which the worlds' noise: means with standard errors clustered by seed, and the pooled trading PnL's interval over seeds. */
  readonly bias: BiasFigures
  /** How far the live market's final marks stand from the counterfactual's, per bot-run market: the realised and the backtest PnL hold inventory at these. */
  readonly final_marks_apart_bps: MarksApart
  readonly runs: ReadonlyArray<BotRun>
}

/** Medians over bot-runs of backtest ÷ realised (fills, contracts, rewards, rebates) and backtest − realised trading PnL. */
export const summarise = (scenario: string, seeds: ReadonlyArray<number>, snapshotSec: number, runs: ReadonlyArray<BotRun>): FidelitySummary => {
  const models = runs[0]?.backtests.map((b) => ({ queue: b.queue, latency: b.latency })) ?? []
  const pick = (run: BotRun, q: string, l: string): ModelResult => run.backtests.find((b) => b.queue === q && b.latency === l)!
  const by = models.map((m) => ({
    queue: m.queue, latency: m.latency,
    ...mediansOf(runs.map((r) => ({ realised: r.realised, backtest: pick(r, m.queue, m.latency), realisedPnlCfMicro: r.realisedTradingPnlAtCounterfactualMarksMicro })))
  }))
  const replayed = runs.filter((r) => r.replay !== null)
  // The replay is compared at its own final marks (the live tape's), so both PnL figures are that one.
  const replay = replayed.length === 0 ? null : mediansOf(replayed.map((r) => {
    const pnl = r.replayRealisedTradingPnlMicro ?? r.realised.tradingPnlMicro
    return { realised: { ...r.realised, tradingPnlMicro: pnl }, backtest: r.replay!, realisedPnlCfMicro: pnl }
  }))
  const h = by.find((m) => m.queue === HEADLINE.queue && m.latency === HEADLINE.latency)
  const noRatios: Record<RatioKey, number> = { fills: 0, filled_contracts: 0, rewards: 0, rebates: 0 }
  const headline = runs.map((r) => ({ seed: r.seed, realised: r.realised, backtest: pick(r, HEADLINE.queue, HEADLINE.latency), realisedTradingPnlAtCounterfactualMarksMicro: r.realisedTradingPnlAtCounterfactualMarksMicro }))
  return {
    scenario, seeds, snapshot_interval_sec: snapshotSec, headline: HEADLINE,
    median_ratio: { fills: h?.fills ?? null, filled_contracts: h?.filled_contracts ?? null, rewards: h?.rewards ?? null, rebates: h?.rebates ?? null },
    median_excluded_zero_zero: h?.excluded_zero_zero ?? noRatios,
    median_pnl_diff_usdc: h?.pnl_diff_usdc ?? null,
    median_pnl_diff_usdc_at_counterfactual_marks: h?.pnl_diff_usdc_at_counterfactual_marks ?? null,
    ...perRunFigures(headline),
    by_model: by,
    replay,
    reward_days_one_side: {
      runs: runs.filter((r) => r.rewardDaysOneSide.realisedOnly.length + r.rewardDaysOneSide.backtestOnly.length > 0).length,
      realised_only: runs.reduce((s, r) => s + r.rewardDaysOneSide.realisedOnly.length, 0),
      backtest_only: runs.reduce((s, r) => s + r.rewardDaysOneSide.backtestOnly.length, 0)
    },
    target: { ratio: [0.8, 1.25], pnl_diff_usdc: 10 },
    coverage: coverageOf(runs.map((r) => ({ realised: r.realised, realisedTradingPnlAtCounterfactualMarksMicro: r.realisedTradingPnlAtCounterfactualMarksMicro, interval: r.interval ?? null }))),
    pnl_attribution: pooledAttributions(runs),
    bias: biasFigures(headline),
    final_marks_apart_bps: marksApart(runs.map((r) => ({ a: r.marks.live, b: r.marks.counterfactual }))),
    runs
  }
}

const pooledAttributions = (runs: ReadonlyArray<BotRun>): FidelitySummary["pnl_attribution"] => {
  const with_ = runs.flatMap((r) => (r.attribution === undefined ? [] : [r.attribution]))
  const replays = with_.flatMap((a) => (a.replay === null ? [] : [a.replay]))
  return {
    realised: with_.length === 0 ? null : poolAttribution(with_.map((a) => a.realised)),
    backtest: with_.length === 0 ? null : poolAttribution(with_.map((a) => a.backtest)),
    replay: replays.length === 0 ? null : poolAttribution(replays)
  }
}
