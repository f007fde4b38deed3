// The response model's parameters and goodness of fit as label/value lines (version 3: with its
// sizes by the longer-horizon edge), and (version 2 and 3) the table of its arrival rate by edge:
// the fit command prints them, and the backtest report shows them on its first page (console and
// HTML).
import type { ArrivalCurve, ResponseModel } from "./model.ts"

const sig = (x: number, digits = 3): string => (x === 0 ? "0" : Number(x.toPrecision(digits)).toString())
const fixed = (x: number, digits = 2): string => x.toFixed(digits)
const plus = (x: number): string => `${x > 0 ? "+" : ""}${fixed(x, 1)}`

const curve = (name: string, c: ArrivalCurve): string =>
  `${name} a ${sig(c.a_per_sec)} ± ${sig(c.a_se, 2)} /s, b ${sig(c.b_per_tick)} ± ${sig(c.b_se, 2)} /tick (${c.arrivals} takers)`

/** How the applied horizon was chosen, as the horizon line says it. */
const horizonRuleText = (e: NonNullable<ResponseModel["edge"]>): string =>
  e.horizon_rule === "given"
    ? "given; the default is chosen on calibration backtests, where the likelihood's choice sends takers a backtest's stale quote cannot have: docs \"Which horizon\""
    : "the largest gain"

/** Version 2's applied arrival: the form, the horizon chosen and each candidate's log-likelihood gain. */
const edgeLines = (m: ResponseModel): Array<[string, string]> => {
  const e = m.edge!
  const side = (s: typeof e.buy): string =>
    `${s.arrivals} takers, ${fixed(s.buckets[0]!.rate_per_sec * 3600, 1)}/h at the lowest edge to ${fixed(s.buckets[s.buckets.length - 1]!.rate_per_sec * 3600, 1)}/h at the highest, deviance ${fixed(s.deviance)} and χ² ${fixed(s.chi_square)} over ${s.buckets.length} buckets (${s.blocks} fitted levels)`
  return [
    ["arrival", `takers/s by edge e (ticks) = (tape's mid ${e.horizon_sec} s later − ask) for buyers, (bid − mid ${e.horizon_sec} s later) for sellers, non-decreasing in e (isotonic Poisson fit, linear between bucket knots), buckets of ${e.bucket_ticks} ticks; buy: ${side(e.buy)}; sell: ${side(e.sell)}; ${e.arrivals_left_out} takers left out (one-sided book, or past the tape's end − the longest horizon)`],
    ["horizon", `${e.candidates.map((c) => `${c.horizon_sec} s ${plus(c.loglik_gain_buy + c.loglik_gain_sell)}`).join(", ")} (log-likelihood gain over a constant rate, buy + sell, nats): ${e.horizon_sec} s applied (${horizonRuleText(e)})`]
  ]
}

/** Version 3's sizes: each bucket's edge range, count, mean size and q90, the horizon chosen and each candidate's share of the size variance. */
const sizeByEdgeLines = (m: ResponseModel): Array<[string, string]> => {
  const by = m.size_by_edge
  if (by === null) return []
  const q90 = (b: (typeof by.buckets)[number]): number => b.quantiles[Math.round((b.quantiles.length - 1) * 0.9)]!
  return [
    ["sizes by edge", `e (ticks) = (tape's mid ${by.horizon_sec} s later − ask) for buyers, (bid − mid ${by.horizon_sec} s later) for sellers: ${by.buckets.map((b, i) => `${i === 0 ? "below" : sig(b.from_ticks)} … ${i === by.buckets.length - 1 ? "above" : sig(by.buckets[i + 1]!.from_ticks)}: ${b.n} takers, mean ${fixed(b.mean, 1)}, q90 ${sig(q90(b))}`).join("; ")} (${by.takers} takers, ${by.takers_left_out} left out)`],
    ["size horizon", `${by.candidates.map((c) => `${c.horizon_sec} s ${fixed(c.r_squared, 3)}`).join(", ")} (share of the variance of size between the buckets): ${by.horizon_sec} s applied`]
  ]
}

/** Version 4's makers that follow the book: the slope, its fit, and what it was fitted on. */
const followLines = (m: ResponseModel): Array<[string, string]> => {
  const f = m.follow
  if (f === null) return m.version >= 4 ? [["follow", "no re-quoting maker in the tapes: the tape's makers stay where the tape put them"]] : []
  return [["follow", `makers re-quote centred on the rest of the book: a maker's centre moves ${fixed(f.slope, 3)} ± ${fixed(f.slope_se, 3)} × the rest-of-book mid's move between its re-quotes (R² ${fixed(f.r_squared, 3)}, ${f.pairs} pairs of ${f.requotes} re-quotes by ${f.makers} makers); applied only with --follow-makers (experimental: the book can walk far from the tape's), in a flow replay: each re-quoting maker's limit orders move by the slope × (the rest-of-book mid with us − the one in the tape), whole ticks`]]
}

export const responseLines = (m: ResponseModel): Array<[string, string]> => {
  const a = m.arrival
  const f = a.fit
  const q = m.size.quantiles
  const median = q[Math.floor((q.length - 1) / 2)]!
  const edge = m.edge !== null
  return [
    ["sources", `${m.sources.length} tape(s): ${m.sources.map((s) => `${s.source} (${s.markets} markets, ${s.arrivals} takers)`).join(", ")}`],
    ...(edge ? edgeLines(m) : []),
    [edge ? "spread" : "arrival", `${edge ? "for the record, not applied: " : ""}takers/s at the touch = a·exp(−b·spread ticks): ${curve("buy", a.buy)}; ${curve("sell", a.sell)}; over ${Math.round(a.exposure_sec).toLocaleString("en-US")} s of two-sided touch (${a.arrivals_one_sided} takers at a one-sided book left out)`],
    [edge ? "spread fit" : "fit", `${f.buckets.map((b) => `${b.from_ticks}–${b.to_ticks} ticks ${Math.round(b.exposure_sec)} s: buy ${b.buy_observed}/${fixed(b.buy_expected, 1)}, sell ${b.sell_observed}/${fixed(b.sell_expected, 1)}`).join("; ")} (observed/fitted); χ² buy ${fixed(f.chi_square.buy)}, sell ${fixed(f.chi_square.sell)}, deviance buy ${fixed(f.deviance.buy)}, sell ${fixed(f.deviance.sell)}, ${f.dof} dof`],
    ["size", `${m.size.n} takers, mean ${fixed(m.size.mean, 1)}, median ${sig(median)}, q90 ${sig(q[Math.round((q.length - 1) * 0.9)]!)}, max ${sig(q[q.length - 1]!)} contracts; lognormal μ ${fixed(m.size.lognormal.mu)} σ ${fixed(m.size.lognormal.sigma)}${m.size_by_edge !== null ? `; drawn by the edge against the mid ${m.size_by_edge.horizon_sec} s later (sizes by edge)` : edge ? "; one distribution at every edge (the mean per edge bucket is in the table)" : ""}`],
    ...sizeByEdgeLines(m),
    ...followLines(m),
    ["information", `${m.information.markouts.map((k) => `${k.horizon_sec}s ${plus(k.mean_bps)} ± ${fixed(k.se_bps, 1)} bps (per contract ${plus(k.per_contract_bps)}, informed ${fixed(k.informed_share)} ± ${fixed(k.informed_share_se)}, n ${k.n})`).join("; ")}; ${edge ? "not applied: the edge carries the information" : `applied: informed share ${fixed(m.information.informed_share)} at ${m.information.horizon_sec} s`}`]
  ]
}

export const EDGE_TABLE_HEADER = ["side", "edge ticks", "knot", "exposure s", "observed", "fitted", "fitted /h", "raw /h", "mean size"] as const

/** Version 2's goodness of fit, one row per edge bucket and side (empty for version 1). */
export const edgeTableRows = (m: ResponseModel): string[][] => {
  if (m.edge === null) return []
  const rows: string[][] = []
  for (const name of ["buy", "sell"] as const) {
    for (const b of m.edge[name].buckets) {
      rows.push([
        name, `${b.from_ticks} … ${b.to_ticks}`, fixed(b.at_ticks, 1), fixed(b.exposure_sec, 0), String(b.observed), fixed(b.expected, 1),
        fixed(b.rate_per_sec * 3600, 1), fixed(b.raw_rate_per_sec * 3600, 1), b.observed === 0 ? "-" : fixed(b.mean_size, 1)
      ])
    }
  }
  return rows
}

/** The edge table as fixed-width text lines (none for version 1). */
export const edgeTableText = (m: ResponseModel): string[] => {
  const rows = edgeTableRows(m)
  if (rows.length === 0) return []
  const header = [...EDGE_TABLE_HEADER]
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)))
  const fmt = (r: ReadonlyArray<string>): string => r.map((x, c) => (c < 2 ? x.padEnd(widths[c]!) : x.padStart(widths[c]!))).join("  ")
  return [fmt(header), ...rows.map(fmt)]
}
