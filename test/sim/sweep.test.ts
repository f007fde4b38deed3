// A bounded seed sweep in CI: three more seeds of every shipped scenario, at CI length,
// must keep every invariant and give three different journals. The CLI's worker-thread sweep is exercised on two seeds.
import { describe, expect, it } from "vitest"
import { runScenario } from "../../sim/scenario/run.ts"
import { parseSeeds, runSweep } from "../../sim/sweep/sweep.ts"
import { ciDurationSec, shippedScenarios } from "./support.ts"

const SEEDS = [101, 102, 103]

describe("seed sweep", () => {
  for (const { scenario } of shippedScenarios()) {
    it(`${scenario.name}: seeds ${SEEDS.join(", ")} keep every invariant, each with a journal of its own`, async () => {
      const hashes = new Set<string>()
      for (const seed of SEEDS) {
        const s = await runScenario(scenario, { seed, durationSec: ciDurationSec(scenario), expectations: false })
        expect(s.failures, `reproduce: npm run sim -- scenarios/${scenario.name}.json --seed ${seed} --duration ${ciDurationSec(scenario)}s`).toEqual([])
        hashes.add(s.journalHash)
      }
      // Another seed, another journal (the other half of determinism, beside test/sim/determinism.test.ts).
      expect(hashes.size).toBe(SEEDS.length)
    }, 180_000)
  }

  it("runs seeds on worker threads and reports each with its hash", async () => {
    const { file } = shippedScenarios().find((s) => s.scenario.name === "deposit-then-trade")!
    const seen: number[] = []
    const results = await runSweep(file, [1, 2], 600, (r) => seen.push(r.seed), 2)
    expect(results.map((r) => r.seed)).toEqual([1, 2])
    expect(seen.sort()).toEqual([1, 2])
    for (const r of results) {
      expect(r.error).toBeUndefined()
      expect(r.summary!.journalHash).toMatch(/^[0-9a-f]{64}$/)
    }
    // The same seed in-process gives the hash the worker reported.
    const scenario = shippedScenarios().find((s) => s.scenario.name === "deposit-then-trade")!.scenario
    const local = await runScenario(scenario, { seed: 2, durationSec: 600, expectations: false })
    expect(local.journalHash).toBe(results[1]!.summary!.journalHash)
  }, 120_000)

  it("parses seed lists and ranges, and rejects nonsense", () => {
    expect(parseSeeds("3..6")).toEqual([3, 4, 5, 6])
    expect(parseSeeds("1,5,9")).toEqual([1, 5, 9])
    expect(() => parseSeeds("9..1")).toThrow(/empty/)
    expect(() => parseSeeds("a..b")).toThrow(/expected/)
  })
})
