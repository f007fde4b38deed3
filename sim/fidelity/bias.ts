// Systematic or the worlds' noise (docs/backtesting.md "Systematic or noise"): a pooled ratio
// over 18 bot-runs moves a long way when the runs' errors are large and unrelated, so each
// per-run difference is also given as a mean with its standard error. The bot-runs of one seed
// share one live world (and its tapes), so they are not independent: the standard error is
// clustered by seed, and the pooled trading PnL's interval resamples whole seeds.
import { quantile, type RunPair } from "./figures.ts"
import type { Side } from "./fidelity.ts"
import { Rng } from "../world/random.ts"
import { signed } from "./format.ts"

/** One bot-run as the per-run figures see it, with its seed (its world). */
export interface SeededPair extends RunPair {
  readonly seed: number
}

export interface MeanDiff {
  /** Mean over the runs counted; null without any. */
  readonly mean: number | null
  /** Its standard error, clustered by seed; null with fewer than 2 seeds. */
  readonly se: number | null
  /** mean ÷ se: beyond about ±2 the difference is unlikely to be the worlds' noise alone. Null when se is null or 0. */
  readonly t: number | null
  readonly runs: number
}

export interface LogRatio extends MeanDiff {
  /** e^mean: the typical backtest ÷ realised (a geometric mean). */
  readonly ratio: number | null
  /** Runs with 0 on either side: no logarithm, left out. */
  readonly left_out: number
}

export interface BiasFigures {
  /** Seeds (live worlds) the runs came from: the clusters. */
  readonly seeds: number
  /** Backtest − realised trading PnL per run, USDC (realised at the live market's marks). */
  readonly trading_pnl_diff_usdc: MeanDiff
  readonly trading_pnl_diff_usdc_at_counterfactual_marks: MeanDiff
  /** ln(backtest ÷ realised) per run. */
  readonly log_fills_ratio: LogRatio
  readonly log_filled_contracts_ratio: LogRatio
  /** Σ backtest ÷ Σ realised trading PnL over seeds drawn with replacement: its 2.5 % and 97.5 % quantiles (null with fewer than 2 seeds, or when no draw's realised sum is non-zero). */
  readonly pooled_trading_pnl_ratio_95: readonly [number, number] | null
  readonly bootstrap_draws: number
}

export const BOOTSTRAP_DRAWS = 2000
/** Below this many seeds a clustered standard error (and so t) is itself too uncertain to lean on: the text says so. */
export const FEW_SEEDS = 10

/** The mean of values grouped by seed, with the cluster-robust standard error (S ÷ (S − 1) small-sample factor). */
export const clusteredMean = (rows: ReadonlyArray<{ seed: number; value: number }>): MeanDiff => {
  const n = rows.length
  if (n === 0) return { mean: null, se: null, t: null, runs: 0 }
  const mean = rows.reduce((s, r) => s + r.value, 0) / n
  const bySeed = new Map<number, number>()
  for (const r of rows) bySeed.set(r.seed, (bySeed.get(r.seed) ?? 0) + (r.value - mean))
  const clusters = bySeed.size
  if (clusters < 2) return { mean, se: null, t: null, runs: n }
  let ss = 0
  for (const u of bySeed.values()) ss += u * u
  const se = Math.sqrt((clusters / (clusters - 1)) * ss) / n
  return { mean, se, t: se === 0 ? null : mean / se, runs: n }
}

const logRatio = (pairs: ReadonlyArray<SeededPair>, of: (s: Side) => number): LogRatio => {
  const rows = pairs.filter((p) => of(p.backtest) > 0 && of(p.realised) > 0).map((p) => ({ seed: p.seed, value: Math.log(of(p.backtest) / of(p.realised)) }))
  const m = clusteredMean(rows)
  return { ...m, ratio: m.mean === null ? null : Math.exp(m.mean), left_out: pairs.length - rows.length }
}

/** Σ backtest ÷ Σ realised trading PnL over seeds resampled with replacement (a fixed stream: the same runs give the same interval). */
export const pooledRatioInterval = (pairs: ReadonlyArray<SeededPair>, draws = BOOTSTRAP_DRAWS): readonly [number, number] | null => {
  const sums = new Map<number, { b: number; r: number }>()
  for (const p of pairs) {
    const s = sums.get(p.seed) ?? { b: 0, r: 0 }
    s.b += p.backtest.tradingPnlMicro
    s.r += p.realised.tradingPnlMicro
    sums.set(p.seed, s)
  }
  const seeds = [...sums.values()]
  if (seeds.length < 2) return null
  const rng = new Rng("fidelity/bias")
  const ratios: number[] = []
  for (let k = 0; k < draws; k++) {
    let b = 0
    let r = 0
    for (let i = 0; i < seeds.length; i++) {
      const s = seeds[rng.int(0, seeds.length - 1)]!
      b += s.b
      r += s.r
    }
    if (r !== 0) ratios.push(b / r)
  }
  if (ratios.length === 0) return null
  ratios.sort((x, y) => x - y)
  return [quantile(ratios, 0.025)!, quantile(ratios, 0.975)!]
}

export const biasFigures = (pairs: ReadonlyArray<SeededPair>): BiasFigures => ({
  seeds: new Set(pairs.map((p) => p.seed)).size,
  trading_pnl_diff_usdc: clusteredMean(pairs.map((p) => ({ seed: p.seed, value: (p.backtest.tradingPnlMicro - p.realised.tradingPnlMicro) / 1e6 }))),
  trading_pnl_diff_usdc_at_counterfactual_marks: clusteredMean(pairs.map((p) => ({ seed: p.seed, value: (p.backtest.tradingPnlMicro - p.realisedTradingPnlAtCounterfactualMarksMicro) / 1e6 }))),
  log_fills_ratio: logRatio(pairs, (s) => s.fills),
  log_filled_contracts_ratio: logRatio(pairs, (s) => s.filledContracts),
  pooled_trading_pnl_ratio_95: pooledRatioInterval(pairs),
  bootstrap_draws: BOOTSTRAP_DRAWS
})

const pmOnly = (m: MeanDiff): string => (m.mean === null ? "-" : `${signed(m.mean)}${m.se === null ? "" : ` ± ${m.se.toFixed(2)}`}`)
const tOf = (m: MeanDiff): string | null => (m.t === null ? null : `t ${m.t.toFixed(1)}`)
const pm = (m: MeanDiff, unit = ""): string => `${pmOnly(m)}${unit}${tOf(m) === null ? "" : ` (${tOf(m)})`}`
const times = (l: LogRatio): string =>
  l.ratio === null ? "-" : `× ${l.ratio.toFixed(2)} (${[`log ${pmOnly(l)}`, tOf(l), l.left_out > 0 ? `${l.left_out} run(s) at 0 left out` : null].filter((x) => x !== null).join(", ")})`

/** The text table's lines, indented by `indent`. */
export const biasLines = (b: BiasFigures, indent: string): string[] => {
  const i = b.pooled_trading_pnl_ratio_95
  return [
    `${indent}systematic or the worlds' noise (mean per run ± standard error over ${b.seeds} seed${b.seeds === 1 ? "" : "s"}; |t| beyond about 2 is unlikely to be noise${b.seeds >= 2 && b.seeds < FEW_SEEDS ? `; over fewer than ${FEW_SEEDS} seeds the errors are rough` : ""}):`,
    `${indent}  trading PnL difference ${pm(b.trading_pnl_diff_usdc, " USDC")}, at the counterfactual's marks ${pm(b.trading_pnl_diff_usdc_at_counterfactual_marks)}; fills ${times(b.log_fills_ratio)}; contracts ${times(b.log_filled_contracts_ratio)}`,
    `${indent}  pooled trading PnL ratio, 95 % over seeds drawn again (${b.bootstrap_draws} draws): ${i === null ? "- (fewer than 2 seeds)" : `${i[0].toFixed(2)} … ${i[1].toFixed(2)}`}`
  ]
}
