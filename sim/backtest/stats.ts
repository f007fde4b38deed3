// The figures a quant reads a market-making run by, from the report's own series and fills:
// return, annualised Sharpe and Sortino of hourly returns (from 30 of them), the worst drawdown and how long it
// lasted, turnover, inventory, time quoted two-sided, fill markouts, rewards share per day.
// Pure functions of their inputs (tests check them against hand-computed cases).
import { attribute, type PnlAttribution, yesDirection } from "./attribution.ts"
import type { FillRow, Series } from "./report.ts"
import type { RewardDay } from "./rewards.ts"

/** Prediction markets trade around the clock: 24 × 365 hourly returns a year. */
export const HOURS_PER_YEAR = 24 * 365
/**
 * Below this many hourly returns Sharpe and Sortino are not given (null, with the reason): the
 * annualised estimate's standard error is about √(8760 / N), ±17 even at 30, and a one-day run's
 * 24 returns headlined figures in the hundreds (docs/backtesting.md "Statistics").
 */
export const MIN_HOURLY_RETURNS = 30
/** How the two ratios are sampled, said wherever they appear. */
export const RATIO_SAMPLING = "hourly simple returns of the sampled equity, annualised by √(24·365); no risk-free rate"
export const MARKOUT_HORIZONS_SEC = [1, 10, 60] as const

/** One market's mid after each data event that changed it: times in ms, mids in YES bps. */
export interface MidPath {
  readonly tMs: ReadonlyArray<number>
  readonly midBps: ReadonlyArray<number>
}

export interface Markout {
  readonly horizon_sec: number
  /** Fills whose horizon ended inside the data. */
  readonly fills: number
  /** Contract-weighted mean of side × (mid at t + horizon − mid just before the fill), YES bps; negative = adverse selection. Null: no fill. */
  readonly mean_bps: number | null
}

/** A markout of one side's fills: bought YES (or sold NO), or sold YES (or bought NO). */
export interface SideMarkout extends Markout {
  readonly side: "bought_yes" | "sold_yes"
}

export interface MarketStats {
  readonly market_id: string
  readonly inventory_mean_abs: number
  readonly inventory_max_abs: number
  /** Share of the samples (from the strategy's start) with both our bid and our ask resting. */
  readonly quoted_two_sided_pct: number
}

export interface BacktestStats {
  readonly return_pct: number
  readonly hourly_returns: number
  /** Null below MIN_HOURLY_RETURNS returns or with a zero deviation; `ratios_unavailable` then says why. */
  readonly sharpe_annualised: number | null
  readonly sortino_annualised: number | null
  /** Why a ratio is null ("not enough data (24 hourly returns; at least 30 needed)"), or null when both are given. */
  readonly ratios_unavailable: string | null
  /** How the ratios are sampled and annualised (RATIO_SAMPLING). */
  readonly ratios_sampling: string
  /** On the sampled equity: the worst fall from a peak, and from that peak until equity regained it (or the end). */
  readonly sampled_max_drawdown_micro: number
  readonly max_drawdown_duration_sec: number
  readonly max_drawdown_recovered: boolean
  /** Traded volume / capital. */
  readonly turnover: number
  readonly markets: ReadonlyArray<MarketStats>
  readonly markouts: ReadonlyArray<Markout>
  /** The same, per side (SideMarkout): whether one side is picked off more than the other. */
  readonly markouts_by_side: ReadonlyArray<SideMarkout>
  /** Trading PnL split into the edge captured at each fill and the inventory carried after it (sim/backtest/attribution.ts). */
  readonly pnl_attribution: PnlAttribution
  /** Our payout / the day's pool, per paid day. */
  readonly rewards_share_by_day: ReadonlyArray<{ readonly day: number; readonly share_pct: number }>
}

const round = (x: number, places = 6): number => Math.round(x * 10 ** places) / 10 ** places

/** Equity at each whole hour of the series (and its first and last sample) → simple returns. */
export const hourlyReturns = (tSec: ReadonlyArray<number>, equityMicro: ReadonlyArray<number>, capitalMicro: number): number[] => {
  const points: number[] = [capitalMicro]
  for (let i = 0; i < tSec.length; i++) if (tSec[i]! % 3600 === 0 && i > 0) points.push(equityMicro[i]!)
  if (tSec.length > 0 && tSec.at(-1)! % 3600 !== 0) points.push(equityMicro.at(-1)!)
  const out: number[] = []
  for (let i = 1; i < points.length; i++) out.push(points[i - 1]! === 0 ? 0 : points[i]! / points[i - 1]! - 1)
  return out
}

/** Annualised Sharpe (mean / sample sd) and Sortino (mean / downside deviation), no risk-free rate; null when undefined. */
export const sharpeSortino = (returns: ReadonlyArray<number>, periodsPerYear: number): { sharpe: number | null; sortino: number | null } => {
  if (returns.length < 2) return { sharpe: null, sortino: null }
  const mean = returns.reduce((s, r) => s + r, 0) / returns.length
  const sd = Math.sqrt(returns.reduce((s, r) => s + (r - mean) ** 2, 0) / (returns.length - 1))
  const down = Math.sqrt(returns.reduce((s, r) => s + Math.min(r, 0) ** 2, 0) / returns.length)
  const k = Math.sqrt(periodsPerYear)
  // A deviation that is only the rounding of equal returns (1e-18 on 0.01s) is zero: no ratio of 10^17.
  const zero = (x: number): boolean => x <= 1e-12 * Math.abs(mean)
  return { sharpe: sd === 0 || zero(sd) ? null : round((mean / sd) * k, 4), sortino: down === 0 || zero(down) ? null : round((mean / down) * k, 4) }
}

/**
 * The ratios as the report gives them: null below MIN_HOURLY_RETURNS returns ("not enough data"),
 * or where a deviation is zero, each with the reason.
 */
export const reportedRatios = (returns: ReadonlyArray<number>): { sharpe: number | null; sortino: number | null; unavailable: string | null } => {
  if (returns.length < MIN_HOURLY_RETURNS) {
    return { sharpe: null, sortino: null, unavailable: `not enough data (${returns.length} hourly returns; at least ${MIN_HOURLY_RETURNS} needed)` }
  }
  const { sharpe, sortino } = sharpeSortino(returns, HOURS_PER_YEAR)
  const why = [...(sharpe === null ? ["Sharpe: the returns do not vary"] : []), ...(sortino === null ? ["Sortino: no hour lost money"] : [])]
  return { sharpe, sortino, unavailable: why.length === 0 ? null : why.join("; ") }
}

/** The worst peak-to-trough fall of a series, and the time from that peak until the series is back at it (or the end). */
export const drawdown = (tSec: ReadonlyArray<number>, v: ReadonlyArray<number>): { maxMicro: number; durationSec: number; recovered: boolean } => {
  let peak = Number.NEGATIVE_INFINITY
  let peakAt = 0
  let max = 0
  let maxPeakAt = -1
  for (let i = 0; i < v.length; i++) {
    if (v[i]! > peak) {
      peak = v[i]!
      peakAt = i
    }
    if (peak - v[i]! > max) {
      max = peak - v[i]!
      maxPeakAt = peakAt
    }
  }
  if (maxPeakAt < 0) return { maxMicro: 0, durationSec: 0, recovered: true }
  for (let j = maxPeakAt + 1; j < v.length; j++) if (v[j]! >= v[maxPeakAt]!) return { maxMicro: max, durationSec: tSec[j]! - tSec[maxPeakAt]!, recovered: true }
  return { maxMicro: max, durationSec: tSec.at(-1)! - tSec[maxPeakAt]!, recovered: false }
}

/** The last mid at or before tMs (strictly before when `before`), or null. Binary search over the path. */
export const midAt = (p: MidPath, tMs: number, before: boolean): number | null => {
  let lo = 0
  let hi = p.tMs.length
  while (lo < hi) {
    const m = (lo + hi) >> 1
    if (before ? p.tMs[m]! < tMs : p.tMs[m]! <= tMs) lo = m + 1
    else hi = m
  }
  return lo === 0 ? null : p.midBps[lo - 1]!
}

export { yesDirection }

/**
 * Each fill's markouts, YES bps per horizon: side × (mid at fill time + horizon − the mid just
 * before the fill), side +1 for a fill that added YES. Null where the horizon passes endMs or no
 * mid is known. Positive: the market moved our way.
 */
export const fillMarkouts = (
  fills: ReadonlyArray<Pick<FillRow, "tMs" | "market" | "side" | "outcome">>, paths: ReadonlyArray<MidPath>, endMs: number,
  horizonsSec: ReadonlyArray<number> = MARKOUT_HORIZONS_SEC
): Array<Array<number | null>> =>
  fills.map((f) => {
    const path = paths[f.market]!
    const before = midAt(path, f.tMs, true)
    return horizonsSec.map((h) => {
      const at = f.tMs + h * 1000
      const after = at > endMs || before === null ? null : midAt(path, at, false)
      return after === null || before === null ? null : yesDirection(f) * (after - before)
    })
  })

/** Contract-weighted means of per-fill markouts (fillMarkouts), over the fills `keep` selects. */
const weighted = (
  fills: ReadonlyArray<Pick<FillRow, "size">>, perFill: ReadonlyArray<ReadonlyArray<number | null>>, horizonsSec: ReadonlyArray<number>,
  keep: (i: number) => boolean = () => true
): Markout[] =>
  horizonsSec.map((h, k) => {
    let sum = 0
    let contracts = 0
    let n = 0
    for (let i = 0; i < fills.length; i++) {
      const m = perFill[i]![k]!
      if (m === null || !keep(i)) continue
      sum += m * fills[i]!.size
      contracts += fills[i]!.size
      n++
    }
    return { horizon_sec: h, fills: n, mean_bps: contracts === 0 ? null : round(sum / contracts, 4) }
  })

/** Markouts over all fills: contract-weighted over fills whose horizon ends by endMs. */
export const markouts = (
  fills: ReadonlyArray<Pick<FillRow, "tMs" | "market" | "side" | "outcome" | "size">>, paths: ReadonlyArray<MidPath>, endMs: number,
  horizonsSec: ReadonlyArray<number> = MARKOUT_HORIZONS_SEC
): Markout[] => weighted(fills, fillMarkouts(fills, paths, endMs, horizonsSec), horizonsSec)

/** Markouts of the fills that bought YES (or sold NO) and of those that sold YES (or bought NO), apart. */
export const markoutsBySide = (
  fills: ReadonlyArray<Pick<FillRow, "side" | "outcome" | "size">>, perFill: ReadonlyArray<ReadonlyArray<number | null>>,
  horizonsSec: ReadonlyArray<number> = MARKOUT_HORIZONS_SEC
): SideMarkout[] =>
  (["bought_yes", "sold_yes"] as const).flatMap((side) =>
    weighted(fills, perFill, horizonsSec, (i) => (yesDirection(fills[i]!) > 0) === (side === "bought_yes")).map((m) => ({ side, ...m }))
  )

/** The statistics, and each fill's markouts (for the report page's fills table; not in the JSON). */
export const computeStats = (args: {
  readonly capitalMicro: number
  readonly volumeMicro: number
  readonly marketIds: ReadonlyArray<string>
  readonly series: Series
  readonly fills: ReadonlyArray<FillRow>
  readonly midPaths: ReadonlyArray<MidPath>
  readonly endMs: number
  readonly botStartSec: number
  readonly rewardDays: ReadonlyArray<RewardDay>
  /** The trading PnL the attribution splits (rebates and rewards excluded). */
  readonly tradingPnlMicro: number
}): { readonly stats: BacktestStats; readonly fillMarkoutsBps: Array<Array<number | null>> } => {
  const se = args.series
  const perFill = fillMarkouts(args.fills, args.midPaths, args.endMs)
  const pnl = (se.equityMicro.at(-1) ?? args.capitalMicro) - args.capitalMicro
  const returns = hourlyReturns(se.tSec, se.equityMicro, args.capitalMicro)
  const ratios = reportedRatios(returns)
  const dd = drawdown([se.tSec[0] ?? 0, ...se.tSec], [args.capitalMicro, ...se.equityMicro])
  const live = se.tSec.map((t) => t >= args.botStartSec)
  const liveCount = live.filter(Boolean).length
  const stats: BacktestStats = {
    return_pct: round((pnl / args.capitalMicro) * 100, 4),
    hourly_returns: returns.length,
    sharpe_annualised: ratios.sharpe,
    sortino_annualised: ratios.sortino,
    ratios_unavailable: ratios.unavailable,
    ratios_sampling: RATIO_SAMPLING,
    sampled_max_drawdown_micro: dd.maxMicro,
    max_drawdown_duration_sec: dd.durationSec,
    max_drawdown_recovered: dd.recovered,
    turnover: round(args.volumeMicro / args.capitalMicro, 4),
    markets: args.marketIds.map((id, m) => {
      const inv = se.netYes[m]!.map(Math.abs)
      let twoSided = 0
      for (let i = 0; i < se.tSec.length; i++) if (live[i] && se.bidBps[m]![i]! >= 0 && se.askBps[m]![i]! >= 0) twoSided++
      return {
        market_id: id,
        inventory_mean_abs: inv.length === 0 ? 0 : round(inv.reduce((s, x) => s + x, 0) / inv.length, 2),
        inventory_max_abs: inv.reduce((s, x) => Math.max(s, x), 0),
        quoted_two_sided_pct: liveCount === 0 ? 0 : round((twoSided / liveCount) * 100, 2)
      }
    }),
    markouts: weighted(args.fills, perFill, MARKOUT_HORIZONS_SEC),
    markouts_by_side: markoutsBySide(args.fills, perFill),
    pnl_attribution: attribute(
      args.fills.map((f) => ({ ...f, midBeforeBps: midAt(args.midPaths[f.market]!, f.tMs, true) })),
      (m, tMs) => midAt(args.midPaths[m]!, tMs, false), args.endMs, args.tradingPnlMicro
    ),
    rewards_share_by_day: args.rewardDays.map((d) => ({ day: d.day, share_pct: d.poolMicro === 0 ? 0 : round((d.lpMicro / d.poolMicro) * 100, 4) }))
  }
  return { stats, fillMarkoutsBps: perFill }
}
