// Ed25519 verification with node:crypto — ~13× faster than the pure-JS verifier
// here, and stricter on non-canonical signatures. It is the only verifier the
// server uses; @noble/ed25519 signs in clients and tests.
import { createPublicKey, type KeyObject, verify } from "node:crypto"
import bs58 from "bs58"

// DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow.
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")
const keyCache = new Map<string, KeyObject>()
const KEY_CACHE_MAX = 50_000

/** Decodes a base58 user key to its 32 bytes, or null when it is not one. */
export const decodeUserKey = (user: unknown): Uint8Array | null => {
  if (typeof user !== "string" || user.length < 32 || user.length > 44) return null
  try {
    const bytes = bs58.decode(user)
    return bytes.length === 32 ? bytes : null
  } catch {
    return null
  }
}

export const isUserKey = (user: unknown): user is string => decodeUserKey(user) !== null

const keyObject = (user: string, raw: Uint8Array): KeyObject => {
  let key = keyCache.get(user)
  if (key === undefined) {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" })
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear()
    keyCache.set(user, key)
  }
  return key
}

/** Parses a hex signature: null unless it is exactly 64 bytes of hex (no 0x). */
export const parseSignatureHex = (sig: unknown): Buffer | null => {
  if (typeof sig !== "string" || sig.length !== 128 || !/^[0-9a-fA-F]{128}$/.test(sig)) return null
  return Buffer.from(sig, "hex")
}

/** Verifies a 64-byte signature by `user` (base58 key) over `message`. False on any malformed input. */
export const verifyUser = (user: string, message: Uint8Array, signature: Uint8Array): boolean => {
  const raw = decodeUserKey(user)
  if (raw === null || signature.length !== 64) return false
  try {
    return verify(null, message, keyObject(user, raw), signature)
  } catch {
    return false
  }
}
