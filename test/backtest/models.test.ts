// Hand-built cases for the fill models: the two queue models on one book history, and
// order-entry and feed latency each delaying our first fill.
import { describe, expect, it } from "vitest"
import type { StrategyParams } from "../../src/lp/strategy.ts"
import { type BacktestConfig, DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import { datasetFromRows, type LevelRow, type TradeRow } from "../../sim/backtest/dataset.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"

const T0 = 1_736_899_200_000
const M = "m"

// One bid and one ask of 10 contracts at mid ± 100, never re-quoted within the test, no lean,
// no pause, no stops: the only thing that moves is the queue.
const PARAMS: StrategyParams = {
  spreadBps: 200, levelsPerSide: 1, levelStepBps: 100, contractsPerLevel: 10, rebalanceIntervalSec: 3600,
  maxInventory: 1_000, skewLeanBps: 0, skewTolerancePct: 100, volWidenPct: 0, stopLossMicro: 0, takeProfitMicro: 0
}
const SPEC = {
  mode: "advanced", capital_micro_usdc: 1_000_000_000, spread_bps: 200, levels_per_side: 1, contracts_per_level: 10,
  rebalance_interval_secs: 3600, skew_tolerance_pct: 100, stop_loss_micro_usdc: 0, take_profit_micro_usdc: 0
} as const
const BASE: BacktestConfig = {
  ...DEFAULT_CONFIG,
  strategy: { kind: "spec", spec: SPEC, params: PARAMS },
  entryLatency: { baseMs: 0, jitterMs: 0 },
  feedLatency: { baseMs: 0, jitterMs: 0 }
}

const book = (tMs: number, bid: number, ask = 100): LevelRow[] => [
  { tsMs: T0 + tMs, marketId: M, side: "bid", priceBps: 4900, size: bid },
  { tsMs: T0 + tMs, marketId: M, side: "ask", priceBps: 5100, size: ask }
]
const sell = (tMs: number, size: number): TradeRow => ({ tsMs: T0 + tMs, marketId: M, priceBps: 4900, size, takerSide: "sell" })
const firstFillMs = (fills: ReadonlyArray<{ tMs: number }>): number | null => (fills.length === 0 ? null : fills[0]!.tMs - T0)

describe("queue position models", () => {
  // Our bid joins behind 900 at 4900; 100 more join behind us; then 100 are cancelled.
  // Risk-averse: the cancel came from behind us (900 still ahead). Probabilistic (power 3):
  // ahead with probability 900³ / (900³ + 100³) ≈ 0.999. Then 850 and 100 trade at 4900.
  const data = datasetFromRows("queue", [sell(3000, 850), sell(4000, 100)], [...book(0, 900), ...book(1000, 1000), ...book(2000, 900)])

  it("risk-averse fills later than probabilistic on the same history", () => {
    const averse = runBacktest(data, { ...BASE, queueModel: "risk-averse" }).report
    const prob = runBacktest(data, { ...BASE, queueModel: "prob", queuePower: 3 }).report
    expect(firstFillMs(prob.fills)).toBe(3000)
    expect(firstFillMs(averse.fills)).toBe(4000)
    expect(prob.summary.queue_decreases_ahead).toBe(1)
    expect(averse.summary.queue_decreases_ahead).toBe(0)
    expect(averse.summary.queue_decreases_at_our_level).toBe(1)
    // Both fill the whole bid in the end, at our price.
    for (const r of [averse, prob]) {
      expect(r.summary.filled_contracts).toBe(10)
      expect(r.fills.every((f) => f.yesPriceBps === 4900 && f.side === "buy" && f.outcome === "yes")).toBe(true)
    }
  })

  it("a cancel with nobody behind us always comes from ahead, in both models", () => {
    // 900 ahead, nobody behind, 300 cancelled: both models must take them from ahead.
    const d = datasetFromRows("front", [sell(3000, 610)], [...book(0, 900), ...book(2000, 600)])
    for (const queueModel of ["risk-averse", "prob"] as const) {
      const r = runBacktest(d, { ...BASE, queueModel }).report
      expect(firstFillMs(r.fills)).toBe(3000)
      expect(r.summary.filled_contracts).toBe(10)
    }
  })
})

describe("latency", () => {
  // 10 resting at 4900 ahead of our bid; a 20-contract sell at 4900 every second.
  const trades = Array.from({ length: 10 }, (_, i) => sell((i + 1) * 1000, 20))
  const data = datasetFromRows("latency", trades, book(0, 10))

  it("fills at the first trade with no latency", () => {
    expect(firstFillMs(runBacktest(data, BASE).report.fills)).toBe(1000)
  })

  it("order-entry latency delays the first fill until the quote reaches the book", () => {
    const r = runBacktest(data, { ...BASE, entryLatency: { baseMs: 2500, jitterMs: 0 } }).report
    expect(firstFillMs(r.fills)).toBe(3000)
  })

  it("feed latency delays it too: the strategy sees the book late", () => {
    const r = runBacktest(data, { ...BASE, feedLatency: { baseMs: 2500, jitterMs: 0 } }).report
    expect(firstFillMs(r.fills)).toBe(3000)
  })

  it("jitter is seeded: same seed, same fills; each latency only ever delays", () => {
    const c: BacktestConfig = { ...BASE, entryLatency: { baseMs: 200, jitterMs: 1500 }, feedLatency: { baseMs: 100, jitterMs: 1500 } }
    const a = runBacktest(data, c).report
    expect(runBacktest(data, c).report).toEqual(a)
    expect(firstFillMs(a.fills)!).toBeGreaterThanOrEqual(1000)
  })
})
