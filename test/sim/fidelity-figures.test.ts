// The fidelity benchmark's per-run figures (sim/fidelity/figures.ts, docs/backtesting.md
// "Per-run figures"): share of bot-runs in 0.8–1.25, pooled ratios, PnL error quantiles and sign
// agreement, on hand-made rows whose expected values are worked out by hand in the comments.
import { describe, expect, it } from "vitest"
import { type BotRun, HEADLINE, LATENCY_MODELS, type ModelResult, QUEUE_MODELS, type Side } from "../../sim/fidelity/fidelity.ts"
import { summarise } from "../../sim/fidelity/summary.ts"
import { perRunFigures, quantile } from "../../sim/fidelity/figures.ts"

const side = (fills: number, filledContracts: number, rewardsMicro: number, tradingPnlMicro: number, rebatesMicro = 0): Side => ({ fills, filledContracts, rewardsMicro, rebatesMicro, tradingPnlMicro })

// realised | backtest: fills ratio, contracts ratio, PnL error, PnL signs; the realised PnL at the
// counterfactual's marks (cf) gives errors +1, −1, −1, +2, +3 and signs agree, agree, disagree (0/+), disagree (+/0), agree.
const ROWS = [
  { realised: side(10, 100, 5_000_000, -5_000_000, 1_000_000), backtest: side(8, 125, 5_000_000, -1_000_000, 3_000_000), realisedTradingPnlAtCounterfactualMarksMicro: -2_000_000 }, // 0.8 in (end), 1.25 in (end), +4, −/− agree
  { realised: side(20, 200, 0, 3_000_000), backtest: side(26, 159, 0, -2_000_000), realisedTradingPnlAtCounterfactualMarksMicro: -1_000_000 }, // 1.3 out, 0.795 out, −5, +/− disagree
  { realised: side(0, 0, 1_000_000, 0), backtest: side(0, 0, 1_000_000, 0), realisedTradingPnlAtCounterfactualMarksMicro: 1_000_000 }, // 0/0 and 0/0: not rated, 0, both 0: not rated
  { realised: side(0, 0, 0, 0), backtest: side(3, 30, 0, 2_000_000), realisedTradingPnlAtCounterfactualMarksMicro: 0 }, // 3/0 out, 30/0 out, +2, 0/+ disagree
  { realised: side(5, 50, 4_000_000, -10_000_000, 1_000_000), backtest: side(5, 63, 4_000_000, -2_000_000), realisedTradingPnlAtCounterfactualMarksMicro: -5_000_000 } // 1 in, 1.26 out, +8, −/− agree
]

describe("per-run fidelity figures", () => {
  it("counts runs in 0.8–1.25 (ends in, 0/0 left out, x/0 out), pools sums, takes error quantiles and sign agreement", () => {
    const f = perRunFigures(ROWS)
    expect(f.per_run_in_band).toEqual({
      band: [0.8, 1.25],
      fills: 0.5, // rows 1 and 5 of 4 rated
      filled_contracts: 0.25, // row 1 of 4 rated
      counts: { fills: { in_band: 2, rated: 4, excluded_zero_zero: 1 }, filled_contracts: { in_band: 1, rated: 4, excluded_zero_zero: 1 } }
    })
    // Σ fills 42 / 35, contracts 377 / 350, rewards 10 / 10 USDC, rebates 3 / 2 USDC, trading PnL −3 / −12 USDC (−7 at the cf marks).
    expect(f.pooled_ratio).toEqual({ fills: 1.2, filled_contracts: 377 / 350, rewards: 1, rebates: 1.5, trading_pnl: 0.25, trading_pnl_at_counterfactual_marks: 3 / 7 })
    expect(f.pooled_sums).toEqual({
      realised: { fills: 35, filled_contracts: 350, rewards_usdc: 10, rebates_usdc: 2, trading_pnl_usdc: -12 },
      backtest: { fills: 42, filled_contracts: 377, rewards_usdc: 10, rebates_usdc: 3, trading_pnl_usdc: -3 },
      trading_pnl_diff_usdc: 9,
      realised_trading_pnl_at_counterfactual_marks_usdc: -7,
      trading_pnl_diff_usdc_at_counterfactual_marks: 4
    })
    // Errors sorted −5, 0, 2, 4, 8: q10 at h = 0.4 → −5 + 0.4·5 = −3; q50 at h = 2 → 2; q90 at h = 3.6 → 4 + 0.6·4 = 6.4.
    const e = f.pnl_error_usdc
    expect(e.q10).toBeCloseTo(-3, 12)
    expect(e.q50).toBe(2)
    expect(e.q90).toBeCloseTo(6.4, 12)
    expect([e.min, e.max, e.runs]).toEqual([-5, 8, 5])
    expect(e.within_10_usdc).toEqual({ runs: 5, share: 1 })
    // Backtest −1, −2, 0, 2, −2 against realised −5, 3, 0, 0, −10 USDC: means −0.6 and −2.4, Σxy 11.8, Σxx 11.2, Σyy 105.2 → r = 11.8 ÷ √(11.2 · 105.2).
    expect(f.pnl_correlation).toBeCloseTo(11.8 / Math.sqrt(11.2 * 105.2), 12)
    expect(f.sign_agreement).toEqual({ share: 0.5, agree: 2, rated: 4, excluded_both_zero: 1 })
    // At the counterfactual's marks: errors sorted −1, −1, 1, 2, 3: q10 at h = 0.4 → −1; q50 → 1; q90 at h = 3.6 → 2 + 0.6 = 2.6.
    const c = f.pnl_error_usdc_at_counterfactual_marks
    expect([c.q10, c.q50, c.min, c.max, c.runs]).toEqual([-1, 1, -1, 3, 5])
    expect(c.q90).toBeCloseTo(2.6, 12)
    // Rows 3 and 4 have one side 0 and the other not: rated, disagree; no row has both at 0.
    expect(f.sign_agreement_at_counterfactual_marks).toEqual({ share: 0.6, agree: 3, rated: 5, excluded_both_zero: 0 })
  })

  it("counts runs with |PnL error| ≤ 10 USDC, the end in, to the micro-USDC", () => {
    const pnl = (realised: number, backtest: number) => ({ realised: side(1, 1, 0, realised), backtest: side(1, 1, 0, backtest), realisedTradingPnlAtCounterfactualMarksMicro: realised })
    const f = perRunFigures([pnl(-5_000_000, 5_000_000), pnl(0, -10_000_000), pnl(0, 10_000_001), pnl(-30_000_000, 0)])
    expect(f.pnl_error_usdc.within_10_usdc).toEqual({ runs: 2, share: 0.5 })
    // One run, or a side that never varies, has no correlation.
    expect(perRunFigures([pnl(1, 2)]).pnl_correlation).toBeNull()
    expect(perRunFigures([pnl(1, 2), pnl(3, 2)]).pnl_correlation).toBeNull()
    expect(perRunFigures([pnl(1, 2), pnl(3, 5)]).pnl_correlation).toBeCloseTo(1, 12)
  })

  it("gives no ratio when the realised sum is 0, and nulls with no runs", () => {
    const only = perRunFigures([ROWS[3]!]) // realised all 0, backtest 3 fills, +2 USDC
    expect(only.pooled_ratio).toEqual({ fills: null, filled_contracts: null, rewards: null, rebates: null, trading_pnl: null, trading_pnl_at_counterfactual_marks: null })
    expect(only.pooled_sums.trading_pnl_diff_usdc).toBe(2)
    expect(only.per_run_in_band.fills).toBe(0) // rated, out of band
    expect(only.sign_agreement).toEqual({ share: 0, agree: 0, rated: 1, excluded_both_zero: 0 })
    const idle = perRunFigures([ROWS[2]!]) // nothing on either side
    expect(idle.per_run_in_band.fills).toBeNull()
    expect(idle.sign_agreement.share).toBeNull()
    expect(idle.pnl_error_usdc).toEqual({ q10: 0, q50: 0, q90: 0, min: 0, max: 0, runs: 1, within_10_usdc: { runs: 1, share: 1 } })
    const none = perRunFigures([])
    expect(none.pnl_error_usdc).toEqual({ q10: null, q50: null, q90: null, min: null, max: null, runs: 0, within_10_usdc: { runs: 0, share: null } })
    expect(none.per_run_in_band.filled_contracts).toBeNull()
    expect(none.pooled_ratio.trading_pnl).toBeNull()
  })

  it("interpolates quantiles between order statistics (type 7: q50 is the median)", () => {
    expect([0.1, 0.5, 0.9].map((q) => quantile([1, 2, 3, 4], q))).toEqual([1.3, 2.5, 3.7].map((x) => expect.closeTo(x, 12)))
    expect(quantile([7], 0.1)).toBe(7)
    expect(quantile([], 0.5)).toBeNull()
  })

  it("the summary carries them for the headline model only, beside the medians", () => {
    const run = (seed: number, row: (typeof ROWS)[number]): BotRun => ({
      seed, agent: "lp_bot-0-0", tape: "x", tapeTrades: 1, tapeSnapshots: 1, rewardDays: [1], replay: null, replayRealisedTradingPnlMicro: null,
      rewardDaysOneSide: { realisedOnly: [], backtestOnly: [] }, marks: { live: {}, counterfactual: {}, replay: null },
      realised: row.realised, realisedTradingPnlAtCounterfactualMarksMicro: row.realisedTradingPnlAtCounterfactualMarksMicro,
      // Every other model doubles the backtest, so a figure taken from one of them would differ.
      backtests: QUEUE_MODELS.flatMap((queue) =>
        LATENCY_MODELS.map((l): ModelResult => {
          const k = queue === HEADLINE.queue && l.name === HEADLINE.latency ? 1 : 2
          const b = row.backtest
          return { queue, latency: l.name, fills: b.fills * k, filledContracts: b.filledContracts * k, rewardsMicro: b.rewardsMicro * k, rebatesMicro: b.rebatesMicro * k, tradingPnlMicro: b.tradingPnlMicro * k, fillsFromBookMoves: 0, queueDecreasesAtOurLevel: 0 }
        })
      )
    })
    const s = summarise("x", [1, 2, 3, 4, 5], 0, ROWS.map((row, i) => run(i + 1, row)))
    expect(s.per_run_in_band.counts.fills).toEqual({ in_band: 2, rated: 4, excluded_zero_zero: 1 })
    expect(s.pooled_ratio.trading_pnl).toBe(0.25)
    expect(s.pnl_error_usdc.q50).toBe(2)
    expect(s.sign_agreement.agree).toBe(2)
    expect(s.median_pnl_diff_usdc).toBe(2) // the existing median, unchanged, and equal to q50
    expect(s.pnl_error_usdc_at_counterfactual_marks.q50).toBe(1)
    expect(s.median_pnl_diff_usdc_at_counterfactual_marks).toBe(1)
    expect(s.pooled_ratio.rebates).toBe(1.5)
  })
})
