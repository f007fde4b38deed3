// Counterfactual runs (`--without AGENT`): every agent's randomness comes from the world seed
// and its own name, and so do its network draws, so leaving one agent out changes nothing
// for the others until the market itself differs (the removed agent's first order).
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { userOfAgent } from "../../sim/fidelity/realised.ts"
import { runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import type { OrderBody } from "../../src/service/commands.ts"
import { SCENARIO_DIR } from "./support.ts"

const scenario = loadScenario(join(SCENARIO_DIR, "liquidity-midnight.json"))
const SEED = 3

interface Placed {
  readonly atMs: number
  readonly order: OrderBody
}

/** Every order the exchange accepted into its journal, with the virtual ms it was applied at. */
const ordersOf = async (without: string[]): Promise<Placed[]> => {
  const placed: Placed[] = []
  await runScenario(scenario, {
    seed: SEED,
    durationSec: 1_200,
    expectations: false,
    without,
    onWorld: (world) =>
      world.onBoot((x) =>
        x.onApply((record) => {
          if (record.cmd.type === "place_order") placed.push({ atMs: world.nowMs(), order: record.cmd.order })
        })
      )
  })
  return placed
}

describe("a world without one agent", () => {
  it("leaves every other agent's actions identical, to the millisecond, until the removed agent first acts", async () => {
    for (const removed of ["lp_bot-0-0", "noise-2-5"]) {
      const user = userOfAgent(SEED, removed)
      const full = await ordersOf([])
      const without = await ordersOf([removed])
      expect(without.some((p) => p.order.user === user)).toBe(false)
      const firstOfRemoved = full.find((p) => p.order.user === user)?.atMs ?? Number.POSITIVE_INFINITY
      const before = (xs: Placed[]): Placed[] => xs.filter((p) => p.order.user !== user && p.atMs < firstOfRemoved)
      // Not vacuous: several other agents acted before the market could differ.
      expect(new Set(before(full).map((p) => p.order.user)).size, removed).toBeGreaterThanOrEqual(3)
      expect(before(without), removed).toEqual(before(full))
      // Each other agent's first order (time, market, side, price, size, nonce) is the same.
      const firsts = (xs: Placed[]): Map<string, Placed> => {
        const m = new Map<string, Placed>()
        for (const p of before(xs)) if (!m.has(p.order.user)) m.set(p.order.user, p)
        return m
      }
      expect(firsts(without)).toEqual(firsts(full))
    }
  }, 240_000)

  it("refuses to leave out an agent the scenario does not have", async () => {
    await expect(runScenario(scenario, { seed: SEED, durationSec: 60, without: ["lp_bot-9-9"] })).rejects.toThrow(/--without lp_bot-9-9: no such agent/)
  })
})
