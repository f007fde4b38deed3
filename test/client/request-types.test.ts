// The client's request types against the API declaration (issues 12 and 35: the API declared
// once). Request and response types of src/client/types.ts are the declaration's own (derived
// from its schemas; test/api/declaration.test.ts holds that no copy is written): each is what
// its route's body schema accepts, so a field the declaration adds, renames or retypes reaches
// the client's typecheck. The runtime half decodes a request the client would send.
import { Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import type * as Client from "../../src/client/types.ts"
import * as Declared from "../../src/domain/schemas.ts"

type Accepts<S extends Schema.Schema.Any> = Schema.Schema.Encoded<S>

describe("the client's request types follow the API declaration", () => {
  it("each request body type is one its route's declared schema accepts", () => {
    expectTypeOf<Client.RegisterRequest>().toMatchTypeOf<Accepts<typeof Declared.RegisterRequest>>()
    expectTypeOf<Client.OrderRequest>().toMatchTypeOf<Accepts<typeof Declared.OrderRequest>>()
    expectTypeOf<Client.WalletLinkRequest>().toMatchTypeOf<Accepts<typeof Declared.WalletLinkRequest>>()
    expectTypeOf<Client.WithdrawRequest>().toMatchTypeOf<Accepts<typeof Declared.WithdrawRequest>>()
    expectTypeOf<Client.LpSessionNewRequest>().toMatchTypeOf<Accepts<typeof Declared.LpSessionNewRequest>>()
    expectTypeOf<Client.LpDelegateRequest>().toMatchTypeOf<Accepts<typeof Declared.LpDelegateRequest>>()
  })

  it("a signed order as the client builds it decodes with the declared schema", () => {
    const order: Client.OrderRequest = {
      market_id: "ab".repeat(32),
      user: "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi",
      side: "buy",
      outcome: "yes",
      price: 5_000,
      size: 10,
      order_type: "gtc",
      nonce: 1,
      signature: "00".repeat(64)
    }
    expect(Schema.decodeUnknownEither(Declared.OrderRequest)(order)._tag).toBe("Right")
    // The control: a client type drifting from the declaration is refused at run time too.
    expect(Schema.decodeUnknownEither(Declared.OrderRequest)({ ...order, price: "5000" })._tag).toBe("Left")
  })
})
