// The worker-pool verifier gives the inline verifier's answers, keeps going when
// a worker dies, and never leaves a request hanging.
import type { Worker } from "node:worker_threads"
import { afterEach, describe, expect, it } from "vitest"
import { orderMessage } from "../../src/auth/messages.ts"
import { inlineVerifier, type Verifier, workerVerifier } from "../../src/auth/verifier.ts"
import { keyFromLabel } from "../../src/client/keys.ts"

const pools: Verifier[] = []
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()))
})

const cases = () => {
  const a = keyFromLabel("verifier-a")
  const b = keyFromLabel("verifier-b")
  const msg = (nonce: number) => orderMessage({ marketId: "m", user: a.user, outcome: "yes", side: "buy", priceBps: 5000, size: 3, nonce })
  const sig = (nonce: number) => Buffer.from(a.sign(msg(nonce)), "hex")
  return [
    { user: a.user, message: msg(1), signature: sig(1), want: true },
    { user: a.user, message: msg(2), signature: sig(1), want: false }, // signed another nonce
    { user: b.user, message: msg(1), signature: sig(1), want: false }, // someone else's key
    { user: a.user, message: msg(3), signature: Buffer.alloc(64), want: false },
    { user: "not-a-key", message: msg(1), signature: sig(1), want: false },
    { user: a.user, message: msg(4), signature: sig(4).subarray(0, 63), want: false }
  ]
}

describe("signature verifiers", () => {
  it("worker pool and inline verifier agree, case by case", async () => {
    const pool = workerVerifier(2)
    pools.push(pool)
    const inline = inlineVerifier()
    for (const c of cases()) {
      expect(await inline.verify(c.user, c.message, c.signature)).toBe(c.want)
      expect(await pool.verify(c.user, c.message, c.signature)).toBe(c.want)
    }
    // A burst in one turn is batched and every promise resolves with its own answer.
    const burst = Array.from({ length: 50 }, (_, i) => cases()[i % 6]!)
    expect(await Promise.all(burst.map((c) => pool.verify(c.user, c.message, c.signature)))).toEqual(burst.map((c) => c.want))
  })

  it("a batch of messages of different lengths (the packed layout carries each length): the inline answers", async () => {
    const pool = workerVerifier(1)
    pools.push(pool)
    const inline = inlineVerifier()
    const a = keyFromLabel("verifier-a")
    const burst = [0, 1, 5, 90, 200, 3, 90, 1000].flatMap((bytes, i) => {
      const message = Uint8Array.from({ length: bytes }, (_, j) => (i * 31 + j) & 0xff)
      const signature = Buffer.from(a.sign(message), "hex")
      // Each message signed, then the same signature over a one-byte-longer message (false).
      return [
        { message, signature },
        { message: Uint8Array.from([...message, 7]), signature }
      ]
    })
    const want = burst.map((_, i) => i % 2 === 0)
    expect(await Promise.all(burst.map((c) => inline.verify(a.user, c.message, c.signature)))).toEqual(want)
    expect(await Promise.all(burst.map((c) => pool.verify(a.user, c.message, c.signature)))).toEqual(want)
  })

  it("answers a batch of four or more in two parts, each answer to its own request", async () => {
    const parts: Array<{ from: number; count: number }> = []
    const pool = workerVerifier(1, { onSpawn: (w) => w.on("message", (m: { from: number; results: Uint8Array }) => parts.push({ from: m.from, count: m.results.length })) })
    pools.push(pool)
    const all = cases()
    // Nine that reach the worker (the first four cases; a bad key or length is refused before),
    // in one turn: one batch, answered as 5 then 4; mixed answers catch an offset slip.
    const burst = Array.from({ length: 9 }, (_, i) => all[(i * 3) % 4]!)
    expect(await Promise.all(burst.map((c) => pool.verify(c.user, c.message, c.signature)))).toEqual(burst.map((c) => c.want))
    expect(parts).toEqual([
      { from: 0, count: 5 },
      { from: 5, count: 4 }
    ])
    // Three (under four): one answer.
    parts.length = 0
    const small = all.slice(0, 3)
    expect(await Promise.all(small.map((c) => pool.verify(c.user, c.message, c.signature)))).toEqual(small.map((c) => c.want))
    expect(parts).toEqual([{ from: 0, count: 3 }])
  })

  it("a worker that dies between a batch's two parts: every request still gets its own answer", async () => {
    const firstWorkerParts: number[] = []
    let spawns = 0
    // The first worker is cut as soon as its first part arrives; its replacement is left alone.
    const pool = workerVerifier(1, {
      onSpawn: (w) => {
        if (++spawns > 1) return
        w.on("message", (m: { from: number }) => firstWorkerParts.push(m.from))
        w.once("message", () => void w.terminate())
      }
    })
    pools.push(pool)
    const all = cases()
    // 400 in one batch: the second half (~20 ms of verifying) is still running when the cut lands.
    const burst = Array.from({ length: 400 }, (_, i) => all[(i * 3) % 4]!)
    expect(await Promise.all(burst.map((c) => pool.verify(c.user, c.message, c.signature)))).toEqual(burst.map((c) => c.want))
    expect(firstWorkerParts).toEqual([0]) // only the first part came from the worker; the rest inline
  })

  it("answers in-flight requests and keeps serving after its worker dies", async () => {
    const spawned: Worker[] = []
    const pool = workerVerifier(1, { onSpawn: (w) => spawned.push(w) })
    pools.push(pool)
    const [good, bad] = cases()
    const inFlight = [pool.verify(good!.user, good!.message, good!.signature), pool.verify(bad!.user, bad!.message, bad!.signature)]
    // The batch is posted on the next turn; kill the worker right after.
    await new Promise((r) => setImmediate(r))
    expect(spawned).toHaveLength(1)
    await spawned[0]!.terminate()
    expect(await Promise.all(inFlight)).toEqual([true, false])
    expect(spawned).toHaveLength(2) // replaced
    expect(await pool.verify(good!.user, good!.message, good!.signature)).toBe(true)
    expect(await pool.verify(bad!.user, bad!.message, bad!.signature)).toBe(false)
  })
})
