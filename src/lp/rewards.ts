// Daily LP rewards, part 1: per-minute scoring and the day's accrual.
// Allocation of the budget (and the per-wallet cap) is in rewards-alloc.ts.
//
// Adapted from Polymarket's published liquidity-rewards methodology (see
// docs/rewards.md). Everything is exact integer / bigint arithmetic; the only
// rounding is the documented floor of each per-sample share to SHARE_SCALE.
//
// Half-bps: the adjusted mid (bestBid + bestAsk) / 2 can end in .5 bps, so all
// distances are computed in half-bps units (mid2 = bestBid + bestAsk,
// s2 = |2·price − mid2|, v2 = 2·band). Ratios (v − s)/v are unchanged by the
// doubling, so no mid rounding is ever needed.

export const MAX_PRICE_BPS = 10_000
/** Single-sided quotes earn Q/c while the mid is inside [C_RANGE_LOW_BPS, C_RANGE_HIGH_BPS]. */
export const SINGLE_SIDED_DIVISOR = 3
export const C_RANGE_LOW_BPS = 1_000
export const C_RANGE_HIGH_BPS = 9_000
/** Fixed point of one sample's normalised share: 1 share = 10^18 units, floored. */
export const SHARE_SCALE = 10n ** 18n

/** One resting order in the single YES-terms book (see docs/engine.md). */
export interface RestingQuote {
  readonly maker: string
  readonly isBid: boolean
  readonly yesPriceBps: number
  /** Remaining resting size, integer contracts. */
  readonly size: number
}

/** Per-market scoring knobs (a caller may pass different ones per market). */
export interface ScoreParams {
  /** v: orders at or beyond this distance from the adjusted mid score 0. */
  readonly bandSpreadBpsMax: number
  /** Size cutoff: smaller orders score 0, and the adjusted mid needs this much cumulative depth. */
  readonly minSizeContracts: number
}

/** Exact non-negative rational. Not JSON: a calculation primitive only. */
export interface Ratio {
  readonly num: bigint
  readonly den: bigint
}

export interface MakerSampleScore {
  readonly maker: string
  /** Display values (contracts of full-score depth); money never uses these. */
  readonly qOne: number
  readonly qTwo: number
  readonly qMin: number
  /** Exact values as decimal bigint strings, in units of 1 / sample.scoreUnitDen. */
  readonly qOneUnits: string
  readonly qTwoUnits: string
  readonly qMinUnits: string
}

/** One market at one sampling minute. JSON-serialisable. */
export interface MarketSample {
  /** Size-cutoff-adjusted mid; may end in .5; null when either side lacks min-size depth. */
  readonly midBps: number | null
  /** Denominator of the *Units fields: 3 · (2·bandSpreadBpsMax)². */
  readonly scoreUnitDen: string
  /** Makers with a positive qOne or qTwo, sorted by maker id. */
  readonly makers: ReadonlyArray<MakerSampleScore>
}

export interface MakerAccrual {
  readonly maker: string
  /** Σ over samples of floor(qMin · SHARE_SCALE / ΣqMin) · minutes, decimal bigint string. */
  readonly shareFp: string
}

export interface MarketAccrual {
  readonly marketId: string
  /** Sampled minutes, including minutes in which nobody scored. */
  readonly samples: number
  /** Sorted by maker id; makers with a zero share are absent. */
  readonly makers: ReadonlyArray<MakerAccrual>
}

/** A UTC day's accrual so far. Plain sorted arrays so JSON is canonical. */
export interface DayAccrual {
  /** Caller-supplied day number (e.g. days since the unix epoch); no clock is read here. */
  readonly dayIndex: number
  /** Sorted by marketId. */
  readonly markets: ReadonlyArray<MarketAccrual>
}

const assertInt = (name: string, value: number, min: number, max: number): void => {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${value}`)
  }
}

const assertScoreParams = (params: ScoreParams): void => {
  assertInt("bandSpreadBpsMax", params.bandSpreadBpsMax, 1, MAX_PRICE_BPS)
  assertInt("minSizeContracts", params.minSizeContracts, 0, Number.MAX_SAFE_INTEGER)
}

const assertQuote = (q: RestingQuote): void => {
  assertInt("yesPriceBps", q.yesPriceBps, 0, MAX_PRICE_BPS)
  assertInt("size", q.size, 1, Number.MAX_SAFE_INTEGER)
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Best price whose cumulative depth (that price or better) reaches minSize; null if never. */
const cutoffBestBps = (quotes: ReadonlyArray<RestingQuote>, isBid: boolean, minSize: number): number | null => {
  const sizeByPrice = new Map<number, number>()
  for (const q of quotes) {
    if (q.isBid === isBid) sizeByPrice.set(q.yesPriceBps, (sizeByPrice.get(q.yesPriceBps) ?? 0) + q.size)
  }
  const prices = [...sizeByPrice.keys()].sort((a, b) => (isBid ? b - a : a - b))
  let depthContracts = 0
  for (const p of prices) {
    depthContracts += sizeByPrice.get(p) ?? 0
    if (depthContracts >= minSize) return p
  }
  return null
}

/** Adjusted mid in half-bps (bestBid + bestAsk), or null. */
const adjustedMid2 = (quotes: ReadonlyArray<RestingQuote>, minSizeContracts: number): number | null => {
  const bid = cutoffBestBps(quotes, true, minSizeContracts)
  const ask = cutoffBestBps(quotes, false, minSizeContracts)
  return bid === null || ask === null ? null : bid + ask
}

/**
 * Size-cutoff-adjusted mid, as published: on each side, the best price at which
 * the cumulative resting size at that price or better reaches minSizeContracts,
 * so dust at the top of the book cannot move the mid. May end in .5 bps.
 */
export const adjustedMidBps = (quotes: ReadonlyArray<RestingQuote>, minSizeContracts: number): number | null => {
  assertInt("minSizeContracts", minSizeContracts, 0, Number.MAX_SAFE_INTEGER)
  quotes.forEach(assertQuote)
  const mid2 = adjustedMid2(quotes, minSizeContracts)
  return mid2 === null ? null : mid2 / 2
}

/** S(v,s)·size numerator over the common denominator (2v)²; 0 outside the band. */
const scoreNum = (yesPriceBps: number, sizeContracts: number, mid2: number, v2: number): bigint => {
  const s2 = Math.abs(2 * yesPriceBps - mid2)
  if (s2 >= v2) return 0n
  const closeness = BigInt(v2 - s2)
  return closeness * closeness * BigInt(sizeContracts)
}

/**
 * Exact S(v, s) · size = ((v − s)/v)² · size with s = |yesPriceBps − midBps|.
 * midBps may end in .5. Zero at or beyond the band (s ≥ v).
 */
export const orderScore = (yesPriceBps: number, sizeContracts: number, midBps: number, bandSpreadBpsMax: number): Ratio => {
  assertInt("yesPriceBps", yesPriceBps, 0, MAX_PRICE_BPS)
  assertInt("sizeContracts", sizeContracts, 0, Number.MAX_SAFE_INTEGER)
  assertInt("bandSpreadBpsMax", bandSpreadBpsMax, 1, MAX_PRICE_BPS)
  const mid2 = midBps * 2
  assertInt("midBps·2", mid2, 0, 2 * MAX_PRICE_BPS)
  const v2 = 2 * bandSpreadBpsMax
  return { num: scoreNum(yesPriceBps, sizeContracts, mid2, v2), den: BigInt(v2) * BigInt(v2) }
}

/** Inside [0.10, 0.90] a one-sided maker still earns max(Q)/c; outside, only min(Q) counts. */
export const singleSidedAllowed = (midBps: number): boolean => midBps >= C_RANGE_LOW_BPS && midBps <= C_RANGE_HIGH_BPS

/**
 * Q_min over a common denominator. Inputs and output are numerators; the
 * output's denominator is c times the inputs' (so the /c stays an integer):
 * c·Q_min = max(c·min(Q1, Q2), max(Q1, Q2)) inside the range, c·min(Q1, Q2) outside.
 */
export const qMinTimesC = (qOne: bigint, qTwo: bigint, midBps: number): bigint => {
  const c = BigInt(SINGLE_SIDED_DIVISOR)
  const low = qOne < qTwo ? qOne : qTwo
  const high = qOne < qTwo ? qTwo : qOne
  if (!singleSidedAllowed(midBps)) return c * low
  return c * low > high ? c * low : high
}

const toDisplay = (num: bigint, den: bigint): number => Number((num * 1_000_000n) / den) / 1_000_000

/**
 * Scores one market's book at one sampling minute. Q_one sums a maker's bids
 * (buy YES and sell NO), Q_two their asks (sell YES and buy NO), as in the
 * published Q_one = bids(m) + asks(m'), Q_two = asks(m) + bids(m').
 */
export const marketSample = (quotes: ReadonlyArray<RestingQuote>, params: ScoreParams): MarketSample => {
  assertScoreParams(params)
  quotes.forEach(assertQuote)
  const v2 = 2 * params.bandSpreadBpsMax
  const c = BigInt(SINGLE_SIDED_DIVISOR)
  const unitDen = c * BigInt(v2) * BigInt(v2)
  const mid2 = adjustedMid2(quotes, params.minSizeContracts)
  if (mid2 === null) return { midBps: null, scoreUnitDen: unitDen.toString(), makers: [] }
  const sides = new Map<string, { one: bigint; two: bigint }>()
  for (const q of quotes) {
    if (q.size < params.minSizeContracts) continue
    const num = scoreNum(q.yesPriceBps, q.size, mid2, v2)
    if (num === 0n) continue
    const acc = sides.get(q.maker) ?? { one: 0n, two: 0n }
    if (q.isBid) acc.one += num
    else acc.two += num
    sides.set(q.maker, acc)
  }
  const midBps = mid2 / 2
  const makers = [...sides.keys()].sort(byString).map((maker): MakerSampleScore => {
    const { one, two } = sides.get(maker) ?? { one: 0n, two: 0n }
    // Scale Q_one/Q_two by c too, so all three share the unit 1/unitDen.
    const qOneUnits = one * c
    const qTwoUnits = two * c
    const qMinUnits = qMinTimesC(one, two, midBps)
    return {
      maker,
      qOne: toDisplay(qOneUnits, unitDen),
      qTwo: toDisplay(qTwoUnits, unitDen),
      qMin: toDisplay(qMinUnits, unitDen),
      qOneUnits: qOneUnits.toString(),
      qTwoUnits: qTwoUnits.toString(),
      qMinUnits: qMinUnits.toString()
    }
  })
  return { midBps, scoreUnitDen: unitDen.toString(), makers }
}

export const emptyDay = (dayIndex: number): DayAccrual => {
  assertInt("dayIndex", dayIndex, 0, Number.MAX_SAFE_INTEGER)
  return { dayIndex, markets: [] }
}

/**
 * Adds one sample (counted `minutes` times, for a book unchanged over several
 * minutes) to a market's accrual. Each maker's share of the sample is
 * floor(qMin · SHARE_SCALE / ΣqMin), so a sample's shares sum to at most
 * SHARE_SCALE. A sample nobody scored in still counts as sampled minutes:
 * that slice of the market's budget is not paid out.
 */
export const addSample = (day: DayAccrual, marketId: string, sample: MarketSample, minutes = 1): DayAccrual => {
  assertInt("minutes", minutes, 1, Number.MAX_SAFE_INTEGER)
  const qMins = sample.makers.map((m) => ({ maker: m.maker, q: BigInt(m.qMinUnits) })).filter((m) => m.q > 0n)
  const totalQ = qMins.reduce((sum, m) => sum + m.q, 0n)
  const shareByMaker = new Map<string, bigint>()
  const prev = day.markets.find((m) => m.marketId === marketId)
  for (const m of prev?.makers ?? []) shareByMaker.set(m.maker, BigInt(m.shareFp))
  for (const { maker, q } of qMins) {
    const shareFp = ((q * SHARE_SCALE) / totalQ) * BigInt(minutes)
    if (shareFp > 0n) shareByMaker.set(maker, (shareByMaker.get(maker) ?? 0n) + shareFp)
  }
  const makers = [...shareByMaker.keys()]
    .sort(byString)
    .map((maker): MakerAccrual => ({ maker, shareFp: (shareByMaker.get(maker) ?? 0n).toString() }))
  const next: MarketAccrual = { marketId, samples: (prev?.samples ?? 0) + minutes, makers }
  const markets = [...day.markets.filter((m) => m.marketId !== marketId), next].sort((a, b) => byString(a.marketId, b.marketId))
  return { dayIndex: day.dayIndex, markets }
}
