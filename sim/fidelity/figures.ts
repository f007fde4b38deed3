// Per-run figures of the fidelity benchmark (docs/backtesting.md "Fidelity", "Per-run figures"):
// a median can look right while half the bot-runs are far off, and a quant backtests one
// strategy on one market, so these say how often a single run is right and what the runs add up to.
import type { Side } from "./fidelity.ts"

/** One bot-run as the figures see it: the realised side (its trading PnL at the live market's marks) against one backtest of it. */
export interface RunPair {
  readonly realised: Side
  readonly backtest: Side
  /** The realised trading PnL at the counterfactual's final marks (the backtest's own): the second PnL figure. */
  readonly realisedTradingPnlAtCounterfactualMarksMicro: number
}

export interface BandCount {
  /** Runs whose ratio lies in the band, ends included. */
  readonly in_band: number
  /** Runs with a ratio: every run but the 0/0 ones. */
  readonly rated: number
  /** Runs where both sides are 0: no ratio, counted neither in nor out. */
  readonly excluded_zero_zero: number
}

export interface PerRunInBand {
  readonly band: readonly [number, number]
  /** in_band ÷ rated (null when no run is rated). */
  readonly fills: number | null
  readonly filled_contracts: number | null
  readonly counts: { readonly fills: BandCount; readonly filled_contracts: BandCount }
}

export interface PooledRatio {
  /** Σ backtest ÷ Σ realised over the bot-runs; null when Σ realised is 0. */
  readonly fills: number | null
  readonly filled_contracts: number | null
  readonly rewards: number | null
  readonly rebates: number | null
  /** Also when the sums are losses: 0.5 means the backtest shows half the realised loss; negative means the sums differ in sign. Realised at the live market's marks. */
  readonly trading_pnl: number | null
  /** The same with the realised side at the counterfactual's final marks. */
  readonly trading_pnl_at_counterfactual_marks: number | null
}

export interface PooledSums {
  readonly realised: PooledSide
  readonly backtest: PooledSide
  /** Σ backtest − Σ realised trading PnL: defined even when the ratio is not. */
  readonly trading_pnl_diff_usdc: number
  /** Σ realised trading PnL at the counterfactual's final marks, and Σ backtest minus it. */
  readonly realised_trading_pnl_at_counterfactual_marks_usdc: number
  readonly trading_pnl_diff_usdc_at_counterfactual_marks: number
}

export interface PooledSide {
  readonly fills: number
  readonly filled_contracts: number
  readonly rewards_usdc: number
  readonly rebates_usdc: number
  /** Realised: at the live market's final marks. */
  readonly trading_pnl_usdc: number
}

export interface PnlErrorQuantiles {
  /** Backtest − realised trading PnL per bot-run, USDC; quantiles by linear interpolation between order statistics (Hyndman–Fan type 7). */
  readonly q10: number | null
  readonly q50: number | null
  readonly q90: number | null
  readonly min: number | null
  readonly max: number | null
  readonly runs: number
  /** Runs whose |backtest − realised| is at most 10 USDC (the per-run target; decided in micro-USDC), and their share (null with no run). */
  readonly within_10_usdc: { readonly runs: number; readonly share: number | null }
}

export interface SignAgreement {
  /** agree ÷ rated (null when no run is rated). */
  readonly share: number | null
  /** Runs whose backtest and realised trading PnL are both > 0 or both < 0. */
  readonly agree: number
  /** Runs where at least one side is non-zero. */
  readonly rated: number
  /** Runs where both sides are exactly 0 micro: not rated (nothing to agree on). */
  readonly excluded_both_zero: number
}

export interface PerRunFigures {
  readonly per_run_in_band: PerRunInBand
  readonly pooled_ratio: PooledRatio
  readonly pooled_sums: PooledSums
  /** Realised at the live market's final marks (the headline). */
  readonly pnl_error_usdc: PnlErrorQuantiles
  /** Realised at the counterfactual's final marks: both sides at one set of prices. */
  readonly pnl_error_usdc_at_counterfactual_marks: PnlErrorQuantiles
  readonly sign_agreement: SignAgreement
  readonly sign_agreement_at_counterfactual_marks: SignAgreement
  /**
   * Pearson's correlation of the backtest's and the realised trading PnL over the runs (realised at
   * the live market's marks): how much a run's backtest says about its own outcome, beyond the
   * average. Null with fewer than 2 runs or when either side does not vary.
   */
  readonly pnl_correlation: number | null
}

/** The band a per-run ratio must lie in (the target's; 4/5 and 5/4, so it is tested exactly in integers). */
export const BAND: readonly [number, number] = [0.8, 1.25]

/**
 * Counts runs whose backtest ÷ realised lies in [0.8, 1.25]. Decided in integers
 * (4·realised ≤ 5·backtest and 4·backtest ≤ 5·realised) so a ratio exactly on an end is in.
 * Realised 0 with backtest > 0 is an infinite ratio: rated, out of band. 0/0 is not rated.
 */
export const bandCount = (pairs: ReadonlyArray<{ backtest: number; realised: number }>): BandCount => {
  let inBand = 0
  let zeroZero = 0
  for (const { backtest: b, realised: r } of pairs) {
    if (b === 0 && r === 0) zeroZero++
    else if (r > 0 && 4 * r <= 5 * b && 4 * b <= 5 * r) inBand++
  }
  return { in_band: inBand, rated: pairs.length - zeroZero, excluded_zero_zero: zeroZero }
}

const share = (n: number, of: number): number | null => (of === 0 ? null : n / of)
const pooled = (b: number, r: number): number | null => (r === 0 ? null : b / r)

/** The q-quantile of sorted xs by linear interpolation between order statistics (Hyndman–Fan type 7, numpy's and R's default): q50 is the median. */
export const quantile = (sorted: ReadonlyArray<number>, q: number): number | null => {
  if (sorted.length === 0) return null
  const h = (sorted.length - 1) * q
  const lo = Math.floor(h)
  const hi = Math.min(lo + 1, sorted.length - 1)
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!)
}

export const signAgreement = (pairs: ReadonlyArray<{ backtest: number; realised: number }>): SignAgreement => {
  let agree = 0
  let bothZero = 0
  for (const { backtest: b, realised: r } of pairs) {
    if (b === 0 && r === 0) bothZero++
    else if (Math.sign(b) === Math.sign(r)) agree++
  }
  const rated = pairs.length - bothZero
  return { share: share(agree, rated), agree, rated, excluded_both_zero: bothZero }
}

/** The per-run figures over bot-runs, each run's realised side against one model's backtest. */
export const perRunFigures = (runs: ReadonlyArray<RunPair>): PerRunFigures => {
  const fills = bandCount(runs.map((p) => ({ backtest: p.backtest.fills, realised: p.realised.fills })))
  const contracts = bandCount(runs.map((p) => ({ backtest: p.backtest.filledContracts, realised: p.realised.filledContracts })))
  const sum = (side: "realised" | "backtest", k: keyof Side): number => runs.reduce((s, p) => s + p[side][k], 0)
  const sideSums = (side: "realised" | "backtest"): PooledSide => ({
    fills: sum(side, "fills"), filled_contracts: sum(side, "filledContracts"),
    rewards_usdc: sum(side, "rewardsMicro") / 1e6, rebates_usdc: sum(side, "rebatesMicro") / 1e6, trading_pnl_usdc: sum(side, "tradingPnlMicro") / 1e6
  })
  const cf = (p: RunPair): Side => ({ ...p.realised, tradingPnlMicro: p.realisedTradingPnlAtCounterfactualMarksMicro })
  const cfSum = runs.reduce((s, p) => s + p.realisedTradingPnlAtCounterfactualMarksMicro, 0)
  return {
    per_run_in_band: {
      band: BAND,
      fills: share(fills.in_band, fills.rated),
      filled_contracts: share(contracts.in_band, contracts.rated),
      counts: { fills, filled_contracts: contracts }
    },
    pooled_ratio: {
      fills: pooled(sum("backtest", "fills"), sum("realised", "fills")),
      filled_contracts: pooled(sum("backtest", "filledContracts"), sum("realised", "filledContracts")),
      rewards: pooled(sum("backtest", "rewardsMicro"), sum("realised", "rewardsMicro")),
      rebates: pooled(sum("backtest", "rebatesMicro"), sum("realised", "rebatesMicro")),
      trading_pnl: pooled(sum("backtest", "tradingPnlMicro"), sum("realised", "tradingPnlMicro")),
      trading_pnl_at_counterfactual_marks: pooled(sum("backtest", "tradingPnlMicro"), cfSum)
    },
    pooled_sums: {
      realised: sideSums("realised"), backtest: sideSums("backtest"),
      trading_pnl_diff_usdc: (sum("backtest", "tradingPnlMicro") - sum("realised", "tradingPnlMicro")) / 1e6,
      realised_trading_pnl_at_counterfactual_marks_usdc: cfSum / 1e6,
      trading_pnl_diff_usdc_at_counterfactual_marks: (sum("backtest", "tradingPnlMicro") - cfSum) / 1e6
    },
    pnl_error_usdc: pnlErrors(runs.map((p) => ({ realised: p.realised, backtest: p.backtest }))),
    pnl_error_usdc_at_counterfactual_marks: pnlErrors(runs.map((p) => ({ realised: cf(p), backtest: p.backtest }))),
    sign_agreement: signAgreement(runs.map((p) => ({ backtest: p.backtest.tradingPnlMicro, realised: p.realised.tradingPnlMicro }))),
    sign_agreement_at_counterfactual_marks: signAgreement(runs.map((p) => ({ backtest: p.backtest.tradingPnlMicro, realised: p.realisedTradingPnlAtCounterfactualMarksMicro }))),
    pnl_correlation: correlation(runs.map((p) => p.backtest.tradingPnlMicro / 1e6), runs.map((p) => p.realised.tradingPnlMicro / 1e6))
  }
}

/** Pearson's r of two equally long series; null with fewer than 2 values or a series that does not vary. */
export const correlation = (xs: ReadonlyArray<number>, ys: ReadonlyArray<number>): number | null => {
  const n = xs.length
  if (n < 2) return null
  const mx = xs.reduce((a, x) => a + x, 0) / n
  const my = ys.reduce((a, y) => a + y, 0) / n
  let sxy = 0
  let sxx = 0
  let syy = 0
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my)
    sxx += (xs[i]! - mx) ** 2
    syy += (ys[i]! - my) ** 2
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy)
}

/** Backtest − realised trading PnL per run (USDC), its quantiles and ends. */
const pnlErrors = (pairs: ReadonlyArray<{ realised: Side; backtest: Side }>): PnlErrorQuantiles => {
  const errors = pairs.map((p) => (p.backtest.tradingPnlMicro - p.realised.tradingPnlMicro) / 1e6).sort((a, b) => a - b)
  const within = pairs.filter((p) => Math.abs(p.backtest.tradingPnlMicro - p.realised.tradingPnlMicro) <= 10_000_000).length
  return {
    q10: quantile(errors, 0.1), q50: quantile(errors, 0.5), q90: quantile(errors, 0.9),
    min: errors[0] ?? null, max: errors.at(-1) ?? null, runs: errors.length,
    within_10_usdc: { runs: within, share: share(within, pairs.length) }
  }
}
