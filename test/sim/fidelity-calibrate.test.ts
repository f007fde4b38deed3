// `npm run fidelity -- --calibrate …` (sim/fidelity/calibrate.ts): the market-response model is
// fitted on the calibration seeds' live tapes, reported with them, applied to the judged seeds'
// counterfactual backtests; a judged seed among the calibration seeds is refused in one line.
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")

const fidelity = async (args: ReadonlyArray<string>): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/fidelity-cli.ts", ...args], {
      cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe("npm run fidelity -- --calibrate", () => {
  it("refuses a judged seed that is also a calibration seed: one line, exit 2, nothing run", async () => {
    const out = mkdtempSync(join(tmpdir(), "fidelity-overlap-"))
    try {
      for (const [seeds, calibrate, shared] of [["1..3", "3..5", "seed 3"], ["2,4", "1..6", "seeds 2,4"]] as const) {
        const r = await fidelity(["--seeds", seeds, "--calibrate", calibrate, "--duration", "30m", "--out", out])
        expect(r.code).toBe(2)
        expect(r.stderr).toBe(`fidelity: --calibrate and --seeds share ${shared}: a seed is never judged by a model fitted on it\n`)
        expect(existsSync(join(out, "calibration"))).toBe(false)
      }
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 120_000)

  it("refuses a noise floor that leaves out an LP bot or no agent at all: one line, exit 2", async () => {
    for (const [agent, why] of [["lp_bot-0-1", "an LP bot is a judged run"], ["noise-7-0", "no such agent"]]) {
      const r = await fidelity(["--seeds", "1", "--noise-floor", agent!, "--duration", "30m", "--out", join(tmpdir(), "fidelity-never-written")])
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(new RegExp(`^fidelity: --noise-floor ${agent}: ${why}[^\n]*\n$`))
    }
  }, 120_000)

  it("refuses --calibrate-intervals without two calibration seeds: one line, exit 2", async () => {
    for (const args of [["--calibrate-intervals"], ["--calibrate", "2", "--calibrate-intervals"]]) {
      const r = await fidelity(["--seeds", "1", ...args, "--duration", "30m", "--out", join(tmpdir(), "fidelity-never-written")])
      expect(r.code).toBe(2)
      expect(r.stderr.split("\n")[0]).toBe("fidelity: --calibrate-intervals: the intervals are calibrated on the calibration seeds' runs, each backtested with a model fitted on the others; give --calibrate with at least 2 seeds (90% needs 7)")
    }
  }, 120_000)

  it("refuses --response-horizon without --calibrate, not whole seconds nor likelihood, or a horizon that leaves the worlds no window: one line, exit 2, nothing run", async () => {
    const never = join(tmpdir(), "fidelity-never-written")
    const cases: Array<[string[], string]> = [
      [["--calibrate", "2..3"], "fidelity: the response model's arrival horizon (1800 s, the default) leaves no window to fit on in 1800-second calibration worlds (each tape is read up to its end − the horizon): give --response-horizon below 1800, e.g. 300, or a longer --duration"],
      [["--calibrate", "2..3", "--response-horizon", "3600"], "fidelity: the response model's arrival horizon (3600 s) leaves no window to fit on in 1800-second calibration worlds (each tape is read up to its end − the horizon): give --response-horizon below 1800, e.g. 300, or a longer --duration"],
      [["--response-horizon", "300"], "fidelity: --response-horizon: the horizon is the market-response model's; give --calibrate"],
      [["--calibrate", "2..3", "--response-horizon", "soon"], "fidelity: --response-horizon soon: expected whole seconds from 1 to 86400, or likelihood"]
    ]
    for (const [args, line] of cases) {
      const r = await fidelity(["--seeds", "1", ...args, "--duration", "30m", "--out", never])
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stderr.split("\n")[0]).toBe(line)
      expect(existsSync(never), "nothing written").toBe(false)
    }
  })

  it("a fit the calibration tapes cannot give (2-minute worlds) ends in one line, exit 2, not a stack", async () => {
    const out = mkdtempSync(join(tmpdir(), "fidelity-nofit-"))
    try {
      const r = await fidelity(["--seeds", "1", "--calibrate", "2..3", "--duration", "2m", "--response-horizon", "119", "--out", out])
      expect(r.code).toBe(2)
      const lines = r.stderr.trimEnd().split("\n").filter((l) => !/^fidelity: \d+\/\d+ /.test(l))
      expect(lines).toEqual([`fidelity: fit-response: no taker traded at a two-sided book in ${join(out, "calibration", "seed2-live")}, ${join(out, "calibration", "seed3-live")}: nothing to fit`])
      expect(existsSync(join(out, "calibration", "response-model.json"))).toBe(false)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })

  it("refuses --follow-makers without --calibrate: one line, exit 2", async () => {
    const r = await fidelity(["--seeds", "1", "--follow-makers", "--duration", "30m", "--out", join(tmpdir(), "fidelity-never-written")])
    expect(r.code).toBe(2)
    expect(r.stderr.split("\n")[0]).toBe("fidelity: --follow-makers: the slope comes from the market-response model; give --calibrate")
  }, 120_000)

  it("fits on the calibration seeds' live tapes and reports the model and the seeds; --calibrate-intervals backtests their runs and gives each judged run a range", async () => {
    const out = mkdtempSync(join(tmpdir(), "fidelity-calibrate-"))
    try {
      // 30-minute worlds: the arrival horizon must leave a window (the default, 1800 s, would leave none).
      const r = await fidelity(["--seeds", "1", "--calibrate", "2..3", "--calibrate-intervals", "--noise-floor", "noise-2-11", "--response-horizon", "300", "--duration", "30m", "--workers", "2", "--out", out, "--json"])
      expect(r.code, r.stderr).toBe(0)
      const s = JSON.parse(r.stdout)
      expect(s.seeds).toEqual([1])
      expect(s.calibration.seeds).toEqual([2, 3])
      expect(s.calibration.model_file).toBe(join(out, "calibration", "response-model.json"))
      expect(JSON.parse(readFileSync(s.calibration.model_file, "utf8"))).toEqual(s.calibration.model)
      const m = s.calibration.model
      expect([m.format, m.version]).toEqual(["twinbook-response-model", 4])
      expect([m.edge.horizon_sec, m.edge.horizon_rule]).toEqual([300, "given"])
      expect(m.sources.map((x: { source: string }) => x.source)).toEqual([join(out, "calibration", "seed2-live"), join(out, "calibration", "seed3-live")])
      expect(m.arrival.arrivals).toBeGreaterThan(0)
      // Makers that follow the book: the live tape's makers and bots re-quote around the rest of the book.
      expect(m.follow.makers).toBeGreaterThanOrEqual(4)
      expect(m.follow.slope).toBeGreaterThan(0.8)
      expect(m.follow.slope).toBeLessThan(1.1)
      expect(existsSync(join(out, "calibration", "seed2-live", "tape.json"))).toBe(true)
      // Calibrated intervals: each calibration seed's runs backtested with a model fitted on the other seed alone.
      for (const [seed, other] of [[2, 3], [3, 2]]) {
        const loo = JSON.parse(readFileSync(join(out, "calibration", "leave-one-out", `response-model-without-seed${seed}.json`), "utf8"))
        expect(loo.sources.map((x: { source: string }) => x.source)).toEqual([join(out, "calibration", `seed${other}-live`)])
      }
      const ic = s.interval_calibration
      expect(JSON.parse(readFileSync(join(out, "calibration", "interval-calibration.json"), "utf8"))).toEqual(ic)
      expect([ic.format, ic.version, ic.level, ic.seeds, ic.model]).toEqual(["twinbook-interval-calibration", 1, 0.9, [2, 3], { queue: "flow", latency: "tick" }])
      expect(ic.runs).toBe(ic.by_run.length)
      expect(ic.runs).toBeGreaterThan(0)
      // Its errors are the runs' realised − backtest PnL; with under 19 runs both 90 % ends are unbounded.
      const errors = ic.by_run.map((x: { realised_pnl_usdc: number; backtest_pnl_usdc: number }) => Number((x.realised_pnl_usdc - x.backtest_pnl_usdc).toFixed(6)))
      expect(ic.pnl_error_usdc.errors.map((x: number) => Number(x.toFixed(6)))).toEqual(errors.sort((a: number, b: number) => a - b))
      expect([ic.pnl_error_usdc.lo, ic.pnl_error_usdc.hi]).toEqual([null, null])
      for (const run of s.runs) expect(run.calibrated_interval.pnl_usdc).toEqual([null, null])
      expect(s.calibrated_coverage.trading_pnl).toMatchObject({ inside: s.runs.length, runs: s.runs.length })
      const cal = readFileSync(join(out, "fidelity.txt"), "utf8")
      expect(cal).toContain(`calibrated interval (90%, split conformal on the errors of ${ic.runs} calibration bot-runs, seeds 2,3)`)
      expect(cal).toContain("too few calibration runs for both ends at 90%: it needs 19")
      // The noise floor: every judged bot-run compared with the same bot in the live world without noise-2-11.
      expect(s.noise_floor.without).toBe("noise-2-11")
      expect(s.noise_floor.runs).toBe(s.runs.length)
      expect(s.noise_floor.figures.pooled_sums.realised).toEqual(s.pooled_sums.realised)
      expect(s.noise_floor.figures.pnl_error_usdc.runs).toBe(s.runs.length)
      expect(s.noise_floor.figures.bias.trading_pnl_diff_usdc.runs).toBe(s.runs.length)
      expect(cal).toContain(`noise floor: the same bots in the live world without noise-2-11, against the live world (${s.runs.length} bot-runs`)
      // Every counterfactual backtest ran with the model (its response fills counted); the replay did not.
      for (const run of s.runs) {
        for (const b of run.backtests) expect(typeof b.fillsFromResponse).toBe("number")
        expect(run.replay.fillsFromResponse).toBe(0)
      }
      const txt = readFileSync(join(out, "fidelity.txt"), "utf8")
      expect(txt).toContain(`market-response model fitted on calibration seeds 2,3 (${s.calibration.model_file})`)
      expect(txt).toMatch(/arrival by edge against the tape's mid \d+ s later \(ticks, buckets of \d+\): buy [\d.]+\/h from -?\d+/)
      // Fitted and shown, not applied without --follow-makers.
      expect(txt).toMatch(/^ {2}makers follow the book: slope [\d.]+ ± [\d.]+ \(R² [\d.]+, \d+ re-quote pairs by \d+ makers\); not applied \(--follow-makers applies it\)$/m)
      expect(s.calibration.follow_makers).toBe(false)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 600_000)
})
