// Intervals calibrated on the backtest's own errors (docs/backtesting.md "Calibrated intervals"):
// split conformal prediction (Vovk et al. 2005; Lei et al. 2018). The bootstrap interval
// (sim/backtest/interval.ts) says how much a run owes to the order of its minutes; it cannot see
// what the backtest leaves out, so the realised outcome falls outside it about half the time.
// Here the calibration seeds' bot-runs are backtested exactly as the judged ones are (the same
// headline model, a response model fitted without that seed), and their errors, realised −
// backtest trading PnL and realised ÷ backtest fills, give the range: for n errors sorted, level
// 1 − α, the bounds are the ⌊(n+1)·α/2⌋-th and ⌈(n+1)·(1 − α/2)⌉-th smallest, and a judged run's
// range is its backtest plus (PnL) or times (fills) them. If the runs are exchangeable (the same
// scenario, other seeds) a new run's realised figure falls inside with probability at least
// 1 − α (at most about 1 − α + 2/(n+1)). Too few runs for an order statistic leaves that end
// unbounded (null): 90 % needs at least 19 runs.
import { join } from "node:path"
import { type CalibratedInterval, calibratedIntervalOf, type IntervalCalibration } from "../backtest/interval-calibration.ts"
import { type CoverageCount, coverageCountText as counted, countInside } from "./coverage.ts"
import { type BotRun, HEADLINE, type Side } from "./fidelity.ts"

export { type CalibratedInterval, calibratedIntervalOf, type IntervalCalibration }

/** One calibration bot-run: its realised side (trading PnL at the live market's marks) and its headline backtest. */
export interface ErrorRun {
  readonly seed: number
  readonly agent: string
  readonly realised: Pick<Side, "fills" | "tradingPnlMicro">
  readonly backtest: Pick<Side, "fills" | "tradingPnlMicro">
}

/** The order statistics a level takes of n errors (1-based; below 1 or above n: that end is unbounded). */
export const conformalRanks = (n: number, level: number): { lo: number; hi: number } => {
  // In whole percent, so (n+1)·α/2 is an exact ratio of integers (0.95 · 40 is not 38 in floating point).
  const alphaPct = 100 - Math.round(level * 100)
  return { lo: Math.floor(((n + 1) * alphaPct) / 200), hi: Math.ceil(((n + 1) * (200 - alphaPct)) / 200) }
}

/** The conformal bounds of some errors at a level: [lo, hi], null where the runs are too few for that end. */
export const conformalBounds = (errors: ReadonlyArray<number>, level: number): { lo: number | null; hi: number | null } => {
  const s = [...errors].sort((a, b) => a - b)
  const k = conformalRanks(s.length, level)
  return { lo: k.lo >= 1 ? s[k.lo - 1]! : null, hi: k.hi <= s.length ? s[k.hi - 1]! : null }
}

const round9 = (x: number): number => Number(x.toPrecision(9))

export const intervalCalibrationOf = (runs: ReadonlyArray<ErrorRun>, level: number, seeds: ReadonlyArray<number>, model: { queue: string; latency: string }): IntervalCalibration => {
  const errors = runs.map((r) => (r.realised.tradingPnlMicro - r.backtest.tradingPnlMicro) / 1e6).sort((a, b) => a - b)
  const rated = runs.filter((r) => r.backtest.fills > 0)
  const ratios = rated.map((r) => round9(r.realised.fills / r.backtest.fills)).sort((a, b) => a - b)
  const pk = conformalRanks(errors.length, level)
  const fk = conformalRanks(ratios.length, level)
  return {
    format: "twinbook-interval-calibration", version: 1, level, seeds, model, runs: runs.length,
    pnl_error_usdc: { ...conformalBounds(errors, level), ranks: [pk.lo, pk.hi], errors },
    fills_ratio: { ...conformalBounds(ratios, level), ranks: [fk.lo, fk.hi], ratios, left_out: runs.length - rated.length },
    by_run: runs.map((r) => ({
      seed: r.seed, agent: r.agent, realised_pnl_usdc: r.realised.tradingPnlMicro / 1e6, backtest_pnl_usdc: r.backtest.tradingPnlMicro / 1e6,
      realised_fills: r.realised.fills, backtest_fills: r.backtest.fills
    }))
  }
}

export type CalibratedCount = CoverageCount
export { countInside }

/** The calibrated intervals' coverage over the judged runs: realised PnL (live marks, compared in micro-USDC) and fills. */
export const calibratedCoverageOf = (
  runs: ReadonlyArray<{ realised: Pick<Side, "fills" | "tradingPnlMicro">; calibrated: CalibratedInterval }>
): { readonly trading_pnl: CalibratedCount; readonly fills: CalibratedCount } => {
  const micro = (x: number | null): number | null => (x === null ? null : Math.round(x * 1e6))
  return {
    trading_pnl: countInside(runs.map((r) => ({ value: r.realised.tradingPnlMicro, range: [micro(r.calibrated.pnl_usdc[0]), micro(r.calibrated.pnl_usdc[1])] as const }))),
    fills: countInside(runs.flatMap((r) => (r.calibrated.fills === null ? [] : [{ value: r.realised.fills, range: r.calibrated.fills }])))
  }
}

export const intervalCalibrationFileOf = (outDir: string): string => join(outDir, "calibration", "interval-calibration.json")

/** What the fidelity summary adds with --calibrate-intervals: the calibration, each run's calibrated range, and their coverage (all null without). */
export interface CalibratedFigures {
  readonly interval_calibration: IntervalCalibration | null
  readonly calibrated_coverage: { readonly level: number; readonly trading_pnl: CalibratedCount; readonly fills: CalibratedCount } | null
  readonly runs: ReadonlyArray<BotRun & { readonly calibrated_interval: CalibratedInterval | null }>
}

const headlineOf = (r: BotRun): Side => r.backtests.find((b) => b.queue === HEADLINE.queue && b.latency === HEADLINE.latency)!

/** Each judged run's calibrated range (from its headline backtest) and the share of realised outcomes inside. */
export const withCalibratedIntervals = <S extends { readonly runs: ReadonlyArray<BotRun> }>(s: S, c: IntervalCalibration | null): Omit<S, "runs"> & CalibratedFigures => {
  const runs = s.runs.map((r) => ({ ...r, calibrated_interval: c === null ? null : calibratedIntervalOf(headlineOf(r), c) }))
  return {
    ...s, runs, interval_calibration: c,
    calibrated_coverage: c === null ? null : { level: c.level, ...calibratedCoverageOf(runs.map((r) => ({ realised: r.realised, calibrated: r.calibrated_interval! }))) }
  }
}

const end = (x: number | null, digits: number): string => (x === null ? "unbounded" : x.toFixed(digits))
const pct = (x: number | null): string => (x === null ? "-" : `${Math.round(x * 100)}%`)

/** The text table's lines for the calibrated intervals. */
export const calibratedLines = (s: CalibratedFigures): string[] => {
  const c = s.interval_calibration
  const k = s.calibrated_coverage
  if (c === null || k === null) return []
  const e = c.pnl_error_usdc
  const f = c.fills_ratio
  const short = e.lo === null || e.hi === null ? ` (too few calibration runs for both ends at ${pct(c.level)}: it needs ${Math.ceil(200 / (100 - Math.round(c.level * 100))) - 1})` : ""
  return [
    `  calibrated interval (${pct(c.level)}, split conformal on the errors of ${c.runs} calibration bot-runs, seeds ${c.seeds.join(",")}): PnL = backtest + [${end(e.lo, 2)}, ${end(e.hi, 2)}] USDC (ranks ${e.ranks[0]} and ${e.ranks[1]} of ${e.errors.length}), fills = backtest × [${end(f.lo, 3)}, ${end(f.hi, 3)}]${short}`,
    `  calibrated interval coverage: realised ${counted("trading PnL", k.trading_pnl)}, ${counted("fills", k.fills)}`
  ]
}

/** A run's calibrated PnL range for the text table's column. */
export const calibratedRangeText = (r: { readonly calibrated_interval?: CalibratedInterval | null; readonly realised: Side }): string => {
  const x = r.calibrated_interval
  if (x == null) return "-"
  const [lo, hi] = x.pnl_usdc
  const v = r.realised.tradingPnlMicro / 1e6
  const flag = lo !== null && v < lo - 5e-7 ? " <" : hi !== null && v > hi + 5e-7 ? " >" : ""
  return `${lo === null ? "-inf" : lo.toFixed(2)}…${hi === null ? "inf" : hi.toFixed(2)}${flag}`
}
