// The market-response model's sizes by edge (sim/backtest/response/size-edge.ts, model version 3):
// on a tape whose takers are large exactly when the mid 900 s later moves their way, the fit picks
// that horizon among its candidates and its buckets' sizes rise with the edge; on a tape whose
// sizes know nothing, no bucket stands out. A version 3 file is checked before it is used.
import { describe, expect, it } from "vitest"
import { datasetFromRows } from "../../sim/backtest/dataset.ts"
import { fitResponse } from "../../sim/backtest/response/fit.ts"
import { validateModel, sizeOf } from "../../sim/backtest/response/model.ts"
import { SIZE_HORIZONS_SEC } from "../../sim/backtest/response/size-edge.ts"
import { generateEdgeTape, risingRate } from "./response-edge-fixture.ts"

const fitWith = (sizeBy?: Parameters<typeof generateEdgeTape>[4]) => {
  const tape = generateEdgeTape("sizes", 100_000, risingRate, undefined, sizeBy)
  return fitResponse([{ source: "fixture", dataset: datasetFromRows("fixture", tape.trades, tape.levels), endMs: tape.endMs }])
}

describe("fit-response: takers' sizes by their edge against the mid minutes later", () => {
  it("finds the horizon the sizes follow, and sizes that rise with the edge", () => {
    // 30–50 contracts when the mid 900 s later is 30 ticks or more beyond the touch the taker took, else 1–10.
    const model = fitWith({ hSec: 900, size: (rng, e) => (e >= 30 ? rng.int(30, 50) : rng.int(1, 10)) })
    expect(model.version).toBe(4)
    const by = model.size_by_edge!
    expect(by.candidates.map((c) => c.horizon_sec)).toEqual([...SIZE_HORIZONS_SEC])
    expect(by.horizon_sec).toBe(900)
    for (const c of by.candidates) if (c.horizon_sec !== 900) expect(c.r_squared, `${c.horizon_sec} s`).toBeLessThan(by.candidates.find((x) => x.horizon_sec === 900)!.r_squared)
    // Buckets hold 50, 25, 15, 7.5 and 2.5 % of the takers, lower ends rising; every taker is in one.
    expect(by.buckets).toHaveLength(5)
    expect(by.buckets.reduce((a, b) => a + b.n, 0)).toBe(by.takers)
    by.buckets.forEach((b, k) => expect(Math.abs((100 * b.n) / by.takers - [50, 25, 15, 7.5, 2.5][k]!), `bucket ${k}`).toBeLessThan(1))
    for (let k = 1; k < by.buckets.length; k++) expect(by.buckets[k]!.from_ticks).toBeGreaterThan(by.buckets[k - 1]!.from_ticks)
    // The lowest half are small takers, the top buckets large ones: the edge's cut at 30 ticks falls within the top quarter.
    expect(by.buckets[0]!.mean).toBeLessThan(6)
    expect(by.buckets[4]!.mean).toBeGreaterThan(38)
    expect(by.buckets[4]!.quantiles[0]).toBeGreaterThanOrEqual(30)
    // Drawn by edge: below the first bucket's lower end the first bucket, far above the last the last.
    expect(sizeOf(model, 0.99, -1e6)).toBeLessThanOrEqual(10)
    expect(sizeOf(model, 0.01, 1e6)).toBeGreaterThanOrEqual(30)
    expect(sizeOf(model, 0.5, null)).toBe(sizeOf({ ...model, size_by_edge: null }, 0.5))
  })

  it("on a tape whose sizes know nothing of the future, the buckets explain next to none of the size", () => {
    const by = fitWith().size_by_edge!
    for (const c of by.candidates) expect(c.r_squared, `${c.horizon_sec} s`).toBeLessThan(0.01)
    const means = by.buckets.map((b) => b.mean)
    for (const m of means) expect(m).toBeGreaterThan(9)
    for (const m of means) expect(m).toBeLessThan(12)
  })
})

describe("--response: a version 3 file's sizes by edge are checked", () => {
  const good = {
    format: "twinbook-response-model", version: 3,
    size: { quantiles: [1, 2, 3] },
    edge: { horizon_sec: 15, buy: { buckets: [{ at_ticks: 0, rate_per_sec: 0.01 }] }, sell: { buckets: [{ at_ticks: 0, rate_per_sec: 0.01 }] } },
    size_by_edge: { horizon_sec: 900, buckets: [{ from_ticks: -50, quantiles: [1, 2] }, { from_ticks: 0, quantiles: [5, 9] }] }
  }
  it("reads a good one and draws by bucket; a null one means one distribution", () => {
    const m = validateModel("good", good)
    expect(m.size_by_edge!.buckets.map((b) => b.quantiles)).toEqual([[1, 2], [5, 9]])
    expect([sizeOf(m, 0, -3), sizeOf(m, 0, 0), sizeOf(m, 0, -1000)]).toEqual([1, 5, 1])
    expect(validateModel("null", { ...good, size_by_edge: null }).size_by_edge).toBeNull()
  })
  it.each([
    ["a horizon of 0", { ...good.size_by_edge, horizon_sec: 0 }, /size_by_edge\.horizon_sec must be above 0/],
    ["no buckets", { ...good.size_by_edge, buckets: [] }, /size_by_edge\.buckets must list at least one bucket/],
    ["lower ends out of order", { ...good.size_by_edge, buckets: [{ from_ticks: 0, quantiles: [1, 2] }, { from_ticks: 0, quantiles: [1, 2] }] }, /size_by_edge\.buckets\[1\]\.from_ticks must be above the bucket before it/],
    ["falling quantiles", { ...good.size_by_edge, buckets: [{ from_ticks: 0, quantiles: [3, 2] }] }, /size_by_edge\.buckets\[0\]\.quantiles must not decrease/],
    ["a size below 1", { ...good.size_by_edge, buckets: [{ from_ticks: 0, quantiles: [0, 2] }] }, /size_by_edge\.buckets\[0\]\.quantiles\[0\] is not a number ≥ 1/],
    ["not an object", 7, /size_by_edge must be an object or null/]
  ])("refuses %s, naming the file and the field", (_name, sizeByEdge, message) => {
    expect(() => validateModel("m.json", { ...good, size_by_edge: sizeByEdge })).toThrow(message)
    expect(() => validateModel("m.json", { ...good, size_by_edge: sizeByEdge })).toThrow(/^m\.json: /)
  })
})
