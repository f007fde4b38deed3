// Ed25519 user keys and verification. One definition of a user key serves every
// entry point (register, orders, the WebSocket proof, wallet link, withdraw, LP
// delegation and session keys): 32 bytes of base58 that are a canonical encoding
// (y < p, and no x = 0 with the sign bit set) and not one of the eight points of
// small order. node:crypto follows RFC 8032, which accepts small-order keys, and
// under the identity key a signature (R = identity, S = 0) verifies for every
// message. The small-order points are exactly the eight 8-torsion points, so a
// blocklist of their canonical encodings (libsodium's approach) decides it in a few
// byte comparisons; a non-canonical encoding is refused before that. Whether the
// bytes are on the curve at all is left to verification: an off-curve key verifies
// nothing. Verdicts are cached with the node:crypto key object (made on first
// verify: it costs ~125 µs), which is stricter than RFC 8032 asks on signatures:
// S ≥ L is refused (test/hostile/auth-attacks.test.ts).
import { createPublicKey, type KeyObject, verify } from "node:crypto"

import { checkUserKey } from "./user-key.ts"

export { checkUserKey, type UserKeyCheck, type UserKeyOk, type UserKeyRefused } from "./user-key.ts"

// DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow.
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")

export const isUserKey = (user: unknown): user is string => checkUserKey(user).ok

/** `<field>: <why>` when `value` is not an acceptable key, else null: the detail of the route's 400. */
export const userKeyProblem = (field: string, value: unknown): string | null => {
  const c = checkUserKey(value)
  return c.ok ? null : `${field}: ${c.why}`
}

/** The 32 bytes of an acceptable user key, or null. */
export const decodeUserKey = (user: unknown): Uint8Array | null => {
  const c = checkUserKey(user)
  return c.ok ? c.raw : null
}

/**
 * Parses a hex signature: null unless it is exactly 64 bytes of hex (no 0x). The pattern is
 * checked first: Node's hex decoder reads only the low byte of each character, so it takes
 * U+0130 for "0" and a lone surrogate U+D835 for "5" (test/api/orders.test.ts).
 */
export const parseSignatureHex = (sig: unknown): Buffer | null => {
  if (typeof sig !== "string" || sig.length !== 128 || !/^[0-9a-fA-F]{128}$/.test(sig)) return null
  return Buffer.from(sig, "hex")
}

/** Verifies a 64-byte signature by `user` (base58 key) over `message`. False on any malformed or refused input. */
export const verifyUser = (user: string, message: Uint8Array, signature: Uint8Array): boolean => {
  const c = checkUserKey(user)
  if (!c.ok || signature.length !== 64) return false
  try {
    c.keyObject ??= createPublicKey({ key: Buffer.concat([SPKI_PREFIX, c.raw]), format: "der", type: "spki" })
    return verify(null, message, c.keyObject as KeyObject, signature)
  } catch {
    return false
  }
}
