// Properties of the engine over generated command sequences: the ledger
// invariants after every command, rejections that change nothing, and
// snapshot → restore → replay giving the same state hash.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type Command,
  Engine,
  type EngineSnapshot,
  findViolations,
  restoreSnapshot,
  stateHash,
  takeSnapshot
} from "../../src/engine/index.ts"
import { type Abstract, abstractCommands, Driver, engineHolders } from "../support/commands.ts"
import { stateAfterRejection } from "./nonce-rule.ts"
import { eventLoopTurn } from "../support/turn.ts"

/** Runs a script, returning the concrete commands it became (for replays). */
const run = (script: Abstract[], onStep?: (e: Engine, cmd: Command) => void): { engine: Engine; commands: Command[] } => {
  const engine = new Engine()
  const driver = new Driver()
  const commands = driver.preamble()
  for (const cmd of commands) engine.apply(cmd)
  for (const a of script) {
    driver.observeOrderIds(engine.nextOrderId)
    const cmd = driver.concrete(a, engineHolders(engine))
    commands.push(cmd)
    onStep?.(engine, cmd)
  }
  return { engine, commands }
}

/** State minus the sequence/time counters, which every command advances. */
const withoutClock = (snap: EngineSnapshot): string => {
  const { lastSeq: _s, lastTsSec: _t, ...rest } = snap
  return JSON.stringify(rest)
}

describe("engine properties", () => {
  // Seconds of synchronous work per property: a loop turn per run (test/support/turn.ts).
  it("every invariant holds after every command", async () => {
    await fc.assert(
      fc.asyncProperty(abstractCommands(200), async (script) => {
        await eventLoopTurn()
        run(script, (engine, cmd) => {
          engine.apply(cmd)
          expect(findViolations(engine), JSON.stringify(cmd)).toEqual([])
        })
      }),
      { numRuns: 300 }
    )
  })

  it("a rejected command changes nothing but the sequence counters (and a place_order's spent nonce)", async () => {
    let rejections = 0
    await fc.assert(
      fc.asyncProperty(abstractCommands(150), async (script) => {
        await eventLoopTurn()
        run(script, (engine, cmd) => {
          const before = takeSnapshot(engine)
          const events = engine.apply(cmd)
          const ev = events[0]
          if (ev?.type === "rejected") {
            rejections++
            expect(events).toHaveLength(1)
            expect(withoutClock(takeSnapshot(engine))).toBe(withoutClock(stateAfterRejection(before, cmd, ev.reason)))
          }
        })
      }),
      { numRuns: 300 }
    )
    // The generator must actually produce rejections for this to mean anything.
    expect(rejections).toBeGreaterThan(1_000)
  })

  it("snapshot, restore and replay of the rest give the same events and state hash", async () => {
    await fc.assert(
      fc.asyncProperty(abstractCommands(200), fc.double({ min: 0, max: 1, noNaN: true }), async (script, cut) => {
        await eventLoopTurn()
        const { engine: original, commands } = run(script, (e, cmd) => void e.apply(cmd))
        // Replay the same commands, snapshot at the cut, restore from JSON text, finish the replay.
        const splitAt = Math.floor(cut * commands.length)
        const first = new Engine()
        for (const cmd of commands.slice(0, splitAt)) first.apply(cmd)
        const restored = restoreSnapshot(JSON.parse(JSON.stringify(takeSnapshot(first))))
        expect(stateHash(restored)).toBe(stateHash(first))
        for (const cmd of commands.slice(splitAt)) expect(restored.apply(cmd)).toEqual(first.apply(cmd))
        expect(stateHash(restored)).toBe(stateHash(original))
        expect(findViolations(restored)).toEqual([])
      }),
      { numRuns: 200 }
    )
  })

  it("the same commands give the same state hash; a different history a different one", async () => {
    await fc.assert(
      fc.asyncProperty(abstractCommands(120), async (script) => {
        await eventLoopTurn()
        const a = run(script, (e, cmd) => void e.apply(cmd))
        const b = new Engine()
        for (const cmd of a.commands) b.apply(cmd)
        expect(stateHash(b)).toBe(stateHash(a.engine))
        b.apply({ type: "credit", seq: b.lastSeq + 1, tsSec: b.lastTsSec, user: "u0", amountMicro: 1, ref: "x" })
        expect(stateHash(b)).not.toBe(stateHash(a.engine))
      }),
      { numRuns: 100 }
    )
  })
})

describe("the invariant checker is not vacuous", () => {
  const busy = (): Engine => {
    const { engine } = run(
      fc.sample(abstractCommands(300, { statusWeight: 0 }), { seed: 7, numRuns: 1 })[0]!,
      (e, cmd) => void e.apply(cmd)
    )
    expect(findViolations(engine)).toEqual([])
    expect(engine.orders.size).toBeGreaterThan(0)
    return engine
  }
  const corruptions: Array<[string, (e: Engine) => void, RegExp]> = [
    ["a micro created", (e) => void (e.accounts.get("u1")!.availableMicro += 1), /money/],
    ["a negative balance", (e) => {
      const a = e.accounts.get("u2")!
      e.accounts.get("u3")!.availableMicro += a.availableMicro + 5
      a.availableMicro = -5
    }, /negative balance/],
    ["a lock that no longer matches its orders", (e) => {
      const o = [...e.orders.values()].find((x) => x.side === "buy")!
      o.lockPerContractMicro += 1
    }, /locked/],
    ["a YES share from nowhere", (e) => {
      const m = [...e.markets.values()].find((x) => x.yesSupply > 0)!
      m.yesSupply += 1
    }, /YES/],
    ["a stale best price", (e) => {
      const m = [...e.markets.values()].find((x) => x.bids.best > 0)!
      m.bids.best -= 1
    }, /best/]
  ]
  for (const [name, corrupt, pattern] of corruptions) {
    it(`reports ${name}`, () => {
      const e = busy()
      corrupt(e)
      expect(findViolations(e).join("\n")).toMatch(pattern)
    })
  }
})
