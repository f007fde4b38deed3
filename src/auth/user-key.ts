// The one definition of an acceptable user key (src/auth/ed25519.ts has why): 32 bytes of
// base58, a canonical encoding, not one of the eight points of small order. Free of Node
// modules, so the API declaration's UserKey parameter (src/api/declaration/params.ts) can use
// it and still typecheck beside the browser client.
import bs58 from "bs58"

const KEY_CACHE_MAX = 50_000

const hexBytes = (hex: string): Uint8Array => Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16))

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((v, i) => v === b[i])

/** A key that passed every check; `keyObject` is made the first time a signature is verified under it. */
export interface UserKeyOk {
  readonly ok: true
  readonly raw: Uint8Array
  /** node:crypto's KeyObject, made by src/auth/ed25519.ts on the first verification (typed loosely: this file loads anywhere). */
  keyObject: unknown
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
].map(hexBytes)

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
  for (const p of SMALL_ORDER_POINTS) if (sameBytes(p, raw)) return SMALL_ORDER
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
  const verdict = bytes.length === 32 ? judge(bytes) : NOT_BASE58
  if (cache.size >= KEY_CACHE_MAX) cache.clear()
  cache.set(user, verdict)
  return verdict
}
