// One seed → one journal hash, for every shipped scenario: each scenario's run reproduces the hashes
// recorded for it (test/sim/__snapshots__/determinism.test.ts.snap), which an earlier process
// computed — a stronger check than running it twice here, at a third of the CPU (issue 35 item 6).
// After a change that is meant to change a scenario's journal, record again with
// `npx vitest run test/sim/determinism.test.ts -u` and say why in the commit. Another seed gives
// another hash: test/sim/sweep.test.ts checks that on its three seeds of every scenario.
import { describe, expect, it } from "vitest"
import { runScenario } from "../../sim/scenario/run.ts"
import { ciDurationSec, shippedScenarios } from "./support.ts"

const scenarios = shippedScenarios()

describe("every shipped scenario is deterministic", () => {
  it("ships at least eight scenarios", () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(8)
  })

  for (const { file, scenario } of scenarios) {
    // The busy day runs its first 15 virtual minutes (500 agents onboarding and trading); a
    // regime variant of another scenario (liquidity-midnight-fees, …) its CI length: its base runs
    // in full here, and the variants run in full in the fidelity benchmark and the golden table.
    // The others run their full length, expectations included.
    const variant = scenarios.some((o) => scenario.name.startsWith(`${o.scenario.name}-`))
    const full = !variant && scenario.agents.reduce((n, a) => n + a.count, 0) <= 100
    const opts = full ? {} : { durationSec: variant ? ciDurationSec(scenario) : 900, expectations: false }
    it(`${scenario.name}: its seed reproduces the recorded journalHash and stateHash, and passes`, async () => {
      const a = await runScenario(scenario, opts)
      expect(a.failures, `${file} seed ${a.seed}`).toEqual([])
      expect(a.ok).toBe(true)
      expect(a.journalRecords).toBeGreaterThan(100)
      expect({ seed: a.seed, durationSec: opts.durationSec ?? scenario.duration, journalHash: a.journalHash, stateHash: a.stateHash, events: a.events }).toMatchSnapshot()
    }, 900_000) // a hang detector for a loaded 2-core machine (about 10 s quiet, over 100 s beside two CPU hogs and other work), not a speed assertion
  }
})
