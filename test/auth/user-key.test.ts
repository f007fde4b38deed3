// The one definition of a user key (src/auth/ed25519.ts) decides small order by a
// blocklist of encodings and canonicity by byte comparisons. Checked here against
// an independent judge, @noble/ed25519's strict RFC 8032 decoding and [8]A = 0,
// on every special encoding and on random points.
import { Point } from "@noble/ed25519"
import bs58 from "bs58"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { checkUserKey, isUserKey } from "../../src/auth/ed25519.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { NON_CANONICAL_HEX, SMALL_ORDER_HEX } from "../support/forgery.ts"

type Verdict = "ok" | "non_canonical" | "small_order" | "off_curve"

/** What noble says of 32 bytes: off the curve, non-canonical (lenient decode only), small order, or fine. */
const nobleVerdict = (raw: Uint8Array): Verdict => {
  let lenient: Point
  try {
    lenient = Point.fromBytes(raw, true)
  } catch {
    return "off_curve"
  }
  try {
    Point.fromBytes(raw, false)
  } catch {
    return "non_canonical"
  }
  return lenient.isSmallOrder() ? "small_order" : "ok"
}

const ourVerdict = (raw: Uint8Array): Verdict => {
  const c = checkUserKey(bs58.encode(raw))
  if (c.ok) return "ok"
  if (/small order/.test(c.why)) return "small_order"
  if (/non-canonical/.test(c.why)) return "non_canonical"
  throw new Error(`unexpected refusal: ${c.why}`)
}

describe("user keys", () => {
  it("refuses all eight small-order points and the non-canonical encodings, accepts real keys", () => {
    for (const hex of SMALL_ORDER_HEX) expect(ourVerdict(Buffer.from(hex, "hex")), hex).toBe("small_order")
    for (const hex of NON_CANONICAL_HEX) expect(ourVerdict(Buffer.from(hex, "hex")), hex).toBe("non_canonical")
    for (const label of ["a", "b", "c"]) expect(isUserKey(keyFromLabel(label).user)).toBe(true)
    for (const bad of ["", "0OIl", "x".repeat(44), 42, null, bs58.encode(new Uint8Array(31).fill(9)), bs58.encode(new Uint8Array(33).fill(9))]) {
      expect(isUserKey(bad)).toBe(false)
    }
  })

  it("agrees with noble's strict decoding and [8]A = 0 wherever the bytes are on the curve", () => {
    const special = [...SMALL_ORDER_HEX, ...NON_CANONICAL_HEX].map((h) => Buffer.from(h, "hex"))
    // Points with the special encodings' neighbourhoods: y near 0, 1, p − 1 and p, both sign bits.
    const edges = fc.tuple(fc.constantFrom(0x00, 0x01, 0x02, 0xeb, 0xec, 0xed, 0xee, 0xef, 0xff), fc.constantFrom(0x00, 0xff), fc.boolean()).map(([low, fill, sign]) => {
      const b = new Uint8Array(32).fill(fill)
      b[0] = low
      b[31] = (fill === 0xff ? 0x7f : 0x00) | (sign ? 0x80 : 0)
      return b
    })
    const randomPoints = fc.bigInt({ min: 1n, max: 2n ** 252n }).map((k) => Point.BASE.multiply(k).toBytes())
    const torsionMixed = fc.tuple(fc.bigInt({ min: 1n, max: 2n ** 252n }), fc.constantFrom(...special.slice(0, 8))).map(([k, t]) =>
      Point.BASE.multiply(k).add(Point.fromBytes(t, false)).toBytes()
    )
    fc.assert(
      fc.property(fc.oneof(edges, randomPoints, torsionMixed, fc.uint8Array({ minLength: 32, maxLength: 32 })), (raw) => {
        const noble = nobleVerdict(raw)
        if (noble === "off_curve") return // left to verification: an off-curve key verifies nothing
        expect(ourVerdict(raw)).toBe(noble)
      }),
      { numRuns: 400, seed: 17 }
    )
    for (const raw of special) expect(ourVerdict(raw)).toBe(nobleVerdict(raw))
  })
})
