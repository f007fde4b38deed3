// Takers' sizes by their edge against where the tape's mid goes minutes later (model version 3).
// The arrival times follow the edge over the next seconds (edge.ts), but the sizes follow a longer
// one: on the calibration tapes a taker's mean size grows from about 10 contracts at the lowest
// edges against the mid 15–30 minutes later to 20–28 at the highest (docs/backtesting.md "The
// market-response model"). For each candidate horizon H, the takers are cut by that edge (ticks,
// the taker's own impact taken out of the future mid as in edge.ts) into buckets holding 50, 25,
// 15, 7.5 and 2.5 % of them (the large, informed takers are few), each keeps its 21 size
// quantiles, and the H whose buckets explain most of the variance of size is kept.
import { type EdgeTape, takerEdge } from "./edge.ts"
import { round, type SizeBucket, type SizeByEdge, type SizeCandidate } from "./model.ts"

export const SIZE_HORIZONS_SEC = [120, 300, 900, 1800] as const
/** Where the buckets end, as shares of the takers by edge: the large, informed takers are few, at the top. */
const CUTS = [0.5, 0.75, 0.9, 0.975, 1] as const

/** Type-7 quantile of sorted values. */
const quantile = (s: ReadonlyArray<number>, q: number): number => {
  const h = (s.length - 1) * q
  const lo = Math.floor(h)
  return s[lo]! + (h - lo) * ((s[lo + 1] ?? s[lo]!) - s[lo]!)
}

/** 21 quantiles of sorted sizes, 0 % … 100 % in steps of 5 %. */
export const sizeQuantiles = (sorted: ReadonlyArray<number>): number[] => Array.from({ length: 21 }, (_, k) => round(quantile(sorted, k / 20)))

/** Each usable taker's edge (ticks) against the mid hSec later, and its size; takers past end − maxH or at a one-sided book are left out. */
const edgesAt = (tapes: ReadonlyArray<EdgeTape>, hSec: number, maxHSec: number): { rows: Array<[number, number]>; leftOut: number } => {
  const rows: Array<[number, number]> = []
  let leftOut = 0
  for (const tape of tapes) {
    const windowEnd = tape.endMs - maxHSec * 1000
    for (const t of tape.takers) {
      const e = takerEdge(tape, t, hSec * 1000, windowEnd)
      if (e === null) leftOut++
      else rows.push([e, t.size])
    }
  }
  return { rows, leftOut }
}

/** Buckets by edge at the CUTS shares (ties kept together), each with its sizes; and the share of the size variance between them. */
const bucketsOf = (rows: ReadonlyArray<[number, number]>): { buckets: SizeBucket[]; rSquared: number } => {
  const sorted = [...rows].sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const groups: Array<Array<[number, number]>> = []
  let from = 0
  for (const share of CUTS) {
    if (from >= sorted.length) break
    let to = share === 1 ? sorted.length : Math.max(from + 1, Math.round(share * sorted.length))
    while (to < sorted.length && sorted[to]![0] === sorted[to - 1]![0]) to++
    groups.push(sorted.slice(from, to))
    from = to
  }
  // Contracts, not log sizes: what a maker loses scales with the contracts a taker takes.
  const mean = sorted.reduce((a, r) => a + r[1], 0) / Math.max(1, sorted.length)
  const total = sorted.reduce((a, r) => a + (r[1] - mean) * (r[1] - mean), 0)
  let between = 0
  const buckets = groups.map((g) => {
    const sizes = g.map((r) => r[1]).sort((a, b) => a - b)
    const gm = g.reduce((a, r) => a + r[1], 0) / g.length
    between += g.length * (gm - mean) * (gm - mean)
    return { from_ticks: round(g[0]![0]), to_ticks: round(g[g.length - 1]![0]), n: g.length, mean: round(sizes.reduce((a, b) => a + b, 0) / sizes.length), quantiles: sizeQuantiles(sizes) }
  })
  return { buckets, rSquared: total > 0 ? between / total : 0 }
}

/** The sizes by edge at each candidate horizon (one window: each tape up to its end − the longest), keeping the H that explains most (the shortest on a tie). */
export const fitSizeByEdge = (tapes: ReadonlyArray<EdgeTape>, horizonsSec: ReadonlyArray<number> = SIZE_HORIZONS_SEC): SizeByEdge | null => {
  const maxH = Math.max(...horizonsSec)
  const fits = horizonsSec.map((h) => ({ h, ...edgesAt(tapes, h, maxH) })).map((x) => ({ ...x, ...bucketsOf(x.rows) }))
  // A horizon with too few takers to bucket (a book one-sided that far ahead) is not chosen: its buckets would be empty.
  const usable = fits.filter((f) => f.rows.length >= 2 * CUTS.length)
  if (usable.length === 0) return null
  const candidates: SizeCandidate[] = fits.map((f) => ({ horizon_sec: f.h, r_squared: round(f.rSquared) }))
  let best = usable[0]!
  for (const f of usable) if (f.rSquared > best.rSquared) best = f
  return {
    form: "a taker's size drawn from the quantiles of the bucket its edge e (ticks) falls in, e = (tape's mid H later − ask) ÷ tick for buyers, (bid − mid H later) ÷ tick for sellers; five buckets of equal count, the end ones open",
    horizon_sec: best.h, candidates, takers: best.rows.length, takers_left_out: best.leftOut, buckets: best.buckets
  }
}
