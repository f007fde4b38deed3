// The real engine against the naive reference: thousands of generated command
// sequences over several users and markets must give identical events, and the
// same balances and positions at the end.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { assertInvariants, Engine, type Command } from "../../src/engine/index.ts"
import { ReferenceEngine } from "../reference/reference-engine.ts"
import { type Abstract, abstractCommands, Driver, engineHolders, MARKETS } from "../support/commands.ts"
import { eventLoopTurn } from "../support/turn.ts"

const step = (real: Engine, ref: ReferenceEngine, cmd: Command): void => {
  expect(real.apply(cmd), `command ${JSON.stringify(cmd)}`).toEqual(ref.apply(cmd))
  assertInvariants(real)
}

const runBoth = (script: Abstract[]) => {
  const real = new Engine()
  const ref = new ReferenceEngine()
  const driver = new Driver()
  for (const cmd of driver.preamble()) step(real, ref, cmd)
  for (const a of script) {
    driver.observeOrderIds(real.nextOrderId)
    step(real, ref, driver.concrete(a, engineHolders(real)))
  }
  return { real, ref, driver }
}

const expectSameLedger = (real: Engine, ref: ReferenceEngine): void => {
  for (const [user, a] of ref.accts) {
    const acct = real.accounts.get(user)
    expect([user, acct?.availableMicro, acct?.lockedMicro]).toEqual([user, a.available, a.locked])
  }
  for (const p of ref.positions) {
    const pos = real.accounts.get(p.user)?.positions.get(p.marketId)
    expect([p.user, p.marketId, pos?.yes ?? 0, pos?.no ?? 0, pos?.costYesMicro ?? 0, pos?.costNoMicro ?? 0]).toEqual([
      p.user, p.marketId, p.yes, p.no, p.costYes, p.costNo
    ])
  }
  expect(real.orders.size).toBe(ref.resting.length)
}

describe("engine vs reference engine", () => {
  it("agree event for event on thousands of generated sequences", async () => {
    // Seconds of synchronous work per property: a loop turn per run (test/support/turn.ts).
    await fc.assert(
      fc.asyncProperty(abstractCommands(80), async (script) => {
        await eventLoopTurn()
        const { real, ref } = runBoth(script)
        expectSameLedger(real, ref)
      }),
      { numRuns: 2_000 }
    )
  })

  it("agree on long sequences without status changes (deep books, many merges)", async () => {
    await fc.assert(
      fc.asyncProperty(abstractCommands(400, { statusWeight: 0 }), async (script) => {
        await eventLoopTurn()
        const { real, ref } = runBoth(script)
        expectSameLedger(real, ref)
      }),
      { numRuns: 150 }
    )
  })

  it("agree through resolution and redemption of every holder", async () => {
    await fc.assert(
      fc.asyncProperty(abstractCommands(150, { statusWeight: 0 }), fc.array(fc.constantFrom("yes" as const, "no" as const), { minLength: 3, maxLength: 3 }), async (script, winners) => {
        await eventLoopTurn()
        const { real, ref, driver } = runBoth(script)
        MARKETS.forEach((marketId, i) => {
          step(real, ref, driver.concrete({ k: "status", market: i, status: "resolved", winning: winners[i]! }))
          for (const h of engineHolders(real).holders(marketId)) {
            const redeem = driver.concrete({ k: "redeem", user: 0, market: i })
            step(real, ref, { type: "redeem", seq: redeem.seq, tsSec: redeem.tsSec, marketId, user: h.user })
          }
          expect(real.markets.get(marketId)!.backingMicro).toBe(0)
        })
        expectSameLedger(real, ref)
        // Everything paid out: all money sits in balances again.
        let total = 0
        for (const a of real.accounts.values()) total += a.availableMicro + a.lockedMicro
        expect(total).toBe(real.netDepositsMicro)
      }),
      { numRuns: 200 }
    )
  })
})
