// The chain worker reacts to new blocks (issue 15, deposit latency): with a head poll, a pass runs
// as soon as the head is one no pass has started at, and otherwise only once `pollMs` has passed
// since the last pass (payouts and re-checks on a quiet chain).
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { Chain } from "../../src/chain/chain.ts"
import { onNewHead } from "../../src/runtime/chain-services.ts"

const rig = () => {
  const s = { head: 10n, passes: 0, nowMs: 0, headFails: false, headReads: 0 }
  const chain = {
    head: async () => {
      s.headReads++
      if (s.headFails) throw new Error("rpc down")
      return s.head
    }
  } as unknown as Chain
  // The chain pass never fails: an RPC error inside it is reported and the pass returns.
  const pass = Effect.sync(() => void s.passes++)
  const tick = onNewHead(chain, pass, 1_000, () => s.nowMs)
  const at = async (ms: number) => {
    s.nowMs = ms
    await Effect.runPromise(tick)
  }
  return { s, at }
}

describe("chain worker on new heads", () => {
  it("passes at once on a new head, never twice for one head, and at least every pollMs on a quiet chain", async () => {
    const { s, at } = rig()
    await at(100) // nothing seen yet: a pass
    expect(s.passes).toBe(1)
    for (let ms = 200; ms <= 1_000; ms += 100) await at(ms) // same head
    expect(s.passes).toBe(1)
    s.head = 11n
    await at(1_050) // within pollMs of the last pass, but a new block
    expect(s.passes).toBe(2)
    await at(1_150)
    expect(s.passes).toBe(2)
    const readsBefore = s.headReads
    await at(2_050) // pollMs after the last pass: a pass without a new head, and no head read
    expect(s.passes).toBe(3)
    expect(s.headReads).toBe(readsBefore)
  })

  it("a pass that failed at a head is not retried at that head before the deadline (no error at every head read)", async () => {
    const { s, at } = rig()
    await at(100) // a pass at head 10 (say its RPC call failed inside)
    for (let ms = 200; ms <= 1_000; ms += 100) await at(ms)
    expect(s.passes).toBe(1)
    s.head = 11n
    await at(1_050)
    expect(s.passes).toBe(2)
  })

  it("a failing head read runs no pass until the pollMs deadline, where the pass itself reports the error", async () => {
    const { s, at } = rig()
    await at(100)
    s.head = 12n
    s.headFails = true
    await at(200)
    await at(900)
    expect(s.passes).toBe(1)
    await at(1_100)
    expect(s.passes).toBe(2)
  })
})
