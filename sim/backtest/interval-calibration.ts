// A backtest's range calibrated on its own errors (docs/backtesting.md "Calibrated intervals"):
// `npm run fidelity -- --calibrate A..B --calibrate-intervals` measures the headline backtest's
// errors on calibration seeds where the realised outcome is known (sim/fidelity/conformal.ts: split
// conformal bounds) and writes them to interval-calibration.json; `npm run backtest --
// --interval-calibration FILE` reads that file and gives the run's range: its trading PnL plus
// the PnL bounds, its fills times the fills bounds. The file is read and checked here, in one place.
import { readFileSync } from "node:fs"
import { BacktestInputError } from "./dataset.ts"

export const INTERVAL_CALIBRATION_FORMAT = "twinbook-interval-calibration"

/** What `<out>/calibration/interval-calibration.json` holds, and the fidelity JSON's `interval_calibration`. */
export interface IntervalCalibration {
  readonly format: typeof INTERVAL_CALIBRATION_FORMAT
  readonly version: 1
  readonly level: number
  readonly seeds: ReadonlyArray<number>
  /** The headline model the errors are of (a backtest made otherwise is not what the errors measured). */
  readonly model: { readonly queue: string; readonly latency: string }
  /** Calibration bot-runs. */
  readonly runs: number
  /** Realised − backtest trading PnL (USDC): the bounds added to a backtest's PnL, their ranks among `errors` (sorted), and the errors. */
  readonly pnl_error_usdc: { readonly lo: number | null; readonly hi: number | null; readonly ranks: readonly [number, number]; readonly errors: ReadonlyArray<number> }
  /** Realised ÷ backtest fills (runs whose backtest filled nothing are left out): the bounds a backtest's fills are multiplied by. */
  readonly fills_ratio: { readonly lo: number | null; readonly hi: number | null; readonly ranks: readonly [number, number]; readonly ratios: ReadonlyArray<number>; readonly left_out: number }
  /** Every calibration run's figures, for the record. */
  readonly by_run: ReadonlyArray<{ readonly seed: number; readonly agent: string; readonly realised_pnl_usdc: number; readonly backtest_pnl_usdc: number; readonly realised_fills: number; readonly backtest_fills: number }>
}

/** A run's calibrated range: null ends are unbounded; fills null when the backtest filled nothing (no ratio to scale). */
export interface CalibratedInterval {
  readonly pnl_usdc: readonly [number | null, number | null]
  readonly fills: readonly [number | null, number | null] | null
}

/** The backtest's figures plus (PnL, to the micro-USDC) and times (fills, outward to whole fills) the calibrated errors. */
export const calibratedIntervalOf = (backtest: { readonly fills: number; readonly tradingPnlMicro: number }, c: IntervalCalibration): CalibratedInterval => {
  const e = c.pnl_error_usdc
  const f = c.fills_ratio
  const pnl = (x: number | null): number | null => (x === null ? null : (backtest.tradingPnlMicro + Math.round(x * 1e6)) / 1e6)
  return {
    pnl_usdc: [pnl(e.lo), pnl(e.hi)],
    fills: backtest.fills === 0 ? null : [f.lo === null ? null : Math.floor(backtest.fills * f.lo + 1e-9), f.hi === null ? null : Math.ceil(backtest.fills * f.hi - 1e-9)]
  }
}

/** What a backtest report carries with --interval-calibration: the range and where it came from. */
export interface CalibratedRange extends CalibratedInterval {
  readonly file: string
  readonly level: number
  readonly seeds: ReadonlyArray<number>
  readonly runs: number
  readonly model: { readonly queue: string; readonly latency: string }
  /** The run's own figures the bounds were applied to. */
  readonly point: { readonly pnl_usdc: number; readonly fills: number }
}

export const calibratedRangeOf = (file: string, c: IntervalCalibration, point: { readonly trading_pnl_micro: number; readonly fills: number }): CalibratedRange => ({
  file, level: c.level, seeds: c.seeds, runs: c.runs, model: c.model, point: { pnl_usdc: point.trading_pnl_micro / 1e6, fills: point.fills },
  ...calibratedIntervalOf({ fills: point.fills, tradingPnlMicro: point.trading_pnl_micro }, c)
})

const end = (x: number | null, f: (v: number) => string): string => (x === null ? "unbounded" : f(x))

/** The report's lines (console summary and the page's first table). */
export const calibratedRangeLines = (r: CalibratedRange): Array<[string, string]> => {
  const pct = `${Math.round(r.level * 1000) / 10}%`
  const usd = (v: number): string => v.toFixed(2)
  const fills = r.fills === null ? "none (the run filled nothing: no ratio to scale)" : `${end(r.fills[0], String)} … ${end(r.fills[1], String)}`
  return [
    [`calibrated ${pct}`, `trading PnL ${end(r.pnl_usdc[0], usd)} … ${end(r.pnl_usdc[1], usd)} USDC (run ${usd(r.point.pnl_usdc)}), fills ${fills} (run ${r.point.fills})`],
    ["  calibrated on", `the backtest's errors on ${r.runs} runs of seeds ${r.seeds.join(",")} (${r.file}; book ${r.model.queue}, latency ${r.model.latency}: a run made otherwise is not what they measured)`]
  ]
}

const bad = (path: string, what: string): never => {
  throw new BacktestInputError(`--interval-calibration ${path}: ${what}`)
}

/** A bound: a finite number (≥ lo), or null for an unbounded end. */
const bound = (path: string, name: string, x: unknown, lo = Number.NEGATIVE_INFINITY): number | null =>
  x === null ? null : typeof x === "number" && Number.isFinite(x) && x >= lo ? x : bad(path, `${name} must be a number${lo > Number.NEGATIVE_INFINITY ? ` ≥ ${lo}` : ""} or null (unbounded)`)

/** Reads and checks what the range uses; the rest of the file (the errors, by run) is for the record. */
export const readIntervalCalibration = (path: string): IntervalCalibration => {
  let json: unknown
  try {
    json = JSON.parse(readFileSync(path, "utf8"))
  } catch (err) {
    return bad(path, (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : `not JSON (${err instanceof Error ? err.message : String(err)})`)
  }
  const c = json as IntervalCalibration
  if (typeof json !== "object" || json === null) return bad(path, "not a JSON object")
  if (c.format !== INTERVAL_CALIBRATION_FORMAT) return bad(path, `format is ${String(c.format)}, expected ${INTERVAL_CALIBRATION_FORMAT} (npm run fidelity -- --calibrate A..B --calibrate-intervals writes one)`)
  if (c.version !== 1) return bad(path, `version ${String(c.version)} is not supported (expected 1)`)
  if (!(typeof c.level === "number" && c.level > 0 && c.level < 1)) return bad(path, "level must be a number in (0, 1)")
  const plo = bound(path, "pnl_error_usdc.lo", c.pnl_error_usdc?.lo)
  const phi = bound(path, "pnl_error_usdc.hi", c.pnl_error_usdc?.hi)
  if (plo !== null && phi !== null && plo > phi) bad(path, "pnl_error_usdc.lo is above pnl_error_usdc.hi")
  const flo = bound(path, "fills_ratio.lo", c.fills_ratio?.lo, 0)
  const fhi = bound(path, "fills_ratio.hi", c.fills_ratio?.hi, 0)
  if (flo !== null && fhi !== null && flo > fhi) bad(path, "fills_ratio.lo is above fills_ratio.hi")
  const seeds = Array.isArray(c.seeds) ? c.seeds.filter((s) => typeof s === "number") : []
  return {
    format: INTERVAL_CALIBRATION_FORMAT, version: 1, level: c.level, seeds,
    model: { queue: String(c.model?.queue ?? "?"), latency: String(c.model?.latency ?? "?") },
    runs: typeof c.runs === "number" ? c.runs : 0,
    pnl_error_usdc: { lo: plo, hi: phi, ranks: c.pnl_error_usdc.ranks ?? [0, 0], errors: Array.isArray(c.pnl_error_usdc.errors) ? c.pnl_error_usdc.errors : [] },
    fills_ratio: { lo: flo, hi: fhi, ranks: c.fills_ratio.ranks ?? [0, 0], ratios: Array.isArray(c.fills_ratio.ratios) ? c.fills_ratio.ratios : [], left_out: c.fills_ratio.left_out ?? 0 },
    by_run: Array.isArray(c.by_run) ? c.by_run : []
  }
}
