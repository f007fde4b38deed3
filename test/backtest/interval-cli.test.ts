// `npm run backtest` with its interval (docs/backtesting.md "Intervals and coverage"): the JSON
// carries `interval` (the range, the run's own figures, how it was made), the console summary shows
// it, and the interval's flags are checked like every other flag (one line, exit 2).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runProcess, type ProcessResult } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const cli = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
  runProcess(process.execPath, ["scripts/run-ts.mjs", "sim/backtest/cli.ts", ...args], { cwd: root, timeoutMs: 120_000 })

describe("backtest CLI interval", () => {
  it("--json carries the interval, with how it was made; the summary on stderr shows it", async () => {
    const out = mkdtempSync(join(tmpdir(), "backtest-interval-"))
    try {
      const r = await cli(["--json", "--timings", "--no-html", "--out", out, "--interval-level", "80", "--block-sec", "900", "--resamples", "500"])
      expect(r.status, r.stderr).toBe(0)
      const json = JSON.parse(r.stdout) as { summary: Record<string, number>; interval: Record<string, unknown>; outcome_path?: unknown; timings: { interval_ms: number } }
      const x = json.interval
      expect(Object.keys(x).sort()).toEqual(["block_sec", "blocks", "draws", "fills", "increments", "level", "method", "point", "resamples", "sample_sec", "trading_pnl_micro"])
      expect([x["level"], x["block_sec"], x["resamples"], x["draws"], x["sample_sec"]]).toEqual([0.8, 900, 500, 0, 60])
      expect(x["point"]).toEqual({ trading_pnl_micro: json.summary["trading_pnl_micro"], fills: json.summary["fills"] })
      const [lo, hi] = x["trading_pnl_micro"] as [number, number]
      const [flo, fhi] = x["fills"] as [number, number]
      expect(lo).toBeLessThan(json.summary["trading_pnl_micro"]!)
      expect(hi).toBeGreaterThan(json.summary["trading_pnl_micro"]!)
      expect(flo).toBeLessThan(json.summary["fills"]!)
      expect(fhi).toBeGreaterThan(json.summary["fills"]!)
      // The sample is one day from its first trade: 1,440 one-minute increments, 96 blocks of 15 minutes.
      expect([x["increments"], x["blocks"]]).toEqual([1440, 96])
      expect(json.outcome_path).toBeUndefined()
      expect(json.timings.interval_ms).toBeGreaterThanOrEqual(0)
      expect(r.stderr).toMatch(/^80% interval +trading PnL [\d,.-]+ … [\d,.-]+ USDC \(run [\d,.-]+\), fills [\d,]+ … [\d,]+ \(run [\d,]+\)$/m)
      expect(r.stderr).toMatch(/^replayed .* interval \d+\.\d\d s; load/m)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 120_000)

  it("refuses bad interval flags in one line, exit 2", async () => {
    for (const [args, message] of [
      [["--draws", "5"], "backtest: --draws: the draws are of the market-response model; give --response"],
      [["--block-sec", "90"], "backtest: --block-sec: 90 is not a whole number of 60-s samples"],
      [["--interval-level", "100"], 'backtest: --interval-level: expected an integer in 50..99 (got "100")'],
      [["--resamples", "10"], 'backtest: --resamples: expected an integer in 100..1000000 (got "10")']
    ] as const) {
      const r = await cli([...args, "--no-html", "--out", join(tmpdir(), "backtest-interval-bad")])
      expect(r.status, args.join(" ")).toBe(2)
      expect(r.stderr).toBe(`${message}\n`)
    }
  }, 300_000)
})
