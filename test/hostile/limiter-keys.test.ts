// 300k limiter keys from generated addresses (issue 31 item 6): fresh addresses cost a bucket
// each, and an IPv6 host has 2^64 of them. The limiter holds at most its cap of buckets, does a
// bounded amount of work per take whatever the number of keys (counted in `examined`, not
// timed), drops a bucket only once it would be full again (so a flood never resets a drained
// client below the cap), and counts an IPv6 /64 as one client and an IPv4-mapped address as
// its IPv4 address — over real HTTP too, on a dual-stack listener.
import { describe, expect, it } from "vitest"
import { keyFromLabel } from "../../src/client/keys.ts"
import { ApiError } from "../../src/domain/errors.ts"
import { addressKey } from "../../src/usecase/address-key.ts"
import { type BucketSpec, DEFAULT_MAX_BUCKETS, RateLimiter } from "../../src/usecase/rate-limit.ts"
import { rawHttp } from "../support/reads.ts"
import { registerBody } from "../support/raw-http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const REGISTER: BucketSpec = { name: "ip_register", limit: 30, windowSec: 60 }
const ORDERS: BucketSpec = { name: "ip_orders", limit: 600, windowSec: 60 }

/** The i-th generated address: IPv4 for even i, else an IPv6 address in a /64 of its own. */
const generated = (i: number, salt = 0): string =>
  i % 2 === 0
    ? `${10 + salt}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
    : `2001:db8:${(salt * 8 + (i >> 16)).toString(16)}:${(i & 0xffff).toString(16)}:${((i * 7919) & 0xffff).toString(16)}::${(i & 0xfff).toString(16)}`

/** Takes one token for each generated address from `from` (exclusive `to`); the most work one take did. */
const flood = (limiter: RateLimiter, from: number, to: number, salt = 0): number => {
  let maxExamined = 0
  for (let i = from; i < to; i++) {
    const before = limiter.examined
    limiter.takeForAddress(i % 3 === 0 ? ORDERS : REGISTER, generated(i, salt))
    maxExamined = Math.max(maxExamined, limiter.examined - before)
  }
  return maxExamined
}

/** The refusal a take meets, or null when it is served. */
const refusal = (f: () => void): { retryAfterSec: number | undefined } | null => {
  try {
    f()
    return null
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "rate_limited") throw err
    return { retryAfterSec: err.retryAfterSec }
  }
}

describe("300k limiter keys from generated addresses", () => {
  it("300,000 fresh addresses at once: buckets stay at the cap, each take does bounded work, a fresh address after is served", () => {
    const clock = { ms: 0 }
    const limiter = new RateLimiter(() => clock.ms)
    expect(limiter.maxBuckets).toBe(DEFAULT_MAX_BUCKETS)
    expect(DEFAULT_MAX_BUCKETS).toBeLessThan(300_000) // so the flood does reach the cap
    const maxExamined = flood(limiter, 0, 300_000)
    expect(limiter.size).toBe(DEFAULT_MAX_BUCKETS)
    // Nothing had refilled (no time passed), so the least recently used were evicted, one per new key past the cap.
    expect(limiter.evicted).toBe(300_000 - DEFAULT_MAX_BUCKETS)
    expect(maxExamined).toBeLessThanOrEqual(5)
    expect(limiter.examined).toBeLessThanOrEqual(5 * 300_000)
    // A fresh client after the flood: served, with the same bounded work, the map no larger.
    const before = limiter.examined
    expect(refusal(() => limiter.takeForAddress(REGISTER, "192.0.2.77"))).toBeNull()
    expect(limiter.examined - before).toBeLessThanOrEqual(5)
    expect(limiter.size).toBe(DEFAULT_MAX_BUCKETS)
  })

  it("a bucket goes once it would be full again, never before: a drained client keeps its refusal through 200,000 fresh keys", () => {
    const clock = { ms: 0 }
    const limiter = new RateLimiter(() => clock.ms)
    // The same client's history on a limiter that sees nothing else: what its answers must be.
    const alone = new RateLimiter(() => clock.ms)
    const DRAINED: BucketSpec = { name: "ip_admin_failures", limit: 2, windowSec: 3600 }
    flood(limiter, 0, 200_000)
    const drained = [limiter, alone].map((l) => {
      for (let i = 0; i < 2; i++) l.takeForAddress(DRAINED, "198.51.100.9")
      return refusal(() => l.takeForAddress(DRAINED, "198.51.100.9"))
    })
    expect(drained[0]).toEqual(drained[1])
    expect(drained[0]?.retryAfterSec).toBeGreaterThanOrEqual(1800)
    expect(limiter.size).toBe(200_001)
    // One window later every flood bucket would be full again (the drained one would not): each
    // new key drops up to four from the least recently used end, so 100,000 new keys drop them all.
    clock.ms = 60_000
    const maxExamined = flood(limiter, 0, 100_000, 1)
    expect(maxExamined).toBeLessThanOrEqual(5)
    expect(limiter.size).toBe(100_001)
    expect(limiter.evicted).toBe(0)
    clock.ms = 61_000
    const answer = refusal(() => limiter.takeForAddress(DRAINED, "198.51.100.9"))
    expect(answer).toEqual(refusal(() => alone.takeForAddress(DRAINED, "198.51.100.9")))
    expect(answer).not.toBeNull()
  })

  it("an IPv6 /64 is one client, an IPv4-mapped address is its IPv4 address", () => {
    const limiter = new RateLimiter(() => 0)
    // 1,000 addresses of one /64: 30 served, the rest refused; the next /64 is another client.
    const served = Array.from({ length: 1000 }, (_, i) => `2001:db8:a:b:${((i * 40503) & 0xffff).toString(16)}:${i.toString(16)}::1`).filter(
      (ip) => refusal(() => limiter.takeForAddress(REGISTER, ip)) === null
    )
    expect(served.length).toBe(30)
    expect(refusal(() => limiter.takeForAddress(REGISTER, "2001:db8:a:c::1"))).toBeNull()
    expect(limiter.size).toBe(2)
    // Mapped and plain IPv4 share a bucket; two IPv4 addresses do not.
    for (let i = 0; i < 15; i++) limiter.takeForAddress(REGISTER, "::ffff:203.0.113.5")
    for (let i = 0; i < 15; i++) limiter.takeForAddress(REGISTER, "203.0.113.5")
    expect(refusal(() => limiter.takeForAddress(REGISTER, "::FFFF:203.0.113.5"))).not.toBeNull()
    expect(refusal(() => limiter.takeForAddress(REGISTER, "::ffff:203.0.113.6"))).toBeNull()
  })

  it("addressKey: every textual form of an address gives one key", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["127.0.0.1", "127.0.0.1"],
      ["::ffff:127.0.0.2", "127.0.0.2"],
      ["::ffff:7f00:2", "127.0.0.2"],
      ["0:0:0:0:0:ffff:7f00:2", "127.0.0.2"],
      ["::1", "0:0:0:0::/64"],
      ["2001:db8::1", "2001:db8:0:0::/64"],
      ["2001:DB8:0:0:ffff:1:2:3", "2001:db8:0:0::/64"],
      ["2001:0db8:0001:0002:0003:0004:0005:0006", "2001:db8:1:2::/64"],
      ["2001:db8:1:2::", "2001:db8:1:2::/64"],
      ["fe80::1%eth0", "fe80:0:0:0::/64"],
      ["2001:db8:1:2:3:4:192.0.2.1", "2001:db8:1:2::/64"],
      ["::", "0:0:0:0::/64"],
      ["2001:db8::", "2001:db8:0:0::/64"],
      // Not addresses: kept as they are (a simulator's label, node's "unknown").
      ["unknown", "unknown"],
      ["1:2:3", "1:2:3"],
      ["1::2::3", "1::2::3"],
      ["1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8:9"],
      ["12345::1", "12345::1"],
      [":1", ":1"],
      ["1:", "1:"],
      [":::", ":::"],
      ["1:::2", "1:::2"],
      ["::ffff:1.2.3", "::ffff:1.2.3"],
      ["::ffff:1.2.3.256", "::ffff:1.2.3.256"],
      ["1:2:3:4:5:6:7:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4"],
      ["1:2:3:4:5:6:7:8::", "1:2:3:4:5:6:7:8::"],
      ["g::1", "g::1"]
    ]
    expect(cases.map(([ip]) => [ip, addressKey(ip)])).toEqual(cases)
  })
})

describe("per-address buckets on a dual-stack listener", () => {
  it("IPv4 clients arriving as ::ffff:a.b.c.d are limited one by one, not as one /64", async () => {
    const t: TestServer = await startTestServer({ host: "::" })
    try {
      // Through the IPv4 loopback: the server sees ::ffff:127.0.0.x.
      const v4 = { url: t.url.replace("[::]", "127.0.0.1") } as TestServer
      const register = (label: string, from: string) =>
        rawHttp(v4, "POST", "/v1/builders/register", { "content-type": "application/json" }, JSON.stringify(registerBody(keyFromLabel(label), t.nowSec())), from)
      for (let i = 0; i < 30; i++) expect((await register(`ds-${i}`, "127.0.0.2")).status, `registration ${i + 1}`).toBe(200)
      expect((await register("ds-30", "127.0.0.2")).status).toBe(429)
      expect((await register("ds-neighbour", "127.0.0.3")).status).toBe(200)
      expect(t.service.ctx.limiter.size).toBe(2)
    } finally {
      await t.close()
    }
  })
})
