// `npm run backtest` with its interval (docs/backtesting.md "Intervals and coverage"): the JSON
// carries `interval` (the range, the run's own figures, how it was made), the console summary shows
// it, and the interval's flags are checked like every other flag (one line, exit 2).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
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
      expect((json as { calibrated_interval?: unknown }).calibrated_interval).toBeNull() // no --interval-calibration
      expect(json.timings.interval_ms).toBeGreaterThanOrEqual(0)
      expect(r.stderr).toMatch(/^80% interval +trading PnL [\d,.-]+ … [\d,.-]+ USDC \(run [\d,.-]+\), fills [\d,]+ … [\d,]+ \(run [\d,]+\)$/m)
      expect(r.stderr).toMatch(/^replayed .* interval \d+\.\d\d s; load/m)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 120_000)

  it("--interval-calibration adds the range from the backtest's errors on calibration seeds: the run's PnL plus, its fills times, the file's bounds", async () => {
    const out = mkdtempSync(join(tmpdir(), "backtest-calibrated-"))
    try {
      const file = join(out, "interval-calibration.json")
      const calibration = {
        format: "twinbook-interval-calibration", version: 1, level: 0.9, seeds: [201, 202, 203, 204, 205, 206, 207], model: { queue: "flow", latency: "tick" }, runs: 21,
        pnl_error_usdc: { lo: -81.391234, hi: 32.1146, ranks: [1, 21], errors: [] }, fills_ratio: { lo: 0.52173913, hi: 1.640625, ranks: [1, 21], ratios: [], left_out: 0 }, by_run: []
      }
      writeFileSync(file, JSON.stringify(calibration))
      const r = await cli(["--json", "--out", out, "--resamples", "100", "--interval-calibration", file])
      expect(r.status, r.stderr).toBe(0)
      const json = JSON.parse(r.stdout) as { summary: Record<string, number>; calibrated_interval: Record<string, unknown>; reproduce: { inputs: Array<{ path: string }> } }
      const x = json.calibrated_interval
      const pnl = json.summary["trading_pnl_micro"]!
      const fills = json.summary["fills"]!
      expect(x["point"]).toEqual({ pnl_usdc: pnl / 1e6, fills })
      expect(x["pnl_usdc"]).toEqual([(pnl - 81_391_234) / 1e6, (pnl + 32_114_600) / 1e6])
      expect(x["fills"]).toEqual([Math.floor(fills * 0.52173913), Math.ceil(fills * 1.640625)])
      expect([x["file"], x["level"], x["runs"], x["seeds"], x["model"]]).toEqual([file, 0.9, 21, calibration.seeds, calibration.model])
      expect(json.reproduce.inputs.map((i) => i.path)).toContain(file)
      expect(r.stderr).toMatch(/^calibrated 90% +trading PnL [\d.-]+ … [\d.-]+ USDC \(run [\d.-]+\), fills \d+ … \d+ \(run \d+\)$/m)
      expect(r.stderr).toContain(`the backtest's errors on 21 runs of seeds 201,202,203,204,205,206,207 (${file}; book flow, latency tick`)
      expect(readFileSync(join(out, "report.html"), "utf8")).toContain("calibrated 90%")
      // An unbounded end (too few calibration runs) says so.
      writeFileSync(file, JSON.stringify({ ...calibration, pnl_error_usdc: { ...calibration.pnl_error_usdc, hi: null } }))
      const open = await cli(["--json", "--no-html", "--out", out, "--resamples", "100", "--interval-calibration", file])
      expect((JSON.parse(open.stdout) as { calibrated_interval: { pnl_usdc: unknown[] } }).calibrated_interval.pnl_usdc[1]).toBeNull()
      expect(open.stderr).toMatch(/^calibrated 90% +trading PnL [\d.-]+ … unbounded USDC/m)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 180_000)

  it("refuses a calibration file it cannot use, and one given to a sweep, in one line, exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "backtest-calibrated-bad-"))
    try {
      const good = { format: "twinbook-interval-calibration", version: 1, level: 0.9, seeds: [1], model: { queue: "flow", latency: "tick" }, runs: 19, pnl_error_usdc: { lo: -5, hi: 5 }, fills_ratio: { lo: 0.5, hi: 2 } }
      const cases: Array<[unknown, string]> = [
        [{ ...good, format: "x" }, "format is x, expected twinbook-interval-calibration (npm run fidelity -- --calibrate A..B --calibrate-intervals writes one)"],
        [{ ...good, version: 2 }, "version 2 is not supported (expected 1)"],
        [{ ...good, level: 90 }, "level must be a number in (0, 1)"],
        [{ ...good, pnl_error_usdc: { lo: 5, hi: -5 } }, "pnl_error_usdc.lo is above pnl_error_usdc.hi"],
        [{ ...good, pnl_error_usdc: { lo: "x", hi: 5 } }, "pnl_error_usdc.lo must be a number or null (unbounded)"],
        [{ ...good, fills_ratio: { lo: -1, hi: 2 } }, "fills_ratio.lo must be a number ≥ 0 or null (unbounded)"]
      ]
      for (const [i, [content, message]] of cases.entries()) {
        const file = join(dir, `c${i}.json`)
        writeFileSync(file, JSON.stringify(content))
        const r = await cli(["--no-html", "--out", dir, "--interval-calibration", file])
        expect(r.status, message).toBe(2)
        expect(r.stderr).toBe(`backtest: --interval-calibration ${file}: ${message}\n`)
      }
      const missing = await cli(["--no-html", "--out", dir, "--interval-calibration", join(dir, "none.json")])
      expect(missing.stderr).toBe(`backtest: --interval-calibration ${join(dir, "none.json")}: no such file\n`)
      writeFileSync(join(dir, "good.json"), JSON.stringify(good))
      const sweep = await cli(["--no-html", "--out", dir, "--interval-calibration", join(dir, "good.json"), "--sweep", "levels=1,2"])
      expect([sweep.status, sweep.stderr]).toEqual([2, "backtest: --interval-calibration: a sweep's runs have no interval; give it to a single run\n"])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)

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
