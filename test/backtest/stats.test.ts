// The report's statistics against hand-computed cases (markouts, hourly returns, Sharpe and
// Sortino, drawdown and its duration), and the rewards model's properties on generated books
// (fast-check): more competing depth in the band lowers our share, quotes outside the band earn
// nothing, and a strategy that never quotes has zero of everything.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type BacktestConfig, DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import { datasetFromRows, type LevelRow } from "../../sim/backtest/dataset.ts"
import type { FillRow } from "../../sim/backtest/report.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import { drawdown, fillMarkouts, HOURS_PER_YEAR, hourlyReturns, markouts, markoutsBySide, MIN_HOURLY_RETURNS, reportedRatios, sharpeSortino, yesDirection } from "../../sim/backtest/stats.ts"
import { formatSummary } from "../../sim/backtest/report.ts"
import { renderHtml } from "../../sim/backtest/html.ts"
import { syntheticDataset } from "../../sim/backtest/synthetic.ts"

type F = Pick<FillRow, "tMs" | "market" | "side" | "outcome" | "size">

describe("markouts", () => {
  // Market 0's mid: 5000 until 10 s, 5020 from 10.5 s, 4990 from 12 s, 5100 from 75 s.
  const path = { tMs: [0, 10_500, 12_000, 75_000], midBps: [5000, 5020, 4990, 5100] }
  it("are side × (mid at t + h − mid just before the fill), contract-weighted", () => {
    // Bought 10 YES at 10 s: before 5000; +1 s (11 s) 5020 → +20; +10 s (20 s) 4990 → −10; +60 s (70 s) 4990 → −10.
    // Sold 30 YES at 12 s (the mid changed at 12 s itself: "before" is 5020): +1 s 4990 → +30; +10 s 4990 → +30; +60 s (72 s) 4990 → +30.
    const fills: F[] = [
      { tMs: 10_000, market: 0, side: "buy", outcome: "yes", size: 10 },
      { tMs: 12_000, market: 0, side: "sell", outcome: "yes", size: 30 }
    ]
    expect(markouts(fills, [path], 200_000)).toEqual([
      { horizon_sec: 1, fills: 2, mean_bps: (10 * 20 + 30 * 30) / 40 },
      { horizon_sec: 10, fills: 2, mean_bps: (10 * -10 + 30 * 30) / 40 },
      { horizon_sec: 60, fills: 2, mean_bps: (10 * -10 + 30 * 30) / 40 }
    ])
  })

  it("count buying NO as selling YES, and leave out fills whose horizon passes the end", () => {
    expect(yesDirection({ side: "buy", outcome: "no" })).toBe(-1)
    expect(yesDirection({ side: "sell", outcome: "no" })).toBe(1)
    // Bought 4 NO at 70 s (short YES): before 4990, +1 s 4990 → 0, +10 s (80 s) 5100 → −110; +60 s passes the end (100 s).
    const fills: F[] = [{ tMs: 70_000, market: 0, side: "buy", outcome: "no", size: 4 }]
    expect(markouts(fills, [path], 100_000)).toEqual([
      { horizon_sec: 1, fills: 1, mean_bps: 0 },
      { horizon_sec: 10, fills: 1, mean_bps: -110 },
      { horizon_sec: 60, fills: 0, mean_bps: null }
    ])
  })
})

describe("markouts per fill and by side", () => {
  const path = { tMs: [0, 10_500, 12_000, 75_000], midBps: [5000, 5020, 4990, 5100] }
  const fills: F[] = [
    { tMs: 10_000, market: 0, side: "buy", outcome: "yes", size: 10 },
    { tMs: 12_000, market: 0, side: "sell", outcome: "yes", size: 30 },
    { tMs: 70_000, market: 0, side: "sell", outcome: "no", size: 5 }
  ]
  it("give each fill its own markouts, null past the end", () => {
    // The third sold 5 NO at 70 s (long YES): before 4990; +1 s 4990 → 0; +10 s (80 s) 5100 → +110; +60 s passes 100 s.
    expect(fillMarkouts(fills, [path], 100_000)).toEqual([[20, -10, -10], [30, 30, 30], [0, 110, null]])
  })
  it("weigh each side's fills apart: bought YES (incl. sold NO) and sold YES", () => {
    const per = fillMarkouts(fills, [path], 100_000)
    expect(markoutsBySide(fills, per)).toEqual([
      { side: "bought_yes", horizon_sec: 1, fills: 2, mean_bps: 13.3333 }, // (10 × 20 + 5 × 0) / 15, to 4 places
      { side: "bought_yes", horizon_sec: 10, fills: 2, mean_bps: 30 }, // (10 × −10 + 5 × 110) / 15
      { side: "bought_yes", horizon_sec: 60, fills: 1, mean_bps: -10 },
      { side: "sold_yes", horizon_sec: 1, fills: 1, mean_bps: 30 },
      { side: "sold_yes", horizon_sec: 10, fills: 1, mean_bps: 30 },
      { side: "sold_yes", horizon_sec: 60, fills: 1, mean_bps: 30 }
    ])
  })
})

describe("returns and drawdown", () => {
  it("hourly returns use the equity at each whole hour and at the end", () => {
    const t = [1800, 3600, 5400, 7200, 8000]
    const e = [1_000, 1_100, 900, 990, 1_089]
    // Capital 1000 → 1100 (hour 1) → 990 (hour 2) → 1089 (end).
    const r = hourlyReturns(t, e, 1_000)
    expect(r.map((x) => Math.round(x * 1e9) / 1e9)).toEqual([0.1, -0.1, 0.1])
  })

  it("Sharpe is mean / sample sd and Sortino mean / downside deviation, both × √periods", () => {
    const r = [0.1, -0.1, 0.1]
    const mean = 0.1 / 3
    const sd = Math.sqrt(((0.1 - mean) ** 2 * 2 + (-0.1 - mean) ** 2) / 2)
    const down = Math.sqrt(0.01 / 3)
    const got = sharpeSortino(r, 4)
    expect(got.sharpe).toBeCloseTo((mean / sd) * 2, 4)
    expect(got.sortino).toBeCloseTo((mean / down) * 2, 4)
    expect(sharpeSortino([0.01], 4)).toEqual({ sharpe: null, sortino: null })
    expect(sharpeSortino([0.01, 0.02], 4).sortino).toBeNull() // no losing period
  })

  it("Sharpe and Sortino are not given below 30 hourly returns: null, with the reason and the sampling in the text and the page", () => {
    expect(MIN_HOURLY_RETURNS).toBe(30)
    const r29 = Array.from({ length: 29 }, (_, i) => (i % 3 === 0 ? -0.01 : 0.02))
    expect(reportedRatios(r29)).toEqual({ sharpe: null, sortino: null, unavailable: "not enough data (29 hourly returns; at least 30 needed)" })
    const r30 = [...r29, 0.02]
    const { sharpe, sortino } = sharpeSortino(r30, HOURS_PER_YEAR)
    expect(reportedRatios(r30)).toEqual({ sharpe, sortino, unavailable: null })
    expect(sharpe).not.toBeNull()
    expect(reportedRatios(Array.from({ length: 40 }, () => 0.01))).toEqual({ sharpe: null, sortino: null, unavailable: "Sharpe: the returns do not vary; Sortino: no hour lost money" })

    // A six-hour run: 6 hourly returns. The figures are null, and the console and the page say why and how they are sampled.
    const short = runBacktest(syntheticDataset({ seed: "stats", trades: 3_000, durationSec: 6 * 3600 }), DEFAULT_CONFIG).report
    expect(short.stats).toMatchObject({ hourly_returns: 6, sharpe_annualised: null, sortino_annualised: null, ratios_unavailable: "not enough data (6 hourly returns; at least 30 needed)" })
    const line = "not enough data (6 hourly returns; at least 30 needed); hourly simple returns of the sampled equity, annualised by √(24·365); no risk-free rate"
    expect(formatSummary(short)).toMatch(new RegExp(`^Sharpe / Sortino +${line.replace(/[()√·]/g, "\\$&")}$`, "m"))
    expect(formatSummary(short)).not.toMatch(/Sharpe -?\d/)
    expect(renderHtml(short)).toContain(`<tr><td>Sharpe / Sortino</td><td>${line}</td></tr>`)
  })

  it("from 30 hourly returns on: the figures, from the run's own returns, stated with their count and sampling", () => {
    const long = runBacktest(syntheticDataset({ seed: "stats-long", trades: 3_000, durationSec: 2 * 86_400 }), DEFAULT_CONFIG).report
    const returns = hourlyReturns(long.series.tSec, long.series.equityMicro, long.summary.capital_micro)
    expect(returns.length).toBeGreaterThanOrEqual(MIN_HOURLY_RETURNS)
    const { sharpe, sortino } = sharpeSortino(returns, HOURS_PER_YEAR)
    expect(long.stats).toMatchObject({ hourly_returns: returns.length, sharpe_annualised: sharpe, sortino_annualised: sortino, ratios_unavailable: null })
    expect(sharpe).not.toBeNull()
    expect(formatSummary(long)).toContain(`${sharpe!.toFixed(2)} / ${sortino!.toFixed(2)} from ${returns.length} hourly simple returns of the sampled equity, annualised by √(24·365)`)
  })

  it("the max drawdown lasts from its peak until equity is back at that peak, or to the end", () => {
    // Peaks 110 at 10, falls to 80 at 30 (−30), back to 110 at 50: 40 s. A later −5 is smaller.
    expect(drawdown([0, 10, 20, 30, 40, 50, 60, 70], [100, 110, 100, 80, 105, 110, 120, 115])).toEqual({ maxMicro: 30, durationSec: 40, recovered: true })
    expect(drawdown([0, 10, 20], [100, 90, 95])).toEqual({ maxMicro: 10, durationSec: 20, recovered: false })
    expect(drawdown([0, 10], [100, 100])).toEqual({ maxMicro: 0, durationSec: 0, recovered: true })
  })

  it("on a generated run: the return is the PnL over capital and the markouts cover our fills", () => {
    const d = syntheticDataset({ seed: "stats", trades: 3_000, durationSec: 6 * 3600 })
    const r = runBacktest(d, DEFAULT_CONFIG).report
    expect(r.stats.return_pct).toBeCloseTo((r.summary.pnl_micro / r.summary.capital_micro) * 100, 4)
    expect(r.stats.turnover).toBeCloseTo(r.summary.volume_micro / r.summary.capital_micro, 4)
    expect(r.stats.hourly_returns).toBe(6)
    expect(r.summary.fills).toBeGreaterThan(0)
    const endMs = d.tMs[d.count - 1]!
    expect(r.stats.markouts[0]!.fills).toBe(r.fills.filter((f) => f.tMs + 1000 <= endMs).length)
    expect(r.stats.markouts[2]!.fills).toBe(r.fills.filter((f) => f.tMs + 60_000 <= endMs).length)
    for (const m of r.stats.markets) {
      expect(m.inventory_max_abs).toBeGreaterThanOrEqual(m.inventory_mean_abs)
      expect(m.quoted_two_sided_pct).toBeLessThanOrEqual(100)
    }
    expect(Math.max(...r.stats.markets.map((m) => m.quoted_two_sided_pct))).toBeGreaterThan(50)
    // The PnL split covers every fill and adds up to the trading PnL; the edge is the fills' own (each priced against a mid).
    const a = r.stats.pnl_attribution
    expect([a.fills, a.contracts]).toEqual([r.summary.fills, r.summary.filled_contracts])
    expect(a.edge_micro + a.inventory_micro).toBe(r.summary.trading_pnl_micro)
    expect(a.unmarked_fills).toBeLessThan(a.fills)
    expect(a.edge_micro).not.toBe(0)
    expect(formatSummary(r)).toContain(`trading PnL split`)
  })
})

// One market, one UTC day, competitor depth given by hourly snapshots (no trades: no fills), the
// day closed so its rewards are paid; the per-wallet cap off so the share can move freely.
const DAY0 = 1_736_899_200
const book = (bidSize: number, askSize: number, bids: number[], asks: number[]): LevelRow[] =>
  Array.from({ length: 24 }, (_, h) => [
    ...bids.map((p): LevelRow => ({ tsMs: (DAY0 + h * 3600) * 1000, marketId: "m", side: "bid", priceBps: p, size: bidSize })),
    ...asks.map((p): LevelRow => ({ tsMs: (DAY0 + h * 3600) * 1000, marketId: "m", side: "ask", priceBps: p, size: askSize }))
  ]).flat()
const run = (levels: LevelRow[], overrides: BacktestConfig["overrides"], extra: Partial<BacktestConfig> = {}) =>
  runBacktest(datasetFromRows("book", [], levels), {
    ...DEFAULT_CONFIG,
    rewards: { ...DEFAULT_CONFIG.rewards, perWalletCapPct: 100 },
    endSec: DAY0 + 86_400,
    overrides: { stopLossMicro: 0, takeProfitMicro: 0, levelsPerSide: 1, volWidenPct: 0, ...overrides },
    ...extra
  }).report
const sharePct = (r: ReturnType<typeof run>): number => r.stats.rewards_share_by_day[0]?.share_pct ?? 0

describe("rewards model properties", () => {
  const depth = fc.record({ bid: fc.integer({ min: 20, max: 2_000 }), ask: fc.integer({ min: 20, max: 2_000 }), ours: fc.integer({ min: 10, max: 500 }), spread: fc.integer({ min: 20, max: 200 }) })

  it("doubling the competing depth in the band lowers our share", () => {
    fc.assert(
      fc.property(depth, ({ bid, ask, ours, spread }) => {
        const o = { contractsPerLevel: ours, spreadBps: spread }
        const base = run(book(bid, ask, [4900, 4850], [5100, 5150]), o)
        const doubled = run(book(2 * bid, 2 * ask, [4900, 4850], [5100, 5150]), o)
        expect(base.summary.fills).toBe(0)
        expect(sharePct(base)).toBeGreaterThan(0)
        expect(sharePct(doubled)).toBeLessThan(sharePct(base))
      }),
      { numRuns: 6, seed: 14 }
    )
  }, 120_000)

  it("quotes outside the band earn nothing", () => {
    fc.assert(
      fc.property(depth, fc.integer({ min: 0, max: 1_000 }), ({ bid, ask, ours }, beyond) => {
        const band = DEFAULT_CONFIG.rewards.bandSpreadBpsMax
        // Both our quotes at least `band` from the 5000 mid: score zero (docs/rewards.md).
        const r = run(book(bid, ask, [4900], [5100]), { contractsPerLevel: ours, spreadBps: 2 * (band + beyond) })
        expect(r.summary.orders_placed).toBeGreaterThan(0)
        expect(r.rewardDays).toHaveLength(1)
        expect(r.rewardDays[0]!.lpScore).toBe(0)
        expect(r.summary.lp_rewards_micro).toBe(0)
      }),
      { numRuns: 6, seed: 14 }
    )
  }, 120_000)

  it("a strategy that never quotes has zero of everything", () => {
    fc.assert(
      fc.property(depth, ({ bid, ask }) => {
        const r = run(book(bid, ask, [4900, 4850], [5100, 5150]), {}, { quoteMarkets: [] })
        const s = r.summary
        expect([s.fills, s.orders_placed, s.volume_micro, s.pnl_micro, s.lp_rewards_micro, s.maker_rebates_micro, s.lp_rewards_unpaid_estimate_micro]).toEqual([0, 0, 0, 0, 0, 0, 0])
        expect(r.stats.turnover).toBe(0)
        expect(r.stats.markouts.every((m) => m.fills === 0)).toBe(true)
        expect(r.stats.markets[0]!.quoted_two_sided_pct).toBe(0)
        expect(sharePct(r)).toBe(0)
      }),
      { numRuns: 4, seed: 14 }
    )
  }, 120_000)
})
