// The response model's parameters and goodness of fit as label/value lines: the fit command
// prints them, and the backtest report shows them on its first page (console and HTML).
import type { ArrivalCurve, ResponseModel } from "./model.ts"

const sig = (x: number, digits = 3): string => (x === 0 ? "0" : Number(x.toPrecision(digits)).toString())
const fixed = (x: number, digits = 2): string => x.toFixed(digits)
const plus = (x: number): string => `${x > 0 ? "+" : ""}${fixed(x, 1)}`

const curve = (name: string, c: ArrivalCurve): string =>
  `${name} a ${sig(c.a_per_sec)} ± ${sig(c.a_se, 2)} /s, b ${sig(c.b_per_tick)} ± ${sig(c.b_se, 2)} /tick (${c.arrivals} takers)`

export const responseLines = (m: ResponseModel): Array<[string, string]> => {
  const a = m.arrival
  const f = a.fit
  const q = m.size.quantiles
  const median = q[Math.floor((q.length - 1) / 2)]!
  return [
    ["sources", `${m.sources.length} tape(s): ${m.sources.map((s) => `${s.source} (${s.markets} markets, ${s.arrivals} takers)`).join(", ")}`],
    ["arrival", `takers/s at the touch = a·exp(−b·spread ticks): ${curve("buy", a.buy)}; ${curve("sell", a.sell)}; over ${Math.round(a.exposure_sec).toLocaleString("en-US")} s of two-sided touch (${a.arrivals_one_sided} takers at a one-sided book left out)`],
    ["fit", `${f.buckets.map((b) => `${b.from_ticks}–${b.to_ticks} ticks ${Math.round(b.exposure_sec)} s: buy ${b.buy_observed}/${fixed(b.buy_expected, 1)}, sell ${b.sell_observed}/${fixed(b.sell_expected, 1)}`).join("; ")} (observed/fitted); χ² buy ${fixed(f.chi_square.buy)}, sell ${fixed(f.chi_square.sell)}, deviance buy ${fixed(f.deviance.buy)}, sell ${fixed(f.deviance.sell)}, ${f.dof} dof`],
    ["size", `${m.size.n} takers, mean ${fixed(m.size.mean, 1)}, median ${sig(median)}, q90 ${sig(q[Math.round((q.length - 1) * 0.9)]!)}, max ${sig(q[q.length - 1]!)} contracts; lognormal μ ${fixed(m.size.lognormal.mu)} σ ${fixed(m.size.lognormal.sigma)}`],
    ["information", `${m.information.markouts.map((k) => `${k.horizon_sec}s ${plus(k.mean_bps)} ± ${fixed(k.se_bps, 1)} bps (per contract ${plus(k.per_contract_bps)}, informed ${fixed(k.informed_share)} ± ${fixed(k.informed_share_se)}, n ${k.n})`).join("; ")}; applied: informed share ${fixed(m.information.informed_share)} at ${m.information.horizon_sec} s`]
  ]
}
