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
import bs58 from "bs58"

// DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow.
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")
const KEY_CACHE_MAX = 50_000

/** A key that passed every check; `keyObject` is made the first time a signature is verified under it. */
export interface UserKeyOk {
  readonly ok: true
  readonly raw: Uint8Array
  keyObject: KeyObject | null
}

/** Why a string is not an acceptable user key, in words a client can act on. */
export interface UserKeyRefused {
  readonly ok: false
  readonly why: string
}

export type UserKeyCheck = UserKeyOk | UserKeyRefused

const cache = new Map<string, UserKeyCheck>()

const NOT_BASE58: UserKeyRefused = { ok: false, why: "not a base58 Ed25519 public key (32 bytes)" }
const NON_CANONICAL: UserKeyRefused = { ok: false, why: "refused key: non-canonical point encoding" }
const SMALL_ORDER: UserKeyRefused = { ok: false, why: "refused key: a point of small order (signatures under it can be forged)" }

/** Canonical encodings of the eight points of small order on edwards25519 (the 8-torsion). */
const SMALL_ORDER_POINTS = [
  "0100000000000000000000000000000000000000000000000000000000000000", // identity
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
  "0000000000000000000000000000000000000000000000000000000000000000", // order 4
  "0000000000000000000000000000000000000000000000000000000000000080", // order 4
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa" // order 8
].map((hex) => Buffer.from(hex, "hex"))

/** y (the low 255 bits, little-endian) ≥ p = 2^255 − 19: bytes 1..30 all 0xff, byte 31 0x7f after the sign bit, byte 0 ≥ 0xed. */
const yAtLeastP = (raw: Uint8Array): boolean => {
  if ((raw[31]! & 0x7f) !== 0x7f || raw[0]! < 0xed) return false
  for (let i = 1; i < 31; i++) if (raw[i] !== 0xff) return false
  return true
}

/** y = 1 or y = p − 1: the only points with x = 0, whose sign bit must then be clear. */
const xIsZero = (raw: Uint8Array): boolean => {
  const low = raw[0]
  if (low !== 0x01 && low !== 0xec) return false
  const fill = low === 0x01 ? 0x00 : 0xff
  for (let i = 1; i < 31; i++) if (raw[i] !== fill) return false
  return (raw[31]! & 0x7f) === (low === 0x01 ? 0x00 : 0x7f)
}

const judge = (raw: Uint8Array): UserKeyCheck => {
  if (yAtLeastP(raw) || (xIsZero(raw) && (raw[31]! & 0x80) !== 0)) return NON_CANONICAL
  for (const p of SMALL_ORDER_POINTS) if (p.equals(raw)) return SMALL_ORDER
  return { ok: true, raw, keyObject: null }
}

/** The one check of a user key (also LP session keys). Cached per string, so the hot path pays one Map lookup. */
export const checkUserKey = (user: unknown): UserKeyCheck => {
  if (typeof user !== "string" || user.length < 32 || user.length > 44) return NOT_BASE58
  const hit = cache.get(user)
  if (hit !== undefined) return hit
  let bytes: Uint8Array
  try {
    bytes = bs58.decode(user)
  } catch {
    return NOT_BASE58
  }
  const verdict = bytes.length === 32 ? judge(Buffer.from(bytes)) : NOT_BASE58
  if (cache.size >= KEY_CACHE_MAX) cache.clear()
  cache.set(user, verdict)
  return verdict
}

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
    return verify(null, message, c.keyObject, signature)
  } catch {
    return false
  }
}
