// The auditor catches a planted bug — a layer that drops one fill from the taker's
// ledger — and the run reports it with its seed.
import { describe, expect, it } from "vitest"
import { runScenario } from "../../sim/scenario/run.ts"
import { dropOneFill } from "../../sim/testing/drop-fill.ts"
import { shippedScenarios } from "./support.ts"

describe("planted bug", () => {
  const scenario = shippedScenarios().find((s) => s.scenario.name === "deposit-then-trade")!.scenario

  it("a dropped fill fails the run, naming the broken invariant, and the seed reproduces it", async () => {
    const run = () => runScenario(scenario, { seed: 42, durationSec: 1_800, expectations: false, tamper: dropOneFill(5) })
    const a = await run()
    expect(a.ok).toBe(false)
    expect(a.seed).toBe(42)
    expect(a.failures.some((f) => /invariant: .*(YES held != yesSupply|NO held != noSupply)/.test(f))).toBe(true)
    const b = await run()
    expect(b.failures).toEqual(a.failures)
  }, 60_000)

  it("the same run without the planted bug is clean", async () => {
    const clean = await runScenario(scenario, { seed: 42, durationSec: 1_800, expectations: false })
    expect(clean.failures).toEqual([])
  }, 60_000)
})
