// The market-response model in a backtest (sim/backtest/response/flow.ts): response takers come
// only while our quote betters the tape's touch, hit it through the engine, are told apart in
// the report, follow the tape's future mid when informed, and the run stays deterministic.
import { describe, expect, it } from "vitest"
import type { StrategyParams } from "../../src/lp/strategy.ts"
import { type BacktestConfig, DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import { datasetFromRows, type LevelRow } from "../../sim/backtest/dataset.ts"
import { formatSummary } from "../../sim/backtest/report.ts"
import { renderHtml } from "../../sim/backtest/html.ts"
import { validateModel } from "../../sim/backtest/response/model.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"

const T0 = 1_767_225_600_000
const M = "m"
const HOURS = 2

const params = (spreadBps: number): StrategyParams => ({
  spreadBps, levelsPerSide: 1, levelStepBps: 100, contractsPerLevel: 10, rebalanceIntervalSec: 60,
  maxInventory: 100_000, skewLeanBps: 0, skewTolerancePct: 100, volWidenPct: 0, stopLossMicro: 0, takeProfitMicro: 0
})
const config = (spreadBps: number, response: BacktestConfig["response"]): BacktestConfig => ({
  ...DEFAULT_CONFIG,
  strategy: {
    kind: "spec",
    spec: { mode: "advanced", capital_micro_usdc: 1_000_000_000, spread_bps: spreadBps, levels_per_side: 1, contracts_per_level: 10, rebalance_interval_secs: 60, skew_tolerance_pct: 100, stop_loss_micro_usdc: 0, take_profit_micro_usdc: 0 },
    params: params(spreadBps)
  },
  overrides: params(spreadBps),
  entryLatency: { baseMs: 0, jitterMs: 0 },
  feedLatency: { baseMs: 0, jitterMs: 0 },
  response
})

// λ(2 ticks) − λ(4 ticks) = 0.02·(e^−1 − e^−2) ≈ 0.0047 takers/s a side: about 34 a side in two hours.
const model = (informedShare: number) =>
  validateModel("test-model", {
    format: "twinbook-response-model", version: 1, sources: [],
    arrival: { buy: { a_per_sec: 0.02, b_per_tick: 0.5 }, sell: { a_per_sec: 0.02, b_per_tick: 0.5 } },
    size: { quantiles: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
    information: { markouts: [], horizon_sec: 30, informed_share: informedShare }
  })

/** The tape's book: bid at mid − 200, ask at mid + 200 (a 400 bps touch, tick 100: no trades), a new mid every `stepSec`. */
const tape = (stepSec: number, midAt: (k: number) => number) => {
  const levels: LevelRow[] = []
  for (let k = 0; k < (HOURS * 3600) / stepSec; k++) {
    const mid = midAt(k)
    levels.push({ tsMs: T0 + k * stepSec * 1000, marketId: M, side: "bid", priceBps: mid - 200, size: 100 })
    levels.push({ tsMs: T0 + k * stepSec * 1000, marketId: M, side: "ask", priceBps: mid + 200, size: 100 })
  }
  return datasetFromRows("response", [], levels)
}
const flat = tape(600, () => 5000)

describe("response takers in a backtest", () => {
  it("a quote inside the tape's touch attracts them: fills told apart, deterministic run to run", () => {
    const a = runBacktest(flat, config(200, model(0.3))).report
    const b = runBacktest(flat, config(200, model(0.3))).report
    expect(a.summary.fills_from_response).toBeGreaterThan(20)
    expect(a.summary.fills_from_response).toBe(a.fills.filter((f) => f.cause === "response").length)
    expect(a.summary.response_filled_contracts).toBe(a.fills.filter((f) => f.cause === "response").reduce((s, f) => s + f.size, 0))
    expect(a.summary.response_takers).toBeGreaterThan(20)
    expect([a.summary.fills_from_trades, a.summary.fills_from_book_moves]).toEqual([0, 0])
    // Each response taker hit our quote, at our price, inside the tape's touch.
    expect(a.fills.every((f) => f.yesPriceBps % 100 === 0 && f.cause === "response")).toBe(true)
    expect(JSON.stringify({ s: b.summary, f: b.fills })).toBe(JSON.stringify({ s: a.summary, f: a.fills }))
    // Another seed draws other takers.
    const c = runBacktest(flat, { ...config(200, model(0.3)), seed: "2" }).report
    expect(JSON.stringify(c.fills)).not.toBe(JSON.stringify(a.fills))
  })

  it("a quote at or behind the tape's touch attracts none, and without a model there are none", () => {
    for (const spread of [400, 1000]) {
      const r = runBacktest(flat, config(spread, model(0.3))).report
      expect(r.summary.quoted_contracts, `spread ${spread}`).toBeGreaterThan(0)
      expect([r.summary.response_takers, r.summary.fills_from_response, r.fills.length], `spread ${spread}`).toEqual([0, 0, 0])
    }
    const none = runBacktest(flat, config(200, null)).report
    expect([none.summary.response_takers, none.summary.fills_from_response, none.fills.length]).toEqual([0, 0, 0])
    expect(none.response_model).toBeNull()
  })

  it("informed takers trade the way the tape's mid is about to move", () => {
    // The tape's mid rises 1 bps every 20 s (within every 30 s horizon): every informed taker buys (lifts our ask).
    const rising = tape(20, (k) => 4000 + k)
    const r = runBacktest(rising, config(200, model(1))).report
    const sold = (f: { side: string; outcome: string }): boolean => (f.side === "sell" && f.outcome === "yes") || (f.side === "buy" && f.outcome === "no")
    expect(r.summary.fills_from_response).toBeGreaterThan(10)
    expect(r.fills.every(sold)).toBe(true)
    expect(r.summary.response_informed_takers).toBe(r.summary.response_takers)
    // With no informed share both sides are hit.
    const noise = runBacktest(rising, config(200, model(0))).report
    expect(noise.fills.some(sold) && noise.fills.some((f) => !sold(f))).toBe(true)
    expect(noise.summary.response_informed_takers).toBe(0)
  })

  it("the report's first page shows the model's parameters and fit", () => {
    const r = runBacktest(flat, config(200, model(0.3))).report
    expect(r.response_model?.arrival.buy.a_per_sec).toBe(0.02)
    const text = formatSummary(r)
    expect(text).toMatch(/^RESPONSE {2}arrival: takers\/s at the touch = a·exp\(−b·spread ticks\): buy a 0\.02 /m)
    expect(text).toMatch(/^RESPONSE {2}information: .*applied: informed share 0\.30 at 30 s/m)
    expect(text).toContain(`${r.summary.fills_from_response} by response takers`)
    const html = renderHtml(r)
    expect(html.indexOf("<h2>Market-response model</h2>")).toBeGreaterThan(0)
    expect(html.indexOf("<h2>Market-response model</h2>")).toBeLessThan(html.indexOf("<h2>Charts</h2>"))
    expect(html).toContain(`${r.summary.response_takers} sent`)
  })
})
