// The data behind the report's interactive charts, built from a BacktestReport and embedded in
// the page as JSON (money stays integer micro-USDC; the page divides by 1e6 to draw USDC).
//
// Thinning, so a year of per-minute samples still makes a page of a few MB: a chart keeps at
// most MAX_POINTS samples. The samples are cut into equal buckets and each bucket keeps its
// first sample and the samples where its key lines (equity, drawdown, inventory, mid) reach
// their minimum and maximum, so no peak or trough disappears; the last sample is always kept
// (the equity line ends at the headline final equity). Fill markers are one per fill up to
// MAX_MARKERS a market; beyond that, fills on the same side within one time bucket merge into
// one marker that counts them (`n`), so the counts still add up to the market's fills.
// Pause and stop spans are found on the full series before any thinning.
import { DAY_SEC, dayLabel } from "../../../src/service/rewards-book.ts"
import type { BacktestReport, FillRow } from "../report.ts"

export const MAX_POINTS = 4_000
export const MAX_MARKERS = 1_500

export interface EquityChart {
  readonly t: number[]
  readonly equityMicro: number[]
  readonly cashMicro: number[]
  /** LP rewards credited so far (a day's rewards are credited when it closes). */
  readonly rewardsMicro: number[]
  /** Equity minus its running peak (the peak starts at the capital): ≤ 0, and 0 at each new high. */
  readonly drawdownMicro: number[]
  /** drawdownMicro / the running peak, in percent. */
  readonly drawdownPct: number[]
}

export interface InventoryChart {
  readonly t: number[]
  readonly markets: string[]
  readonly netYes: number[][]
}

export interface FillMarker {
  /** The first sample at or after the fill (the first one that shows it). */
  readonly t: number
  /** In YES terms: buying YES or selling NO is "buy". */
  readonly yesSide: "buy" | "sell"
  /** Contract-weighted mean YES price of the merged fills. */
  readonly yesPriceBps: number
  readonly contracts: number
  /** Fills merged into this marker (1 unless the market has more than MAX_MARKERS fills). */
  readonly n: number
}

export interface Span {
  readonly fromSec: number
  readonly toSec: number
  readonly kind: "paused" | "stopped"
  readonly label: string
}

export interface QuoteChart {
  readonly market: string
  readonly t: number[]
  /** YES bps; null where there is no mid, or no resting order on that side. */
  readonly mid: Array<number | null>
  readonly bid: Array<number | null>
  readonly ask: Array<number | null>
  readonly fills: FillMarker[]
  readonly spans: Span[]
  /** Paused seconds the shaded spans cover (the run's own pauses), and the run's figure: equal. */
  readonly pausedShownSec: number
  readonly pausedReportedSec: number
}

export interface DailyPnl {
  readonly day: number
  readonly label: string
  readonly totalMicro: number
  readonly tradingMicro: number
  readonly rebatesMicro: number
  readonly rewardsMicro: number
}

export interface ChartData {
  readonly capitalMicro: number
  readonly finalEquityMicro: number
  /** The per-event figure of the summary (the sampled drawdown line can only be shallower). */
  readonly maxDrawdownMicro: number
  readonly equity: EquityChart
  readonly inventory: InventoryChart
  readonly quotes: QuoteChart[]
  readonly daily: DailyPnl[]
}

/** Indices to keep out of n samples: per bucket the first, and each key line's min and max; always the last. */
export const thinIndices = (n: number, keys: ReadonlyArray<ReadonlyArray<number>>, maxPoints = MAX_POINTS): number[] => {
  if (n <= maxPoints) return Array.from({ length: n }, (_, i) => i)
  const perBucket = 1 + 2 * Math.max(1, keys.length)
  const buckets = Math.max(1, Math.floor((maxPoints - 1) / perBucket))
  const size = Math.ceil(n / buckets)
  const out: number[] = []
  for (let from = 0; from < n; from += size) {
    const to = Math.min(n, from + size)
    const pick = new Set<number>([from])
    for (const ys of keys) {
      let lo = -1
      let hi = -1
      for (let i = from; i < to; i++) {
        const y = ys[i]!
        if (!Number.isFinite(y)) continue
        if (lo < 0 || y < ys[lo]!) lo = i
        if (hi < 0 || y > ys[hi]!) hi = i
      }
      if (lo >= 0) pick.add(lo).add(hi)
    }
    out.push(...[...pick].sort((a, b) => a - b))
  }
  if (out[out.length - 1] !== n - 1) out.push(n - 1)
  return out
}

const at = <T>(xs: ReadonlyArray<T>, idx: ReadonlyArray<number>): T[] => idx.map((i) => xs[i]!)
const orNull = (x: number): number | null => (x < 0 ? null : x)

/** The first index i with ts[i] ≥ t (ts ascending), or ts.length. */
const firstAtOrAfter = (ts: ReadonlyArray<number>, t: number): number => {
  let lo = 0
  let hi = ts.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (ts[mid]! < t) lo = mid + 1
    else hi = mid
  }
  return lo
}

const equityChart = (r: BacktestReport): EquityChart => {
  const se = r.series
  const capital = r.summary.capital_micro
  const credits = r.rewardDays.map((d) => ({ atSec: (d.day + 1) * DAY_SEC, micro: d.lpMicro }))
  const rewards: number[] = []
  const dd: number[] = []
  const ddPct: number[] = []
  let peak = capital
  let credited = 0
  let c = 0
  for (let i = 0; i < se.tSec.length; i++) {
    // The day's close pays before the sample at the same second (runner.ts: ties go day close first).
    while (c < credits.length && credits[c]!.atSec <= se.tSec[i]!) credited += credits[c++]!.micro
    rewards.push(credited)
    const e = se.equityMicro[i]!
    if (e > peak) peak = e
    dd.push(e - peak)
    ddPct.push(peak <= 0 ? 0 : Math.round(((e - peak) / peak) * 1e6) / 1e4)
  }
  const idx = thinIndices(se.tSec.length, [se.equityMicro, dd])
  return {
    t: at(se.tSec, idx), equityMicro: at(se.equityMicro, idx), cashMicro: at(se.cashMicro, idx), rewardsMicro: at(rewards, idx),
    drawdownMicro: at(dd, idx), drawdownPct: at(ddPct, idx)
  }
}

const inventoryChart = (r: BacktestReport): InventoryChart => {
  const se = r.series
  const idx = thinIndices(se.tSec.length, se.netYes)
  return { t: at(se.tSec, idx), markets: r.markets.map((m) => m.market_id), netYes: se.netYes.map((ys) => at(ys, idx)) }
}

/** One marker per fill, or merged per side and time bucket when a market has more than MAX_MARKERS fills. */
export const fillMarkers = (fills: ReadonlyArray<FillRow>, tSec: ReadonlyArray<number>, maxMarkers = MAX_MARKERS): FillMarker[] => {
  const snap = (f: FillRow): number => tSec[Math.min(tSec.length - 1, firstAtOrAfter(tSec, Math.ceil(f.tMs / 1000)))] ?? Math.ceil(f.tMs / 1000)
  const yesSide = (f: FillRow): "buy" | "sell" => ((f.side === "buy") === (f.outcome === "yes") ? "buy" : "sell")
  if (fills.length <= maxMarkers) {
    return fills.map((f) => ({ t: snap(f), yesSide: yesSide(f), yesPriceBps: f.yesPriceBps, contracts: f.size, n: 1 }))
  }
  const first = snap(fills[0]!)
  const span = Math.max(1, snap(fills[fills.length - 1]!) - first)
  // Two sides per bucket: half as many buckets as markers.
  const bucketSec = Math.ceil(span / Math.max(1, Math.floor(maxMarkers / 2)))
  const merged = new Map<string, { t: number; yesSide: "buy" | "sell"; notional: number; contracts: number; n: number }>()
  for (const f of fills) {
    const t = snap(f)
    const side = yesSide(f)
    const key = `${Math.floor((t - first) / bucketSec)}:${side}`
    const m = merged.get(key) ?? { t, yesSide: side, notional: 0, contracts: 0, n: 0 }
    m.notional += f.yesPriceBps * f.size
    m.contracts += f.size
    m.n++
    merged.set(key, m)
  }
  return [...merged.values()]
    .map((m) => ({ t: m.t, yesSide: m.yesSide, yesPriceBps: Math.round(m.notional / Math.max(1, m.contracts)), contracts: m.contracts, n: m.n }))
    .sort((a, b) => a.t - b.t)
}

/**
 * The kept indices plus, when the series was thinned, each sample where one of our quotes starts
 * or stops resting (and the one before it), so a gap in the bid or ask line is drawn where it was,
 * however short (up to MAX_POINTS of them).
 */
const withEdges = (idx: number[], quotes: ReadonlyArray<ReadonlyArray<number>>): number[] => {
  const n = quotes[0]?.length ?? 0
  if (idx.length === n) return idx
  const keep = new Set(idx)
  let added = 0
  for (const ys of quotes) {
    for (let i = 1; i < n && added < MAX_POINTS; i++) {
      if (ys[i]! < 0 === ys[i - 1]! < 0) continue
      for (const j of [i - 1, i]) {
        if (keep.has(j)) continue
        keep.add(j)
        added++
      }
    }
  }
  return [...keep].sort((a, b) => a - b)
}

const quoteCharts = (r: BacktestReport): QuoteChart[] => {
  const se = r.series
  const endSec = r.summary.to_sec
  return r.markets.map((m, k) => {
    const mid2 = se.mid2[k]!
    const idx = withEdges(thinIndices(se.tSec.length, [mid2.map((x) => (x < 0 ? Number.NaN : x))]), [se.bidBps[k]!, se.askBps[k]!])
    const stopAt = m.stop_reason === null ? null : endSec - m.time_stopped_sec
    // The run's own pauses (exact), and the stop from its second to the end.
    const spans: Span[] = m.paused_spans_ms.map(([a, b]) => ({ fromSec: a / 1000, toSec: b / 1000, kind: "paused", label: "paused" }))
    const pausedShownSec = Math.floor(m.paused_spans_ms.reduce((s, [a, b]) => s + (b - a), 0) / 1000)
    if (stopAt !== null) spans.push({ fromSec: stopAt, toSec: endSec, kind: "stopped", label: `stopped: ${m.stop_reason}` })
    return {
      market: m.market_id,
      t: at(se.tSec, idx),
      mid: idx.map((i) => (mid2[i]! < 0 ? null : mid2[i]! / 2)),
      bid: idx.map((i) => orNull(se.bidBps[k]![i]!)),
      ask: idx.map((i) => orNull(se.askBps[k]![i]!)),
      fills: fillMarkers(r.fills.filter((f) => f.market === k), se.tSec),
      spans,
      pausedShownSec,
      pausedReportedSec: m.time_paused_sec
    }
  })
}

/**
 * Daily PnL and its split. A day's PnL is the change of the sampled equity over it: the sample
 * at midnight closes the day before (it already holds that day's rewards, credited at the close).
 * Rebates are the day's fills' rebates, rewards the day's payout, trading the rest. The days add
 * up to the run's PnL, and each part to its headline figure, because the equity series ends at
 * the headline final equity.
 */
export const dailyPnl = (r: BacktestReport): DailyPnl[] => {
  const se = r.series
  const rebates = new Map<number, number>()
  for (const f of r.fills) {
    const day = Math.floor(f.tMs / (DAY_SEC * 1000))
    rebates.set(day, (rebates.get(day) ?? 0) + f.rebateMicro)
  }
  const rewards = new Map(r.rewardDays.map((d) => [d.day, d.lpMicro]))
  const closing = new Map<number, number>()
  for (let i = 0; i < se.tSec.length; i++) closing.set(Math.floor((se.tSec[i]! - 1) / DAY_SEC), se.equityMicro[i]!)
  const days = [...new Set([...closing.keys(), ...rebates.keys(), ...rewards.keys()])].sort((a, b) => a - b)
  const out: DailyPnl[] = []
  let prev = r.summary.capital_micro
  for (const day of days) {
    const close = closing.get(day) ?? prev
    const total = close - prev
    prev = close
    const rb = rebates.get(day) ?? 0
    const rw = rewards.get(day) ?? 0
    out.push({ day, label: dayLabel(day), totalMicro: total, tradingMicro: total - rb - rw, rebatesMicro: rb, rewardsMicro: rw })
  }
  return out
}

export const chartData = (r: BacktestReport): ChartData => ({
  capitalMicro: r.summary.capital_micro,
  finalEquityMicro: r.summary.final_equity_micro,
  maxDrawdownMicro: r.summary.max_drawdown_micro,
  equity: equityChart(r),
  inventory: inventoryChart(r),
  quotes: quoteCharts(r),
  daily: dailyPnl(r)
})
