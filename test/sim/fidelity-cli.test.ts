// `npm run fidelity -- --json` end to end on the smallest real run (one seed, a short world):
// the per-run figures are in its output and agree with its own per-run rows, recomputed here
// from the rows by the definitions in docs/backtesting.md "Per-run figures"; the text table
// (fidelity.txt) shows them.
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { marksApart, marksApartText } from "../../sim/fidelity/marks.ts"

const ROOT = join(import.meta.dirname, "..", "..")

interface SideJson { fills: number; filledContracts: number; rewardsMicro: number; rebatesMicro: number; tradingPnlMicro: number }
interface RunJson {
  realised: SideJson; realisedTradingPnlAtCounterfactualMarksMicro: number; backtests: Array<SideJson & { queue: string; latency: string }>
  rewardDays: number[]; rewardDaysOneSide: { realisedOnly: number[]; backtestOnly: number[] }
  interval: { pnl_usdc: [number, number]; fills: [number, number]; level: number; draws: number; resamples: number; block_sec: number }
  attribution?: Record<"realised" | "backtest", { fills: number; edge_micro: number; inventory_micro: number }>
  marks: { live: Record<string, number | null>; counterfactual: Record<string, number | null> }
}

/** The median as the output carries it: 0/0 (NaN) left out, x/0 kept as +∞, which JSON writes as null. */
const medianJson = (xs: number[]): number | null => {
  const v = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b)
  if (v.length === 0) return null
  const m = v.length % 2 === 1 ? v[v.length >> 1]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2
  return Number.isFinite(m) ? m : null
}
const ratio = (b: number, r: number): number => (r === 0 ? (b === 0 ? Number.NaN : Number.POSITIVE_INFINITY) : b / r)

describe("npm run fidelity -- --json", () => {
  it("prints the per-run figures, consistent with its own per-run rows, and the text table shows them", async () => {
    const out = mkdtempSync(join(tmpdir(), "fidelity-cli-"))
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/fidelity-cli.ts", "--seeds", "1", "--duration", "30m", "--workers", "2", "--out", out, "--json"],
        { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }
      )
      const s = JSON.parse(stdout)
      const runs = s.runs as RunJson[]
      expect(runs).toHaveLength(3)
      const pairs = runs.map((r) => ({ r: r.realised, b: r.backtests.find((m) => m.queue === s.headline.queue && m.latency === s.headline.latency)!, cf: r.realisedTradingPnlAtCounterfactualMarksMicro }))
      expect(pairs.some((p) => p.r.fills > 0)).toBe(true) // a run that traded, so the figures are not all trivial

      const inBand = (b: number, r: number): boolean => r > 0 && b / r >= 0.8 - 1e-12 && b / r <= 1.25 + 1e-12
      for (const [key, k] of [["fills", "fills"], ["filled_contracts", "filledContracts"]] as const) {
        const rated = pairs.filter((p) => p.r[k] !== 0 || p.b[k] !== 0)
        const n = rated.filter((p) => inBand(p.b[k], p.r[k])).length
        expect(s.per_run_in_band.counts[key]).toEqual({ in_band: n, rated: rated.length, excluded_zero_zero: pairs.length - rated.length })
        expect(s.per_run_in_band[key]).toBe(rated.length === 0 ? null : n / rated.length)
      }
      const sum = (side: "r" | "b", k: keyof SideJson): number => pairs.reduce((a, p) => a + p[side][k], 0)
      for (const [key, k] of [["fills", "fills"], ["filled_contracts", "filledContracts"], ["rewards", "rewardsMicro"], ["rebates", "rebatesMicro"], ["trading_pnl", "tradingPnlMicro"]] as const)
        expect(s.pooled_ratio[key]).toBe(sum("r", k) === 0 ? null : sum("b", k) / sum("r", k))
      expect(s.pooled_sums.trading_pnl_diff_usdc).toBeCloseTo((sum("b", "tradingPnlMicro") - sum("r", "tradingPnlMicro")) / 1e6, 9)
      const cfSum = pairs.reduce((a, p) => a + p.cf, 0)
      expect(s.pooled_ratio.trading_pnl_at_counterfactual_marks).toBe(cfSum === 0 ? null : sum("b", "tradingPnlMicro") / cfSum)
      expect(s.pooled_sums.realised_trading_pnl_at_counterfactual_marks_usdc).toBeCloseTo(cfSum / 1e6, 9)
      expect(s.pooled_sums.trading_pnl_diff_usdc_at_counterfactual_marks).toBeCloseTo((sum("b", "tradingPnlMicro") - cfSum) / 1e6, 9)
      expect(s.pooled_sums.realised.rebates_usdc).toBeCloseTo(sum("r", "rebatesMicro") / 1e6, 9)
      expect(s.pooled_sums.backtest.rebates_usdc).toBeCloseTo(sum("b", "rebatesMicro") / 1e6, 9)

      // The medians: 0/0 runs left out of each ratio and counted; PnL at the live market's marks and at the counterfactual's.
      for (const [key, k] of [["fills", "fills"], ["filled_contracts", "filledContracts"], ["rewards", "rewardsMicro"], ["rebates", "rebatesMicro"]] as const) {
        const xs = pairs.map((p) => ratio(p.b[k], p.r[k]))
        expect(s.median_ratio[key]).toBe(medianJson(xs))
        expect(s.median_excluded_zero_zero[key]).toBe(xs.filter((x) => Number.isNaN(x)).length)
      }
      expect(s.median_pnl_diff_usdc).toBe(medianJson(pairs.map((p) => (p.b.tradingPnlMicro - p.r.tradingPnlMicro) / 1e6)))
      expect(s.median_pnl_diff_usdc_at_counterfactual_marks).toBe(medianJson(pairs.map((p) => (p.b.tradingPnlMicro - p.cf) / 1e6)))
      const cfErr = pairs.map((p) => (p.b.tradingPnlMicro - p.cf) / 1e6).sort((a, b) => a - b)
      expect([s.pnl_error_usdc_at_counterfactual_marks.q50, s.pnl_error_usdc_at_counterfactual_marks.min, s.pnl_error_usdc_at_counterfactual_marks.max]).toEqual([cfErr[1], cfErr[0], cfErr[2]])
      const cfSigned = pairs.filter((p) => p.cf !== 0 || p.b.tradingPnlMicro !== 0)
      const cfAgree = cfSigned.filter((p) => Math.sign(p.cf) === Math.sign(p.b.tradingPnlMicro)).length
      expect(s.sign_agreement_at_counterfactual_marks).toMatchObject({ agree: cfAgree, rated: cfSigned.length })
      // Reward days: the compared ones and the one-sided ones never overlap; the summary counts the one-sided ones.
      for (const r of runs) for (const d of [...r.rewardDaysOneSide.realisedOnly, ...r.rewardDaysOneSide.backtestOnly]) expect(r.rewardDays).not.toContain(d)
      expect(s.reward_days_one_side).toEqual({
        runs: runs.filter((r) => r.rewardDaysOneSide.realisedOnly.length + r.rewardDaysOneSide.backtestOnly.length > 0).length,
        realised_only: runs.reduce((a, r) => a + r.rewardDaysOneSide.realisedOnly.length, 0),
        backtest_only: runs.reduce((a, r) => a + r.rewardDaysOneSide.backtestOnly.length, 0)
      })

      // Three runs: q50 is the middle error, q10 and q90 interpolate 20% of the way from the ends.
      const err = pairs.map((p) => (p.b.tradingPnlMicro - p.r.tradingPnlMicro) / 1e6).sort((a, b) => a - b)
      expect(s.pnl_error_usdc.q50).toBe(err[1])
      expect(s.pnl_error_usdc.q50).toBe(s.median_pnl_diff_usdc)
      expect(s.pnl_error_usdc_at_counterfactual_marks.q50).toBe(s.median_pnl_diff_usdc_at_counterfactual_marks)
      expect(s.pnl_error_usdc.q10).toBeCloseTo(err[0]! + 0.2 * (err[1]! - err[0]!), 9)
      expect(s.pnl_error_usdc.q90).toBeCloseTo(err[1]! + 0.8 * (err[2]! - err[1]!), 9)
      expect([s.pnl_error_usdc.min, s.pnl_error_usdc.max, s.pnl_error_usdc.runs]).toEqual([err[0], err[2], 3])
      expect(s.pnl_error_usdc.within_10_usdc.runs).toBe(pairs.filter((p) => Math.abs(p.b.tradingPnlMicro - p.r.tradingPnlMicro) <= 10_000_000).length)
      // Pearson's r of the backtest's and the realised PnL, recomputed from the runs (null if either side is flat).
      const xs = pairs.map((p) => p.b.tradingPnlMicro / 1e6)
      const ys = pairs.map((p) => p.r.tradingPnlMicro / 1e6)
      const mean = (v: number[]) => v.reduce((a, x) => a + x, 0) / v.length
      const dev = (v: number[]) => v.map((x) => x - mean(v))
      const [dx, dy] = [dev(xs), dev(ys)]
      const sxx = dx.reduce((a, x) => a + x * x, 0)
      const syy = dy.reduce((a, y) => a + y * y, 0)
      if (sxx === 0 || syy === 0) expect(s.pnl_correlation).toBeNull()
      else expect(s.pnl_correlation).toBeCloseTo(dx.reduce((a, x, i) => a + x * dy[i]!, 0) / Math.sqrt(sxx * syy), 9)

      // Systematic or noise (sim/fidelity/bias.ts): one seed is one cluster, so each mean is given without a standard error, and no interval.
      expect(s.bias.seeds).toBe(1)
      expect(s.bias.trading_pnl_diff_usdc).toEqual({ mean: expect.any(Number), se: null, t: null, runs: 3 })
      expect(s.bias.trading_pnl_diff_usdc.mean).toBeCloseTo(mean(err), 9)
      expect(s.bias.trading_pnl_diff_usdc_at_counterfactual_marks.mean).toBeCloseTo(mean(cfErr), 9)
      const logged = pairs.filter((p) => p.b.filledContracts > 0 && p.r.filledContracts > 0)
      expect(s.bias.log_filled_contracts_ratio.left_out).toBe(3 - logged.length)
      if (logged.length > 0) expect(s.bias.log_filled_contracts_ratio.ratio).toBeCloseTo(Math.exp(mean(logged.map((p) => Math.log(p.b.filledContracts / p.r.filledContracts)))), 9)
      expect(s.bias.pooled_trading_pnl_ratio_95).toBeNull()

      // The final marks' distance, recomputed from each run's marks (sim/fidelity/marks.ts), and its line.
      expect(s.final_marks_apart_bps).toEqual(marksApart(runs.map((r) => ({ a: r.marks.live, b: r.marks.counterfactual }))))
      expect(s.final_marks_apart_bps.markets).toBeGreaterThan(0)

      const signed = pairs.filter((p) => p.r.tradingPnlMicro !== 0 || p.b.tradingPnlMicro !== 0)
      const agree = signed.filter((p) => Math.sign(p.r.tradingPnlMicro) === Math.sign(p.b.tradingPnlMicro)).length
      expect(s.sign_agreement).toEqual({ share: signed.length === 0 ? null : agree / signed.length, agree, rated: signed.length, excluded_both_zero: 3 - signed.length })

      // The PnL split of each run adds up to its trading PnL on both sides, and the pooled split is the runs' sum.
      for (const [side, pnl] of [["realised", (r: RunJson) => r.realised.tradingPnlMicro], ["backtest", (r: RunJson) => r.backtests.find((m) => m.queue === s.headline.queue && m.latency === s.headline.latency)!.tradingPnlMicro]] as const) {
        for (const r of runs) expect(r.attribution![side].edge_micro + r.attribution![side].inventory_micro).toBe(pnl(r))
        expect(s.pnl_attribution[side].edge_micro).toBe(runs.reduce((t, r) => t + r.attribution![side].edge_micro, 0))
        expect(s.pnl_attribution[side].fills).toBe(side === "realised" ? sum("r", "fills") : sum("b", "fills"))
      }
      // The existing fields stay.
      for (const k of ["scenario", "seeds", "snapshot_interval_sec", "headline", "median_ratio", "median_pnl_diff_usdc", "by_model", "replay", "target", "runs"]) expect(s).toHaveProperty(k)

      const txt = readFileSync(join(out, "fidelity.txt"), "utf8")
      expect(txt).toMatch(/^ {4}realised {2}edge [+-]\d+\.\d\d, inventory [+-]\d+\.\d\d \(first 60 s [+-]\d+\.\d\d\)/m)
      const c = s.per_run_in_band.counts
      expect(txt).toContain(`ratio in 0.8–1.25: fills ${c.fills.in_band}/${c.fills.rated}`)
      expect(txt).toContain(`contracts ${c.filled_contracts.in_band}/${c.filled_contracts.rated}`)
      expect(txt).toMatch(/pooled Σ backtest ÷ Σ realised: fills \S+, contracts \S+, rewards \S+, rebates \S+ \([^)]*\), trading PnL \S+/)
      expect(txt).toContain(`q50 ${s.pnl_error_usdc.q50 > 0 ? "+" : ""}${s.pnl_error_usdc.q50.toFixed(2)}`)
      expect(txt).toContain(`PnL sign agrees: ${agree}/${signed.length} runs`)
      expect(txt).toMatch(/^headline: fills /m) // the existing headline line stays
      const x = s.median_excluded_zero_zero
      expect(txt).toContain(`left out of the headline medians as 0/0 (no ratio): fills ${x.fills}, contracts ${x.filled_contracts}, rewards ${x.rewards}, rebates ${x.rebates} of 3 runs`)
      expect(txt).toContain(`PnL error at the counterfactual's marks (USDC): q10 `)
      expect(txt).toContain(`final marks apart, the live market's against the counterfactual's (each the last mid of the others' book): ${marksApartText(s.final_marks_apart_bps)}`)
      expect(txt).toContain("systematic or the worlds' noise (mean per run ± standard error over 1 seed;")
      expect(txt).toContain("pooled trading PnL ratio, 95 % over seeds drawn again (2000 draws): - (fewer than 2 seeds)")
      expect(txt).toContain(`PnL diff ${s.median_pnl_diff_usdc.toFixed(2)} USDC at the live market's marks (${s.median_pnl_diff_usdc_at_counterfactual_marks.toFixed(2)} at the counterfactual's)`)

      // The interval (docs/backtesting.md "Intervals and coverage"): each run's headline backtest has one, around its own
      // figures, and the coverage counts the realised figures (PnL at the live market's marks) inside, below and above.
      const where = (v: number, [lo, hi]: [number, number]): "inside" | "below" | "above" => (v < lo ? "below" : v > hi ? "above" : "inside")
      const counted = (xs: Array<"inside" | "below" | "above">) => {
        const n = (k: string): number => xs.filter((x) => x === k).length
        return { share: n("inside") / xs.length, inside: n("inside"), below: n("below"), above: n("above"), runs: xs.length }
      }
      pairs.forEach((p, i) => {
        const iv = runs[i]!.interval
        expect(Object.keys(iv).sort()).toEqual(["block_sec", "draws", "fills", "level", "pnl_usdc", "resamples"])
        expect([iv.level, iv.draws, iv.resamples, iv.block_sec]).toEqual([0.9, 0, 1000, 600])
        expect(where(p.b.tradingPnlMicro / 1e6, iv.pnl_usdc)).toBe("inside")
        expect(where(p.b.fills, iv.fills)).toBe("inside")
      })
      const micro = ([lo, hi]: [number, number]): [number, number] => [Math.round(lo * 1e6), Math.round(hi * 1e6)]
      expect(s.coverage).toEqual({
        level: 0.9,
        trading_pnl: counted(pairs.map((p, i) => where(p.r.tradingPnlMicro, micro(runs[i]!.interval.pnl_usdc)))),
        fills: counted(pairs.map((p, i) => where(p.r.fills, runs[i]!.interval.fills))),
        trading_pnl_at_counterfactual_marks: counted(pairs.map((p, i) => where(p.cf, micro(runs[i]!.interval.pnl_usdc)))),
        runs_without_interval: 0
      })
      const cov = s.coverage
      expect(txt).toContain(`interval coverage (90% intervals: block bootstrap of 10-min blocks, 1000 resamples, no response-model draws): realised trading PnL inside ${cov.trading_pnl.inside}/3`)
      expect(txt).toContain(`fills inside ${cov.fills.inside}/3`)
      expect(txt).toMatch(/PnL range \(USDC\) +fills range/)
      expect(txt).toContain(`${runs[0]!.interval.pnl_usdc[0].toFixed(2)}…${runs[0]!.interval.pnl_usdc[1].toFixed(2)}`)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 600_000)
})
