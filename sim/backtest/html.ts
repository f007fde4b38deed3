// The backtest report: one self-contained HTML file. Summary and per-market tables (readable
// without scripts), then interactive charts drawn by TradingView Lightweight Charts, inlined in
// the page with their data (report-html/data.ts, which also says how huge runs are thinned) and
// the drawing code (report-html/report.client.js): no external URL, it works offline from file://.
import { dayLabel } from "../../src/service/rewards-book.ts"
import { CHART_LIBRARY, esc, inlineScript, jsonScript, STYLE, table, usdc } from "./report-html/common.ts"
import { chartData } from "./report-html/data.ts"
import { fillTable } from "./report-html/fills.ts"
import { markoutSection } from "./report-html/markouts.ts"
import { type BacktestReport, statsLines } from "./report.ts"
import type { Reproduction } from "./reproduce.ts"
import { EDGE_TABLE_HEADER, edgeTableRows, responseLines } from "./response/format.ts"
import { intervalLines } from "./interval.ts"
import { calibratedRangeLines } from "./interval-calibration.ts"
import { rejectRows, sharePct } from "./rejects.ts"

const CLIENT = new URL("./report-html/report.client.js", import.meta.url)
const FILLS_CLIENT = new URL("./report-html/fills.client.js", import.meta.url)
const CHART_STYLE = `
.chart{margin:10px 0 22px}.chart h3{margin:0 0 2px}.plot{height:280px;border:1px solid #e4e4e4}.small{font-size:12px;margin:0 0 4px}
.legend{font-size:12px;min-height:18px;margin:2px 0}.legend .when{color:#666;margin-right:12px}.legend .item{margin-right:14px;white-space:nowrap}
.legend i{display:inline-block;width:12px;height:3px;margin-right:4px;vertical-align:middle}
.rejects td:last-child,.rejects th:last-child{text-align:left}.rejects th{white-space:nowrap}
.markouts{max-width:100%;height:auto;display:block;margin:6px 0}.scroll{overflow-x:auto;max-height:520px;overflow-y:auto}
#fills-table th{position:sticky;top:0}#fills-table td{white-space:nowrap}button.sort{font:inherit;font-weight:600;background:none;border:0;padding:0;cursor:pointer;text-align:inherit}
th[aria-sort=ascending] button.sort::after{content:" ▲"}th[aria-sort=descending] button.sort::after{content:" ▼"}`

/** Civil date of a unix day number: the rewards book's label (no Date object). */
export const isoDay = dayLabel

export const utcLabel = (tSec: number): string => {
  const s = ((tSec % 86_400) + 86_400) % 86_400
  return `${isoDay(Math.floor(tSec / 86_400))} ${String(Math.floor(s / 3600)).padStart(2, "0")}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}`
}

/**
 * Our rejected orders by reason, on the first screen (after the notes, before the figures): a run
 * whose capital could not fund its ladder is not the strategy configured. Nothing when none was.
 */
const rejectsSection = (r: BacktestReport): string => {
  const s = r.summary
  const rows = rejectRows(r.rejects, s.orders_placed)
  if (rows.length === 0) return ""
  return `<h2 id="rejections">Rejected orders</h2>
<p>${s.orders_rejected.toLocaleString("en-US")} of our ${s.orders_placed.toLocaleString("en-US")} orders placed (${sharePct((s.orders_rejected / Math.max(1, s.orders_placed)) * 100)}) were rejected:</p>
${table(["reason", "orders", "share of placed", "what it means"], rows.map((x) => [x.reason, x.count.toLocaleString("en-US"), sharePct(x.sharePct), x.meaning]), "rejects")}`
}

/** The market-response model the run applied: its parameters, fit, and the takers it sent. */
const responseSection = (r: BacktestReport): string => {
  const s = r.summary
  const rows: Array<[string, string]> = [
    ["response takers", `${s.response_takers} sent (${s.response_informed_takers} informed): ${s.fills_from_response} fills, ${s.response_filled_contracts} contracts`],
    ...responseLines(r.response_model!)
  ]
  const edge = edgeTableRows(r.response_model!)
  return `<h2>Market-response model</h2>${table(["part", "value"], rows, "kv")}${edge.length === 0 ? "" : `<h3>Arrival by edge: observed vs fitted takers per bucket</h3>${table(EDGE_TABLE_HEADER, edge)}`}`
}

/** The page's "Reproduce" section: the exact command, each input with its sha256, every setting. */
const reproduceSection = (x: Reproduction): string =>
  `<h2>Reproduce</h2><p>From the repository root:</p><pre id="command">${esc(x.command)}</pre>
${x.inputs.length === 0 ? "<p>Input: generated (--synthetic), from the seed below.</p>" : table(["input file", "bytes", "sha256"], x.inputs.map((f) => [f.path, String(f.bytes), f.sha256]), "kv")}
${table(["setting", "value"], x.settings.map(([k, v]) => [k, v]), "kv")}`

export const renderHtml = (r: BacktestReport, title = "twinbook backtest", reproduce: Reproduction | null = null): string => {
  const s = r.summary
  const summary: Array<[string, string]> = [
    ["data", `${s.source}: ${s.trades.toLocaleString("en-US")} trades, ${s.snapshots} snapshots, ${s.order_events.toLocaleString("en-US")} order events, ${s.markets} markets, ${utcLabel(s.from_sec)} → ${utcLabel(s.to_sec)} UTC; book from ${s.book}`],
    ["strategy", `${s.strategy}; queue model ${s.queue_model}; seed ${s.seed}`],
    ["capital → final equity", `${usdc(s.capital_micro)} → ${usdc(s.final_equity_micro)} USDC (cash ${usdc(s.cash_micro)}, inventory at mark ${usdc(s.inventory_value_micro)})`],
    ["PnL", `${usdc(s.pnl_micro)} USDC: realised ${usdc(s.realised_pnl_micro)}, unrealised ${usdc(s.unrealised_pnl_micro)}`],
    ["income", `trading ${usdc(s.trading_pnl_micro)}, maker rebates ${usdc(s.maker_rebates_micro)}, LP rewards ${usdc(s.lp_rewards_micro)} USDC`],
    ["fills", `${s.fills.toLocaleString("en-US")} (${s.fills_from_trades} by trades, ${s.fills_from_book_moves} by book moves, ${s.fills_from_response} by response takers); ${s.filled_contracts.toLocaleString("en-US")} of ${s.quoted_contracts.toLocaleString("en-US")} quoted contracts, fill ratio ${(s.fill_ratio * 100).toFixed(2)}%`],
    ...(r.interval === null ? [] : intervalLines(r.interval).map(([k, v]): [string, string] => [k.trim(), v])),
    ...(r.calibrated_interval == null ? [] : calibratedRangeLines(r.calibrated_interval).map(([k, v]): [string, string] => [k.trim(), v])),
    ["orders", `${s.orders_placed.toLocaleString("en-US")} placed, ${s.orders_rejected.toLocaleString("en-US")} rejected${s.orders_rejected === 0 ? "" : ` (${sharePct((s.orders_rejected / Math.max(1, s.orders_placed)) * 100)}; by reason above)`}; volume ${usdc(s.volume_micro)} USDC`],
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
  const rewards = table(["day", "pool", "paid to all", "ours", "ours before cap", "score", "minutes"],
    r.rewardDays.map((d) => [isoDay(d.day), usdc(d.poolMicro), usdc(d.paidMicro), usdc(d.lpMicro), usdc(d.lpRawMicro), String(d.lpScore), String(d.minutes)]))
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>${STYLE}${CHART_STYLE}</style></head><body>
<h1>${esc(title)}</h1>
${r.assumptions.map((a) => `<p class="note">${esc(a)}</p>`).join("\n")}
${rejectsSection(r)}
${table(["figure", "value"], summary, "kv")}
${r.response_model === null ? "" : responseSection(r)}
<h2>Charts</h2>
<p class="muted">Drag to pan, scroll or pinch to zoom, double-click an axis to reset; hover for values. Times in UTC.</p>
<noscript><p class="note">The charts need JavaScript. The headline figures are in the table above and the markets and rewards below.</p></noscript>
<div id="charts"></div>
${markoutSection(r.stats.markouts_by_side)}
<h2 id="fills-heading">Fills</h2>
<noscript><p class="note">The fills table needs JavaScript; every fill and its markouts are in backtest.duckdb, table fills.</p></noscript>
<div id="fills"></div>
<h2>Markets</h2>${markets}
<h2>LP rewards</h2>${rewards}
${reproduce === null ? "" : reproduceSection(reproduce)}
<p class="muted small">Charts: TradingView Lightweight Charts™ 5.2.1 (Apache License 2.0), inlined.</p>
${jsonScript("chart-data", chartData(r))}
${inlineScript(CHART_LIBRARY)}
${jsonScript("fills-data", fillTable(r))}
${inlineScript(CLIENT)}
${inlineScript(FILLS_CLIENT)}
</body></html>
`
}
