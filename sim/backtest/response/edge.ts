// The arrival rate by edge (model version 2), fitted from tapes alone. A taker who buys at t
// finds the edge e = (M(t + H) − Ask(t)) ÷ tick, M the tape's mid; one who sells finds
// (Bid(t) − M(t + H)) ÷ tick: what the touch offers against where the price is going. For each
// side and each candidate horizon H, the seconds the touch offered each edge (exposure) and the
// takers that came at each edge are bucketed; the rate per bucket is the monotone (isotonic)
// Poisson maximum likelihood. H is given (ARRIVAL_HORIZON_SEC unless told), or, by the rule
// "likelihood", the candidate whose fit explains the arrival times best (log-likelihood over a
// constant rate, both sides). The likelihood favours short horizons for a reason a backtest
// cannot use: a taker's arrival moves the mid within H, so the seconds before it read as a high
// edge (docs/backtesting.md "Which horizon").
import { isotonicRates } from "./isotonic.ts"
import { type EdgeArrival, type EdgeBucket, type EdgeCandidate, type EdgeSide, round } from "./model.ts"
import { indexAt, mid2At, type TouchPath } from "./touch.ts"

/** The horizons whose log-likelihood gain the fit reports (and chooses among by the rule "likelihood"). */
export const EDGE_HORIZONS_SEC = [5, 15, 30, 60] as const
/**
 * The horizon applied unless told: chosen on calibration backtests (liquidity-midnight seeds
 * 201–213, two folds), not by the likelihood, which picks 15 s there (docs "Which horizon").
 */
export const ARRIVAL_HORIZON_SEC = 1800
/** The arrival's horizon: given in seconds, or the candidate with the largest log-likelihood gain. */
export type HorizonRule = number | "likelihood"
/** The bucket width is the smallest of 1, 2, 5 × 10^k ticks that splits the central 90 % of exposure into at most this many buckets. */
const TARGET_BUCKETS = 16
/** The end buckets pool the tails until each holds this share of the side's exposure (and at least TAIL_MIN_SEC). */
const TAIL_SHARE = 0.001
const TAIL_MIN_SEC = 60

/** One taker order (the trades of one side at one market and ms) as the fit needs it. */
export interface Taker {
  readonly market: number
  readonly tMs: number
  readonly buy: boolean
  readonly size: number
}

/** One tape as the edge fit reads it: each market's touch and tick, its takers, and its end. */
export interface EdgeTape {
  readonly paths: ReadonlyArray<TouchPath>
  readonly ticks: ReadonlyArray<number>
  readonly takers: ReadonlyArray<Taker>
  readonly endMs: number
}

/** Exposure pieces (edge in ticks, seconds) and arrivals (edge, size) of one side at one horizon. */
interface SideData {
  readonly expEdge: number[]
  readonly expSec: number[]
  readonly arrEdge: number[]
  readonly arrSize: number[]
}

const two = (p: TouchPath, j: number): boolean => j >= 0 && p.bid[j]! >= 0 && p.ask[j]! >= 0

/** The last entry strictly before tMs: the touch a taker at tMs found (a snapshot in its own ms shows the book after it). */
const indexBefore = (p: TouchPath, tMs: number): number => indexAt(p, tMs - 0.5)

/** Times where either the touch (at t) or the future mid (at t + H) changes, within [from, to). */
const breakpoints = (p: TouchPath, hMs: number, from: number, to: number): number[] => {
  const out: number[] = [from]
  let a = 0
  let b = 0
  const n = p.tMs.length
  while (a < n || b < n) {
    const x = a < n ? p.tMs[a]! : Number.POSITIVE_INFINITY
    const y = b < n ? p.tMs[b]! - hMs : Number.POSITIVE_INFINITY
    const t = Math.min(x, y)
    if (t === x) a++
    if (t === y) b++
    if (t >= to) break
    if (t > out[out.length - 1]!) out.push(t)
  }
  return out
}

/**
 * The edge (ticks) a taker found against the tape's mid hMs later: against the touch just before
 * its own ms, with its own impact (the touch it left behind) taken out of the future mid, which is
 * not information it had. Null outside the window (at or after windowEnd, before the first
 * snapshot) or at a one-sided book.
 */
export const takerEdge = (tape: EdgeTape, t: Taker, hMs: number, windowEnd: number): number | null => {
  const p = tape.paths[t.market]!
  const j = indexBefore(p, t.tMs)
  let future2 = mid2At(p, t.tMs + hMs)
  if (t.tMs >= windowEnd || p.tMs.length === 0 || t.tMs < p.tMs[0]! || !two(p, j) || future2 < 0) return null
  const after2 = mid2At(p, t.tMs)
  if (after2 >= 0) future2 -= after2 - (p.bid[j]! + p.ask[j]!)
  const tick2 = 2 * tape.ticks[t.market]!
  return t.buy ? (future2 - 2 * p.ask[j]!) / tick2 : (2 * p.bid[j]! - future2) / tick2
}

/** Exposure and arrivals by edge, per side, for one horizon over the window [first snapshot, end − maxH). */
const collect = (tapes: ReadonlyArray<EdgeTape>, hSec: number, maxHSec: number): { buy: SideData; sell: SideData; leftOut: number } => {
  const hMs = hSec * 1000
  const side = (): SideData => ({ expEdge: [], expSec: [], arrEdge: [], arrSize: [] })
  const buy = side()
  const sell = side()
  let leftOut = 0
  for (const tape of tapes) {
    const windowEnd = tape.endMs - maxHSec * 1000
    tape.paths.forEach((p, m) => {
      if (p.tMs.length === 0) return
      const tick2 = 2 * tape.ticks[m]!
      const times = breakpoints(p, hMs, p.tMs[0]!, windowEnd)
      for (let k = 0; k < times.length; k++) {
        const u = times[k]!
        const sec = ((k + 1 < times.length ? times[k + 1]! : windowEnd) - u) / 1000
        const j = indexAt(p, u)
        const future2 = mid2At(p, u + hMs)
        if (sec <= 0 || !two(p, j) || future2 < 0) continue
        buy.expEdge.push((future2 - 2 * p.ask[j]!) / tick2)
        buy.expSec.push(sec)
        sell.expEdge.push((2 * p.bid[j]! - future2) / tick2)
        sell.expSec.push(sec)
      }
    })
    for (const t of tape.takers) {
      const e = takerEdge(tape, t, hMs, windowEnd)
      if (e === null) {
        leftOut++
        continue
      }
      const s = t.buy ? buy : sell
      s.arrEdge.push(e)
      s.arrSize.push(t.size)
    }
  }
  return { buy, sell, leftOut }
}

/** The smallest 1, 2, 5 × 10^k ticks splitting the central 90 % of the pooled exposure into ≤ TARGET_BUCKETS. */
const bucketWidth = (sides: ReadonlyArray<SideData>): number => {
  const pieces: Array<[number, number]> = []
  for (const s of sides) for (let i = 0; i < s.expEdge.length; i++) pieces.push([s.expEdge[i]!, s.expSec[i]!])
  pieces.sort((x, y) => x[0] - y[0])
  const total = pieces.reduce((a, x) => a + x[1], 0)
  let cum = 0
  let lo = 0
  let hi = 0
  let seenLo = false
  for (const [e, sec] of pieces) {
    cum += sec
    if (!seenLo && cum >= 0.05 * total) {
      lo = e
      seenLo = true
    }
    if (cum >= 0.95 * total) {
      hi = e
      break
    }
  }
  const need = (hi - lo) / TARGET_BUCKETS
  for (let p = 1; ; p *= 10) for (const k of [1, 2, 5]) if (k * p >= need) return k * p
}

interface Cell {
  from: number
  to: number
  sec: number
  edgeSec: number
  count: number
  sizeSum: number
}

/** Cells of width w ticks; cells without exposure join their lower neighbour; the tails pool until each end holds enough exposure. */
const cellsOf = (s: SideData, w: number): Cell[] => {
  const byKey = new Map<number, Cell>()
  const at = (e: number): Cell => {
    const k = Math.floor(e / w)
    let c = byKey.get(k)
    if (c === undefined) {
      c = { from: k * w, to: (k + 1) * w, sec: 0, edgeSec: 0, count: 0, sizeSum: 0 }
      byKey.set(k, c)
    }
    return c
  }
  for (let i = 0; i < s.expEdge.length; i++) {
    const c = at(s.expEdge[i]!)
    c.sec += s.expSec[i]!
    c.edgeSec += s.expEdge[i]! * s.expSec[i]!
  }
  for (let i = 0; i < s.arrEdge.length; i++) {
    const c = at(s.arrEdge[i]!)
    c.count++
    c.sizeSum += s.arrSize[i]!
  }
  const sorted = [...byKey.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c)
  const merge = (into: Cell, c: Cell): void => {
    into.from = Math.min(into.from, c.from)
    into.to = Math.max(into.to, c.to)
    into.sec += c.sec
    into.edgeSec += c.edgeSec
    into.count += c.count
    into.sizeSum += c.sizeSum
  }
  const cells: Cell[] = []
  for (const c of sorted) {
    if (c.sec > 0 || cells.length === 0) cells.push(c)
    else merge(cells[cells.length - 1]!, c)
  }
  while (cells.length > 1 && cells[0]!.sec === 0) merge(cells[1]!, cells.shift()!)
  const total = cells.reduce((a, c) => a + c.sec, 0)
  const min = Math.max(TAIL_MIN_SEC, TAIL_SHARE * total)
  while (cells.length > 1 && cells[0]!.sec < min) merge(cells[1]!, cells.shift()!)
  while (cells.length > 1 && cells[cells.length - 1]!.sec < min) merge(cells[cells.length - 2]!, cells.pop()!)
  return cells
}

/** The monotone fit of one side: buckets, deviance, χ², and the log-likelihood gain over a constant rate. */
const fitSide = (s: SideData, w: number): EdgeSide => {
  const cells = cellsOf(s, w).filter((c) => c.sec > 0)
  const rates = isotonicRates(cells.map((c) => ({ exposureSec: c.sec, count: c.count })))
  const n = cells.reduce((a, c) => a + c.count, 0)
  const e = cells.reduce((a, c) => a + c.sec, 0)
  let ll = 0
  let dev = 0
  let chi = 0
  const buckets: EdgeBucket[] = cells.map((c, k) => {
    const rate = rates[k]!
    const expected = rate * c.sec
    if (c.count > 0) ll += c.count * Math.log(rate)
    ll -= expected
    if (expected > 0) {
      dev += 2 * ((c.count > 0 ? c.count * Math.log(c.count / expected) : 0) - (c.count - expected))
      chi += ((c.count - expected) * (c.count - expected)) / expected
    }
    return {
      from_ticks: round(c.from), to_ticks: round(c.to), at_ticks: round(c.edgeSec / c.sec), exposure_sec: round(c.sec), observed: c.count,
      expected: round(expected), rate_per_sec: round(rate), raw_rate_per_sec: round(c.count / c.sec), mean_size: round(c.count === 0 ? 0 : c.sizeSum / c.count)
    }
  })
  const ll0 = n === 0 || e === 0 ? 0 : n * Math.log(n / e) - n
  return {
    arrivals: n, exposure_sec: round(e), buckets, deviance: round(dev), chi_square: round(chi),
    blocks: new Set(rates).size, loglik_gain: round(n === 0 ? 0 : ll - ll0)
  }
}

/**
 * Fits every candidate horizon (and a given one) on the same window, and keeps the given one, or
 * by the rule "likelihood" the one whose fit explains the arrivals best (the shortest on a tie).
 */
export const fitEdge = (tapes: ReadonlyArray<EdgeTape>, horizonsSec: ReadonlyArray<number> = EDGE_HORIZONS_SEC, rule: HorizonRule = ARRIVAL_HORIZON_SEC): EdgeArrival => {
  const hs = rule === "likelihood" || horizonsSec.includes(rule) ? [...horizonsSec] : [...horizonsSec, rule].sort((a, b) => a - b)
  const maxH = Math.max(...hs)
  const data = hs.map((h) => ({ h, ...collect(tapes, h, maxH) }))
  const w = bucketWidth(data.flatMap((x) => [x.buy, x.sell]))
  const fits = data.map((x) => ({ h: x.h, leftOut: x.leftOut, buy: fitSide(x.buy, w), sell: fitSide(x.sell, w) }))
  const candidates: EdgeCandidate[] = fits.map((f) => ({ horizon_sec: f.h, loglik_gain_buy: f.buy.loglik_gain, loglik_gain_sell: f.sell.loglik_gain }))
  let best = fits[0]!
  if (rule === "likelihood") {
    for (const f of fits) if (f.buy.loglik_gain + f.sell.loglik_gain > best.buy.loglik_gain + best.sell.loglik_gain) best = f
  } else best = fits.find((f) => f.h === rule)!
  return {
    form: "takers per second against the edge e = (tape's mid H later − ask) ÷ tick for buyers, (bid − mid H later) ÷ tick for sellers; monotone (isotonic Poisson) in e, linear between bucket knots",
    horizon_sec: best.h, horizon_rule: rule === "likelihood" ? "likelihood" : "given", bucket_ticks: w, candidates,
    arrivals: best.buy.arrivals + best.sell.arrivals, arrivals_left_out: best.leftOut, buy: best.buy, sell: best.sell
  }
}
