// suite: mostly waits (lease TTLs on the server's timer): kept from starting beside another such file
// The leader lease on a JetStream KV key (src/cluster/jetstream-lease.ts, docs/cluster.md "The
// lease"), against three real nats-server 2.10.27 nodes: renewals keep it and nobody else takes it
// meanwhile; unrenewed, it lapses on the server's timer (the bucket's max_age: 2.10 has no per-key
// TTL) and the next holder gets a greater term while the old holder's renewal is refused; the
// holder's own deadline (validUntilMonoMs) always comes before the server lets anyone else in; a
// released lease is taken at once. The clock is the real monotonic one: the server's expiry is
// real time.
import { jetstreamManager, StorageType } from "@nats-io/jetstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type JetStreamLease, openJetStreamLease, UnsafeLeaseBucket } from "../../src/cluster/jetstream-lease.ts"
import type { Lease } from "../../src/cluster/ports.ts"
import { type NatsCluster, startNatsCluster } from "../support/nats-cluster.ts"

const monoMs = (): number => performance.now()
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

let c: NatsCluster
beforeAll(async () => {
  c = await startNatsCluster(3)
}, 120_000)
afterAll(() => c?.close())

const open = async (bucket: string, ttlMs: number): Promise<JetStreamLease> => openJetStreamLease(await c.connect(), monoMs, { bucket, ttlMs })

interface Takeover {
  readonly lease: Lease
  /** When the last refused acquire was sent: the server still held the old lease after this. */
  readonly lastRefusedSentMs: number
  /** When the successful acquire's answer came: the old lease had lapsed on the server before this. */
  readonly acquiredAtMs: number
}

/** Tries `acquire` back to back until it succeeds (each try's answer is the event waited for). */
const acquireWhenFree = async (lease: JetStreamLease, holder: string): Promise<Takeover> => {
  let lastRefusedSentMs = Number.NEGATIVE_INFINITY
  for (;;) {
    const sentMs = monoMs()
    const got = await lease.acquire(holder)
    if (got !== null) return { lease: got, lastRefusedSentMs, acquiredAtMs: monoMs() }
    lastRefusedSentMs = sentMs
  }
}

describe("the leader lease on JetStream KV", () => {
  it("creates its bucket once with the lease's settings, and refuses one with another TTL", async () => {
    await open("cfg_lease", 3_000)
    await open("cfg_lease", 3_000)
    const jsm = await jetstreamManager(await c.connect())
    expect((await jsm.streams.info("KV_cfg_lease")).config).toMatchObject({ max_age: 3_000e6, max_msgs_per_subject: 1, num_replicas: 3, storage: StorageType.File, allow_direct: false })
    const refused = await open("cfg_lease", 5_000).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(UnsafeLeaseBucket)
    expect(String(refused)).toMatch(/max_age is 3000 ms, not the lease TTL 5000 ms/)
    await expect(openJetStreamLease(await c.connect(), monoMs, { bucket: "cfg_lease2", ttlMs: 400 })).rejects.toThrow(/must exceed twice the safety margin/)
  }, 60_000)

  it("is kept by renewing: nobody else acquires it meanwhile, for longer than its TTL", async () => {
    const ttlMs = 3_000
    const [a, b] = [await open("keep_lease", ttlMs), await open("keep_lease", ttlMs)]
    const beforeMs = monoMs()
    let lease = (await a.acquire("a"))!
    const afterMs = monoMs()
    expect(lease).toMatchObject({ holder: "a" })
    // Valid from the request's sending (between these two readings), less the margin.
    const sentMs = lease.validUntilMonoMs - (ttlMs - a.marginMs)
    expect(sentMs).toBeGreaterThanOrEqual(beforeMs)
    expect(sentMs).toBeLessThanOrEqual(afterMs)
    const term = lease.term
    const start = monoMs()
    while (monoMs() - start < ttlMs + 1_000) {
      expect(await b.acquire("b")).toBeNull()
      await pause(ttlMs / 6)
      const before = lease.validUntilMonoMs
      const renewed = await a.renew(lease)
      expect(renewed).not.toBeNull()
      expect(renewed!.term).toBe(term)
      expect(renewed!.validUntilMonoMs).toBeGreaterThan(before)
      lease = renewed!
    }
    expect(await b.acquire("b")).toBeNull()
  }, 60_000)

  it("lapses on the server once not renewed: another holder acquires with a greater term, never before the old holder's deadline, and the old renewal is refused", async () => {
    const ttlMs = 2_000
    const [a, b] = [await open("lapse_lease", ttlMs), await open("lapse_lease", ttlMs)]
    // The bucket's first entry: the server's expiry timer starts with it.
    const firstSentMs = monoMs()
    const first = (await a.acquire("a"))!
    const next = await acquireWhenFree(b, "b")
    expect(first.validUntilMonoMs).toBeLessThanOrEqual(next.lastRefusedSentMs)
    expect(next.acquiredAtMs - firstSentMs).toBeGreaterThanOrEqual(ttlMs)
    expect(next.lease.term).toBeGreaterThan(first.term)
    expect(await a.renew(first)).toBeNull()

    // A renewed lease, lapsing on a timer already running (later, by up to about a second).
    let held = next.lease
    for (let i = 0; i < 3; i++) held = (await b.renew(held))!
    expect(held.term).toBe(next.lease.term)
    const third = await acquireWhenFree(a, "a")
    expect(held.validUntilMonoMs).toBeLessThanOrEqual(third.lastRefusedSentMs)
    expect(third.lease.term).toBeGreaterThan(held.term)
    // The stale holder does not know it lost the lease: its release (on the revision it last
    // wrote) must not free the new holder's, and its renewal is refused.
    await b.release(held)
    expect(await b.acquire("b")).toBeNull()
    expect(await a.renew(third.lease)).not.toBeNull()
    expect(await b.renew(held)).toBeNull()
  }, 60_000)

  it("is taken at once after a release, with a greater term; the released lease renews no more", async () => {
    const ttlMs = 30_000
    const [a, b] = [await open("release_lease", ttlMs), await open("release_lease", ttlMs)]
    const lease = (await a.acquire("a"))!
    expect(await b.acquire("b")).toBeNull()
    await a.release(lease)
    const taken = await b.acquire("b")
    expect(taken).not.toBeNull()
    expect(taken!.term).toBeGreaterThan(lease.term)
    expect(await a.renew(lease)).toBeNull()
    await a.release(lease)
    expect(await a.acquire("a")).toBeNull()
    expect(await b.renew(taken!)).not.toBeNull()
  }, 60_000)

  it("renews a lease from the key itself when the last write's revision is not known here, and only for its own holder and term", async () => {
    const ttlMs = 30_000
    const [a, elsewhere] = [await open("recover_lease", ttlMs), await open("recover_lease", ttlMs)]
    const lease = (await a.acquire("a"))!
    // `elsewhere` never wrote the key: like a holder whose renewal landed but whose answer was lost.
    const renewed = await elsewhere.renew(lease)
    expect(renewed).toMatchObject({ holder: "a", term: lease.term })
    expect(await elsewhere.renew({ ...lease, holder: "x" })).toBeNull()
    expect(await elsewhere.renew({ ...lease, term: lease.term + 1 })).toBeNull()
    // The original instance's revision is stale now; it finds the key still holds its lease.
    expect(await a.renew(lease)).toMatchObject({ holder: "a", term: lease.term })
  }, 60_000)
})
