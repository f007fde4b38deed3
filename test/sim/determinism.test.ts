// One seed → one journal hash, for every shipped scenario; another seed → another hash.
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
    it(`${scenario.name}: same seed twice gives the same journalHash and passes`, async () => {
      const a = await runScenario(scenario, opts)
      const b = await runScenario(scenario, opts)
      expect(a.failures, `${file} seed ${a.seed}`).toEqual([])
      expect(a.ok).toBe(true)
      expect(a.journalRecords).toBeGreaterThan(100)
      expect(b.journalHash).toBe(a.journalHash)
      expect(b.stateHash).toBe(a.stateHash)
      expect(b.events).toBe(a.events)
      const c = await runScenario(scenario, { ...opts, seed: a.seed + 1, expectations: false })
      expect(c.journalHash).not.toBe(a.journalHash)
    }, 900_000) // a hang detector for a loaded 2-core machine (27 s quiet, 75 s in a full run, over 300 s beside two CPU hogs and other work), not a speed assertion
  }
})
