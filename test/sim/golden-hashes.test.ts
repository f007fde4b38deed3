// The golden hashes (test/fixtures/scenario-hashes.json, recorded by `npm run sim:hashes -- --write`
// before issue 12's refactor; 11 rows re-recorded when the workers became fibers in the simulator too,
// docs/runtime.md "Golden hashes"): a fast subset here — three short scenarios at seed 1 (storage faults, the rate limiter, a chain reorg with deposits and payouts), through the
// same runScenario path `npm run sim` takes — must reproduce the recorded journal and state
// hashes exactly. The full table (every scenario, seeds 1..3, ~8 min) is `npm run sim:hashes -- --check`.
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { diffRows, type HashRow, readRecorded } from "../../scripts/scenario-hashes.ts"
import { shippedScenarios } from "./support.ts"

const root = join(import.meta.dirname, "..", "..")
const FAST = ["storage-chaos", "rate-limit-storm", "chain-reorg"]

describe("golden scenario hashes", () => {
  const recorded = readRecorded()

  it("the recorded table covers every shipped scenario at seeds 1..3", () => {
    const names = new Set(recorded.map((r) => r.scenario))
    expect([...names].sort()).toEqual(shippedScenarios().map((s) => s.scenario.name).sort())
    for (const name of names) expect(recorded.filter((r) => r.scenario === name).map((r) => r.seed)).toEqual([1, 2, 3])
  })

  for (const name of FAST) {
    it(`${name} at seed 1 reproduces its recorded journal and state hashes`, async () => {
      const s = await runScenario(loadScenario(join(root, "scenarios", `${name}.json`)), { seed: 1 })
      const row: HashRow = { scenario: name, seed: 1, journalHash: s.journalHash, stateHash: s.stateHash }
      expect(diffRows(recorded, [row])).toEqual([])
    }, 120_000)
  }

  it("a changed hash or an unrecorded run is reported", () => {
    const row = recorded[0]!
    expect(diffRows(recorded, [{ ...row, stateHash: "x" }])).toEqual([`${row.scenario}#${row.seed}: stateHash x != recorded ${row.stateHash}`])
    expect(diffRows(recorded, [{ ...row, seed: 99 }])).toEqual([`${row.scenario}#99: not in the recorded file`])
  })
})
