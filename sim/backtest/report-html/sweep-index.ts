// The sweep's index page (<out>/sweep.html), one self-contained file: a heatmap of one figure
// over the swept parameters and a table of every run, sortable by clicking a header
// (report-html/sweep.client.js, inlined), each run linking to its own report page.
//
// The heatmap's rows are the first swept parameter's values and its columns the second's; one
// swept parameter gives a single row; with more, there is one map per combination of the rest.
// Each cell is one run: the figure's value, coloured, linking to that run's report.
import type { Combination, SweepAxis } from "../params.ts"
import { figureName, SWEEP_FIGURES } from "../sweep.ts"
import { esc, inlineScript, STYLE } from "./common.ts"

export interface IndexRun {
  readonly values: Combination
  /** The run's sweep-table row (sweep.ts sweepTable). */
  readonly row: Readonly<Record<string, number | string>>
  /** The run's report page, relative to the index; null when pages were not written. */
  readonly href: string | null
}

export interface HeatCell {
  readonly run: number
  readonly values: Combination
  readonly value: number
  readonly href: string | null
}

export interface Heatmap {
  /** The fixed values of the parameters after the first two ("" when there are none). */
  readonly title: string
  readonly rows: SweepAxis | null
  readonly cols: SweepAxis
  /** cells[row][col]. */
  readonly cells: HeatCell[][]
}

const keyOf = (axes: ReadonlyArray<SweepAxis>, values: Combination): string => axes.map((a) => values[a.name]).join("|")

/** The maps of `figure` over the axes (see the header comment). Every run is in exactly one cell. */
export const heatmaps = (axes: ReadonlyArray<SweepAxis>, runs: ReadonlyArray<IndexRun>, figure: string): Heatmap[] => {
  if (axes.length === 0) return []
  const byKey = new Map(runs.map((r, i) => [keyOf(axes, r.values), i]))
  const cell = (values: Combination): HeatCell => {
    const i = byKey.get(keyOf(axes, values))
    if (i === undefined) throw new Error(`sweep index: no run for ${JSON.stringify(values)}`)
    const run = runs[i]!
    return { run: i, values, value: Number(run.row[figure]), href: run.href }
  }
  const [first, second, ...rest] = axes
  const rows = second === undefined ? null : first!
  const cols = second ?? first!
  let fixed: Array<Record<string, number>> = [{}]
  for (const axis of rest) fixed = fixed.flatMap((f) => axis.values.map((v) => ({ ...f, [axis.name]: v })))
  return fixed.map((f) => ({
    title: Object.entries(f).map(([k, v]) => `${k}=${v}`).join(", "),
    rows,
    cols,
    cells: (rows === null ? [null] : rows.values).map((rv) =>
      cols.values.map((cv) => cell({ ...(rows === null ? {} : { [rows.name]: rv! }), [cols.name]: cv, ...f }))
    )
  }))
}

const format = (key: string, v: number | string): string =>
  typeof v !== "number" ? v : key.endsWith("_micro") ? (v / 1e6).toFixed(2) : key.endsWith("ratio") || key.endsWith("pct") ? `${(v * 100).toFixed(2)}%` : String(v)

const label = (key: string): string => `${figureName(key)}${key.endsWith("_micro") ? " (USDC)" : ""}`

/**
 * A cell's background: green for better, red for worse. A figure with values on both sides of
 * zero is coloured by sign (white at zero); otherwise from worst (pale) to best (deep green).
 */
const colour = (v: number, lo: number, hi: number, better: "high" | "low"): string => {
  if (!Number.isFinite(v)) return "#eee"
  const good = better === "high" ? 1 : -1
  let strength: number
  let positive: boolean
  if (lo < 0 && hi > 0) {
    const m = Math.max(-lo, hi)
    strength = Math.abs(v) / m
    positive = v * good >= 0
  } else {
    strength = hi === lo ? 0.5 : (better === "high" ? v - lo : hi - v) / (hi - lo)
    positive = true
  }
  const a = (0.1 + 0.75 * strength).toFixed(3)
  return positive ? `rgba(26,127,55,${a})` : `rgba(194,39,40,${a})`
}

const renderMap = (m: Heatmap, figure: string, lo: number, hi: number, best: number): string => {
  const better = SWEEP_FIGURES.find((f) => f.key === figure)?.better ?? "high"
  const head = `<tr><th class="corner">${esc(m.rows === null ? `${m.cols.name} →` : `${m.rows.name} ↓  ${m.cols.name} →`)}</th>${m.cols.values.map((v) => `<th>${v}</th>`).join("")}</tr>`
  const body = m.cells.map((row, r) => {
    const rowHead = `<th>${m.rows === null ? "" : m.rows.values[r]}</th>`
    return `<tr>${rowHead}${row.map((c) => {
      const text = esc(format(figure, c.value))
      const what = esc(Object.entries(c.values).map(([k, v]) => `${k}=${v}`).join(", "))
      const inner = c.href === null ? text : `<a href="${esc(c.href)}">${text}</a>`
      return `<td class="cell${c.run === best ? " best" : ""}" data-run="${c.run + 1}" data-value="${c.value}" title="run ${c.run + 1}: ${what}" style="background:${colour(c.value, lo, hi, better)}">${inner}</td>`
    }).join("")}</tr>`
  })
  return `${m.title === "" ? "" : `<h3>${esc(m.title)}</h3>`}<table class="heat">${head}${body.join("")}</table>`
}

const SWEEP_STYLE = `
.heat td.cell{text-align:center;min-width:64px;padding:8px 6px;border:1px solid #fff}.heat td.cell a{color:#111;text-decoration:none;display:block}
.heat td.best{outline:2px solid #111;outline-offset:-2px;font-weight:600}.heat th{text-align:center}.heat th.corner{font-weight:normal;color:#666;text-align:left}
#runs th{cursor:pointer;user-select:none;white-space:nowrap}#runs th button{all:unset;cursor:pointer}#runs th[aria-sort=ascending] button::after{content:" ▲"}#runs th[aria-sort=descending] button::after{content:" ▼"}
#runs td{font-variant-numeric:tabular-nums}.scroll{overflow-x:auto}`

const CLIENT = new URL("./sweep.client.js", import.meta.url)

export interface SweepIndex {
  readonly axes: ReadonlyArray<SweepAxis>
  readonly runs: ReadonlyArray<IndexRun>
  /** The sweep-table column the heatmap shows. */
  readonly figure: string
  /** One line on how the sweep ran (runs, workers, time, data). */
  readonly note: string
  /** The runs' NOTE lines (sweep.ts sweepNoteLines, without the prefix): shown first, as a run's page shows its own. */
  readonly notes?: ReadonlyArray<string>
}

export const renderSweepIndex = (x: SweepIndex): string => {
  const maps = heatmaps(x.axes, x.runs, x.figure)
  const values = x.runs.map((r) => Number(r.row[x.figure])).filter(Number.isFinite)
  const lo = Math.min(...values)
  const hi = Math.max(...values)
  const better = SWEEP_FIGURES.find((f) => f.key === x.figure)?.better ?? "high"
  const bestValue = better === "high" ? hi : lo
  const best = x.runs.findIndex((r) => Number(r.row[x.figure]) === bestValue)
  const cols = x.runs.length === 0 ? [] : Object.keys(x.runs[0]!.row)
  const header = `<tr><th data-type="num"><button>run</button></th>${cols.map((c) => `<th data-type="${typeof x.runs[0]!.row[c] === "number" ? "num" : "text"}"><button>${esc(c.replace(/_micro$/, "_usdc"))}</button></th>`).join("")}</tr>`
  const rows = x.runs.map((r, i) =>
    // The run number links to the run's page (first, so no wide table hides it).
    `<tr><td data-v="${i + 1}">${r.href === null ? i + 1 : `<a href="${esc(r.href)}" title="this run's report">${i + 1}</a>`}</td>${cols.map((c) => `<td data-v="${esc(String(r.row[c]))}">${esc(format(c, r.row[c]!))}</td>`).join("")}</tr>`
  )
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>twinbook backtest sweep</title><style>${STYLE}${SWEEP_STYLE}</style></head><body>
<h1>twinbook backtest sweep</h1>
${(x.notes ?? []).map((a) => `<p class="note">${esc(a)}</p>`).join("\n")}
<p>${esc(x.note)}</p>
<h2>Heatmap: ${esc(label(x.figure))}</h2>
<p class="muted">Each cell is one run (click it for its report); green is better, ${better === "high" ? "higher" : "lower"} being better for this figure; the outlined cell is the best run. Another figure: <code>--heatmap NAME</code> (${SWEEP_FIGURES.map((f) => figureName(f.key)).join(", ")}).</p>
${maps.map((m) => renderMap(m, x.figure, lo, hi, best)).join("\n")}
<h2>Runs</h2><p class="muted">Click a header to sort; click a run's number for its report.</p>
<div class="scroll"><table id="runs"><thead>${header}</thead><tbody>${rows.join("")}</tbody></table></div>
${inlineScript(CLIENT)}
</body></html>
`
}
