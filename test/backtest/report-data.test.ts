// The data the report page embeds for its charts (sim/backtest/report-html/data.ts), on a
// generated two-day run with rebates, rewards, pauses and stops: the daily split adds up to the
// headline figures, every fill has its marker, the drawdown line is ≤ 0 and 0 at each new high,
// the equity line ends at the headline final equity, and the page carries exactly this data.
import { beforeAll, describe, expect, it } from "vitest"
import fc from "fast-check"
import { renderHtml } from "../../sim/backtest/html.ts"
import { type ChartData, chartData, fillMarkers, MAX_POINTS, thinIndices } from "../../sim/backtest/report-html/data.ts"
import type { BacktestReport, FillRow } from "../../sim/backtest/report.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import { CHART_CONFIG, chartDataset } from "./report-fixture.ts"

let report: BacktestReport
let data: ChartData

beforeAll(() => {
  report = runBacktest(chartDataset(), CHART_CONFIG).report
  data = chartData(report)
}, 60_000)

const sum = (xs: ReadonlyArray<number>): number => xs.reduce((s, x) => s + x, 0)

describe("report chart data on a generated two-day run", () => {
  it("is the run the tests mean: rebates, two days of rewards, pauses and a stop", () => {
    const s = report.summary
    expect(s.maker_rebates_micro).toBeGreaterThan(0)
    expect(report.rewardDays).toHaveLength(2)
    expect(s.lp_rewards_micro).toBeGreaterThan(0)
    expect(s.time_paused_sec).toBeGreaterThan(0)
    expect(report.markets.some((m) => m.stop_reason !== null)).toBe(true)
  })

  it("splits PnL by day into trading, rebates and rewards that add up to the headline figures", () => {
    const s = report.summary
    expect(data.daily.map((d) => d.label)).toEqual(["2025-01-15", "2025-01-16"])
    expect(sum(data.daily.map((d) => d.totalMicro))).toBe(s.pnl_micro)
    expect(sum(data.daily.map((d) => d.rebatesMicro))).toBe(s.maker_rebates_micro)
    expect(sum(data.daily.map((d) => d.rewardsMicro))).toBe(s.lp_rewards_micro)
    expect(sum(data.daily.map((d) => d.tradingMicro))).toBe(s.trading_pnl_micro)
    for (const d of data.daily) {
      expect(d.tradingMicro + d.rebatesMicro + d.rewardsMicro).toBe(d.totalMicro)
      // Each day's rewards are that day's payout, credited at its close.
      expect(d.rewardsMicro).toBe(report.rewardDays.find((r) => r.day === d.day)!.lpMicro)
    }
  })

  it("has one fill marker per fill, on the right side and at the fill's YES price", () => {
    const markers = data.quotes.flatMap((q) => q.fills)
    expect(markers).toHaveLength(report.summary.fills)
    expect(sum(markers.map((m) => m.n))).toBe(report.summary.fills)
    data.quotes.forEach((q, k) => {
      expect(q.fills).toHaveLength(report.markets[k]!.fills)
      const fills = report.fills.filter((f) => f.market === k)
      q.fills.forEach((m, i) => {
        const f = fills[i]!
        expect(m.yesPriceBps).toBe(f.yesPriceBps)
        expect(m.yesSide).toBe((f.side === "buy") === (f.outcome === "yes") ? "buy" : "sell")
        // Drawn at the first sample that shows the fill.
        expect(m.t * 1000).toBeGreaterThanOrEqual(f.tMs)
        expect(m.t * 1000 - f.tMs).toBeLessThan(60_000 + 1000)
      })
    })
  })

  it("draws drawdown ≤ 0, at 0 on each new high, and the equity line ends at the headline equity", () => {
    const eq = data.equity
    let peak = report.summary.capital_micro
    eq.equityMicro.forEach((e, i) => {
      expect(eq.drawdownMicro[i]).toBeLessThanOrEqual(0)
      if (e >= peak) {
        peak = e
        expect(eq.drawdownMicro[i]).toBe(0)
      } else expect(eq.drawdownMicro[i]).toBe(e - peak)
    })
    expect(Math.min(...eq.drawdownMicro)).toBeLessThan(0)
    // The sampled drawdown cannot be deeper than the per-event one.
    expect(-Math.min(...eq.drawdownMicro)).toBeLessThanOrEqual(report.summary.max_drawdown_micro)
    expect(eq.equityMicro.at(-1)).toBe(report.summary.final_equity_micro)
    expect(eq.t.at(-1)).toBe(report.summary.to_sec)
    expect(eq.rewardsMicro.at(-1)).toBe(report.summary.lp_rewards_micro)
  })

  it("shades a stop from its time to the end, and the run's own pauses: they add up to its paused time exactly", () => {
    data.quotes.forEach((q, k) => {
      const m = report.markets[k]!
      const stops = q.spans.filter((s) => s.kind === "stopped")
      expect(stops).toHaveLength(m.stop_reason === null ? 0 : 1)
      if (m.stop_reason !== null) expect(stops[0]).toEqual({ fromSec: report.summary.to_sec - m.time_stopped_sec, toSec: report.summary.to_sec, kind: "stopped", label: `stopped: ${m.stop_reason}` })
      expect(q.pausedReportedSec).toBe(m.time_paused_sec)
      expect(q.pausedShownSec).toBe(m.time_paused_sec)
      expect(q.spans.filter((s) => s.kind === "paused")).toHaveLength(m.paused_spans_ms.length)
      // Each pause began at a `pause` decision: the number of spans is the number of pauses entered.
      expect(m.paused_spans_ms.length).toBe(m.pauses)
    })
  })

  it("is the JSON the page embeds, with the chart library inlined and nothing loaded from elsewhere", () => {
    const html = renderHtml(report)
    const json = /<script type="application\/json" id="chart-data">([^<]*)<\/script>/.exec(html)![1]!
    expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(data)))
    expect(html).toContain("TradingView Lightweight Charts™ v5.2.1")
    expect(html).not.toMatch(/<(script|img|link|iframe)[^>]+(src|href)=/i)
    expect(html).toMatch(/<noscript>/)
  })
})

describe("thinning and merging for huge runs", () => {
  it("keeps at most MAX_POINTS samples, the first and the last, and every key line's minimum and maximum", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1e9, max: 1e9 }), { minLength: 1, maxLength: 30_000 }), fc.integer({ min: 10, max: 500 }), (ys, max) => {
        const idx = thinIndices(ys.length, [ys], max)
        expect(idx.length).toBeLessThanOrEqual(Math.max(max, ys.length <= max ? ys.length : 0) + 1)
        expect(idx[0]).toBe(0)
        expect(idx.at(-1)).toBe(ys.length - 1)
        expect(idx.every((v, i) => i === 0 || v > idx[i - 1]!)).toBe(true)
        const kept = idx.map((i) => ys[i]!)
        expect(Math.min(...kept)).toBe(Math.min(...ys))
        expect(Math.max(...kept)).toBe(Math.max(...ys))
      }),
      { numRuns: 60 }
    )
    expect(thinIndices(10, [[]], MAX_POINTS)).toHaveLength(10)
  })

  it("merges fills beyond MAX_MARKERS into counted markers that still add up to every fill", () => {
    const tSec = Array.from({ length: 1441 }, (_, i) => 1_736_899_200 + 60 * i)
    const fills: FillRow[] = Array.from({ length: 5_000 }, (_, i) => ({
      tMs: 1_736_899_200_000 + i * 17_000, market: 0, side: i % 3 === 0 ? "sell" : "buy", outcome: i % 5 === 0 ? "no" : "yes",
      priceBps: 5000, yesPriceBps: 4000 + (i % 7) * 100, size: 1 + (i % 4), rebateMicro: 0, cause: "trade"
    }))
    const merged = fillMarkers(fills, tSec, 200)
    expect(merged.length).toBeLessThanOrEqual(200)
    expect(sum(merged.map((m) => m.n))).toBe(fills.length)
    expect(sum(merged.map((m) => m.contracts))).toBe(sum(fills.map((f) => f.size)))
    for (const side of ["buy", "sell"] as const) {
      const yes = (f: FillRow): "buy" | "sell" => ((f.side === "buy") === (f.outcome === "yes") ? "buy" : "sell")
      expect(sum(merged.filter((m) => m.yesSide === side).map((m) => m.n))).toBe(fills.filter((f) => yes(f) === side).length)
    }
  })
})

