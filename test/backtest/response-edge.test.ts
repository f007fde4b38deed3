// The market-response model's arrival rate by edge (sim/backtest/response/edge.ts, model
// version 2): the fit recovers a known edge dependence and its horizon from a tape alone, stays
// monotone on noisy data, and --response refuses a bad version 2 file in one line.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { BacktestInputError, datasetFromRows } from "../../sim/backtest/dataset.ts"
import { ARRIVAL_HORIZON_SEC, type HorizonRule } from "../../sim/backtest/response/edge.ts"
import { fitResponse } from "../../sim/backtest/response/fit.ts"
import { isotonicRates } from "../../sim/backtest/response/isotonic.ts"
import { edgeRate, type EdgeSide, validateModel } from "../../sim/backtest/response/model.ts"
import { flatRate, generateEdgeTape, H_TRUE_SEC, risingRate } from "./response-edge-fixture.ts"
import { generateResponseTape, writeResponseTape } from "./response-fixture.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const tmp = mkdtempSync(join(tmpdir(), "response-edge-"))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

/** The fixture's takers respond to the edge H_TRUE_SEC ahead: these fits choose the horizon by the likelihood unless told. */
const fit = (seed: string, rate: (e: number) => number, horizon: HorizonRule = "likelihood") => {
  const tape = generateEdgeTape(seed, 200_000, rate)
  return fitResponse([{ source: "fixture", dataset: datasetFromRows("fixture", tape.trades, tape.levels), endMs: tape.endMs }], horizon)
}

const nonDecreasing = (side: EdgeSide): boolean => side.buckets.every((b, k) => k === 0 || b.rate_per_sec >= side.buckets[k - 1]!.rate_per_sec)

describe("isotonic Poisson rates (pool adjacent violators)", () => {
  it("pools the cells that break the order into their pooled rate Σn ÷ ΣE, and leaves ordered ones alone", () => {
    // Raw rates 3, 1, 2, 4: the first two pool to 2 (4 ÷ 2), which the third (2) no longer breaks.
    expect(isotonicRates([{ exposureSec: 1, count: 3 }, { exposureSec: 1, count: 1 }, { exposureSec: 1, count: 2 }, { exposureSec: 2, count: 8 }])).toEqual([2, 2, 2, 4])
    // Exposure weights the pooling: 5 in 10 s then 0 in 1 s is 5 in 11 s.
    expect(isotonicRates([{ exposureSec: 10, count: 5 }, { exposureSec: 1, count: 0 }])).toEqual([5 / 11, 5 / 11])
    // A violation at the end pools back through every cell it breaks.
    expect(isotonicRates([{ exposureSec: 1, count: 1 }, { exposureSec: 1, count: 2 }, { exposureSec: 1, count: 3 }, { exposureSec: 3, count: 0 }])).toEqual([1, 1, 1, 1])
    expect(isotonicRates([{ exposureSec: 2, count: 1 }, { exposureSec: 1, count: 4 }])).toEqual([0.5, 4])
  })
})

describe("fit-response: the arrival rate by edge, from a tape alone", () => {
  const model = fit("edge", risingRate)
  const e = model.edge!

  it("picks the horizon the takers respond to, by log-likelihood, among 5, 15, 30 and 60 s (the rule likelihood)", () => {
    expect(model.version).toBe(4)
    expect(e.candidates.map((c) => c.horizon_sec)).toEqual([5, 15, 30, 60])
    expect(e.horizon_sec).toBe(H_TRUE_SEC)
    expect(e.horizon_rule).toBe("likelihood")
    const gain = (h: number): number => {
      const c = e.candidates.find((x) => x.horizon_sec === h)!
      return c.loglik_gain_buy + c.loglik_gain_sell
    }
    for (const h of [5, 30, 60]) expect(gain(H_TRUE_SEC), `${h} s`).toBeGreaterThan(gain(h) + 50)
  })

  it("applies a given horizon (by default ARRIVAL_HORIZON_SEC) and still reports every candidate's gain, on one window", () => {
    const byDefault = fit("edge", risingRate, ARRIVAL_HORIZON_SEC).edge!
    expect(ARRIVAL_HORIZON_SEC).toBe(1800)
    expect(byDefault.candidates.map((c) => c.horizon_sec)).toEqual([5, 15, 30, 60, 1800])
    expect([byDefault.horizon_sec, byDefault.horizon_rule]).toEqual([1800, "given"])
    const gain = (x: typeof byDefault, h: number): number => {
      const c = x.candidates.find((y) => y.horizon_sec === h)!
      return c.loglik_gain_buy + c.loglik_gain_sell
    }
    // Told 1800 s, the fit applies 1800 s though 15 s explains the fixture's takers far better ...
    expect(gain(byDefault, H_TRUE_SEC)).toBeGreaterThan(gain(byDefault, 1800) + 50)
    expect(byDefault.buy.loglik_gain + byDefault.sell.loglik_gain).toBe(gain(byDefault, 1800))
    // ... and a horizon among the candidates is applied as given (60 s: its own buckets, not 15 s's).
    const at60 = fit("edge", risingRate, 60).edge!
    expect([at60.horizon_sec, at60.horizon_rule]).toEqual([60, "given"])
    expect(at60.candidates.map((c) => c.horizon_sec)).toEqual([5, 15, 30, 60])
    expect(at60.buy.loglik_gain + at60.sell.loglik_gain).toBe(gain(at60, 60))
  })

  it("recovers the rising rate on each side within 20% from −10 to +12 ticks, monotone, its buckets summing to every taker", () => {
    for (const side of [e.buy, e.sell]) {
      expect(nonDecreasing(side)).toBe(true)
      for (const x of [-10, -5, 0, 3, 5, 8, 12]) expect(Math.abs(edgeRate(side, x) - risingRate(x)) / risingRate(x), `edge ${x}`).toBeLessThan(0.2)
      expect(side.buckets.reduce((s, b) => s + b.observed, 0)).toBe(side.arrivals)
      // Isotonic pooling keeps the total: fitted takers = observed takers.
      expect(side.buckets.reduce((s, b) => s + b.expected, 0)).toBeCloseTo(side.arrivals, 3)
      // The fitted curve explains the data: deviance within its mean + 4 sd for the buckets' count.
      expect(side.deviance).toBeLessThan(side.buckets.length + 4 * Math.sqrt(2 * side.buckets.length))
    }
    expect(e.buy.arrivals + e.sell.arrivals).toBe(e.arrivals)
  })

  it("a flat rate gives a flat monotone curve from noisy buckets", () => {
    const flat = fit("flat", flatRate).edge!
    for (const side of [flat.buy, flat.sell]) {
      // The raw per-bucket rates are noisy (some fall as the edge rises); the fitted ones never do.
      expect(side.buckets.some((b, k) => k > 0 && b.raw_rate_per_sec < side.buckets[k - 1]!.raw_rate_per_sec)).toBe(true)
      expect(nonDecreasing(side)).toBe(true)
      const total = side.exposure_sec
      for (const b of side.buckets.filter((x) => x.exposure_sec >= 0.02 * total)) expect(Math.abs(b.rate_per_sec - flatRate()) / flatRate(), `${b.from_ticks}`).toBeLessThan(0.2)
      // What the edge "explains" in flat data is noise: far below the rising tape's gain.
      expect(side.loglik_gain).toBeLessThan(15)
    }
  })
})

const cli = async (args: ReadonlyArray<string>): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["scripts/run-ts.mjs", "sim/backtest/cli.ts", ...args], { cwd: ROOT, encoding: "utf8" })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const x = err as { code: number; stdout: string; stderr: string }
    return { code: x.code, stdout: x.stdout, stderr: x.stderr }
  }
}

describe("--response: a version 2 model file is checked before anything runs", () => {
  const bucket = (at: number, rate: number) => ({ at_ticks: at, rate_per_sec: rate })
  const good = () => ({
    format: "twinbook-response-model", version: 2,
    size: { quantiles: [1, 5, 10] },
    edge: { horizon_sec: 15, buy: { buckets: [bucket(-5, 0.01), bucket(0, 0.02), bucket(5, 0.05)] }, sell: { buckets: [bucket(-5, 0.01), bucket(5, 0.04)] } }
  })
  const cases: Array<[string, (m: ReturnType<typeof good>) => unknown, RegExp]> = [
    ["version 5", (m) => ({ ...m, version: 5 }), /version 5 is not supported \(expected 1 or 2 or 3 or 4; fit it again/],
    ["no edge", (m) => ({ ...m, edge: undefined }), /edge is missing/],
    ["no buckets", (m) => ({ ...m, edge: { ...m.edge, sell: { buckets: [] } } }), /edge\.sell\.buckets must list at least one bucket/],
    ["a falling rate", (m) => ({ ...m, edge: { ...m.edge, buy: { buckets: [bucket(-5, 0.02), bucket(0, 0.01)] } } }), /edge\.buy\.buckets\[1\]\.rate_per_sec is below the bucket before it/],
    ["knots out of order", (m) => ({ ...m, edge: { ...m.edge, buy: { buckets: [bucket(0, 0.01), bucket(0, 0.02)] } } }), /edge\.buy\.buckets\[1\]\.at_ticks must be above/],
    ["a negative rate", (m) => ({ ...m, edge: { ...m.edge, sell: { buckets: [bucket(0, -1)] } } }), /edge\.sell\.buckets\[0\]\.rate_per_sec is not a number ≥ 0/],
    ["no horizon", (m) => ({ ...m, edge: { ...m.edge, horizon_sec: 0 } }), /edge\.horizon_sec must be above 0/]
  ]

  it("reads a good file (the spread curve and information may be left out) and rates between its knots", () => {
    const m = validateModel("good", good())
    expect(m.edge?.horizon_sec).toBe(15)
    expect(edgeRate(m.edge!.buy, -20)).toBe(0.01)
    expect(edgeRate(m.edge!.buy, 2.5)).toBeCloseTo(0.035, 12)
    expect(edgeRate(m.edge!.buy, 50)).toBe(0.05)
  })

  it("refuses each bad file with its path and what is wrong", () => {
    for (const [name, edit, message] of cases) {
      expect(() => validateModel("m.json", edit(good())), name).toThrow(BacktestInputError)
      expect(() => validateModel("m.json", edit(good())), name).toThrow(message)
    }
  })

  it("the backtest CLI prints the refusal as one line and exits 2", async () => {
    const data = join(tmp, "tape")
    writeResponseTape(data, generateResponseTape("cli", 600))
    for (const [name, edit, message] of cases.slice(0, 4)) {
      const file = join(tmp, `${name.replace(/ /g, "-")}.json`)
      writeFileSync(file, JSON.stringify(edit(good())))
      const r = await cli(["--data", data, "--response", file, "--no-html", "--out", join(tmp, "bt")])
      expect(r.code, name).toBe(2)
      expect(r.stderr.trimEnd().split("\n"), name).toHaveLength(1)
      expect(r.stderr, name).toMatch(message)
    }
  }, 240_000)
})
