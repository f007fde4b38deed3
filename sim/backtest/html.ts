// A self-contained HTML report: summary tables and inline SVG line charts (equity curve,
// inventory per market, and our best quotes against the mid per market). No scripts, no
// external assets; series are thinned to at most MAX_POINTS points per line.
import { dayLabel } from "../../src/service/rewards-book.ts"
import { type BacktestReport, statsLines } from "./report.ts"
import type { Reproduction } from "./reproduce.ts"

const MAX_POINTS = 1_200
const W = 900
const H = 220
const PAD = { l: 70, r: 12, t: 14, b: 26 }
const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const usdc = (micro: number): string => (micro / 1e6).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })

/** Civil date of a unix day number: the rewards book's label (no Date object). */
export const isoDay = dayLabel

export const utcLabel = (tSec: number): string => {
  const s = ((tSec % 86_400) + 86_400) % 86_400
  return `${isoDay(Math.floor(tSec / 86_400))} ${String(Math.floor(s / 3600)).padStart(2, "0")}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}`
}

interface Line {
  readonly label: string
  /** NaN = gap. */
  readonly ys: ReadonlyArray<number>
  readonly colour: string
  readonly dashed?: boolean
}

const stride = (n: number): number => Math.max(1, Math.ceil(n / MAX_POINTS))

const chart = (title: string, xs: ReadonlyArray<number>, lines: ReadonlyArray<Line>, fmtY: (y: number) => string): string => {
  const step = stride(xs.length)
  const idx: number[] = []
  for (let i = 0; i < xs.length; i += step) idx.push(i)
  if (xs.length > 0 && idx[idx.length - 1] !== xs.length - 1) idx.push(xs.length - 1)
  const all = lines.flatMap((l) => idx.map((i) => l.ys[i]!)).filter((y) => Number.isFinite(y))
  if (idx.length < 2 || all.length === 0) return `<h3>${esc(title)}</h3><p class="muted">no data</p>`
  let lo = Math.min(...all)
  let hi = Math.max(...all)
  if (lo === hi) {
    lo -= 1
    hi += 1
  }
  const x0 = xs[idx[0]!]!
  const x1 = xs[idx[idx.length - 1]!]!
  const px = (x: number): number => PAD.l + ((x - x0) / Math.max(1, x1 - x0)) * (W - PAD.l - PAD.r)
  const py = (y: number): number => PAD.t + (1 - (y - lo) / (hi - lo)) * (H - PAD.t - PAD.b)
  const paths = lines.map((l) => {
    let d = ""
    let pen = false
    for (const i of idx) {
      const y = l.ys[i]!
      if (!Number.isFinite(y)) {
        pen = false
        continue
      }
      d += `${pen ? "L" : "M"}${px(xs[i]!).toFixed(1)},${py(y).toFixed(1)}`
      pen = true
    }
    return `<path d="${d}" fill="none" stroke="${l.colour}" stroke-width="1.4"${l.dashed === true ? ' stroke-dasharray="4 3"' : ""}/>`
  })
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const y = lo + f * (hi - lo)
    return `<text x="${PAD.l - 6}" y="${py(y) + 4}" text-anchor="end">${esc(fmtY(y))}</text><line x1="${PAD.l}" x2="${W - PAD.r}" y1="${py(y)}" y2="${py(y)}" class="grid"/>`
  })
  const xt = [0, 0.5, 1].map((f) => {
    const x = x0 + f * (x1 - x0)
    return `<text x="${px(x)}" y="${H - 6}" text-anchor="${f === 0 ? "start" : f === 1 ? "end" : "middle"}">${esc(utcLabel(Math.round(x)))}</text>`
  })
  const legend = lines.map((l) => `<span><i style="background:${l.colour}"></i>${esc(l.label)}</span>`).join("")
  return `<h3>${esc(title)}</h3><div class="legend">${legend}</div>
<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">${ticks.join("")}${xt.join("")}${paths.join("")}</svg>`
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, cls = ""): string =>
  `<table${cls === "" ? "" : ` class="${cls}"`}><tr>${header.map((h) => `<th>${esc(h)}</th>`).join("")}</tr>${rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`).join("")}</table>`

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:960px}
table{border-collapse:collapse;margin:8px 0 18px}td,th{border-bottom:1px solid #ddd;padding:3px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f4f4f4}
svg{background:#fcfcfc;border:1px solid #e4e4e4}svg text{font-size:11px;fill:#555}.grid{stroke:#eee}
.legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:12px;height:3px;margin-right:4px;vertical-align:middle}
.muted{color:#888}.kv td{text-align:left}pre{background:#f4f4f4;padding:8px;white-space:pre-wrap}.note{background:#fff4d6;border-left:4px solid #e0a800;padding:6px 10px;margin:6px 0}`

/** The sweep's results table as a page (columns as in the console table). */
export const renderSweepHtml = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, note: string): string =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>twinbook backtest sweep</title><style>${STYLE}</style></head><body>
<h1>twinbook backtest sweep</h1><p>${esc(note)}</p>${table(header, rows)}
</body></html>
`

/** The page's "Reproduce" section: the exact command, each input with its sha256, every setting. */
const reproduceSection = (x: Reproduction): string =>
  `<h2>Reproduce</h2><p>From the repository root:</p><pre id="command">${esc(x.command)}</pre>
${x.inputs.length === 0 ? "<p>Input: generated (--synthetic), from the seed below.</p>" : table(["input file", "bytes", "sha256"], x.inputs.map((f) => [f.path, String(f.bytes), f.sha256]))}
${table(["setting", "value"], x.settings.map(([k, v]) => [k, v]), "kv")}`

export const renderHtml = (r: BacktestReport, title = "twinbook backtest", reproduce: Reproduction | null = null): string => {
  const s = r.summary
  const se = r.series
  const summary: Array<[string, string]> = [
    ["data", `${s.source}: ${s.trades.toLocaleString("en-US")} trades, ${s.snapshots} snapshots, ${s.markets} markets, ${utcLabel(s.from_sec)} → ${utcLabel(s.to_sec)} UTC`],
    ["strategy", `${s.strategy}; queue model ${s.queue_model}; seed ${s.seed}`],
    ["capital → final equity", `${usdc(s.capital_micro)} → ${usdc(s.final_equity_micro)} USDC (cash ${usdc(s.cash_micro)}, inventory at mark ${usdc(s.inventory_value_micro)})`],
    ["PnL", `${usdc(s.pnl_micro)} USDC: realised ${usdc(s.realised_pnl_micro)}, unrealised ${usdc(s.unrealised_pnl_micro)}`],
    ["income", `trading ${usdc(s.trading_pnl_micro)}, maker rebates ${usdc(s.maker_rebates_micro)}, LP rewards ${usdc(s.lp_rewards_micro)} USDC`],
    ["fills", `${s.fills.toLocaleString("en-US")} (${s.fills_from_trades} by trades, ${s.fills_from_book_moves} by book moves); ${s.filled_contracts.toLocaleString("en-US")} of ${s.quoted_contracts.toLocaleString("en-US")} quoted contracts, fill ratio ${(s.fill_ratio * 100).toFixed(2)}%`],
    ["orders", `${s.orders_placed.toLocaleString("en-US")} placed, ${s.orders_rejected} rejected; volume ${usdc(s.volume_micro)} USDC`],
    ["max drawdown", `${usdc(s.max_drawdown_micro)} USDC (${(s.max_drawdown_pct * 100).toFixed(2)}%)`],
    ["time paused / stopped", `${s.time_paused_sec.toLocaleString("en-US")} s / ${s.time_stopped_sec.toLocaleString("en-US")} s (summed over markets)`],
    ...statsLines(r.stats)
  ]
  const markets = table(
    ["market", "fills", "contracts", "fill ratio", "net YES", "mark", "PnL", "rebates", "rewards (raw)", "paused s", "stop"],
    r.markets.map((m) => [
      m.market_id, String(m.fills), String(m.filled_contracts), m.quoted_contracts === 0 ? "-" : `${((m.filled_contracts / m.quoted_contracts) * 100).toFixed(2)}%`,
      String(m.net_yes), m.mark_bps === null ? "-" : String(m.mark_bps), usdc(m.pnl_micro), usdc(m.maker_rebates_micro), usdc(m.lp_rewards_raw_micro),
      String(m.time_paused_sec), m.stop_reason ?? "-"
    ])
  )
  const nanIfNeg = (v: number): number => (v < 0 ? Number.NaN : v)
  const equity = chart("Equity (USDC)", se.tSec, [
    { label: "equity", ys: se.equityMicro.map((x) => x / 1e6), colour: COLOURS[0]! },
    { label: "cash", ys: se.cashMicro.map((x) => x / 1e6), colour: COLOURS[2]!, dashed: true }
  ], (y) => y.toFixed(2))
  const inventory = chart("Inventory: net YES contracts", se.tSec, r.markets.map((m, i) => ({ label: m.market_id, ys: se.netYes[i]!, colour: COLOURS[i % COLOURS.length]! })), (y) => y.toFixed(0))
  const quotes = r.markets.map((m, i) =>
    chart(`Quotes vs mid: ${m.market_id} (YES bps)`, se.tSec, [
      { label: "mid", ys: se.mid2[i]!.map((x) => nanIfNeg(x) / 2), colour: "#444" },
      { label: "our best bid", ys: se.bidBps[i]!.map(nanIfNeg), colour: COLOURS[2]! },
      { label: "our best ask", ys: se.askBps[i]!.map(nanIfNeg), colour: COLOURS[1]! }
    ], (y) => y.toFixed(0))
  )
  const rewards = table(["day", "pool", "paid to all", "ours", "ours before cap", "score", "minutes"],
    r.rewardDays.map((d) => [isoDay(d.day), usdc(d.poolMicro), usdc(d.paidMicro), usdc(d.lpMicro), usdc(d.lpRawMicro), String(d.lpScore), String(d.minutes)]))
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>${STYLE}</style></head><body>
<h1>${esc(title)}</h1>
${r.assumptions.map((a) => `<p class="note">${esc(a)}</p>`).join("\n")}
${table(["figure", "value"], summary, "kv")}
<h2>Markets</h2>${markets}
<h2>Charts</h2>${equity}${inventory}${quotes.join("\n")}
<h2>LP rewards</h2>${rewards}
${reproduce === null ? "" : reproduceSection(reproduce)}
</body></html>
`
}
