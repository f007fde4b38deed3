// The hand-written OrderRequest check on POST /v1/orders (orderRequestFast) may only
// accept what the Effect schema accepts, with the same value and key order; anything
// else falls through to the schema, whose answer and error the client gets.
import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeBody, OrderRequest, orderRequestFast } from "../../src/domain/schemas.ts"

const schemaDecode = Schema.decodeUnknownEither(OrderRequest, { onExcessProperty: "ignore" })

const oddValue = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.string({ maxLength: 3 }),
  fc.double(),
  fc.integer(),
  fc.constant(Number.MAX_SAFE_INTEGER + 1),
  fc.constant(-0),
  fc.constant(1.5),
  fc.constant([]),
  fc.constant({})
)
/** Each field: mostly a valid value, sometimes one just past a bound, of another type, or absent. */
const field = (valid: fc.Arbitrary<unknown>, near: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 30, arbitrary: valid }, { weight: 1, arbitrary: near }, { weight: 1, arbitrary: oddValue }, { weight: 1, arbitrary: fc.constant(ABSENT) })
const ABSENT = Symbol("absent")
const intIn = (min: number, max: number) => fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max))

const body = fc
  .record({
    market_id: field(fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.constant("x".repeat(128))), fc.constantFrom("", "x".repeat(129))),
    user: field(fc.string({ maxLength: 44 }), fc.constant("")),
    side: field(fc.constantFrom("buy", "sell"), fc.constantFrom("BUY", "")),
    outcome: field(fc.constantFrom("yes", "no"), fc.constant("maybe")),
    price: field(intIn(0, 10_000), fc.constantFrom(-1, 10_001, 5000.5)),
    size: field(intIn(1, 100_000_000), fc.constantFrom(0, 100_000_001)),
    order_type: field(fc.constantFrom("gtc", "post_only", "ioc", "fok"), fc.constant("day")),
    signature: field(fc.string({ maxLength: 8 }), fc.constant("")),
    nonce: field(intIn(1, Number.MAX_SAFE_INTEGER), fc.constantFrom(0, Number.MAX_SAFE_INTEGER + 1)),
    builder_api_key: field(fc.oneof(fc.string({ maxLength: 20 }), fc.constant("k".repeat(128))), fc.constant("k".repeat(129))),
    stp: field(fc.constantFrom("cancel_resting", "cancel_taking", "cancel_both"), fc.constant("none")),
    session_pub: field(fc.string({ maxLength: 44 }), fc.constant("")),
    extra: field(fc.string({ maxLength: 4 }), fc.constant(null))
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== ABSENT)))

describe("orderRequestFast against the OrderRequest schema", () => {
  it("accepts only what the schema accepts, with the same value and key order", () => {
    let accepted = 0
    fc.assert(
      fc.property(body, (b) => {
        const quick = orderRequestFast(b)
        if (quick === undefined) return
        accepted++
        const slow = schemaDecode(b)
        expect(Either.isRight(slow)).toBe(true)
        const value = (slow as Either.Right<unknown, Record<string, unknown>>).right
        expect(quick).toStrictEqual(value)
        expect(Object.keys(quick)).toEqual(Object.keys(value))
      }),
      { numRuns: 5_000, seed: 15 }
    )
    expect(accepted).toBeGreaterThan(1_000) // the generator reaches the accepting side often enough to matter
  })

  it("decides every body the schema accepts that a JSON client can send (no undefined values)", () => {
    fc.assert(
      fc.property(body, (b) => {
        const json = JSON.parse(JSON.stringify(b)) as unknown
        if (Either.isRight(schemaDecode(json))) expect(orderRequestFast(json)).toBeDefined()
      }),
      { numRuns: 5_000, seed: 16 }
    )
  })

  it("a body it refuses still gets the schema's error from decodeBody", () => {
    const decode = decodeBody(OrderRequest, "invalid_order_shape", orderRequestFast)
    const good = { market_id: "m", user: "u", side: "buy", outcome: "yes", price: 5000, size: 3, signature: "ab", nonce: 1 }
    expect(decode(good)).toStrictEqual(good)
    expect(() => decode({ ...good, price: 10_001 })).toThrow(expect.objectContaining({ code: "invalid_order_shape", detail: expect.stringContaining("price") }))
    expect(() => decode({ ...good, side: "BUY" })).toThrow(expect.objectContaining({ code: "invalid_order_shape", detail: expect.stringContaining("side") }))
  })
})
