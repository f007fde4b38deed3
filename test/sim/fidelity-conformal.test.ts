// The calibrated intervals of `npm run fidelity -- --calibrate A..B --calibrate-intervals`
// (sim/fidelity/conformal.ts; docs/backtesting.md "Calibrated intervals"): the split-conformal
// ranks and bounds on hand-computed cases, the coverage they promise checked by simulation on
// exchangeable errors, and a judged run's range, its coverage count and its text.
import { describe, expect, it } from "vitest"
import { type BotRun, LATENCY_MODELS, type ModelResult, QUEUE_MODELS } from "../../sim/fidelity/fidelity.ts"
import {
  calibratedIntervalOf, calibratedLines, calibratedRangeText, conformalBounds, conformalRanks, countInside, type ErrorRun, intervalCalibrationOf,
  withCalibratedIntervals
} from "../../sim/fidelity/conformal.ts"
import { Rng } from "../../sim/world/random.ts"

const errorRun = (seed: number, realisedPnlMicro: number, backtestPnlMicro: number, realisedFills: number, backtestFills: number): ErrorRun => ({
  seed, agent: "lp_bot-0-0", realised: { fills: realisedFills, tradingPnlMicro: realisedPnlMicro }, backtest: { fills: backtestFills, tradingPnlMicro: backtestPnlMicro }
})

describe("split-conformal ranks and bounds", () => {
  it("takes the ⌊(n+1)α/2⌋-th and ⌈(n+1)(1−α/2)⌉-th smallest error, exactly in integers", () => {
    expect(conformalRanks(19, 0.9)).toEqual({ lo: 1, hi: 19 })
    expect(conformalRanks(18, 0.9)).toEqual({ lo: 0, hi: 19 }) // too few: both ends unbounded
    expect(conformalRanks(36, 0.9)).toEqual({ lo: 1, hi: 36 })
    expect(conformalRanks(39, 0.9)).toEqual({ lo: 2, hi: 38 }) // 40 · 0.95 is 38 (not 38.000…01 in floating point)
    expect(conformalRanks(99, 0.8)).toEqual({ lo: 10, hi: 90 })
    const errors = [5, -3, 0, 12, -8, 1, 2, 7, -1, 3, 4, -2, 6, 9, -5, 10, 8, -4, 11] // 19 values
    expect(conformalBounds(errors, 0.9)).toEqual({ lo: -8, hi: 12 })
    expect(conformalBounds(errors.slice(0, 18), 0.9)).toEqual({ lo: null, hi: null })
    expect(conformalBounds(errors, 0.5)).toEqual({ lo: -2, hi: 8 }) // ranks 5 and 15 of -8 -5 -4 -3 -2 -1 0 1 2 3 4 5 6 7 8 9 10 11 12
  })

  it("covers a new exchangeable error as often as it promises: (hi − lo) ÷ (n + 1) of the time", () => {
    const rng = new Rng("conformal-coverage")
    // A skewed, heavy-tailed error, as the backtest's are (it misses losses more than gains).
    const draw = (): number => (rng.chance(0.3) ? -rng.exponential(20) : rng.normal() * 5 + 2)
    for (const n of [19, 36, 54]) {
      const k = conformalRanks(n, 0.9)
      const trials = 20_000
      let inside = 0
      for (let t = 0; t < trials; t++) {
        const b = conformalBounds(Array.from({ length: n }, draw), 0.9)
        const x = draw()
        if (x >= b.lo! && x <= b.hi!) inside++
      }
      const promised = (k.hi - k.lo) / (n + 1) // 0.9 for n = 19, 0.946 for n = 36, 0.927 for n = 54
      expect(promised).toBeGreaterThanOrEqual(0.9)
      expect(Math.abs(inside / trials - promised), `n ${n}: ${inside}/${trials} inside, promised ${promised}`).toBeLessThan(0.01)
    }
  })
})

describe("the interval calibration and a judged run's range", () => {
  // 19 runs: PnL errors (realised − backtest) −10 … +8 USDC; fills ratios realised ÷ backtest; one run filled nothing in the backtest.
  const runs = Array.from({ length: 19 }, (_, i) => errorRun(201 + Math.floor(i / 3), -5_000_000 + (i - 10) * 1_000_000, -5_000_000, 50 + i, i === 4 ? 0 : 50))
  const c = intervalCalibrationOf(runs, 0.9, [201, 202, 203, 204, 205, 206, 207], { queue: "flow", latency: "tick" })

  it("keeps the errors, the bounds at their ranks and the fills ratios (backtests that filled nothing left out)", () => {
    expect(c.runs).toBe(19)
    expect(c.pnl_error_usdc).toMatchObject({ lo: -10, hi: 8, ranks: [1, 19] })
    expect(c.pnl_error_usdc.errors).toHaveLength(19)
    expect(c.fills_ratio.left_out).toBe(1)
    expect(c.fills_ratio.ratios).toHaveLength(18)
    expect(c.fills_ratio).toMatchObject({ lo: null, hi: null }) // 18 ratios: too few for 90 %
    expect(c.by_run[0]).toEqual({ seed: 201, agent: "lp_bot-0-0", realised_pnl_usdc: -15, backtest_pnl_usdc: -5, realised_fills: 50, backtest_fills: 50 })
  })

  it("adds the PnL bounds to a backtest's PnL to the micro-USDC and scales its fills outward to whole fills", () => {
    const withFills = { ...c, fills_ratio: { ...c.fills_ratio, lo: 0.85, hi: 1.3333 } }
    expect(calibratedIntervalOf({ fills: 30, tradingPnlMicro: 1_234_567 }, withFills)).toEqual({ pnl_usdc: [-8.765433, 9.234567], fills: [25, 40] })
    expect(calibratedIntervalOf({ fills: 0, tradingPnlMicro: 0 }, withFills).fills).toBeNull()
    expect(calibratedIntervalOf({ fills: 3, tradingPnlMicro: 0 }, c)).toEqual({ pnl_usdc: [-10, 8], fills: [null, null] })
  })

  it("counts a realised figure inside with both ends in, and an unbounded end as no end", () => {
    expect(countInside([
      { value: -10, range: [-10, 8] }, { value: 8, range: [-10, 8] }, { value: -10.000001, range: [-10, 8] }, { value: 9, range: [-10, 8] },
      { value: 1e9, range: [0, null] }, { value: -1e9, range: [null, 0] }, { value: -1, range: [0, null] }
    ])).toEqual({ share: 4 / 7, inside: 4, below: 2, above: 1, runs: 7 })
  })

  it("gives each judged run its range from its headline backtest, the coverage and the text", () => {
    const judged = (seed: number, realisedPnlMicro: number, backtestPnlMicro: number): BotRun => {
      const side = (pnl: number) => ({ fills: 40, filledContracts: 400, rewardsMicro: 1, rebatesMicro: 0, tradingPnlMicro: pnl })
      return {
        seed, agent: "lp_bot-0-1", tape: "x", tapeTrades: 1, tapeSnapshots: 1, rewardDays: [1], rewardDaysOneSide: { realisedOnly: [], backtestOnly: [] },
        marks: { live: {}, counterfactual: {}, replay: null }, replay: null, replayRealisedTradingPnlMicro: null,
        realised: side(realisedPnlMicro), realisedTradingPnlAtCounterfactualMarksMicro: realisedPnlMicro,
        backtests: QUEUE_MODELS.flatMap((queue) => LATENCY_MODELS.map((l): ModelResult => ({
          queue, latency: l.name, ...side(queue === "flow" && l.name === "tick" ? backtestPnlMicro : 999_000_000), fillsFromBookMoves: 0, queueDecreasesAtOurLevel: 0
        })))
      }
    }
    // Ranges from the headline backtest: 2 → [−8, 10]; −20 → [−30, −12]; 0 → [−10, 8].
    const s = withCalibratedIntervals({ runs: [judged(1, -8_000_000, 2_000_000), judged(2, -11_000_000, -20_000_000), judged(3, 8_000_001, 0)] }, c)
    expect(s.runs.map((r) => r.calibrated_interval!.pnl_usdc)).toEqual([[-8, 10], [-30, -12], [-10, 8]])
    expect(s.calibrated_coverage!.trading_pnl).toEqual({ share: 1 / 3, inside: 1, below: 0, above: 2, runs: 3 })
    expect(s.calibrated_coverage!.fills.runs).toBe(3)
    expect(calibratedRangeText(s.runs[1]!)).toBe("-30.00…-12.00 >")
    const lines = calibratedLines(s)
    expect(lines[0]).toContain("split conformal on the errors of 19 calibration bot-runs, seeds 201,202,203,204,205,206,207")
    expect(lines[0]).toContain("PnL = backtest + [-10.00, 8.00] USDC (ranks 1 and 19 of 19), fills = backtest × [unbounded, unbounded]")
    expect(lines[1]).toBe("  calibrated interval coverage: realised trading PnL inside 1/3 (33%; 0 below, 2 above), fills inside 3/3 (100%; 0 below, 0 above)")
    const none = withCalibratedIntervals({ runs: [judged(1, 0, 0)] }, null)
    expect(none.calibrated_coverage).toBeNull()
    expect(none.runs[0]!.calibrated_interval).toBeNull()
    expect(calibratedLines(none)).toEqual([])
  })
})
