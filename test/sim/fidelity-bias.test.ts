// Systematic or the worlds' noise (sim/fidelity/bias.ts; docs/backtesting.md "Systematic or noise"):
// means of the per-run differences with standard errors clustered by seed, and the pooled
// trading PnL ratio's interval over seeds drawn again, on hand-computed runs.
import { describe, expect, it } from "vitest"
import { biasFigures, biasLines, clusteredMean, pooledRatioInterval, type SeededPair } from "../../sim/fidelity/bias.ts"

const side = (fills: number, contracts: number, pnlUsdc: number) => ({ fills, filledContracts: contracts, rewardsMicro: 0, rebatesMicro: 0, tradingPnlMicro: pnlUsdc * 1e6 })
const run = (seed: number, b: [number, number, number], r: [number, number, number], cfUsdc = r[2]): SeededPair => ({
  seed, backtest: side(...b), realised: side(...r), realisedTradingPnlAtCounterfactualMarksMicro: cfUsdc * 1e6
})

describe("systematic or noise", () => {
  it("gives the mean with its standard error clustered by seed", () => {
    // Differences 10, 20 (seed 1) and −10, 0 (seed 2): mean 5; deviations summed per seed +20 and −20;
    // se = √(2/1 · (20² + 20²)) / 4 = 10, t = 0.5.
    expect(clusteredMean([{ seed: 1, value: 10 }, { seed: 1, value: 20 }, { seed: 2, value: -10 }, { seed: 2, value: 0 }])).toEqual({ mean: 5, se: 10, t: 0.5, runs: 4 })
    // Two runs of one world that move together count as one: the same se as one run per seed with twice the weight.
    const together = clusteredMean([{ seed: 1, value: 10 }, { seed: 1, value: 10 }, { seed: 2, value: -10 }, { seed: 2, value: -10 }])
    expect(together.mean).toBe(0)
    expect(together.se).toBeCloseTo(Math.sqrt(2 * (20 ** 2 + 20 ** 2)) / 4, 12)
    expect(together.se!).toBeGreaterThan(Math.sqrt((4 * 100) / 3 / 4)) // the naive sd/√n would claim more certainty
    // One seed: no standard error; none at all: nothing.
    expect(clusteredMean([{ seed: 3, value: 1 }, { seed: 3, value: 2 }])).toEqual({ mean: 1.5, se: null, t: null, runs: 2 })
    expect(clusteredMean([])).toEqual({ mean: null, se: null, t: null, runs: 0 })
    // Every seed alike: se 0, no t.
    expect(clusteredMean([{ seed: 1, value: 4 }, { seed: 2, value: 4 }])).toEqual({ mean: 4, se: 0, t: null, runs: 2 })
  })

  it("reads PnL at both marks and fills and contracts as log ratios, leaving out runs at 0", () => {
    const runs = [
      run(1, [50, 500, -10], [100, 1000, -30], -20), // ln 0.5
      run(1, [10, 100, 5], [10, 100, 5], 0), //         ln 1
      run(2, [5, 50, -1], [0, 0, 0], 0), //             realised 0: no ratio
      run(2, [40, 400, -2], [20, 200, -4], -3) //        ln 2
    ]
    const f = biasFigures(runs)
    expect(f.seeds).toBe(2)
    expect(f.trading_pnl_diff_usdc.mean).toBeCloseTo((20 + 0 - 1 + 2) / 4, 12)
    expect(f.trading_pnl_diff_usdc_at_counterfactual_marks.mean).toBeCloseTo((10 + 5 - 1 + 1) / 4, 12)
    for (const l of [f.log_fills_ratio, f.log_filled_contracts_ratio]) {
      expect(l.runs).toBe(3)
      expect(l.left_out).toBe(1)
      expect(l.mean).toBeCloseTo(0, 12) // (ln 0.5 + 0 + ln 2) / 3
      expect(l.ratio).toBeCloseTo(1, 12)
      // Seed 1's deviations sum to ln 0.5, seed 2's to ln 2: se = √(2 · 2 ln²2) / 3.
      expect(l.se).toBeCloseTo(Math.sqrt(2 * 2 * Math.log(2) ** 2) / 3, 12)
    }
    expect(f.bootstrap_draws).toBe(2000)
    // The text table: each mean with its standard error and t, the runs left out, the interval.
    const lines = biasLines(f, "  ")
    expect(lines[0]).toBe("  systematic or the worlds' noise (mean per run ± standard error over 2 seeds; |t| beyond about 2 is unlikely to be noise; over fewer than 10 seeds the errors are rough):")
    // PnL: differences 20, 0 | −1, 2: mean 5.25, seed deviations ±9.5, se √(2 · 2 · 9.5²) / 4 = 4.75; at the counterfactual's marks 10, 5 | −1, 1: 3.75 ± 3.75.
    expect(lines[1]).toBe("    trading PnL difference +5.25 ± 4.75 USDC (t 1.1), at the counterfactual's marks +3.75 ± 3.75 (t 1.0); fills × 1.00 (log 0.00 ± 0.46, t 0.0, 1 run(s) at 0 left out); contracts × 1.00 (log 0.00 ± 0.46, t 0.0, 1 run(s) at 0 left out)")
    expect(lines[2]).toMatch(/^ {4}pooled trading PnL ratio, 95 % over seeds drawn again \(2000 draws\): -?\d+\.\d\d … -?\d+\.\d\d$/)
  })

  it("draws whole seeds again for the pooled trading PnL ratio's 95 % interval, the same every time", () => {
    // Seed 1 pools −10 against −20 (0.5), seed 2 −30 against −20 (1.5): two seeds drawn give 0.5, 1.0 or 1.5.
    const runs = [run(1, [1, 1, -4], [1, 1, -8]), run(1, [1, 1, -6], [1, 1, -12]), run(2, [1, 1, -30], [1, 1, -20])]
    const i = pooledRatioInterval(runs)
    expect(i).toEqual([0.5, 1.5])
    expect(pooledRatioInterval(runs)).toEqual(i)
    // Every seed at one ratio: the interval is that ratio.
    expect(pooledRatioInterval([run(1, [1, 1, -10], [1, 1, -20]), run(2, [1, 1, -5], [1, 1, -10])])).toEqual([0.5, 0.5])
    // Fewer than 2 seeds, or no realised PnL to divide by: none.
    expect(pooledRatioInterval([run(1, [1, 1, -10], [1, 1, -20]), run(1, [1, 1, -5], [1, 1, -10])])).toBeNull()
    expect(pooledRatioInterval([run(1, [1, 1, -10], [1, 1, 0]), run(2, [1, 1, -5], [1, 1, 0])])).toBeNull()
    // A wider spread of seeds gives a wider interval around the pooled ratio.
    const spread = [1, 2, 3, 4, 5, 6].map((s) => run(s, [1, 1, -10 * s], [1, 1, s % 2 === 0 ? -5 : -60]))
    const w = pooledRatioInterval(spread)!
    const pooled = spread.reduce((a, r) => a + r.backtest.tradingPnlMicro, 0) / spread.reduce((a, r) => a + r.realised.tradingPnlMicro, 0)
    expect(w[0]).toBeLessThan(pooled)
    expect(w[1]).toBeGreaterThan(pooled)
  })
})
