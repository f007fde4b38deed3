// The simulator's verifier (sim/signatures.ts): signatures the world's own agents made are known
// good and answered without a second verification; everything else is verified by node:crypto,
// so every answer is the one the live verifier gives.
import { describe, expect, it } from "vitest"
import { inlineVerifier } from "../../src/auth/verifier.ts"
import { fastKeyFromSecret } from "../../src/client/keys-node.ts"
import { SignatureMemo } from "../../sim/signatures.ts"

const bytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex, "hex"))

describe("the simulator's signature memo", () => {
  it("answers exactly as node:crypto does, and skips only the agents' own signatures", async () => {
    const memo = new SignatureMemo()
    const alice = memo.signer(fastKeyFromSecret(new Uint8Array(32).fill(1)))
    const bob = fastKeyFromSecret(new Uint8Array(32).fill(2)) // not an agent of this world: never noted
    const live = inlineVerifier()
    const message = new TextEncoder().encode("order 1")
    const good = bytes(alice.sign(message))
    const tampered = Uint8Array.from(good)
    tampered[5]! ^= 1
    const cases: Array<[string, Uint8Array, Uint8Array]> = [
      [alice.user, message, good], // noted: answered from the memo
      [alice.user, message, good], // the same signature again (a replay): verified for real, still good
      [alice.user, new TextEncoder().encode("order 2"), good], // another message under a noted signature
      [bob.user, message, good], // claimed for another user
      [alice.user, message, tampered],
      [bob.user, message, bytes(bob.sign(message))]
    ]
    const answers: boolean[] = []
    for (const [user, m, sig] of cases) answers.push(await memo.verifier.verify(user, m, sig))
    const expected: boolean[] = []
    for (const [user, m, sig] of cases) expected.push(await live.verify(user, m, sig))
    expect(answers).toEqual(expected)
    expect(answers).toEqual([true, true, false, false, false, true])
    expect({ hits: memo.hits, verified: memo.verified }).toEqual({ hits: 1, verified: 5 })
  })

  it("keeps a copy of the message: a buffer reused after signing cannot make a false memo hit", async () => {
    const memo = new SignatureMemo()
    const alice = memo.signer(fastKeyFromSecret(new Uint8Array(32).fill(3)))
    const buf = new TextEncoder().encode("order A")
    const sig = bytes(alice.sign(buf))
    buf.set(new TextEncoder().encode("order B"))
    expect(await memo.verifier.verify(alice.user, buf, sig)).toBe(false)
    expect(memo.hits).toBe(0)
  })
})
