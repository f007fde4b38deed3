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

const ROOT = join(import.meta.dirname, "..", "..")

interface SideJson { fills: number; filledContracts: number; rewardsMicro: number; tradingPnlMicro: number }
interface RunJson { realised: SideJson; backtests: Array<SideJson & { queue: string; latency: string }> }

describe("npm run fidelity -- --json", () => {
  it("prints the per-run figures, consistent with its own per-run rows, and the text table shows them", async () => {
    const out = mkdtempSync(join(tmpdir(), "fidelity-cli-"))
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--max-semi-space-size=64", "--import", "tsx", "sim/fidelity-cli.ts", "--seeds", "1", "--duration", "30m", "--workers", "2", "--out", out, "--json"],
        { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }
      )
      const s = JSON.parse(stdout)
      const runs = s.runs as RunJson[]
      expect(runs).toHaveLength(3)
      const pairs = runs.map((r) => ({ r: r.realised, b: r.backtests.find((m) => m.queue === s.headline.queue && m.latency === s.headline.latency)! }))
      expect(pairs.some((p) => p.r.fills > 0)).toBe(true) // a run that traded, so the figures are not all trivial

      const inBand = (b: number, r: number): boolean => r > 0 && b / r >= 0.8 - 1e-12 && b / r <= 1.25 + 1e-12
      for (const [key, k] of [["fills", "fills"], ["filled_contracts", "filledContracts"]] as const) {
        const rated = pairs.filter((p) => p.r[k] !== 0 || p.b[k] !== 0)
        const n = rated.filter((p) => inBand(p.b[k], p.r[k])).length
        expect(s.per_run_in_band.counts[key]).toEqual({ in_band: n, rated: rated.length, excluded_zero_zero: pairs.length - rated.length })
        expect(s.per_run_in_band[key]).toBe(rated.length === 0 ? null : n / rated.length)
      }
      const sum = (side: "r" | "b", k: keyof SideJson): number => pairs.reduce((a, p) => a + p[side][k], 0)
      for (const [key, k] of [["fills", "fills"], ["filled_contracts", "filledContracts"], ["rewards", "rewardsMicro"], ["trading_pnl", "tradingPnlMicro"]] as const)
        expect(s.pooled_ratio[key]).toBe(sum("r", k) === 0 ? null : sum("b", k) / sum("r", k))
      expect(s.pooled_sums.trading_pnl_diff_usdc).toBeCloseTo((sum("b", "tradingPnlMicro") - sum("r", "tradingPnlMicro")) / 1e6, 9)

      // Three runs: q50 is the middle error, q10 and q90 interpolate 20% of the way from the ends.
      const err = pairs.map((p) => (p.b.tradingPnlMicro - p.r.tradingPnlMicro) / 1e6).sort((a, b) => a - b)
      expect(s.pnl_error_usdc.q50).toBe(err[1])
      expect(s.pnl_error_usdc.q50).toBe(s.median_pnl_diff_usdc)
      expect(s.pnl_error_usdc.q10).toBeCloseTo(err[0]! + 0.2 * (err[1]! - err[0]!), 9)
      expect(s.pnl_error_usdc.q90).toBeCloseTo(err[1]! + 0.8 * (err[2]! - err[1]!), 9)
      expect([s.pnl_error_usdc.min, s.pnl_error_usdc.max, s.pnl_error_usdc.runs]).toEqual([err[0], err[2], 3])

      const signed = pairs.filter((p) => p.r.tradingPnlMicro !== 0 || p.b.tradingPnlMicro !== 0)
      const agree = signed.filter((p) => Math.sign(p.r.tradingPnlMicro) === Math.sign(p.b.tradingPnlMicro)).length
      expect(s.sign_agreement).toEqual({ share: signed.length === 0 ? null : agree / signed.length, agree, rated: signed.length, excluded_both_zero: 3 - signed.length })

      // The existing fields stay.
      for (const k of ["scenario", "seeds", "snapshot_interval_sec", "headline", "median_ratio", "median_pnl_diff_usdc", "by_model", "replay", "target", "runs"]) expect(s).toHaveProperty(k)

      const txt = readFileSync(join(out, "fidelity.txt"), "utf8")
      const c = s.per_run_in_band.counts
      expect(txt).toContain(`ratio in 0.8–1.25: fills ${c.fills.in_band}/${c.fills.rated}`)
      expect(txt).toContain(`contracts ${c.filled_contracts.in_band}/${c.filled_contracts.rated}`)
      expect(txt).toMatch(/pooled Σ backtest ÷ Σ realised: fills \S+, contracts \S+, rewards \S+, trading PnL \S+/)
      expect(txt).toContain(`q50 ${s.pnl_error_usdc.q50 > 0 ? "+" : ""}${s.pnl_error_usdc.q50.toFixed(2)}`)
      expect(txt).toContain(`PnL sign agrees: ${agree}/${signed.length} runs`)
      expect(txt).toMatch(/^headline: fills /m) // the existing headline line stays
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 240_000)
})
