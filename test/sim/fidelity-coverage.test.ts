// The interval's coverage in `npm run fidelity` (sim/fidelity/coverage.ts; docs/backtesting.md
// "Intervals and coverage"), on hand-made bot-runs: a realised figure inside its run's range (both
// ends in) counts, one below or above is counted as such, runs without an interval are left out,
// and the summary, its JSON and the text line carry the counts and the stated level.
import { describe, expect, it } from "vitest"
import { type BotRun, HEADLINE, LATENCY_MODELS, type ModelResult, QUEUE_MODELS } from "../../sim/fidelity/fidelity.ts"
import { summarise } from "../../sim/fidelity/summary.ts"
import { coverageLines, coverageOf, type RunInterval, runIntervalOf } from "../../sim/fidelity/coverage.ts"

const range = (pnl: [number, number], fills: [number, number], level = 0.9): RunInterval => ({ pnl_usdc: pnl, fills, level, draws: 0, resamples: 1000, block_sec: 600 })

/** A bot-run with realised [fills, trading PnL µUSDC at the live marks, at the counterfactual's] and its headline interval. */
const run = (seed: number, fills: number, pnlMicro: number, pnlCfMicro: number, interval: RunInterval | null): BotRun => {
  const side = { fills, filledContracts: 10 * fills, rewardsMicro: 1, rebatesMicro: 0, tradingPnlMicro: pnlMicro }
  return {
    seed, agent: "lp_bot-0-0", tape: "x", tapeTrades: 1, tapeSnapshots: 1, rewardDays: [1], rewardDaysOneSide: { realisedOnly: [], backtestOnly: [] },
    marks: { live: {}, counterfactual: {}, replay: null }, replay: null, replayRealisedTradingPnlMicro: null,
    realised: side, realisedTradingPnlAtCounterfactualMarksMicro: pnlCfMicro,
    backtests: QUEUE_MODELS.flatMap((queue) => LATENCY_MODELS.map((l): ModelResult => ({ queue, latency: l.name, ...side, fillsFromBookMoves: 0, queueDecreasesAtOurLevel: 0 }))),
    interval
  }
}

describe("interval coverage over bot-runs", () => {
  it("counts realised figures inside their run's range, ends included, and those below and above", () => {
    const c = coverageOf([
      { realised: run(1, 50, -5_000_000, 0, null).realised, realisedTradingPnlAtCounterfactualMarksMicro: 0, interval: range([-5, 3], [40, 60]) }, // both on the low end: inside
      { realised: run(2, 61, 3_000_000, 0, null).realised, realisedTradingPnlAtCounterfactualMarksMicro: 0, interval: range([-5, 3], [40, 60]) }, // PnL on the high end; fills above
      { realised: run(3, 39, -5_000_001, 9_000_000, null).realised, realisedTradingPnlAtCounterfactualMarksMicro: 9_000_000, interval: range([-5, 3], [40, 60]) }, // 1 µUSDC below; fills below; cf above
      { realised: run(4, 50, 3_000_001, 2_000_000, null).realised, realisedTradingPnlAtCounterfactualMarksMicro: 2_000_000, interval: range([-5, 3], [40, 60]) }, // 1 µUSDC above
      { realised: run(5, 50, 0, 0, null).realised, realisedTradingPnlAtCounterfactualMarksMicro: 0, interval: null } // no interval: not counted
    ])
    expect(c.level).toBe(0.9)
    expect(c.trading_pnl).toEqual({ share: 0.5, inside: 2, below: 1, above: 1, runs: 4 })
    expect(c.fills).toEqual({ share: 0.5, inside: 2, below: 1, above: 1, runs: 4 })
    expect(c.trading_pnl_at_counterfactual_marks).toEqual({ share: 0.75, inside: 3, below: 0, above: 1, runs: 4 })
    expect(c.runs_without_interval).toBe(1)
    // Ends in USDC are whole micro-USDC: a range from a report's micro ends compares exactly.
    const fromReport = runIntervalOf({
      level: 0.9, trading_pnl_micro: [-1_234_567, 2_000_001], fills: [3, 9], point: { trading_pnl_micro: 0, fills: 5 }, draws: 2, resamples: 300,
      block_sec: 900, sample_sec: 60, increments: 100, blocks: 7, method: "m"
    })
    expect(fromReport).toEqual({ pnl_usdc: [-1.234567, 2.000001], fills: [3, 9], level: 0.9, draws: 2, resamples: 300, block_sec: 900 })
    const edge = coverageOf([-1_234_567, -1_234_568, 2_000_001, 2_000_002].map((p) => ({ realised: run(1, 5, p, p, null).realised, realisedTradingPnlAtCounterfactualMarksMicro: p, interval: fromReport })))
    expect(edge.trading_pnl).toEqual({ share: 0.5, inside: 2, below: 1, above: 1, runs: 4 })
  })

  it("no interval anywhere: no level, no share", () => {
    const c = coverageOf([{ realised: run(1, 5, 0, 0, null).realised, realisedTradingPnlAtCounterfactualMarksMicro: 0, interval: null }])
    expect(c.level).toBeNull()
    expect(c.trading_pnl).toEqual({ share: null, inside: 0, below: 0, above: 0, runs: 0 })
    expect(coverageLines(c, [{ interval: null }])).toEqual(["  interval coverage: no run has an interval"])
  })

  it("is in the fidelity summary (its JSON) beside each run's interval, and in the text line", () => {
    const runs = [
      run(1, 50, -4_000_000, -4_000_000, range([-5, 3], [40, 60])),
      run(2, 70, -9_000_000, 1_000_000, range([-5, 3], [40, 60])),
      run(3, 45, 1_000_000, 1_000_000, range([-2, 4], [30, 44]))
    ]
    const s = summarise("x", [1, 2, 3], 0, runs)
    const json = JSON.parse(JSON.stringify(s))
    expect(json.coverage).toEqual({
      level: 0.9,
      trading_pnl: { share: 2 / 3, inside: 2, below: 1, above: 0, runs: 3 },
      fills: { share: 1 / 3, inside: 1, below: 0, above: 2, runs: 3 },
      trading_pnl_at_counterfactual_marks: { share: 1, inside: 3, below: 0, above: 0, runs: 3 },
      runs_without_interval: 0
    })
    expect(json.runs[1].interval).toEqual({ pnl_usdc: [-5, 3], fills: [40, 60], level: 0.9, draws: 0, resamples: 1000, block_sec: 600 })
    expect(s.runs.every((r) => r.backtests.some((b) => b.queue === HEADLINE.queue && b.latency === HEADLINE.latency))).toBe(true)
    expect(coverageLines(s.coverage, s.runs)).toEqual([
      "  interval coverage (90% intervals: block bootstrap of 10-min blocks, 1000 resamples, no response-model draws): realised trading PnL inside 2/3 (67%; 1 below, 0 above), fills inside 1/3 (33%; 0 below, 2 above); PnL at the counterfactual's marks 3/3"
    ])
  })
})
