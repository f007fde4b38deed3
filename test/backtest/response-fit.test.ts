// The market-response fit (sim/backtest/response/fit.ts) on a tape with known answers
// (response-fixture.ts): it recovers the arrival curve, the informed share and the sizes;
// the CLI writes the same bytes on every run; bad inputs are one line and exit 2.
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { datasetFromRows } from "../../sim/backtest/dataset.ts"
import { fitResponse } from "../../sim/backtest/response/fit.ts"
import { generateResponseTape, TRUTH, writeResponseTape } from "./response-fixture.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const tmp = mkdtempSync(join(tmpdir(), "response-fit-"))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const cli = async (args: ReadonlyArray<string>): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["scripts/run-ts.mjs", "sim/backtest/cli.ts", ...args], { cwd: ROOT, encoding: "utf8" })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe("fit-response on a tape with known arrival rates and informed share", () => {
  // 400,000 s: about 3,000 takers a side over spreads of 2..30 ticks.
  const tape = generateResponseTape("fit", 400_000)
  const model = fitResponse([{ source: "fixture", dataset: datasetFromRows("fixture", tape.trades, tape.levels), endMs: tape.endMs }])

  it("recovers a and b of λ(s) = a·exp(−b·s) on each side within 4 standard errors and 10%", () => {
    expect(model.arrival.arrivals).toBeGreaterThan(5_000)
    for (const side of [model.arrival.buy, model.arrival.sell]) {
      expect(Math.abs(side.b_per_tick - TRUTH.bPerTick)).toBeLessThan(Math.min(4 * side.b_se, 0.1 * TRUTH.bPerTick))
      expect(Math.abs(side.a_per_sec - TRUTH.aPerSec) / TRUTH.aPerSec).toBeLessThan(0.1)
    }
    // The true curve fits: χ² within its mean + 4 standard deviations on each side.
    const f = model.arrival.fit
    expect(f.buckets.length).toBe(8)
    expect(f.buckets.reduce((s, b) => s + b.buy_observed + b.sell_observed, 0)).toBe(model.arrival.arrivals)
    for (const chi of [f.chi_square.buy, f.chi_square.sell]) expect(chi).toBeLessThan(f.dof + 4 * Math.sqrt(2 * f.dof))
  })

  it("recovers the informed share from the markouts (5 s: within 0.05) and their sign", () => {
    const m5 = model.information.markouts.find((m) => m.horizon_sec === 5)!
    expect(Math.abs(m5.informed_share - TRUTH.informedShare)).toBeLessThan(0.05)
    expect(m5.informed_share_se).toBeLessThan(0.02)
    // An informed taker's mid moves 20 bps its way: the mean markout is about π·20.
    expect(Math.abs(m5.mean_bps - TRUTH.informedShare * 20)).toBeLessThan(4 * m5.se_bps + 0.5)
    expect(model.information.horizon_sec).toBe(30)
    expect(model.information.informed_share).toBe(model.information.markouts.find((m) => m.horizon_sec === 30)!.informed_share)
  })

  it("recovers the size distribution (lognormal μ within 0.05, σ within 0.05)", () => {
    expect(Math.abs(model.size.lognormal.mu - TRUTH.sizeMu)).toBeLessThan(0.05)
    expect(Math.abs(model.size.lognormal.sigma - TRUTH.sizeSigma)).toBeLessThan(0.05)
    expect(model.size.quantiles).toHaveLength(21)
    expect(model.size.quantiles[10]).toBe(Math.round(Math.exp(TRUTH.sizeMu)))
  })
})

describe("npm run backtest -- fit-response", () => {
  const dir = join(tmp, "tape")
  writeResponseTape(dir, generateResponseTape("cli", 50_000))

  it("prints the parameters and the fit, and writes the same bytes on every run", async () => {
    const a = await cli(["fit-response", "--data", dir, "--out", join(tmp, "a.json")])
    const b = await cli(["fit-response", "--data", dir, "--out", join(tmp, "b.json")])
    expect([a.code, b.code]).toEqual([0, 0])
    // Version 2: the arrival by edge (applied), its horizon choice and table; the spread curve for the record.
    expect(a.stdout).toMatch(/^arrival +takers\/s by edge e \(ticks\) = \(tape's mid \d+ s later − ask\) for buyers/m)
    expect(a.stdout).toMatch(/^horizon +5 s [+-][\d.]+, 15 s [+-][\d.]+, 30 s [+-][\d.]+, 60 s [+-][\d.]+, 1800 s [+-][\d.]+ \(log-likelihood gain.*: 1800 s applied \(given; the default is chosen on calibration backtests/m)
    expect(a.stdout).toMatch(/^side +edge ticks +knot +exposure s +observed +fitted +fitted \/h +raw \/h +mean size$/m)
    expect(a.stdout).toMatch(/^sell +-?\d+ … -?\d+ +-?[\d.]+ +\d+ +\d+ +[\d.]+ /m)
    expect(a.stdout).toMatch(/^spread +for the record, not applied: takers\/s at the touch = a·exp\(−b·spread ticks\): buy a /m)
    expect(a.stdout).toMatch(/^spread fit +2–\d+ ticks .*χ² buy \d/m)
    expect(a.stdout).toMatch(/^information +5s \+[\d.]+ ± [\d.]+ bps.*not applied: the edge carries the information/m)
    const bytes = readFileSync(join(tmp, "a.json"), "utf8")
    expect(readFileSync(join(tmp, "b.json"), "utf8")).toBe(bytes)
    const model = JSON.parse(bytes)
    expect([model.format, model.version]).toEqual(["twinbook-response-model", 4])
    expect(model.sources).toEqual([expect.objectContaining({ source: dir, markets: 1 })])
  }, 120_000)

  it("pools several tapes given to one --data", async () => {
    const r = await cli(["fit-response", "--data", dir, dir, "--out", join(tmp, "two.json"), "--json"])
    expect(r.code).toBe(0)
    const one = JSON.parse(readFileSync(join(tmp, "a.json"), "utf8"))
    const two = JSON.parse(r.stdout)
    expect(two.sources).toHaveLength(2)
    expect(two.arrival.arrivals).toBe(2 * one.arrival.arrivals)
    expect(two.arrival.buy.b_per_tick).toBeCloseTo(one.arrival.buy.b_per_tick, 6)
  }, 120_000)

  it("--horizon: a given horizon, or likelihood for the candidate that explains the arrival times best", async () => {
    const r = await cli(["fit-response", "--data", dir, "--out", join(tmp, "h.json"), "--horizon", "likelihood"])
    expect(r.code).toBe(0)
    const m = JSON.parse(readFileSync(join(tmp, "h.json"), "utf8"))
    expect(m.edge.horizon_rule).toBe("likelihood")
    const gain = (c: { loglik_gain_buy: number; loglik_gain_sell: number }): number => c.loglik_gain_buy + c.loglik_gain_sell
    const best = m.edge.candidates.reduce((b: { horizon_sec: number }, c: { horizon_sec: number }) => (gain(c as never) > gain(b as never) ? c : b))
    expect(m.edge.horizon_sec).toBe(best.horizon_sec)
    expect(r.stdout).toMatch(new RegExp(`: ${best.horizon_sec} s applied \\(the largest gain\\)$`, "m"))
    const g = await cli(["fit-response", "--data", dir, "--out", join(tmp, "g.json"), "--horizon", "300", "--json"])
    expect(g.code).toBe(0)
    const e = JSON.parse(g.stdout).edge
    expect([e.horizon_sec, e.horizon_rule, e.candidates.map((c: { horizon_sec: number }) => c.horizon_sec)]).toEqual([300, "given", [5, 15, 30, 60, 300]])
  }, 120_000)

  it("bad inputs: one line on stderr, exit 2", async () => {
    const noBook = join(tmp, "no-book")
    writeResponseTape(noBook, generateResponseTape("nobook", 600), false)
    const notJson = join(tmp, "bad-model.json")
    writeFileSync(notJson, JSON.stringify({ format: "something-else" }))
    const cases: Array<[string[], RegExp]> = [
      [["fit-response", "--out", join(tmp, "x.json")], /^backtest: fit-response: give the tapes with --data DIR/],
      [["fit-response", "--data", dir], /^backtest: fit-response: give the model file with --out FILE/],
      [["fit-response", "--data", join(tmp, "missing"), "--out", join(tmp, "x.json")], /is not a tape directory/],
      [["fit-response", "--data", tmp, "--out", join(tmp, "x.json")], /not a tape \(no tape\.json/],
      [["fit-response", "--data", noBook, "--out", join(tmp, "x.json")], /has no book snapshots/],
      [["fit-response", "--data", dir, "--out", join(tmp, "x.json"), "--bogus"], /unknown argument "--bogus"/],
      [["fit-response", "--data", dir, "--out", join(tmp, "x.json"), "--horizon", "0"], /--horizon 0: expected whole seconds from 1 to 86400, or likelihood/],
      [["fit-response", "--data", dir, "--out", join(tmp, "x.json"), "--horizon", "15.5"], /--horizon 15\.5: expected whole seconds/],
      [["fit-response", "--data", dir, "--out", join(tmp, "x.json"), "--horizon"], /--horizon : expected whole seconds/],
      [["--data", dir, "--response", notJson, "--no-html", "--out", join(tmp, "bt")], /bad-model\.json: format is something-else, expected twinbook-response-model/],
      [["--data", dir, "--response", join(tmp, "none.json"), "--no-html", "--out", join(tmp, "bt")], /none\.json: no such file/]
    ]
    for (const [args, message] of cases) {
      const r = await cli(args)
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stderr.trimEnd().split("\n"), args.join(" ")).toHaveLength(1)
      expect(r.stderr).toMatch(message)
    }
  }, 600_000)
})
