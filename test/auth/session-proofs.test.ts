// The seen-set of accepted session proofs (src/auth/session-proofs.ts): each (user, timestamp)
// once; kept while a route would accept the timestamp and then forgotten; bounded, and never
// forgetting in a way that lets a proof it saw through again (a dropped bucket raises the floor).
import { describe, expect, it } from "vitest"
import { PROOF_KEEP_SEC, SessionProofs } from "../../src/auth/session-proofs.ts"

const T0 = 1_795_305_600

describe("SessionProofs", () => {
  it("accepts each (user, timestamp) once; another user or another second is another proof", () => {
    const clock = { sec: T0 }
    const proofs = new SessionProofs(() => clock.sec)
    expect(proofs.claim("alice", T0)).toBe(true)
    expect(proofs.claim("alice", T0)).toBe(false)
    expect(proofs.claim("bob", T0)).toBe(true)
    expect(proofs.claim("alice", T0 + 1)).toBe(true)
    expect(proofs.claim("alice", T0 - 1)).toBe(true)
    expect(proofs.size).toBe(4)
  })

  it("keeps a proof while a route could accept its timestamp, then forgets it: the set returns to empty", () => {
    const clock = { sec: T0 }
    const proofs = new SessionProofs(() => clock.sec)
    // The `user:` channel accepts timestamps up to 300 s ahead: such a proof lives 600 s.
    for (let i = 0; i < 1_000; i++) expect(proofs.claim(`user-${i}`, T0 + (i % 301))).toBe(true)
    clock.sec = T0 + PROOF_KEEP_SEC
    expect(proofs.claim("user-0", T0)).toBe(false) // still inside the window: still refused
    clock.sec = T0 + PROOF_KEEP_SEC + 1
    expect(proofs.claim("late", clock.sec)).toBe(true)
    expect(proofs.size).toBe(1_000 - 4 + 1) // the T0 bucket (users 0, 301, 602, 903) has gone
    clock.sec = T0 + 300 + PROOF_KEEP_SEC + 1
    expect(proofs.claim("later", clock.sec)).toBe(true)
    expect(proofs.size).toBe(2) // "late" and "later"
    clock.sec += 2 * PROOF_KEEP_SEC
    expect(proofs.claim("last", clock.sec)).toBe(true)
    expect(proofs.size).toBe(1)
  })

  it("a forgotten timestamp is never accepted again, even when the clock steps back", () => {
    const clock = { sec: T0 }
    const proofs = new SessionProofs(() => clock.sec)
    expect(proofs.claim("alice", T0)).toBe(true)
    clock.sec = T0 + PROOF_KEEP_SEC + 1
    expect(proofs.claim("bob", clock.sec)).toBe(true) // prunes alice's bucket
    clock.sec = T0 // an NTP step back: alice's timestamp is fresh again on the wall clock
    expect(proofs.claim("alice", T0)).toBe(false)
    expect(proofs.claim("carol", T0 + 1)).toBe(true)
  })

  it("holds at most maxKept pairs: past it the oldest second is dropped and refused from then on, never reopened", () => {
    const clock = { sec: T0 }
    const proofs = new SessionProofs(() => clock.sec, 100)
    for (let i = 0; i < 100; i++) expect(proofs.claim(`u${i}`, T0 + Math.floor(i / 10))).toBe(true)
    expect(proofs.size).toBe(100)
    // Full: a new proof drops the oldest second (ten pairs), which stays refused.
    expect(proofs.claim("fresh", T0 + 20)).toBe(true)
    expect(proofs.size).toBe(91)
    expect(proofs.evicted).toBe(10)
    expect(proofs.claim("u0", T0)).toBe(false)
    expect(proofs.claim("someone-new", T0)).toBe(false)
    // The seconds still kept behave as before.
    expect(proofs.claim("u10", T0 + 1)).toBe(false)
    expect(proofs.claim("new-at-1", T0 + 1)).toBe(true)
    // 2,000 more claims never hold more than 100.
    for (let i = 0; i < 2_000; i++) {
      proofs.claim(`flood-${i}`, T0 + 21 + Math.floor(i / 50))
      expect(proofs.size).toBeLessThanOrEqual(100)
    }
    expect(proofs.claim("fresh", T0 + 20)).toBe(false)
  })
})
