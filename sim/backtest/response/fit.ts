// Fits the market-response model (model.ts) from tapes alone: the book snapshots give the
// touch over time (the exposure at each spread, and at each edge against the mid H later:
// edge.ts, the part the backtest applies), the trades give the takers (one taker order = the
// trades of one side that share a market and a millisecond: one journal record), and the touch
// after each taker gives its markouts. Pooled over every market of every tape given.
import type { Dataset } from "../dataset.ts"
import { KIND_TRADE, TAKER_BUY } from "../dataset.ts"
import { type Cell, fitCurve } from "./curve.ts"
import { ARRIVAL_HORIZON_SEC, EDGE_HORIZONS_SEC, type EdgeTape, fitEdge, type HorizonRule, type Taker } from "./edge.ts"
import { type ArrivalCurve, type FitBucket, type GoodnessOfFit, type Markout, RESPONSE_FORMAT, RESPONSE_VERSION, type ResponseModel, round } from "./model.ts"
import { fitFollow } from "./follow-fit.ts"
import { fitSizeByEdge, sizeQuantiles } from "./size-edge.ts"
import { indexAt, marketTicks, mid2At, type TouchPath, touchPaths } from "./touch.ts"

export const MARKOUT_HORIZONS_SEC = [5, 30, 120] as const
/** The horizon whose informed share the backtest applies (chosen on calibration tapes, docs). */
export const APPLY_HORIZON_SEC = 30
const BUCKETS = 8

export interface FitInput {
  readonly source: string
  readonly dataset: Dataset
  /** The tape's end (its to_sec): exposure runs until then. */
  readonly endMs: number
  /** The tape with its order events (the makers' re-quotes: response/follow-fit.ts); none: no follow fit from this tape. */
  readonly orders?: Dataset
}

interface Arrival {
  readonly market: number
  readonly tMs: number
  /** +1 bought, −1 sold. */
  readonly sign: number
  readonly size: number
  readonly ticks: number
  readonly mid2: number
}

/** Every taker order of a tape (one-sided books included: the edge fit decides what it can use). */
const takersOf = (d: Dataset): Taker[] => {
  const out: Taker[] = []
  for (let i = 0; i < d.count; i++) {
    if (d.kind[i] !== KIND_TRADE) continue
    const m = d.market[i]!
    let size = d.size[i]!
    while (i + 1 < d.count && d.kind[i + 1] === KIND_TRADE && d.market[i + 1] === m && d.tMs[i + 1] === d.tMs[i] && d.side[i + 1] === d.side[i]) size += d.size[++i]!
    out.push({ market: m, tMs: d.tMs[i]!, buy: d.side[i] === TAKER_BUY, size })
  }
  return out
}

interface Collected {
  /** Exposure seconds and arrivals per side, by spread in ticks. */
  readonly cells: Map<number, { exposureSec: number; buy: number; sell: number }>
  readonly arrivals: Arrival[]
  oneSided: number
  exposureSec: number
}

const cellAt = (c: Collected, ticks: number): { exposureSec: number; buy: number; sell: number } => {
  let cell = c.cells.get(ticks)
  if (cell === undefined) {
    cell = { exposureSec: 0, buy: 0, sell: 0 }
    c.cells.set(ticks, cell)
  }
  return cell
}

/** Seconds the touch stood at each spread, while both sides were quoted. */
const addExposure = (c: Collected, p: TouchPath, tick: number, endMs: number): void => {
  for (let j = 0; j < p.tMs.length; j++) {
    const until = Math.min(j + 1 < p.tMs.length ? p.tMs[j + 1]! : endMs, endMs)
    if (p.bid[j]! < 0 || p.ask[j]! < 0 || until <= p.tMs[j]!) continue
    const sec = (until - p.tMs[j]!) / 1000
    cellAt(c, Math.round((p.ask[j]! - p.bid[j]!) / tick)).exposureSec += sec
    c.exposureSec += sec
  }
}

/** Each taker order (the trades of one side at one market and ms) with the touch it found. */
const addArrivals = (c: Collected, d: Dataset, paths: ReadonlyArray<TouchPath>, ticks: ReadonlyArray<number>): void => {
  for (let i = 0; i < d.count; i++) {
    if (d.kind[i] !== KIND_TRADE) continue
    const m = d.market[i]!
    let size = d.size[i]!
    while (i + 1 < d.count && d.kind[i + 1] === KIND_TRADE && d.market[i + 1] === m && d.tMs[i + 1] === d.tMs[i] && d.side[i + 1] === d.side[i]) size += d.size[++i]!
    const p = paths[m]!
    const j = indexAt(p, d.tMs[i]!)
    if (j < 0 || p.bid[j]! < 0 || p.ask[j]! < 0) {
      c.oneSided++
      continue
    }
    const ticksNow = Math.round((p.ask[j]! - p.bid[j]!) / ticks[m]!)
    const buy = d.side[i] === TAKER_BUY
    const cell = cellAt(c, ticksNow)
    if (buy) cell.buy++
    else cell.sell++
    c.arrivals.push({ market: m, tMs: d.tMs[i]!, sign: buy ? 1 : -1, size, ticks: ticksNow, mid2: p.bid[j]! + p.ask[j]! })
  }
}

/** Up to BUCKETS groups of adjacent spreads with about equal exposure: observed vs fitted arrivals. */
const goodness = (cells: Collected["cells"], buy: ArrivalCurve, sell: ArrivalCurve): GoodnessOfFit => {
  const spreads = [...cells.keys()].sort((a, b) => a - b)
  const total = spreads.reduce((s, k) => s + cells.get(k)!.exposureSec, 0)
  const buckets: Array<{ from: number; to: number; e: number; bo: number; be: number; so: number; se: number }> = []
  let cum = 0
  for (const k of spreads) {
    const cell = cells.get(k)!
    const idx = total > 0 ? Math.min(BUCKETS - 1, Math.floor((cum / total) * BUCKETS)) : 0
    cum += cell.exposureSec
    let b = buckets[buckets.length - 1]
    if (b === undefined || buckets.length - 1 < idx) {
      b = { from: k, to: k, e: 0, bo: 0, be: 0, so: 0, se: 0 }
      buckets.push(b)
    }
    b.to = k
    b.e += cell.exposureSec
    b.bo += cell.buy
    b.so += cell.sell
    b.be += cell.exposureSec * buy.a_per_sec * Math.exp(-buy.b_per_tick * k)
    b.se += cell.exposureSec * sell.a_per_sec * Math.exp(-sell.b_per_tick * k)
  }
  const chi = (o: number, e: number): number => (e > 0 ? ((o - e) * (o - e)) / e : 0)
  const dev = (o: number, e: number): number => (e > 0 ? 2 * ((o > 0 ? o * Math.log(o / e) : 0) - (o - e)) : 0)
  const out: FitBucket[] = buckets.map((b) => ({
    from_ticks: b.from, to_ticks: b.to, exposure_sec: round(b.e), buy_observed: b.bo, buy_expected: round(b.be), sell_observed: b.so, sell_expected: round(b.se)
  }))
  return {
    buckets: out,
    chi_square: { buy: round(buckets.reduce((s, b) => s + chi(b.bo, b.be), 0)), sell: round(buckets.reduce((s, b) => s + chi(b.so, b.se), 0)) },
    deviance: { buy: round(buckets.reduce((s, b) => s + dev(b.bo, b.be), 0)), sell: round(buckets.reduce((s, b) => s + dev(b.so, b.se), 0)) },
    dof: Math.max(0, buckets.length - 2)
  }
}

const sizeSummary = (arrivals: ReadonlyArray<Arrival>): ResponseModel["size"] => {
  const s = arrivals.map((a) => a.size).sort((a, b) => a - b)
  if (s.length === 0) return { n: 0, mean: 1, quantiles: [1, 1], lognormal: { mu: 0, sigma: 0 } }
  const logs = s.map(Math.log)
  const mu = logs.reduce((x, y) => x + y, 0) / logs.length
  const sigma = Math.sqrt(logs.reduce((x, y) => x + (y - mu) * (y - mu), 0) / Math.max(1, logs.length - 1))
  return {
    n: s.length, mean: round(s.reduce((x, y) => x + y, 0) / s.length),
    quantiles: sizeQuantiles(s),
    lognormal: { mu: round(mu), sigma: round(sigma) }
  }
}

/** Markouts of every taker whose horizon ends within its tape, in YES bps. */
const markoutAt = (inputs: ReadonlyArray<{ arrivals: Arrival[]; paths: TouchPath[]; endMs: number }>, h: number): Markout => {
  let n = 0, sum = 0, sumSq = 0, wSum = 0, w = 0, agree = 0, disagree = 0
  for (const x of inputs) {
    for (const a of x.arrivals) {
      if (a.tMs + h * 1000 > x.endMs) continue
      const later = mid2At(x.paths[a.market]!, a.tMs + h * 1000)
      if (later < 0) continue
      const move = (a.sign * (later - a.mid2)) / 2
      n++
      sum += move
      sumSq += move * move
      wSum += move * a.size
      w += a.size
      if (move > 0) agree++
      else if (move < 0) disagree++
    }
  }
  const mean = n === 0 ? 0 : sum / n
  const sd = n < 2 ? 0 : Math.sqrt(Math.max(0, (sumSq - n * mean * mean) / (n - 1)))
  // Noise agrees as often as it disagrees (or its mid does not move): E[agree − disagree] = π·n.
  const share = n === 0 ? 0 : (agree - disagree) / n
  const moved = n === 0 ? 0 : (agree + disagree) / n
  return {
    horizon_sec: h, n, mean_bps: round(mean), se_bps: round(n === 0 ? 0 : sd / Math.sqrt(n)), per_contract_bps: round(w === 0 ? 0 : wSum / w),
    informed_share: round(share), informed_share_se: round(n === 0 ? 0 : Math.sqrt(Math.max(0, moved - share * share) / n))
  }
}


const roundCurve = (c: ArrivalCurve): ArrivalCurve => ({ a_per_sec: round(c.a_per_sec), b_per_tick: round(c.b_per_tick), a_se: round(c.a_se), b_se: round(c.b_se), arrivals: c.arrivals })

/** The model, pooled over every market of every input, in the order given; the arrival's horizon by `horizon` (edge.ts). */
export const fitResponse = (inputs: ReadonlyArray<FitInput>, horizon: HorizonRule = ARRIVAL_HORIZON_SEC): ResponseModel => {
  const all: Collected = { cells: new Map(), arrivals: [], oneSided: 0, exposureSec: 0 }
  const perInput: Array<{ arrivals: Arrival[]; paths: TouchPath[]; endMs: number }> = []
  const edgeTapes: EdgeTape[] = []
  const sources: Array<ResponseModel["sources"][number]> = []
  for (const input of inputs) {
    const c: Collected = { cells: all.cells, arrivals: [], oneSided: 0, exposureSec: 0 }
    const paths = touchPaths(input.dataset)
    const ticks = marketTicks(input.dataset)
    paths.forEach((p, m) => addExposure(c, p, ticks[m]!, input.endMs))
    addArrivals(c, input.dataset, paths, ticks)
    all.arrivals.push(...c.arrivals)
    all.oneSided += c.oneSided
    all.exposureSec += c.exposureSec
    perInput.push({ arrivals: c.arrivals, paths, endMs: input.endMs })
    edgeTapes.push({ paths, ticks, takers: takersOf(input.dataset), endMs: input.endMs })
    sources.push({ source: input.source, markets: input.dataset.markets.length, arrivals: c.arrivals.length, exposure_sec: round(c.exposureSec) })
  }
  const spreads = [...all.cells.keys()].sort((a, b) => a - b)
  const cellsOf = (side: "buy" | "sell"): Cell[] => spreads.map((k) => ({ ticks: k, exposureSec: all.cells.get(k)!.exposureSec, count: all.cells.get(k)![side] }))
  const buy = fitCurve(cellsOf("buy"))
  const sell = fitCurve(cellsOf("sell"))
  const markouts = MARKOUT_HORIZONS_SEC.map((h) => markoutAt(perInput, h))
  const applied = markouts.find((m) => m.horizon_sec === APPLY_HORIZON_SEC)!
  return {
    format: RESPONSE_FORMAT, version: RESPONSE_VERSION, sources,
    arrival: {
      form: "takers per second at the touch = a · exp(−b · spread in ticks), per side; Poisson maximum likelihood over the time the touch stood at each spread",
      exposure_sec: round(all.exposureSec), arrivals: all.arrivals.length, arrivals_one_sided: all.oneSided,
      buy: roundCurve(buy), sell: roundCurve(sell), fit: goodness(all.cells, buy, sell)
    },
    size: sizeSummary(all.arrivals),
    information: { markouts, horizon_sec: APPLY_HORIZON_SEC, informed_share: Math.min(1, Math.max(0, applied.informed_share)) },
    edge: fitEdge(edgeTapes, EDGE_HORIZONS_SEC, horizon),
    size_by_edge: fitSizeByEdge(edgeTapes),
    follow: fitFollow(inputs.flatMap((i) => (i.orders === undefined ? [] : [i.orders])))
  }
}
