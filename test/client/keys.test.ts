// Keys and signatures of the browser-safe client: generation, backup import/export,
// every signed message verified by the server's own verifier (node:crypto), the Node
// fast signer giving identical bytes, and the Buffer-free message builders giving the
// same bytes as the Buffer-based layout they replaced (SPEC §5.3, docs/api.md).
import { createHash } from "node:crypto"
import bs58 from "bs58"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { verifyUser } from "../../src/auth/ed25519.ts"
import { delegationMessage, orderMessage, sessionMessage, walletLinkMessage, withdrawMessage } from "../../src/auth/messages.ts"
import { fastKeyFromSecret } from "../../src/client/keys-node.ts"
import {
  exportSecretBase58,
  exportSecretHex,
  generateKey,
  importSecret,
  keyFromLabel,
  keyFromSecret,
  signDelegation,
  signOrder,
  signSession,
  signWalletLink,
  signWithdraw
} from "../../src/client/keys.ts"

const hexBytes = (hex: string) => Uint8Array.from(Buffer.from(hex, "hex"))
const verifies = (user: string, message: Uint8Array, sigHex: string) => verifyUser(user, message, hexBytes(sigHex))

/** The Buffer-based layouts as they were before the client went browser-safe: the reference. */
const referenceOrder = (o: { marketId: string; user: string; outcome: "yes" | "no"; side: "buy" | "sell"; priceBps: number; size: number; nonce: number }) => {
  const buf = Buffer.alloc(90)
  const id = /^(0x)?[0-9a-fA-F]{64}$/.test(o.marketId) ? Buffer.from(o.marketId.replace(/^0x/, ""), "hex") : createHash("sha256").update(o.marketId, "utf8").digest()
  id.copy(buf, 0)
  Buffer.from(bs58.decode(o.user)).copy(buf, 32)
  buf[64] = o.outcome === "yes" ? 0 : 1
  buf[65] = o.side === "buy" ? 0 : 1
  buf.writeBigUInt64LE(BigInt(o.priceBps), 66)
  buf.writeBigUInt64LE(BigInt(o.size), 74)
  buf.writeBigUInt64LE(BigInt(o.nonce), 82)
  return buf
}
const referenceDelegation = (d: { user: string; sessionPub: string; scope: string; expiresAtUnix: number; nonce: number }) => {
  const tail = Buffer.alloc(16)
  tail.writeBigUInt64BE(BigInt(d.expiresAtUnix), 0)
  tail.writeBigUInt64BE(BigInt(d.nonce), 8)
  const scope = Buffer.from(d.scope, "ascii")
  return Buffer.concat([Buffer.from("twinbook-lp-delegation-v1", "ascii"), Buffer.from(bs58.decode(d.user)), Buffer.from(bs58.decode(d.sessionPub)), Buffer.from([scope.length]), scope, tail])
}

describe("keys", () => {
  it("generateKey draws 32 fresh bytes (crypto.getRandomValues) or takes injected ones", () => {
    const a = generateKey()
    const b = generateKey()
    expect(a.user).not.toBe(b.user)
    expect(a.secretKey).toHaveLength(32)
    expect(bs58.decode(a.user)).toHaveLength(32)
    const seeded = generateKey((n) => new Uint8Array(n).fill(3))
    expect(seeded.user).toBe(keyFromSecret(new Uint8Array(32).fill(3)).user)
  })

  it("exports and imports the secret as hex (with or without 0x, any case) and base58", () => {
    const k = keyFromLabel("backup")
    const hex = exportSecretHex(k)
    expect(hex).toMatch(/^[0-9a-f]{64}$/)
    for (const text of [hex, `0x${hex}`, hex.toUpperCase(), `  ${hex}\n`, exportSecretBase58(k)]) expect(importSecret(text).user).toBe(k.user)
    expect(() => importSecret("abc")).toThrow(/base58 decodes to \d+ bytes, expected 32/)
    expect(() => importSecret("0OIl")).toThrow(/expected 64 hex characters or base58/)
    expect(() => keyFromSecret(new Uint8Array(31))).toThrow(RangeError)
  })

  it("every signature verifies with the server's verifier; the node:crypto signer gives the same bytes", () => {
    const k = keyFromLabel("signer")
    const fast = fastKeyFromSecret(k.secretKey)
    expect(fast.user).toBe(k.user)
    const wallet = "0x8ba1f109551bd432803012645ac136ddd64dba72"
    const order = { marketId: "g7-2027-prediction-markets", outcome: "no" as const, side: "sell" as const, priceBps: 4321, size: 17, nonce: 1_795_305_600_123 }
    const session = { user: k.user, sessionPub: keyFromLabel("session").user, scope: "orders", expiresAtUnix: 1_795_400_000, nonce: 3 }
    const cases: Array<[string, Uint8Array, string]> = [
      ["session", sessionMessage(k.user, 1_795_305_600), signSession(k, 1_795_305_600)],
      ["order", orderMessage({ ...order, user: k.user }), signOrder(k, order)],
      // The wallet is lowercased before signing, as the server builds the text.
      ["wallet link", new TextEncoder().encode(walletLinkMessage(k.user, wallet, 1_795_305_600)), signWalletLink(k, wallet.toUpperCase().replace("0X", "0x"), 1_795_305_600)],
      ["withdraw", new TextEncoder().encode(withdrawMessage(k.user, wallet, 5_000_000, 9)), signWithdraw(k, wallet, 5_000_000, 9)],
      ["delegation", delegationMessage(session), signDelegation(k, Buffer.from(delegationMessage(session)).toString("hex"))]
    ]
    for (const [name, message, sig] of cases) {
      expect({ name, ok: verifies(k.user, message, sig) }).toEqual({ name, ok: true })
      expect({ name, fast: fast.sign(message) }).toEqual({ name, fast: sig })
      expect({ name, other: verifies(keyFromLabel("other").user, message, sig) }).toEqual({ name, other: false })
    }
  })

  it("the Buffer-free message builders give the Buffer-based layouts' bytes", () => {
    const users = [keyFromLabel("a").user, keyFromLabel("b").user, keyFromLabel("c").user]
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString("hex")), fc.constant(`0x${"AB".repeat(32)}`)),
        fc.constantFrom(...users),
        fc.constantFrom("yes" as const, "no" as const),
        fc.constantFrom("buy" as const, "sell" as const),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        (marketId, user, outcome, side, priceBps, size, nonce) => {
          const o = { marketId, user, outcome, side, priceBps, size, nonce }
          expect(Buffer.from(orderMessage(o)).equals(referenceOrder(o))).toBe(true)
          const d = { user, sessionPub: users[0]!, scope: "orders", expiresAtUnix: size, nonce }
          expect(Buffer.from(delegationMessage(d)).equals(referenceDelegation(d))).toBe(true)
        }
      ),
      { numRuns: 300, seed: 11 }
    )
    expect(Buffer.from(sessionMessage("U", 5)).toString("utf8")).toBe("Service Session\nUser: U\nTimestamp: 5")
  })
})
