// The fidelity benchmark's arithmetic (sim/fidelity.ts): medians over bot-runs of
// backtest ÷ realised and backtest − realised trading PnL, for the headline model and every
// other, in the JSON shape `npm run fidelity -- --json` prints. The runs themselves are
// `npm run fidelity` (docs/backtesting.md "Fidelity").
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type BotRun, HEADLINE, LATENCY_MODELS, type ModelResult, QUEUE_MODELS, summarise } from "../../sim/fidelity.ts"

const run = (seed: number, realised: [number, number, number, number], backtest: [number, number, number, number]): BotRun => ({
  seed, agent: "lp_bot-0-0", tape: "x", tapeTrades: 1, tapeSnapshots: 1, rewardDays: [1],
  replay: { queue: "flow", latency: "tick", fills: realised[0], filledContracts: realised[1] * 0.5, rewardsMicro: realised[2], tradingPnlMicro: realised[3] + 1_000_000, fillsFromBookMoves: 0, queueDecreasesAtOurLevel: 0 },
  // The replay's marks (the live market's) value the realised holdings 1 USDC lower than the headline's.
  replayRealisedTradingPnlMicro: realised[3] - 1_000_000,
  realised: { fills: realised[0], filledContracts: realised[1], rewardsMicro: realised[2], tradingPnlMicro: realised[3] },
  backtests: QUEUE_MODELS.flatMap((queue) =>
    LATENCY_MODELS.map((l): ModelResult => {
      const k = queue === HEADLINE.queue && l.name === HEADLINE.latency ? 1 : 2
      return { queue, latency: l.name, fills: backtest[0] * k, filledContracts: backtest[1] * k, rewardsMicro: backtest[2] * k, tradingPnlMicro: backtest[3] * k, fillsFromBookMoves: 0, queueDecreasesAtOurLevel: 0 }
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
    expect(s.median_ratio).toEqual({ fills: 1, filled_contracts: 1.2, rewards: 1 })
    expect(s.median_pnl_diff_usdc).toBe(4) // diffs 4, 12, −3 USDC
    expect(s.by_model).toHaveLength(QUEUE_MODELS.length * LATENCY_MODELS.length)
    expect(s.by_model.find((m) => m.queue === "prob" && m.latency === "zero")).toMatchObject({ fills: 2, filled_contracts: 2.4, rewards: 2 })
    // The replay of the live tape: its own medians against the same realised side, whose PnL is
    // marked at the replay's own final marks (1 USDC lower here), so the difference is 2 USDC.
    expect(s.replay).toEqual({ fills: 1, filled_contracts: 0.5, rewards: 1, pnl_diff_usdc: 2 })
    expect(s.runs).toHaveLength(3)
    expect(s.target).toEqual({ ratio: [0.8, 1.25], pnl_diff_usdc: 10 })
  })

  it("npm run fidelity refuses bad arguments with exit code 2", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "sim/fidelity-cli.ts", "--seeds", "x"], { cwd: join(import.meta.dirname, "..", ".."), encoding: "utf8" })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/--seeds x: expected N\.\.M/)
  })
})
