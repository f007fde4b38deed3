// The market-response model (docs/backtesting.md "The market-response model"): how many takers
// arrive at the touch as a function of the edge a quote offers against where the tape's mid goes
// (version 2), how big they are — by their edge against the mid minutes later (version 3; one
// distribution in version 2) — and how much they know. Version 1 files (arrival by the spread
// weighted by an informed share) and version 2 files are still read and applied in their form.
// Fitted from tapes alone (fit.ts, edge.ts), read back here, and applied by the backtest (flow.ts).
// Plain data (structured-cloneable): it rides in the BacktestConfig to sweep and fidelity workers.
import { readFileSync } from "node:fs"
import { BacktestInputError } from "../dataset.ts"

export const RESPONSE_FORMAT = "twinbook-response-model"
/** The version fit-response writes; READABLE_VERSIONS are those --response accepts. */
export const RESPONSE_VERSION = 4
export const READABLE_VERSIONS: ReadonlyArray<number> = [1, 2, 3, 4]

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

/**
 * One edge bucket of one side: edges [from, to) ticks (the end buckets pool the tails), the
 * exposure-weighted mean edge in it (the knot the rate is interpolated at), the seconds the
 * touch offered such an edge, takers observed and fitted, the monotone rate and the raw one.
 */
export interface EdgeBucket {
  readonly from_ticks: number
  readonly to_ticks: number
  readonly at_ticks: number
  readonly exposure_sec: number
  readonly observed: number
  readonly expected: number
  /** Fitted takers per second (non-decreasing in the edge), and observed ÷ exposure before pooling. */
  readonly rate_per_sec: number
  readonly raw_rate_per_sec: number
  /** Mean size of the takers observed in the bucket (contracts; 0 without takers): the sizes are not modelled by edge, this shows whether they should be. */
  readonly mean_size: number
}

/** The fitted λ(e) of one side (takers that buy lift the ask; takers that sell hit the bid). */
export interface EdgeSide {
  readonly arrivals: number
  readonly exposure_sec: number
  readonly buckets: ReadonlyArray<EdgeBucket>
  /** Poisson deviance and Pearson χ² over the buckets; blocks = distinct fitted rates (the isotonic fit's size). */
  readonly deviance: number
  readonly chi_square: number
  readonly blocks: number
  /** Log-likelihood of the arrival times over a constant rate (nats): what the edge explains. */
  readonly loglik_gain: number
}

/** One horizon tried: the log-likelihood gain over a constant rate per side; the largest total is applied. */
export interface EdgeCandidate {
  readonly horizon_sec: number
  readonly loglik_gain_buy: number
  readonly loglik_gain_sell: number
}

/** λ_side(e): takers per second against the edge e (ticks) a touch offers against the tape's mid H later. */
export interface EdgeArrival {
  readonly form: string
  readonly horizon_sec: number
  /** How horizon_sec was chosen: given (the default or `--horizon S`), or the largest log-likelihood gain among the candidates; absent in files fitted before the rule was written (the likelihood). */
  readonly horizon_rule?: "given" | "likelihood"
  readonly bucket_ticks: number
  readonly candidates: ReadonlyArray<EdgeCandidate>
  /** Takers with a two-sided book at t and t + H within the window, and those left out. */
  readonly arrivals: number
  readonly arrivals_left_out: number
  readonly buy: EdgeSide
  readonly sell: EdgeSide
}

/** The sizes of the takers whose edge against the tape's mid H later fell in [from, to) ticks (the end buckets open). */
export interface SizeBucket {
  readonly from_ticks: number
  readonly to_ticks: number
  readonly n: number
  readonly mean: number
  /** 21 quantiles, 0 % … 100 % in steps of 5 %, as `size.quantiles`. */
  readonly quantiles: ReadonlyArray<number>
}

/** One horizon tried for the sizes: the share of the variance of size (contracts) between its buckets. */
export interface SizeCandidate {
  readonly horizon_sec: number
  readonly r_squared: number
}

/** Version 3: a taker's size drawn by its edge (ticks) against the tape's mid H later, H chosen among the candidates. */
export interface SizeByEdge {
  readonly form: string
  readonly horizon_sec: number
  readonly candidates: ReadonlyArray<SizeCandidate>
  /** Takers used (a two-sided book before them, the mid H later within the window), and those left out. */
  readonly takers: number
  readonly takers_left_out: number
  readonly buckets: ReadonlyArray<SizeBucket>
}

/** Version 4: how re-quoting makers follow the rest of the book (response/follow-fit.ts), applied to the tape's followers in a flow replay (follow.ts). */
export interface FollowFit {
  readonly form: string
  /** Change of a maker's quote centre per change of the rest-of-book mid between its consecutive re-quotes (least squares through 0). */
  readonly slope: number
  readonly slope_se: number
  readonly r_squared: number
  /** Consecutive re-quote pairs fitted, re-quotes seen, and makers that re-quote (summed over the tapes). */
  readonly pairs: number
  readonly requotes: number
  readonly makers: number
}

export interface ResponseModel {
  readonly format: typeof RESPONSE_FORMAT
  readonly version: 1 | 2 | 3 | 4
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
  /** Version 2 and 3: the arrival covariate the backtest applies (the spread curve in `arrival` is then kept for the record only). Null in version 1. */
  readonly edge: EdgeArrival | null
  /** Version 3: the sizes by the taker's longer-horizon edge; null before version 3, or when the tapes held too few takers (then one distribution, `size`). */
  readonly size_by_edge: SizeByEdge | null
  /** Version 4: makers that follow the book; null before version 4, or when the tapes showed no re-quoting maker. */
  readonly follow: FollowFit | null
}

/**
 * Takers per second at an edge of `ticks` on one side: linear between the buckets' knots (a
 * monotone interpolation of monotone rates stays monotone), flat beyond the end knots.
 */
export const edgeRate = (side: Pick<EdgeSide, "buckets">, ticks: number): number => {
  const b = side.buckets
  if (b.length === 0) return 0
  if (ticks <= b[0]!.at_ticks) return b[0]!.rate_per_sec
  for (let k = 1; k < b.length; k++) {
    const hi = b[k]!
    if (ticks < hi.at_ticks) {
      const lo = b[k - 1]!
      return lo.rate_per_sec + ((ticks - lo.at_ticks) / (hi.at_ticks - lo.at_ticks)) * (hi.rate_per_sec - lo.rate_per_sec)
    }
  }
  return b[b.length - 1]!.rate_per_sec
}

/** 9 significant digits: readable, and the same bytes on every run. */
export const round = (x: number): number => (x === 0 || !Number.isFinite(x) ? x : Number(x.toPrecision(9)))

/** Takers per second at a spread of `ticks`, for takers that buy (side 0) or sell (side 1). */
export const arrivalRate = (m: ResponseModel, side: 0 | 1, ticks: number): number => {
  const c = side === 0 ? m.arrival.buy : m.arrival.sell
  return c.a_per_sec * Math.exp(-c.b_per_tick * ticks)
}

/**
 * A taker's size from the fitted quantiles, for a uniform draw u in [0, 1): version 3 by the
 * taker's edge (ticks) against the tape's mid `size_by_edge.horizon_sec` later, when known (the
 * bucket it falls in; below the first, the first), else the one distribution.
 */
export const sizeOf = (m: ResponseModel, u: number, longEdgeTicks: number | null = null): number => {
  const by = m.size_by_edge
  let q = m.size.quantiles
  if (by !== null && longEdgeTicks !== null && by.buckets.length > 0) {
    let k = 0
    while (k + 1 < by.buckets.length && longEdgeTicks >= by.buckets[k + 1]!.from_ticks) k++
    q = by.buckets[k]!.quantiles
  }
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

/** A version 2 side: buckets with finite knots strictly increasing and rates ≥ 0 that never decrease. */
const checkEdgeSide = (path: string, name: string, side: unknown): void => {
  const b = (side as EdgeSide | undefined)?.buckets
  if (!Array.isArray(b) || b.length === 0) return bad(path, `edge.${name}.buckets must list at least one bucket`)
  b.forEach((x: EdgeBucket, i) => {
    finite(path, `edge.${name}.buckets[${i}].at_ticks`, x?.at_ticks)
    finite(path, `edge.${name}.buckets[${i}].rate_per_sec`, x?.rate_per_sec, 0)
    if (i === 0) return
    if (!(x.at_ticks > b[i - 1]!.at_ticks)) bad(path, `edge.${name}.buckets[${i}].at_ticks must be above the bucket before it`)
    if (x.rate_per_sec < b[i - 1]!.rate_per_sec) bad(path, `edge.${name}.buckets[${i}].rate_per_sec is below the bucket before it: the rate must not decrease with the edge`)
  })
}

/** A size-quantile list: at least 2 sizes, each ≥ 1, never decreasing. */
const checkQuantiles = (path: string, name: string, q: unknown): void => {
  if (!Array.isArray(q) || q.length < 2) return bad(path, `${name} must list at least 2 sizes`)
  q.forEach((x, i) => finite(path, `${name}[${i}]`, x, 1))
  if (q.some((x, i) => i > 0 && x < q[i - 1]!)) bad(path, `${name} must not decrease`)
}

/** Version 3's sizes by edge: a horizon above 0 and buckets whose lower ends rise, each with its quantiles. */
const checkSizeByEdge = (path: string, by: unknown): void => {
  const x = by as SizeByEdge | null | undefined
  // null: too few takers to bucket when fitted; sizes come from the one distribution.
  if (x === null) return
  if (typeof x !== "object") return bad(path, "size_by_edge must be an object or null (version 3 draws sizes by the longer-horizon edge)")
  if (finite(path, "size_by_edge.horizon_sec", x.horizon_sec, 0) <= 0) bad(path, "size_by_edge.horizon_sec must be above 0")
  if (!Array.isArray(x.buckets) || x.buckets.length === 0) return bad(path, "size_by_edge.buckets must list at least one bucket")
  x.buckets.forEach((b, i) => {
    finite(path, `size_by_edge.buckets[${i}].from_ticks`, b?.from_ticks)
    checkQuantiles(path, `size_by_edge.buckets[${i}].quantiles`, b?.quantiles)
    if (i > 0 && !(b.from_ticks > x.buckets[i - 1]!.from_ticks)) bad(path, `size_by_edge.buckets[${i}].from_ticks must be above the bucket before it`)
  })
}

/** Version 4's makers that follow the book: null (no re-quoting maker in the tapes) or a finite slope in 0..2 (a maker that moves twice as far as the book is no maker). */
const checkFollow = (path: string, f: unknown): void => {
  const x = f as FollowFit | null | undefined
  if (x === null) return
  if (typeof x !== "object") return bad(path, "follow must be an object or null (version 4 moves re-quoting makers with the book)")
  const slope = finite(path, "follow.slope", x.slope, 0)
  if (slope > 2) bad(path, "follow.slope must be in 0..2")
}

/** Checks what the backtest uses of a model; anything else in the file is informational. */
export const validateModel = (path: string, json: unknown): ResponseModel => {
  const m = json as ResponseModel
  if (typeof json !== "object" || json === null) return bad(path, "not a JSON object")
  if (m.format !== RESPONSE_FORMAT) return bad(path, `format is ${String(m.format)}, expected ${RESPONSE_FORMAT} (write one with npm run backtest -- fit-response)`)
  if (!READABLE_VERSIONS.includes(m.version)) return bad(path, `version ${String(m.version)} is not supported (expected ${READABLE_VERSIONS.join(" or ")}; fit it again with npm run backtest -- fit-response)`)
  if (m.version === 1) {
    // Version 1 applies the spread curve weighted by the informed share (flow.ts, the old form).
    for (const side of ["buy", "sell"] as const) {
      finite(path, `arrival.${side}.a_per_sec`, m.arrival?.[side]?.a_per_sec, 0)
      finite(path, `arrival.${side}.b_per_tick`, m.arrival?.[side]?.b_per_tick)
    }
    const pi = finite(path, "information.informed_share", m.information?.informed_share, 0)
    if (pi > 1) bad(path, "information.informed_share must be in 0..1")
    finite(path, "information.horizon_sec", m.information?.horizon_sec, 1)
  } else {
    if (typeof m.edge !== "object" || m.edge === null) return bad(path, `edge is missing (version ${m.version} applies the arrival rate by edge)`)
    const h = finite(path, "edge.horizon_sec", m.edge.horizon_sec, 0)
    if (h <= 0) bad(path, "edge.horizon_sec must be above 0")
    checkEdgeSide(path, "buy", m.edge.buy)
    checkEdgeSide(path, "sell", m.edge.sell)
    if (m.version >= 3) checkSizeByEdge(path, m.size_by_edge)
    if (m.version >= 4) checkFollow(path, m.follow)
  }
  checkQuantiles(path, "size.quantiles", m.size?.quantiles)
  return normalised(m)
}

const num = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) ? x : 0)
const curveOf = (c: Partial<ArrivalCurve> | undefined): ArrivalCurve => ({ a_per_sec: num(c?.a_per_sec), b_per_tick: num(c?.b_per_tick), a_se: num(c?.a_se), b_se: num(c?.b_se), arrivals: num(c?.arrivals) })
const list = <T>(x: ReadonlyArray<T> | undefined): ReadonlyArray<T> => (Array.isArray(x) ? x : [])

const edgeSideOf = (s: EdgeSide): EdgeSide => ({
  arrivals: num(s.arrivals), exposure_sec: num(s.exposure_sec),
  buckets: s.buckets.map((b) => ({
    from_ticks: num(b.from_ticks), to_ticks: num(b.to_ticks), at_ticks: b.at_ticks, exposure_sec: num(b.exposure_sec), observed: num(b.observed),
    expected: num(b.expected), rate_per_sec: b.rate_per_sec, raw_rate_per_sec: num(b.raw_rate_per_sec), mean_size: num(b.mean_size)
  })),
  deviance: num(s.deviance), chi_square: num(s.chi_square), blocks: num(s.blocks), loglik_gain: num(s.loglik_gain)
})

const edgeOf = (e: EdgeArrival): EdgeArrival => ({
  form: String(e.form ?? "takers per second against the edge e = (mid H later − our price) ÷ tick, per side; monotone"), horizon_sec: e.horizon_sec, bucket_ticks: num(e.bucket_ticks),
  candidates: list(e.candidates).map((c) => ({ horizon_sec: num(c.horizon_sec), loglik_gain_buy: num(c.loglik_gain_buy), loglik_gain_sell: num(c.loglik_gain_sell) })),
  arrivals: num(e.arrivals), arrivals_left_out: num(e.arrivals_left_out), buy: edgeSideOf(e.buy), sell: edgeSideOf(e.sell)
})

const sizeByEdgeOf = (x: SizeByEdge): SizeByEdge => ({
  form: String(x.form ?? "sizes by the taker's edge (ticks) against the tape's mid H later"), horizon_sec: x.horizon_sec,
  candidates: list(x.candidates).map((c) => ({ horizon_sec: num(c.horizon_sec), r_squared: num(c.r_squared) })),
  takers: num(x.takers), takers_left_out: num(x.takers_left_out),
  buckets: x.buckets.map((b) => ({ from_ticks: b.from_ticks, to_ticks: num(b.to_ticks), n: num(b.n), mean: num(b.mean), quantiles: b.quantiles }))
})

const followOf = (f: FollowFit): FollowFit => ({
  form: String(f.form ?? "each re-quoting maker's limit orders move by slope × (the rest-of-book mid with us − the rest-of-book mid in the tape)"),
  slope: f.slope, slope_se: num(f.slope_se), r_squared: num(f.r_squared), pairs: num(f.pairs), requotes: num(f.requotes), makers: num(f.makers)
})

/** The checked model with its informational parts (fit, sources, markouts) present, 0 or empty where a hand-written file leaves them out. */
const normalised = (m: ResponseModel): ResponseModel => {
  const a: Partial<ResponseModel["arrival"]> = m.arrival ?? {}
  const fit: Partial<GoodnessOfFit> = a.fit ?? {}
  const info: Partial<ResponseModel["information"]> = m.information ?? {}
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
      markouts: list(info.markouts).map((k) => ({
        horizon_sec: num(k.horizon_sec), n: num(k.n), mean_bps: num(k.mean_bps), se_bps: num(k.se_bps), per_contract_bps: num(k.per_contract_bps),
        informed_share: num(k.informed_share), informed_share_se: num(k.informed_share_se)
      })),
      horizon_sec: num(info.horizon_sec), informed_share: num(info.informed_share)
    },
    edge: m.version >= 2 && m.edge !== null && m.edge !== undefined ? edgeOf(m.edge) : null,
    size_by_edge: m.version >= 3 && m.size_by_edge !== null && m.size_by_edge !== undefined ? sizeByEdgeOf(m.size_by_edge) : null,
    follow: m.version >= 4 && m.follow !== null && m.follow !== undefined ? followOf(m.follow) : null
  }
}

/** The model as a run applies it: makers follow the book only when asked (`--follow-makers`): left alone, the book can drift far from the tape's (docs/backtesting.md). */
export const followingOnly = (m: ResponseModel, followMakers: boolean): ResponseModel => (followMakers || m.follow === null ? m : { ...m, follow: null })

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
