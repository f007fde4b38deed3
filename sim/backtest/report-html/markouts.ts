// The report's markout chart: per horizon (1, 10, 60 s) the contract-weighted mean markout of
// the fills that bought YES and of those that sold YES, as grouped bars around a zero line. Drawn
// as inline SVG on the server, so it reads without scripts; the same numbers follow in a table
// (screen readers, copying).
import type { SideMarkout } from "../stats.ts"
import { esc, table } from "./common.ts"

const SIDES = [
  { side: "bought_yes", label: "bought YES (or sold NO)", colour: "#1a7f37" },
  { side: "sold_yes", label: "sold YES (or bought NO)", colour: "#b42318" }
] as const

const W = 560
const H = 240
const TOP = 24
const BOTTOM = 40
const LEFT = 56
const BAR_W = 44

/** A "nice" axis bound at or above x: 1, 2 or 5 × 10^k. */
const niceCeil = (x: number): number => {
  if (x <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(x))
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x)!
}

const fmt = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2))

/** The SVG: one group of two bars per horizon; a missing mean (no fill counted) is an empty slot marked "n/a". */
export const markoutSvg = (rows: ReadonlyArray<SideMarkout>): string => {
  const horizons = [...new Set(rows.map((r) => r.horizon_sec))]
  const means = rows.map((r) => r.mean_bps).filter((m): m is number => m !== null)
  const bound = niceCeil(Math.max(...means.map(Math.abs), 0))
  const plotH = H - TOP - BOTTOM
  const y = (v: number): number => TOP + plotH / 2 - (v / bound) * (plotH / 2)
  const groupW = (W - LEFT - 10) / Math.max(1, horizons.length)
  const parts: string[] = [`<text x="4" y="12" fill="#666">YES bps</text>`]
  for (const v of [bound, bound / 2, 0, -bound / 2, -bound]) {
    parts.push(`<line x1="${LEFT}" x2="${W - 10}" y1="${y(v)}" y2="${y(v)}" stroke="${v === 0 ? "#888" : "#eee"}"/>`)
    parts.push(`<text x="${LEFT - 6}" y="${y(v) + 4}" text-anchor="end">${fmt(v)}</text>`)
  }
  horizons.forEach((h, g) => {
    const x0 = LEFT + g * groupW + groupW / 2 - BAR_W
    SIDES.forEach((s, k) => {
      const r = rows.find((x) => x.horizon_sec === h && x.side === s.side)
      const x = x0 + k * BAR_W
      if (r === undefined || r.mean_bps === null) {
        parts.push(`<text x="${x + BAR_W / 2}" y="${y(0) - 4}" text-anchor="middle" fill="#888">n/a</text>`)
        return
      }
      const top = Math.min(y(0), y(r.mean_bps))
      const height = Math.max(1, Math.abs(y(r.mean_bps) - y(0)))
      parts.push(`<rect class="bar" data-side="${s.side}" data-horizon="${h}" data-bps="${r.mean_bps}" x="${x + 4}" y="${top}" width="${BAR_W - 8}" height="${height}" fill="${s.colour}"><title>${esc(`${s.label}, ${h} s: ${fmt(r.mean_bps)} bps over ${r.fills} fills`)}</title></rect>`)
      const labelY = r.mean_bps >= 0 ? top - 4 : top + height + 12
      parts.push(`<text x="${x + BAR_W / 2}" y="${labelY}" text-anchor="middle">${fmt(r.mean_bps)}</text>`)
    })
    parts.push(`<text x="${LEFT + g * groupW + groupW / 2}" y="${H - BOTTOM + 18}" text-anchor="middle">${h} s</text>`)
  })
  const legend = SIDES.map((s, k) => `<rect x="${LEFT + k * 200}" y="${H - 14}" width="10" height="10" fill="${s.colour}"/><text x="${LEFT + k * 200 + 14}" y="${H - 5}">${esc(s.label)}</text>`)
  return `<svg class="markouts" role="img" aria-labelledby="markouts-title" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-size="11" font-family="system-ui,sans-serif">
<title id="markouts-title">Mean markout by side at ${horizons.map((h) => `${h} s`).join(", ")}, YES bps (negative = adverse)</title>
${parts.join("\n")}
${legend.join("\n")}
</svg>`
}

/** The chart and its numbers, or a line saying there is nothing to show. */
export const markoutSection = (rows: ReadonlyArray<SideMarkout>): string => {
  const intro = `<h2 id="markouts">Markouts</h2>
<p class="muted">How the mid moved after our fills, our side: side × (mid at fill + horizon − mid just before the fill), YES bps, contract-weighted. Negative is adverse selection (we were picked off); each fill's markouts are in the fills table below.</p>`
  if (rows.every((r) => r.mean_bps === null)) return `${intro}<p>No fill has a markout (no fills, or none early enough for its horizon to end inside the data).</p>`
  const numbers = table(
    ["side", ...[...new Set(rows.map((r) => r.horizon_sec))].map((h) => `${h} s (bps, fills)`)],
    SIDES.map((s) => [s.label, ...rows.filter((r) => r.side === s.side).map((r) => (r.mean_bps === null ? "n/a" : `${fmt(r.mean_bps)} (${r.fills})`))])
  )
  return `${intro}${markoutSvg(rows)}${numbers}`
}
