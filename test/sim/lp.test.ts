// Liquidity in the simulated world: server-managed bots quote for their users (their
// orders show in the users' own reads), a client-side strategy quotes beside them, and
// the daily pool pays at 00:00 UTC within its budget.
import { describe, expect, it } from "vitest"
import { runScenario } from "../../sim/scenario/run.ts"
import { shippedScenarios } from "./support.ts"

describe("liquidity in the simulated world", () => {
  it("bots run, their orders appear in the users' reads, and the pool pays once within budget", async () => {
    const scenario = shippedScenarios().find((s) => s.scenario.name === "liquidity-midnight")!.scenario
    const s = await runScenario(scenario)
    expect(s.failures).toEqual([])
    expect(s.lpBotsStarted).toBe(3)
    // Each check compares the bot's status with the user's /v1/orders/all (a mismatch fails the run).
    expect(s.lpBotChecks).toBeGreaterThan(10)
    expect(s.rewardsPaidMicro).toBeGreaterThan(0)
    expect(s.rewardsPaidMicro).toBeLessThanOrEqual(1_000_000_000)
  }, 300_000) // a hang detector (23 s in a full run), not a speed assertion
})
