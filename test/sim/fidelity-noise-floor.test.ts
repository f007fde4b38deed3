// The noise floor of `npm run fidelity -- --noise-floor AGENT` (sim/fidelity/noise-floor.ts;
// docs/backtesting.md "The noise floor"): the bots' realised outcomes in a second live world
// without one agent, compared with the live world's by the same per-run figures as a backtest, on
// hand-made runs; which agents may be left out.
import { describe, expect, it } from "vitest"
import { type BotRun, LATENCY_MODELS, type ModelResult, QUEUE_MODELS, type Side } from "../../sim/fidelity/fidelity.ts"
import type { Realised } from "../../sim/fidelity/realised.ts"
import { noiseFloorAgentError, noiseFloorLines, noiseFloorOf } from "../../sim/fidelity/noise-floor.ts"

const side = (fills: number, filledContracts: number, rewardsMicro: number, tradingPnlMicro: number): Side => ({ fills, filledContracts, rewardsMicro, rebatesMicro: 0, tradingPnlMicro })

const judged = (seed: number, agent: string, realised: Side): BotRun => ({
  seed, agent, tape: "x", tapeTrades: 1, tapeSnapshots: 1, rewardDays: [20_454], rewardDaysOneSide: { realisedOnly: [], backtestOnly: [] },
  marks: { live: { m: 5000 }, counterfactual: {}, replay: null }, replay: null, replayRealisedTradingPnlMicro: null,
  realised, realisedTradingPnlAtCounterfactualMarksMicro: realised.tradingPnlMicro,
  backtests: QUEUE_MODELS.flatMap((queue) => LATENCY_MODELS.map((l): ModelResult => ({ queue, latency: l.name, ...realised, fillsFromBookMoves: 0, queueDecreasesAtOurLevel: 0 })))
})

/** A bot in the second live world: cash −2 USDC and 10 YES in market m, marked at `markBps` there; rewards on two days, one of them compared. */
const other = (agent: string, fills: number, contracts: number, markBps: number): Realised => ({
  agent, user: `u-${agent}`, startSec: 0, markets: ["m"], strategy: {}, balanceMicro: 0, fills, filledContracts: contracts, rebatesMicro: 0,
  byMarket: { m: { cashMicro: -2_000_000, yes: 10, no: 0 } }, rewardsByDay: { "20454": 3_000_000, "20455": 9_000_000 }, paidDays: [20_454, 20_455],
  liveMarksBps: { m: markBps }, botsAheadInPass: 0, attribution: { fills: [], midPaths: [], endMs: 0 }
})

describe("the noise floor", () => {
  it("compares each judged run's realised side with the same bot's in the second live world, at that world's own marks and the compared reward days", () => {
    const runs = [judged(1, "lp_bot-0-0", side(10, 100, 3_000_000, 4_000_000)), judged(1, "lp_bot-0-1", side(20, 200, 3_000_000, -20_000_000)), judged(2, "lp_bot-0-0", side(5, 50, 0, 1_000_000))]
    // Second world: +4 USDC (−2 + 10 × 0.60), +1 USDC (−2 + 10 × 0.30); seed 2's bot did not start there.
    const perturbed = new Map([[1, [other("lp_bot-0-0", 12, 90, 6000), other("lp_bot-0-1", 30, 150, 3000)]], [2, []]])
    const n = noiseFloorOf(runs, perturbed, "noise-2-11")
    expect([n.without, n.runs]).toEqual(["noise-2-11", 2])
    const f = n.figures
    expect(f.pooled_sums.backtest).toEqual({ fills: 42, filled_contracts: 240, rewards_usdc: 6, rebates_usdc: 0, trading_pnl_usdc: 5 })
    expect(f.pooled_sums.realised.trading_pnl_usdc).toBe(-16)
    expect(f.per_run_in_band.counts.fills).toEqual({ in_band: 1, rated: 2, excluded_zero_zero: 0 }) // 12/10 in, 30/20 out
    expect([f.pnl_error_usdc.min, f.pnl_error_usdc.max]).toEqual([0, 21])
    expect(f.pnl_error_usdc.within_10_usdc).toEqual({ runs: 1, share: 0.5 })
    expect(f.sign_agreement).toMatchObject({ agree: 1, rated: 2 }) // +4/+4 agree, −20/+1 do not
    const lines = noiseFloorLines(n)
    expect(lines[0]).toBe("noise floor: the same bots in the live world without noise-2-11, against the live world (2 bot-runs; what no backtest can be expected to beat run by run):")
    expect(lines[1]).toBe("  ratio in 0.8–1.25: fills 1/2, contracts 1/2; pooled trading PnL -0.31 (5.00 vs -16.00 USDC)")
    expect(lines[2]).toContain("within 10 USDC 1/2; sign agrees 1/2")
    // Systematic or noise: the two compared runs are one seed's, so a mean without a standard error.
    expect(f.bias.seeds).toBe(1)
    expect(f.bias.trading_pnl_diff_usdc).toEqual({ mean: 10.5, se: null, t: null, runs: 2 })
    expect(f.bias.log_fills_ratio.ratio).toBeCloseTo(Math.sqrt((12 / 10) * (30 / 20)), 12)
    expect(f.bias.pooled_trading_pnl_ratio_95).toBeNull()
    // The worlds' final marks in m: 5000 live against 6000 and 3000 in the second world.
    expect(f.final_marks_apart_bps).toEqual({ markets: 2, q50_bps: 1500, q90_bps: 1900, max_bps: 2000 })
    expect(lines[3]).toBe("  final marks apart (each world's last mid of the others' book): median 1500 bps, 90th percentile 1900, largest 2000 (2 bot-run markets)")
    expect(lines[4]).toBe("  systematic or the worlds' noise (mean per run ± standard error over 1 seed; |t| beyond about 2 is unlikely to be noise):")
    expect(lines[5]).toMatch(/^ {4}trading PnL difference \+10\.50 USDC, at the counterfactual's marks \+10\.50; fills × 1\.34 \(log \+0\.29\); contracts × 0\.82 \(log -0\.20\)$/)
    expect(lines[6]).toBe("    pooled trading PnL ratio, 95 % over seeds drawn again (2000 draws): - (fewer than 2 seeds)")
    expect(noiseFloorLines(null)).toEqual([])
  })

  it("leaves out any agent but an LP bot, and names the agents when the name is wrong", () => {
    const agents = ["lp_bot-0-0", "lp_strategy-1-0", "noise-2-0", "noise-2-1", "informed-3-0"]
    expect(noiseFloorAgentError(agents, "noise-2-1")).toBeNull()
    expect(noiseFloorAgentError(agents, "lp_bot-0-0")).toBe("--noise-floor lp_bot-0-0: an LP bot is a judged run; leave out another agent (a noise trader: a small change to the flow)")
    expect(noiseFloorAgentError(agents, "noise-9")).toBe("--noise-floor noise-9: no such agent (agents are named <kind>-<group>-<index>: lp_strategy-1-0, noise-2-0, noise-2-1, …)")
  })
})
