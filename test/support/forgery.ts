// Keys an attacker can forge signatures for: the eight points of small order on
// edwards25519 (the 8-torsion) and the non-canonical encodings of some of them.
// Under such a key A, R = A and S = 0 satisfy the cofactorless check [S]B = R + [k]A
// whenever (k + 1)·A = 0 — for every message when A is the identity, for 1/2, 1/4 or
// 1/8 of messages otherwise — so an attacker retries with another timestamp or nonce.
import bs58 from "bs58"

/** Canonical encodings of the eight small-order points (orders 1, 2, 4, 4, 8, 8, 8, 8). */
export const SMALL_ORDER_HEX = [
  "0100000000000000000000000000000000000000000000000000000000000000", // identity (order 1)
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // (0, -1): order 2
  "0000000000000000000000000000000000000000000000000000000000000000", // (sqrt(-1), 0): order 4
  "0000000000000000000000000000000000000000000000000000000000000080", // (-sqrt(-1), 0): order 4
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa" // order 8
] as const

/** Non-canonical encodings of small-order points: x = 0 with the sign bit set, and y + p for small y. */
export const NON_CANONICAL_HEX = [
  "0100000000000000000000000000000000000000000000000000000000000080", // identity, sign bit set
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // (0, -1), sign bit set
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = 1 + p
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // y = 1 + p, sign bit set
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = 0 + p
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff" // y = 0 + p, sign bit set
] as const

export const keyOf = (hex: string): string => bs58.encode(Buffer.from(hex, "hex"))

/** The forged signature R = A, S = 0 (hex, 64 bytes). */
export const forgedSignature = (hex: string): string => hex + "00".repeat(32)

/** The group order L of edwards25519's prime subgroup. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n

/** The same signature with S replaced by S + L: equal modulo L, refused by a strict verifier (S ≥ L). */
export const withSPlusL = (signatureHex: string): string => {
  const sig = Buffer.from(signatureHex, "hex")
  let s = 0n
  for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(sig[32 + i]!)
  s += L
  for (let i = 0; i < 32; i++) {
    sig[32 + i] = Number(s & 0xffn)
    s >>= 8n
  }
  return sig.toString("hex")
}
