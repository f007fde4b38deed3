// The market-response model (docs/backtesting.md "The market-response model"): how many takers
// arrive at the touch as a function of the spread, how big they are, and how much they know.
// Fitted from tapes alone (fit.ts), read back here, and applied by the backtest (flow.ts).
// Plain data (structured-cloneable): it rides in the BacktestConfig to sweep and fidelity workers.
import { readFileSync } from "node:fs"
import { BacktestInputError } from "../dataset.ts"

export const RESPONSE_FORMAT = "twinbook-response-model"
export const RESPONSE_VERSION = 1

/** λ(s) = a · exp(−b · s) takers per second, s the spread in ticks; with the fit's standard errors. */
export interface ArrivalCurve {
  readonly a_per_sec: number
  readonly b_per_tick: number
  readonly a_se: number
  readonly b_se: number
  readonly arrivals: number
}

/** One goodness-of-fit bucket: spreads [from, to] ticks, exposure, and observed vs fitted arrivals per side. */
export interface FitBucket {
  readonly from_ticks: number
  readonly to_ticks: number
  readonly exposure_sec: number
  readonly buy_observed: number
  readonly buy_expected: number
  readonly sell_observed: number
  readonly sell_expected: number
}

export interface GoodnessOfFit {
  readonly buckets: ReadonlyArray<FitBucket>
  /** Pearson χ² and Poisson deviance over the buckets, per side; dof = buckets − 2. */
  readonly chi_square: { readonly buy: number; readonly sell: number }
  readonly deviance: { readonly buy: number; readonly sell: number }
  readonly dof: number
}

/** Markouts at one horizon: side × (mid at t + h − mid just before), YES bps. */
export interface Markout {
  readonly horizon_sec: number
  readonly n: number
  readonly mean_bps: number
  readonly se_bps: number
  /** Contract-weighted mean: the expected adverse move per contract a maker gives such a taker. */
  readonly per_contract_bps: number
  /** (agree − disagree) ÷ n, agree = markout > 0: a noise taker's mid moves its way as often as against it (or not at all), an informed taker's always moves its way. */
  readonly informed_share: number
  readonly informed_share_se: number
}

export interface ResponseModel {
  readonly format: typeof RESPONSE_FORMAT
  readonly version: typeof RESPONSE_VERSION
  readonly sources: ReadonlyArray<{ readonly source: string; readonly markets: number; readonly arrivals: number; readonly exposure_sec: number }>
  readonly arrival: {
    readonly form: string
    readonly exposure_sec: number
    /** Taker arrivals (one taker order = one arrival, however many fills) at a two-sided book, and those left out (one-sided book). */
    readonly arrivals: number
    readonly arrivals_one_sided: number
    /** Takers that bought (lifted the ask) / sold (hit the bid). */
    readonly buy: ArrivalCurve
    readonly sell: ArrivalCurve
    readonly fit: GoodnessOfFit
  }
  readonly size: {
    readonly n: number
    readonly mean: number
    /** 21 quantiles, 0 % … 100 % in steps of 5 %: sizes are drawn from these (linear between them). */
    readonly quantiles: ReadonlyArray<number>
    readonly lognormal: { readonly mu: number; readonly sigma: number }
  }
  readonly information: {
    readonly markouts: ReadonlyArray<Markout>
    /** The horizon whose informed share the backtest applies, and that share (clamped to 0..1). */
    readonly horizon_sec: number
    readonly informed_share: number
  }
}

/** Takers per second at a spread of `ticks`, for takers that buy (side 0) or sell (side 1). */
export const arrivalRate = (m: ResponseModel, side: 0 | 1, ticks: number): number => {
  const c = side === 0 ? m.arrival.buy : m.arrival.sell
  return c.a_per_sec * Math.exp(-c.b_per_tick * ticks)
}

/** A taker's size from the fitted quantiles, for a uniform draw u in [0, 1). */
export const sizeOf = (m: ResponseModel, u: number): number => {
  const q = m.size.quantiles
  const h = u * (q.length - 1)
  const lo = Math.floor(h)
  const x = q[lo]! + (h - lo) * ((q[lo + 1] ?? q[lo]!) - q[lo]!)
  return Math.max(1, Math.round(x))
}

const bad = (path: string, what: string): never => {
  throw new BacktestInputError(`${path}: ${what}`)
}

const finite = (path: string, name: string, x: unknown, lo = Number.NEGATIVE_INFINITY): number =>
  typeof x === "number" && Number.isFinite(x) && x >= lo ? x : bad(path, `${name} is not a number${lo > Number.NEGATIVE_INFINITY ? ` ≥ ${lo}` : ""}`)

/** Checks what the backtest uses of a model; anything else in the file is informational. */
export const validateModel = (path: string, json: unknown): ResponseModel => {
  const m = json as ResponseModel
  if (typeof json !== "object" || json === null) return bad(path, "not a JSON object")
  if (m.format !== RESPONSE_FORMAT) return bad(path, `format is ${String(m.format)}, expected ${RESPONSE_FORMAT} (write one with npm run backtest -- fit-response)`)
  if (m.version !== RESPONSE_VERSION) return bad(path, `version ${String(m.version)} is not supported (expected ${RESPONSE_VERSION})`)
  for (const side of ["buy", "sell"] as const) {
    finite(path, `arrival.${side}.a_per_sec`, m.arrival?.[side]?.a_per_sec, 0)
    finite(path, `arrival.${side}.b_per_tick`, m.arrival?.[side]?.b_per_tick)
  }
  const q = m.size?.quantiles
  if (!Array.isArray(q) || q.length < 2) return bad(path, "size.quantiles must list at least 2 sizes")
  q.forEach((x, i) => finite(path, `size.quantiles[${i}]`, x, 1))
  if (q.some((x, i) => i > 0 && x < q[i - 1]!)) bad(path, "size.quantiles must not decrease")
  const pi = finite(path, "information.informed_share", m.information?.informed_share, 0)
  if (pi > 1) bad(path, "information.informed_share must be in 0..1")
  finite(path, "information.horizon_sec", m.information?.horizon_sec, 1)
  return normalised(m)
}

const num = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) ? x : 0)
const curveOf = (c: ArrivalCurve): ArrivalCurve => ({ a_per_sec: c.a_per_sec, b_per_tick: c.b_per_tick, a_se: num(c.a_se), b_se: num(c.b_se), arrivals: num(c.arrivals) })
const list = <T>(x: ReadonlyArray<T> | undefined): ReadonlyArray<T> => (Array.isArray(x) ? x : [])

/** The checked model with its informational parts (fit, sources, markouts) present, 0 or empty where a hand-written file leaves them out. */
const normalised = (m: ResponseModel): ResponseModel => {
  const a = m.arrival
  const fit: Partial<GoodnessOfFit> = a.fit ?? {}
  return {
    format: m.format, version: m.version,
    sources: list(m.sources).map((s) => ({ source: String(s.source), markets: num(s.markets), arrivals: num(s.arrivals), exposure_sec: num(s.exposure_sec) })),
    arrival: {
      form: String(a.form ?? "takers per second at the touch = a · exp(−b · spread in ticks), per side"), exposure_sec: num(a.exposure_sec),
      arrivals: num(a.arrivals), arrivals_one_sided: num(a.arrivals_one_sided), buy: curveOf(a.buy), sell: curveOf(a.sell),
      fit: {
        buckets: list(fit.buckets).map((b) => ({
          from_ticks: num(b.from_ticks), to_ticks: num(b.to_ticks), exposure_sec: num(b.exposure_sec),
          buy_observed: num(b.buy_observed), buy_expected: num(b.buy_expected), sell_observed: num(b.sell_observed), sell_expected: num(b.sell_expected)
        })),
        chi_square: { buy: num(fit.chi_square?.buy), sell: num(fit.chi_square?.sell) },
        deviance: { buy: num(fit.deviance?.buy), sell: num(fit.deviance?.sell) },
        dof: num(fit.dof)
      }
    },
    size: { n: num(m.size.n), mean: num(m.size.mean), quantiles: m.size.quantiles, lognormal: { mu: num(m.size.lognormal?.mu), sigma: num(m.size.lognormal?.sigma) } },
    information: {
      markouts: list(m.information.markouts).map((k) => ({
        horizon_sec: num(k.horizon_sec), n: num(k.n), mean_bps: num(k.mean_bps), se_bps: num(k.se_bps), per_contract_bps: num(k.per_contract_bps),
        informed_share: num(k.informed_share), informed_share_se: num(k.informed_share_se)
      })),
      horizon_sec: m.information.horizon_sec, informed_share: m.information.informed_share
    }
  }
}

export const readResponseModel = (path: string): ResponseModel => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch {
    return bad(path, "no such file")
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    return bad(path, `not JSON (${err instanceof Error ? err.message : String(err)})`)
  }
  return validateModel(path, json)
}
