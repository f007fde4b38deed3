// The shipped sample end to end: same seed → the same report, another seed → another one;
// the report agrees with the engine it ran on (equity, fills, rebates, rewards, invariants);
// skipping strategy steps that can only hold changes nothing.
import { beforeAll, describe, expect, it } from "vitest"
import { findViolations } from "../../src/engine/index.ts"
import type { EngineEvent } from "../../src/engine/types.ts"
import { DEFAULT_DATA } from "../../sim/backtest/args.ts"
import { type BacktestConfig, DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import type { Dataset } from "../../sim/backtest/dataset.ts"
import { loadDataset } from "../../sim/backtest/load.ts"
import { runBacktest, type RunResult } from "../../sim/backtest/runner.ts"
import { syntheticDataset } from "../../sim/backtest/synthetic.ts"
import { eventLoopTurn } from "../support/turn.ts"

// The probabilistic queue and latency jitter make the seed matter. A taker fee funds the maker
// rebates (the engine pays none out of an empty fee account), and the data is declared to run
// to the end of its day, so the day ends and its rewards are paid as the service pays them.
const SAMPLE_DAY_END_SEC = 1_736_985_600 // 2025-01-16T00:00:00Z
const CONFIG: BacktestConfig = {
  ...DEFAULT_CONFIG, queueModel: "prob", takerFeeBps: 10, provenance: { ...DEFAULT_CONFIG.provenance, fees: "given" }, endSec: SAMPLE_DAY_END_SEC
}

let sample: Dataset
let first: RunResult
const events: EngineEvent[] = []

beforeAll(async () => {
  sample = await loadDataset(DEFAULT_DATA)
  first = runBacktest(sample, CONFIG, { tap: (evs) => void events.push(...evs) })
})

describe("backtest on the shipped sample", () => {
  it("loads one day of trades over four markets", () => {
    expect(sample.trades).toBe(20_000)
    expect(sample.markets).toHaveLength(4)
    expect(first.report.summary.fills).toBeGreaterThan(100)
    expect(first.report.summary.lp_rewards_micro).toBeGreaterThan(0)
    expect(first.report.summary.maker_rebates_micro).toBeGreaterThan(0)
  })

  it("gives identical results twice with the same seed, and different ones with another seed", () => {
    const again = runBacktest(sample, CONFIG).report
    expect(again).toEqual(first.report)
    const other = runBacktest(sample, { ...CONFIG, seed: "2" }).report
    expect(other.summary.pnl_micro).not.toBe(first.report.summary.pnl_micro)
    expect(other.fills).not.toEqual(first.report.fills)
  })

  it("reports equity as cash plus inventory marked at mid, and PnL split consistently", () => {
    const s = first.report.summary
    const lp = first.engine.accounts.get("lp")!
    expect(s.cash_micro).toBe(lp.availableMicro + lp.lockedMicro)
    let marked = 0
    for (const m of first.report.markets) {
      const pos = lp.positions.get(m.market_id)
      const [yes, no] = [pos?.yes ?? 0, pos?.no ?? 0]
      expect([m.yes, m.no]).toEqual([yes, no])
      if (m.mark_bps !== null) marked += yes * m.mark_bps * 100 + no * (10_000 - m.mark_bps) * 100
    }
    expect(s.inventory_value_micro).toBe(marked)
    expect(s.final_equity_micro).toBe(s.cash_micro + marked)
    expect(s.pnl_micro).toBe(s.final_equity_micro - s.capital_micro)
    expect(s.realised_pnl_micro + s.unrealised_pnl_micro).toBe(s.pnl_micro)
    expect(s.trading_pnl_micro + s.maker_rebates_micro + s.lp_rewards_micro).toBe(s.pnl_micro)
    expect(s.max_drawdown_micro).toBeGreaterThan(0)
    expect(s.fill_ratio).toBeCloseTo(s.filled_contracts / s.quoted_contracts, 5)
  })

  it("counts exactly the engine's fills of our orders, their rebates and the rewards credited", () => {
    const ours = events.filter((e) => e.type === "fill" && (e.makerUser === "lp" || e.takerUser === "lp"))
    const s = first.report.summary
    expect(ours).toHaveLength(s.fills)
    expect(first.report.fills).toHaveLength(s.fills)
    expect(ours.every((e) => e.type === "fill" && e.makerUser === "lp")).toBe(true) // quotes are post-only: always maker
    const size = ours.reduce((sum, e) => sum + (e.type === "fill" ? e.size : 0), 0)
    expect(size).toBe(s.filled_contracts)
    expect(ours.reduce((sum, e) => sum + (e.type === "fill" ? e.makerRebateMicro : 0), 0)).toBe(s.maker_rebates_micro)
    const credited = events.filter((e) => e.type === "credited" && e.user === "lp" && e.ref.startsWith("rewards:"))
    expect(credited.reduce((sum, e) => sum + (e.type === "credited" ? e.amountMicro : 0), 0)).toBe(s.lp_rewards_micro)
    expect(first.report.rewardDays.reduce((sum, d) => sum + d.lpMicro, 0)).toBe(s.lp_rewards_micro)
  })

  it("plots equity that ends at the headline final equity, rewards included (sample and generated runs)", () => {
    const ends = (r: RunResult["report"]): [number | undefined, number] => [r.series.equityMicro.at(-1), r.summary.final_equity_micro]
    const s = first.report.summary
    expect(s.lp_rewards_micro).toBeGreaterThan(0)
    expect(ends(first.report)).toEqual([s.final_equity_micro, s.final_equity_micro])
    expect(first.report.series.tSec.at(-1)).toBe(s.to_sec)
    // Generated data over day boundaries, ending on a boundary, mid-day, and with a declared end past the last trade.
    for (const [seed, endSec] of [["eq-a", null], ["eq-b", 86_400 * 2], ["eq-c", 86_400 * 2 + 1_234]] as const) {
      const d = syntheticDataset({ seed, trades: 3_000, durationSec: 2 * 86_400 - 60 })
      const r = runBacktest(d, { ...CONFIG, endSec: endSec === null ? null : Math.floor(d.tMs[0]! / 1000 / 86_400) * 86_400 + endSec }).report
      expect(r.rewardDays.length).toBeGreaterThan(0)
      const [plotted, headline] = ends(r)
      expect(plotted).toBe(headline)
      expect(r.series.pnlMicro.at(-1)).toBe(r.summary.pnl_micro)
    }
  })

  it("leaves the engine with every invariant intact", () => {
    expect(findViolations(first.engine)).toEqual([])
  })

  it("skipping steps that can only hold gives the same result as stepping on every delivery", async () => {
    const d = syntheticDataset({ seed: "steps", trades: 6_000, durationSec: 6 * 3600 })
    // The presets stop and pause; the last config quotes a one-contract touch all day, so whole ladders fill between re-quotes.
    const alwaysQuoting = { stopLossMicro: 0, takeProfitMicro: 0, skewTolerancePct: 100, maxInventory: 10_000_000_000, contractsPerLevel: 1, levelsPerSide: 1, spreadBps: 2, skewLeanBps: 0, rebalanceIntervalSec: 60 }
    let repauses = 0
    for (const c of [
      // A quarter of the default capital per ladder, so inventory limits bind and markets pause.
      { ...CONFIG, capitalMicro: 250_000_000, strategy: { kind: "preset", preset: "conservative" } },
      { ...CONFIG, capitalMicro: 250_000_000, strategy: { kind: "preset", preset: "aggressive" } },
      { ...CONFIG, overrides: alwaysQuoting }
    ] satisfies BacktestConfig[]) {
      // Six backtests of a day are a long synchronous stretch on a loaded machine: a loop turn between them (test/support/turn.ts).
      await eventLoopTurn()
      const every = runBacktest(d, c, { everyStep: true })
      await eventLoopTurn()
      expect(every.report).toEqual(runBacktest(d, c).report)
      expect(findViolations(every.engine)).toEqual([])
      repauses += every.report.markets.filter((m) => m.pauses > 1).length
    }
    // A market paused more than once has unwound and resumed in between: the paused re-quote path is covered.
    expect(repauses).toBeGreaterThan(0)
  })
})
