// The world's order signatures (sim/world/signatures.ts). Token mode (the default): an agent's order
// message gets a world token, and the world's verifier gives, case by case, the answer node:crypto
// gives when the agent signs with Ed25519 for real; every other message is signed for real.
// Ed25519 mode: real signatures, the agents' own skipped by the verifier once. And whole runs:
// scenarios with hostile clients and LP bots give their recorded journal and state hashes with
// real Ed25519 signatures too, so the tokens change nothing the world does.
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { inlineVerifier } from "../../src/auth/verifier.ts"
import { orderMessage } from "../../src/auth/messages.ts"
import type { UserKey } from "../../src/client/keys.ts"
import { fastKeyFromSecret } from "../../src/client/keys-node.ts"
import { runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { SignatureMemo } from "../../sim/world/signatures.ts"
import { diffRows, readRecorded } from "../../scripts/scenario-hashes.ts"

const bytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex, "hex"))
const MARKET = "7fd6c0aafd4f6c29e9d12d18b87b81e374d9d6f33be5db831c46f6c4f69908a4"
const order = (user: string, nonce: number): Uint8Array => orderMessage({ marketId: MARKET, user, outcome: "yes", side: "buy", priceBps: 4_000, size: 10, nonce })

/** The cases a verifier meets, built with `sign` for alice's signatures (a token signer, or real Ed25519). */
const cases = (alice: UserKey, sign: (m: Uint8Array) => string, bob: UserKey): Array<[string, Uint8Array, Uint8Array]> => {
  const m1 = order(alice.user, 1)
  const good = bytes(sign(m1))
  const tampered = Uint8Array.from(good)
  tampered[5]! ^= 1
  return [
    [alice.user, m1, good], // her order, as signed
    [alice.user, m1, good], // the same signature again (a replay)
    [alice.user, order(alice.user, 2), good], // over another order of hers
    [bob.user, order(bob.user, 1), good], // claimed for another user
    [alice.user, m1, tampered],
    [alice.user, m1, bytes(sign(order(bob.user, 1)))], // she signs bob's order message
    [bob.user, order(bob.user, 3), bytes(bob.sign(order(bob.user, 3)))] // a real signature by a key outside the world
  ]
}

const answers = async (verify: (u: string, m: Uint8Array, s: Uint8Array) => Promise<boolean>, list: Array<[string, Uint8Array, Uint8Array]>): Promise<boolean[]> => {
  const out: boolean[] = []
  for (const [u, m, s] of list) out.push(await verify(u, m, s))
  return out
}

describe("the world's order signatures", () => {
  const aliceKey = fastKeyFromSecret(new Uint8Array(32).fill(1))
  const bob = fastKeyFromSecret(new Uint8Array(32).fill(2)) // not an agent of the world: signs for real
  const live = inlineVerifier()

  it("token mode answers every case exactly as node:crypto does when the agent signs for real", async () => {
    const memo = new SignatureMemo("token")
    const alice = memo.signer(aliceKey)
    const withTokens = await answers(memo.verifier.verify, cases(alice, alice.sign, bob))
    const withEd25519 = await answers(live.verify, cases(aliceKey, aliceKey.sign, bob))
    expect(withTokens).toEqual(withEd25519)
    expect(withTokens).toEqual([true, true, false, false, false, false, true])
    // A token is not an Ed25519 signature: what node:crypto would say of it is false.
    const m = order(alice.user, 9)
    expect(await live.verify(alice.user, m, bytes(alice.sign(m)))).toBe(false)
  })

  it("token mode signs everything but the agent's own order messages for real (those are verified outside the port)", async () => {
    const memo = new SignatureMemo("token")
    const alice = memo.signer(aliceKey)
    const text = new TextEncoder().encode("Service Session / User / Timestamp")
    const asciiOf90 = new TextEncoder().encode("x".repeat(90)) // 90 bytes, but text: never an order
    const delegation = new Uint8Array(112).fill(0xa0)
    for (const m of [text, asciiOf90, delegation, order(bob.user, 1)]) {
      expect(alice.sign(m)).toBe(aliceKey.sign(m))
      expect(await live.verify(alice.user, m, bytes(alice.sign(m)))).toBe(true)
    }
    expect(alice.sign(order(alice.user, 1))).not.toBe(aliceKey.sign(order(alice.user, 1)))
  })

  it("ed25519 mode signs for real and skips a noted signature once", async () => {
    const memo = new SignatureMemo("ed25519")
    const alice = memo.signer(aliceKey)
    const list = cases(alice, alice.sign, bob)
    expect(list[0]![2]).toEqual(bytes(aliceKey.sign(order(alice.user, 1))))
    expect(await answers(memo.verifier.verify, list)).toEqual(await answers(live.verify, list))
    expect(memo.hits).toBe(1) // the first; the replay is verified for real
  })

  it("ed25519 mode keeps a copy of the message: a buffer reused after signing cannot make a false hit", async () => {
    const memo = new SignatureMemo("ed25519")
    const alice = memo.signer(fastKeyFromSecret(new Uint8Array(32).fill(3)))
    const buf = new TextEncoder().encode("order A")
    const sig = bytes(alice.sign(buf))
    buf.set(new TextEncoder().encode("order B"))
    expect(await memo.verifier.verify(alice.user, buf, sig)).toBe(false)
    expect(memo.hits).toBe(0)
  })

  // Hostile clients send wrong and tampered signatures; liquidity-midnight's bots sign with server-held session keys.
  for (const name of ["hostile-clients", "liquidity-midnight"]) {
    it(`${name} at seed 1 with real Ed25519 signatures gives the hashes recorded with tokens`, async () => {
      const s = await runScenario(loadScenario(join(import.meta.dirname, "..", "..", "scenarios", `${name}.json`)), { seed: 1, signing: "ed25519" })
      expect(s.ok).toBe(true)
      expect(diffRows(readRecorded(), [{ scenario: name, seed: 1, journalHash: s.journalHash, stateHash: s.stateHash }])).toEqual([])
      // A hang bound, not a speed target: 4–25 s alone, 74 s beside two busy loops, over 180 s once at load 20.
    }, 900_000)
  }
})
