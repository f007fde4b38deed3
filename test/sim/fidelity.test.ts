// The fidelity benchmark's arithmetic (sim/fidelity/fidelity.ts): medians over bot-runs of
// backtest ÷ realised and backtest − realised trading PnL, for the headline model and every
// other, in the JSON shape `npm run fidelity -- --json` prints. The runs themselves are
// `npm run fidelity` (docs/backtesting.md "Fidelity").
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type BotRun, HEADLINE, LATENCY_MODELS, type ModelResult, QUEUE_MODELS } from "../../sim/fidelity/fidelity.ts"
import { summarise } from "../../sim/fidelity/summary.ts"

// [fills, contracts, rewards, trading PnL at the live marks, rebates (default 0)]; the realised PnL at the counterfactual's marks is 3 USDC above the live one.
type Figures = [number, number, number, number, number?]
const run = (seed: number, realised: Figures, backtest: Figures, oneSide = false): BotRun => ({
  seed, agent: "lp_bot-0-0", tape: "x", tapeTrades: 1, tapeSnapshots: 1, rewardDays: oneSide ? [] : [1],
  rewardDaysOneSide: { realisedOnly: oneSide ? [1] : [], backtestOnly: [] },
  marks: { live: {}, counterfactual: {}, replay: null },
  replay: { queue: "flow", latency: "tick", fills: realised[0], filledContracts: realised[1] * 0.5, rewardsMicro: realised[2], rebatesMicro: realised[4] ?? 0, tradingPnlMicro: realised[3] + 1_000_000, fillsFromBookMoves: 0, queueDecreasesAtOurLevel: 0 },
  // The replay's marks (the live tape's as the backtester reads it) value the realised holdings 1 USDC lower than the live ones.
  replayRealisedTradingPnlMicro: realised[3] - 1_000_000,
  realised: { fills: realised[0], filledContracts: realised[1], rewardsMicro: realised[2], rebatesMicro: realised[4] ?? 0, tradingPnlMicro: realised[3] },
  realisedTradingPnlAtCounterfactualMarksMicro: realised[3] + 3_000_000,
  backtests: QUEUE_MODELS.flatMap((queue) =>
    LATENCY_MODELS.map((l): ModelResult => {
      const k = queue === HEADLINE.queue && l.name === HEADLINE.latency ? 1 : 2
      return { queue, latency: l.name, fills: backtest[0] * k, filledContracts: backtest[1] * k, rewardsMicro: backtest[2] * k, rebatesMicro: (backtest[4] ?? 0) * k, tradingPnlMicro: backtest[3] * k, fillsFromBookMoves: 0, queueDecreasesAtOurLevel: 0 }
    })
  )
})

describe("fidelity summary", () => {
  it("takes medians of the ratios and PnL differences per bot-run, quoting the headline model", () => {
    const s = summarise("x", [1, 2, 3], 0, [
      run(1, [10, 100, 50_000_000, -5_000_000], [8, 90, 60_000_000, -1_000_000]),
      run(2, [20, 200, 40_000_000, 0], [30, 300, 40_000_000, 12_000_000]),
      run(3, [10, 100, 10_000_000, 1_000_000], [10, 120, 0, -2_000_000])
    ])
    expect(s.median_ratio).toEqual({ fills: 1, filled_contracts: 1.2, rewards: 1, rebates: null }) // no rebates anywhere: 0/0 in every run
    expect(s.median_excluded_zero_zero).toEqual({ fills: 0, filled_contracts: 0, rewards: 0, rebates: 3 })
    expect(s.median_pnl_diff_usdc).toBe(4) // diffs 4, 12, −3 USDC at the live marks
    expect(s.median_pnl_diff_usdc_at_counterfactual_marks).toBe(1) // each 3 USDC lower: 1, 9, −6
    expect(s.by_model).toHaveLength(QUEUE_MODELS.length * LATENCY_MODELS.length)
    expect(s.by_model.find((m) => m.queue === "prob" && m.latency === "zero")).toMatchObject({ fills: 2, filled_contracts: 2.4, rewards: 2 })
    // The replay of the live tape: its own medians against the same realised side, whose PnL is
    // marked at the replay's own final marks (1 USDC lower here), so the difference is 2 USDC.
    expect(s.replay).toEqual({
      fills: 1, filled_contracts: 0.5, rewards: 1, rebates: null, pnl_diff_usdc: 2, pnl_diff_usdc_at_counterfactual_marks: 2,
      excluded_zero_zero: { fills: 0, filled_contracts: 0, rewards: 0, rebates: 3 }
    })
    expect(s.reward_days_one_side).toEqual({ runs: 0, realised_only: 0, backtest_only: 0 })
    expect(s.runs).toHaveLength(3)
    expect(s.target).toEqual({ ratio: [0.8, 1.25], pnl_diff_usdc: 10 })
  })

  it("leaves 0/0 runs out of the median ratios (counting them) instead of counting them as 1, keeps x/0 as +∞, and takes rebates' medians", () => {
    const s = summarise("x", [1, 2, 3, 4, 5], 0, [
      run(1, [10, 100, 0, 0, 10], [5, 50, 0, 0, 5]), // ratio 0.5, rewards 0/0
      run(2, [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]), // idle on both sides: 0/0 everywhere
      run(3, [10, 100, 10, 0, 20], [12, 120, 10, 0, 24]), // 1.2
      run(4, [0, 0, 10, 0, 0], [3, 30, 10, 0, 6], true), // x/0: +∞; a one-sided reward day
      run(5, [10, 100, 10, 0, 10], [15, 150, 10, 0, 15]) // 1.5
    ])
    // Counting 0/0 as 1 and dropping x/0 (as before) gave 0.5, 1, 1.2, 1.5 → 1.1; now 0.5, 1.2, 1.5, ∞ → 1.35.
    for (const k of ["fills", "filled_contracts", "rebates"] as const) expect(s.median_ratio[k]).toBeCloseTo(1.35, 12)
    expect(s.median_ratio.rewards).toBe(1)
    expect(s.median_excluded_zero_zero).toEqual({ fills: 1, filled_contracts: 1, rewards: 2, rebates: 1 })
    expect(s.by_model.find((m) => m.queue === HEADLINE.queue && m.latency === HEADLINE.latency)!.excluded_zero_zero).toEqual(s.median_excluded_zero_zero)
    expect(s.reward_days_one_side).toEqual({ runs: 1, realised_only: 1, backtest_only: 0 })
  })

  it("npm run fidelity refuses bad arguments with exit code 2", () => {
    const r = spawnSync(process.execPath, ["scripts/run-ts.mjs", "sim/fidelity-cli.ts", "--seeds", "x"], { cwd: join(import.meta.dirname, "..", ".."), encoding: "utf8" })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/--seeds x: expected N\.\.M/)
  })
})
