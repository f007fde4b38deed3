// The order surface over real HTTP (SPEC §4 "Orders", §5.3-5.4, §7, §8 trading
// pauses; decisions in docs/decisions.md and docs/engine.md): placement of every
// order type, validation and signature errors, engine rejections, builder
// attribution, self-trade prevention, the trading switch and the pause queue,
// cancel, cancel-all and the resting-order list. Each test runs on a fresh
// server, so order ids, trade ids and balances are exact.
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { idFromSlug } from "../../src/service/catalog.ts"
import {
  balanceOf,
  call,
  errorBody,
  type OrderFields,
  ordersOf,
  postOrder,
  type RawResult,
  sha256Hex,
  signedOrder,
  ZERO_SIG
} from "../support/raw-http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const G7 = "g7-2027-prediction-markets" // taker fee 0: balances move by notional only
const BTC = "btc-above-120k-2027-03-31" // taker fee 10 bps

let t: TestServer
beforeEach(async () => {
  t = await startTestServer()
})
afterEach(() => t.close())

const g7 = () => t.market(G7)
/** An engine rejection: the engine's reason is the code, with no detail. */
const rejected = (code: string) => ({ error: code, detail: expect.any(String) })
const plain = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body })
const bal = (available: number, locked: number) => ({ available, locked, total: available + locked })
const expectBalance = async (c: ApiClient | string, available: number, locked: number) => {
  const user = typeof c === "string" ? c : c.user
  expect(await balanceOf(t, user)).toEqual({ user, ...bal(available, locked) })
}
const restingView = (id: number, market_id: string, side: string, outcome: string, price: number, original_size: number, remaining: number, created_at = t.nowSec()) => ({
  id,
  market_id,
  side,
  outcome,
  price,
  original_size,
  remaining,
  created_at
})
const book = async (market: string) => {
  const b = (await call(t, "GET", `/v1/markets/${market}/book`)).body
  return { bids: b.bids, asks: b.asks }
}
const fill = (trade_id: number, price: number, size: number, maker: ApiClient, maker_order_id: number, kind: string, fee = 0, builder_fee = 0) => ({
  trade_id,
  price,
  size,
  maker: maker.user,
  maker_order_id,
  fee,
  builder_fee,
  kind
})

describe("POST /v1/orders: order types", () => {
  it("gtc rests; order_type defaults to gtc", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    const implicit = await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 10 })
    expect(plain(implicit)).toEqual({ status: 200, body: { order_id: 1, fills: [], remaining: 10, market_id: m, status: "resting" } })
    const explicit = await alice.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 3000, size: 5, order_type: "gtc" })
    expect(plain(explicit)).toEqual({ status: 200, body: { order_id: 2, fills: [], remaining: 5, market_id: m, status: "resting" } })
    await expectBalance(alice, 2_500_000, 7_500_000)
    expect(await ordersOf(t, alice.user)).toEqual({
      orders: [restingView(1, m, "buy", "yes", 6000, 10, 10), restingView(2, m, "buy", "no", 3000, 5, 5)],
      total: 2
    })
    // Buy NO 3000 rests as a YES ask at 7000.
    expect(await book(m)).toEqual({ bids: [{ price: 6000, size: 10 }], asks: [{ price: 7000, size: 5 }] })
  })

  it("gtc fills what crosses and rests the rest", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 4 })
    const res = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4500, size: 10 })
    // Bob pays the maker's price (NO 4000) for 4, and his remaining 6 rest at NO 4500 (YES ask 5500).
    expect(plain(res)).toEqual({
      status: 200,
      body: { order_id: 2, fills: [fill(1, 4000, 4, alice, 1, "mint")], remaining: 6, market_id: m, status: "resting" }
    })
    await expectBalance(bob, 10_000_000 - 1_600_000 - 2_700_000, 2_700_000)
    await expectBalance(alice, 7_600_000, 0)
    expect(await ordersOf(t, bob.user)).toEqual({ orders: [restingView(2, m, "buy", "no", 4500, 10, 6)], total: 1 })
  })

  it("post_only rests when it does not cross and is rejected 422 would_cross when it does (own orders included)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 10 })
    const crossing = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 2, order_type: "post_only", nonce: 1 })
    expect(plain(crossing)).toEqual({ status: 422, body: rejected("would_cross") })
    await expectBalance(bob, 10_000_000, 0)
    // The refused order spent nonce 1: the next one takes 2.
    const resting = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 3900, size: 2, order_type: "post_only", nonce: 2 })
    expect(plain(resting)).toEqual({ status: 200, body: { order_id: 2, fills: [], remaining: 2, market_id: m, status: "resting" } })
    await expectBalance(bob, 9_220_000, 780_000)
    // Crossing only its owner's order is still a cross.
    const own = await alice.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 1, order_type: "post_only" })
    expect(plain(own)).toEqual({ status: 422, body: rejected("would_cross") })
    expect(await book(m)).toEqual({ bids: [{ price: 6000, size: 10 }], asks: [{ price: 6100, size: 2 }] })
  })

  it("ioc fills what it can and cancels the rest; an ioc that fills nothing is accepted and cancelled", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 4 })
    const partial = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 10, order_type: "ioc" })
    expect(plain(partial)).toEqual({
      status: 200,
      body: { order_id: 2, fills: [fill(1, 4000, 4, alice, 1, "mint")], remaining: 6, market_id: m, status: "cancelled" }
    })
    await expectBalance(bob, 8_400_000, 0)
    await expectBalance(alice, 7_600_000, 0)
    const nothing = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 3, order_type: "ioc" })
    expect(plain(nothing)).toEqual({ status: 200, body: { order_id: 3, fills: [], remaining: 3, market_id: m, status: "cancelled" } })
    await expectBalance(bob, 8_400_000, 0)
    expect(await ordersOf(t, bob.user)).toEqual({ orders: [], total: 0 })
    expect(await book(m)).toEqual({ bids: [], asks: [] })
  })

  it("fok fills entirely, or is rejected 422 fok_unfilled changing nothing", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 4 })
    const tooBig = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 5, order_type: "fok", nonce: 1 })
    expect(plain(tooBig)).toEqual({ status: 422, body: rejected("fok_unfilled") })
    await expectBalance(bob, 10_000_000, 0)
    expect(await book(m)).toEqual({ bids: [{ price: 6000, size: 4 }], asks: [] })
    const exact = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 4, order_type: "fok", nonce: 2 })
    expect(plain(exact)).toEqual({
      status: 200,
      body: { order_id: 2, fills: [fill(1, 4000, 4, alice, 1, "mint")], remaining: 0, market_id: m, status: "filled" }
    })
    await expectBalance(bob, 8_400_000, 0)
    await expectBalance(alice, 7_600_000, 0)
  })

  it("a taker fee shows in the fill and the balances (10 bps market, rebate funded by the fee)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = t.market(BTC)
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 10 })
    const res = await bob.placeOrder({ market_id: m, side: "sell", outcome: "yes", price: 6000, size: 1 })
    expect(plain(res)).toEqual({ status: 422, body: rejected("insufficient_shares") })
    const take = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 10, order_type: "ioc" })
    // fee = ceil(10 · 4000 · 10 / 100) = 4000; rebate floor(10 · 6000 · 5 / 100) = 3000 ≤ 4000.
    expect(take.body.fills).toEqual([fill(1, 4000, 10, alice, 1, "mint", 4000)])
    await expectBalance(bob, 10_000_000 - 4_000_000 - 4000, 0)
    await expectBalance(alice, 10_000_000 - 6_000_000 + 3000, 0)
  })
})

describe("POST /v1/orders: market id as hex or slug", () => {
  it("accepts the hex id (also 0x-prefixed or upper case) and the slug; the answer names the hex id", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    let nonce = 0
    for (const id of [m, G7, `0x${m}`, m.toUpperCase()]) {
      const res = await postOrder(t, alice, signedOrder(alice.key, { market_id: id, side: "buy", outcome: "yes", price: 1000, size: 1, nonce: ++nonce }))
      expect({ id, ...plain(res) }).toEqual({ id, status: 200, body: { order_id: nonce, fills: [], remaining: 1, market_id: m, status: "resting" } })
    }
    expect((await ordersOf(t, alice.user)).total).toBe(4)
  })

  it("the signature covers the market id as sent: sha256 of the slug for a slug, the hex bytes for a hex id", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    const fields = { side: "buy" as const, outcome: "yes" as const, price: 1000, size: 1, nonce: 1 }
    // Signed over the hex id, sent as the slug.
    const signedHex = signedOrder(alice.key, { ...fields, market_id: m })
    expect(plain(await postOrder(t, alice, { ...signedHex, market_id: G7 }))).toEqual({ status: 403, body: errorBody("invalid_signature") })
    // Signed over the slug, sent as the hex id.
    const signedSlug = signedOrder(alice.key, { ...fields, market_id: G7 })
    expect(plain(await postOrder(t, alice, { ...signedSlug, market_id: m }))).toEqual({ status: 403, body: errorBody("invalid_signature") })
    // A slug is signed as sha256(slug): signing that digest as a hex id gives the same bytes.
    const viaDigest = signedOrder(alice.key, { ...fields, market_id: sha256Hex(G7) })
    expect((await postOrder(t, alice, { ...viaDigest, market_id: G7 })).status).toBe(200)
  })

  it("404 not_found for an unknown market, and for the bare event id or slug of a multi-outcome event", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const unknown = ["no-such-market", "00".repeat(32), "ucl-final-2027-winner", idFromSlug("event", "ucl-final-2027-winner")]
    for (const id of unknown) {
      const res = await postOrder(t, alice, signedOrder(alice.key, { market_id: id, side: "buy", outcome: "yes", price: 1000, size: 1, nonce: 1 }))
      expect({ id, ...plain(res) }).toEqual({ id, status: 404, body: errorBody("not_found") })
    }
    // An outcome's own market id trades.
    const outcome = t.market("ucl-final-2027-winner-real-madrid")
    const ok = await postOrder(t, alice, signedOrder(alice.key, { market_id: outcome, side: "buy", outcome: "yes", price: 1000, size: 1, nonce: 1 }))
    expect(plain(ok)).toEqual({ status: 200, body: { order_id: 1, fills: [], remaining: 1, market_id: outcome, status: "resting" } })
  })
})

describe("POST /v1/orders: request validation", () => {
  it("400 invalid_order_shape for each bad field", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const good = signedOrder(alice.key, { market_id: g7(), side: "buy", outcome: "yes", price: 5000, size: 1, nonce: 1 })
    const without = (field: string) => Object.fromEntries(Object.entries(good).filter(([k]) => k !== field))
    const cases: Array<[string, unknown]> = [
      ["price 10001", { ...good, price: 10_001 }],
      ["price -1", { ...good, price: -1 }],
      ["price 50.5", { ...good, price: 50.5 }],
      ["price as string", { ...good, price: "5000" }],
      ["price null", { ...good, price: null }],
      ["no price", without("price")],
      ["size 0", { ...good, size: 0 }],
      ["size -1", { ...good, size: -1 }],
      ["size 1.5", { ...good, size: 1.5 }],
      ["size 100000001", { ...good, size: 100_000_001 }],
      ["size as string", { ...good, size: "1" }],
      ["no size", without("size")],
      ["nonce -1", { ...good, nonce: -1 }],
      ["nonce 1.5", { ...good, nonce: 1.5 }],
      ["nonce as string", { ...good, nonce: "1" }],
      ["no nonce", without("nonce")],
      ["side hold", { ...good, side: "hold" }],
      ["side BUY", { ...good, side: "BUY" }],
      ["no side", without("side")],
      ["outcome maybe", { ...good, outcome: "maybe" }],
      ["outcome YES", { ...good, outcome: "YES" }],
      ["no outcome", without("outcome")],
      ["order_type limit", { ...good, order_type: "limit" }],
      ["order_type GTC", { ...good, order_type: "GTC" }],
      ["order_type null", { ...good, order_type: null }],
      ["stp none", { ...good, stp: "none" }],
      ["stp cancel", { ...good, stp: "cancel" }],
      ["no signature", without("signature")],
      ["signature number", { ...good, signature: 5 }],
      ["no market_id", without("market_id")],
      ["empty market_id", { ...good, market_id: "" }],
      ["market_id over 128 chars", { ...good, market_id: "m".repeat(129) }],
      ["no user", without("user")],
      ["user not base58", { ...good, user: "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl" }],
      ["user of 31 bytes", { ...good, user: "1111111111111111111111111111111" }],
      ["builder_api_key number", { ...good, builder_api_key: 7 }],
      ["builder_api_key over 128 chars", { ...good, builder_api_key: "b".repeat(129) }]
    ]
    for (const [label, body] of cases) {
      const res = await postOrder(t, alice, body)
      expect({ label, ...plain(res) }).toEqual({ label, status: 400, body: errorBody("invalid_order_shape") })
    }
    // None of them consumed nonce 1 or touched the balance.
    await expectBalance(alice, 10_000_000, 0)
    expect((await postOrder(t, alice, good)).status).toBe(200)
  })

  it("400 invalid_json for a body that is not a JSON object", async () => {
    const alice = await t.funded("alice", 10_000_000)
    for (const raw of ["{", "order please", "[]", "null"]) {
      const res = await call(t, "POST", "/v1/orders", { body: raw, cookie: alice.cookie })
      expect({ raw, ...plain(res) }).toEqual({ raw, status: 400, body: errorBody("invalid_json") })
    }
  })

  it("400 invalid_signature_format for a signature that is not 64 bytes of hex without 0x", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const good = signedOrder(alice.key, { market_id: g7(), side: "buy", outcome: "yes", price: 5000, size: 1, nonce: 1 })
    const sig = good.signature as string
    const cases: Array<[string, string]> = [
      ["empty", ""],
      ["0x-prefixed", `0x${sig}`],
      ["63 bytes", sig.slice(0, 126)],
      ["65 bytes", `${sig}00`],
      ["odd length", sig.slice(0, 127)],
      ["non-hex", `g${sig.slice(1)}`],
      ["non-hex last", `${sig.slice(0, 127)}g`],
      ["space inside", `${sig.slice(0, 64)} ${sig.slice(65)}`],
      // Node's hex decoder reads a character's low byte only: U+0100 | c decodes as c itself, so
      // this string would decode to the very signature and the order would be accepted.
      ["non-hex character read as its low byte", `${sig.slice(0, 127)}${String.fromCharCode(0x100 | sig.charCodeAt(127))}`],
      ["lone surrogate", `${sig.slice(0, 126)}\ud835${sig.slice(127)}`],
      ["base64", Buffer.from(sig, "hex").toString("base64")]
    ]
    for (const [label, signature] of cases) {
      const res = await postOrder(t, alice, { ...good, signature })
      expect({ label, ...plain(res) }).toEqual({ label, status: 400, body: errorBody("invalid_signature_format") })
    }
    expect((await postOrder(t, alice, good)).status).toBe(200)
  })

  it("403 invalid_signature when the signed fields differ from the sent ones or another key signed", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = keyFromLabel("bob")
    const fields: OrderFields = { market_id: g7(), side: "buy", outcome: "yes", price: 5000, size: 1, nonce: 1 }
    const good = signedOrder(alice.key, fields)
    const signedWith = (over: Partial<OrderFields>) => ({ ...good, signature: signedOrder(alice.key, { ...fields, ...over }).signature })
    const cases: Array<[string, unknown]> = [
      ["signed price 5001, sent 5000", signedWith({ price: 5001 })],
      ["signed nonce 2, sent 1", signedWith({ nonce: 2 })],
      ["signed size 2, sent 1", signedWith({ size: 2 })],
      ["signed side sell, sent buy", signedWith({ side: "sell" })],
      ["signed outcome no, sent yes", signedWith({ outcome: "no" })],
      ["signed another market, sent this one", signedWith({ market_id: t.market(BTC) })],
      ["signed by bob", { ...good, signature: signedOrder(bob, fields).signature }],
      ["upper-case hex of another signature", { ...good, signature: (signedWith({ nonce: 3 }).signature as string).toUpperCase() }],
      ["all zeros", { ...good, signature: ZERO_SIG }]
    ]
    for (const [label, body] of cases) {
      const res = await postOrder(t, alice, body)
      expect({ label, ...plain(res) }).toEqual({ label, status: 403, body: errorBody("invalid_signature") })
    }
    // Upper-case hex of the right signature verifies; nonce 1 was never consumed.
    const ok = await postOrder(t, alice, { ...good, signature: (good.signature as string).toUpperCase() })
    expect(plain(ok)).toEqual({ status: 200, body: { order_id: 1, fills: [], remaining: 1, market_id: g7(), status: "resting" } })
  })
})

describe("POST /v1/orders: engine rejections", () => {
  it("422 nonce_stale for an equal or lower nonce; a refused order spends its nonce (docs/decisions.md)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    const order = (nonce: number, price = 1000, size = 1) => postOrder(t, alice, signedOrder(alice.key, { market_id: m, side: "buy", outcome: "yes", price, size, nonce }))
    expect((await order(5)).status).toBe(200)
    for (const nonce of [5, 4, 1]) expect({ nonce, ...plain(await order(nonce)) }).toEqual({ nonce, status: 422, body: rejected("nonce_stale") })
    // Refused for balance at nonce 6: nonce 6 is spent, whatever the next body says.
    expect(plain(await order(6, 1000, 1000))).toEqual({ status: 422, body: rejected("insufficient_balance") })
    expect(plain(await order(6, 99, 1))).toEqual({ status: 422, body: rejected("nonce_stale") })
    expect(plain(await order(6))).toEqual({ status: 422, body: rejected("nonce_stale") })
    expect(plain(await order(7))).toEqual({ status: 200, body: { order_id: 2, fills: [], remaining: 1, market_id: m, status: "resting" } })
    // Nonces need not be consecutive; they are per user.
    expect((await order(1_000_000)).status).toBe(200)
    const bob = await t.funded("bob", 10_000_000)
    expect((await postOrder(t, bob, signedOrder(bob.key, { market_id: m, side: "buy", outcome: "yes", price: 1000, size: 1, nonce: 1 }))).status).toBe(200)
    await expectBalance(alice, 9_700_000, 300_000)
  })

  it("a refused fill-or-kill replayed byte for byte once liquidity appears is 422 nonce_stale, not a trade (issue 31)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    const fok = signedOrder(bob.key, { market_id: m, side: "buy", outcome: "no", price: 4000, size: 4, order_type: "fok", nonce: 1 })
    expect(plain(await postOrder(t, bob, fok))).toEqual({ status: 422, body: rejected("fok_unfilled") })
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 4 })
    expect(plain(await postOrder(t, bob, fok))).toEqual({ status: 422, body: rejected("nonce_stale") })
    expect(await book(m)).toEqual({ bids: [{ price: 6000, size: 4 }], asks: [] })
    await expectBalance(bob, 10_000_000, 0)
  })

  it("422 insufficient_balance at one micro short of the worst-case lock (price plus taker fee, per contract rounded up)", async () => {
    // Buy YES 6000 on a 10 bps market locks 600,000 + ceil(6000 · 10 / 100) = 600,600 per contract.
    const alice = await t.funded("alice", 1_201_199)
    const m = t.market(BTC)
    const order = (nonce: number) => postOrder(t, alice, signedOrder(alice.key, { market_id: m, side: "buy", outcome: "yes", price: 6000, size: 2, nonce }))
    expect(plain(await order(1))).toEqual({ status: 422, body: rejected("insufficient_balance") })
    await expectBalance(alice, 1_201_199, 0)
    expect((await t.admin("POST", "/v1/admin/credit", { user: alice.user, amount_micro: 1 })).status).toBe(200)
    expect(plain(await order(2))).toEqual({ status: 200, body: { order_id: 1, fills: [], remaining: 2, market_id: m, status: "resting" } })
    // Resting, it only ever trades as maker: the taker-fee part of the lock comes back.
    await expectBalance(alice, 1_200, 1_200_000)
    // A user who was never credited has no balance at all.
    const bob = t.client("bob")
    await bob.register()
    expect(plain(await bob.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 100, size: 1 }))).toEqual({
      status: 422,
      body: rejected("insufficient_balance")
    })
  })

  it("422 insufficient_shares: sells need free shares of that outcome (no naked shorts)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    expect(plain(await alice.placeOrder({ market_id: m, side: "sell", outcome: "yes", price: 5000, size: 1 }))).toEqual({
      status: 422,
      body: rejected("insufficient_shares")
    })
    // Alice gets 3 YES by crossing bob's NO bid (a mint).
    await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 3 })
    expect((await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 3 })).body.status).toBe("filled")
    expect(plain(await alice.placeOrder({ market_id: m, side: "sell", outcome: "yes", price: 7000, size: 4 }))).toEqual({
      status: 422,
      body: rejected("insufficient_shares")
    })
    expect(plain(await alice.placeOrder({ market_id: m, side: "sell", outcome: "no", price: 7000, size: 1 }))).toEqual({
      status: 422,
      body: rejected("insufficient_shares")
    })
    const sell = await alice.placeOrder({ market_id: m, side: "sell", outcome: "yes", price: 7000, size: 3 })
    expect(plain(sell)).toEqual({ status: 200, body: { order_id: 3, fills: [], remaining: 3, market_id: m, status: "resting" } })
    // All three are locked in the resting sell.
    expect(plain(await alice.placeOrder({ market_id: m, side: "sell", outcome: "yes", price: 7000, size: 1 }))).toEqual({
      status: 422,
      body: rejected("insufficient_shares")
    })
    // A sell locks shares, never cash.
    await expectBalance(alice, 8_200_000, 0)
  })

  it("422 dust_order below one cent of notional (size · price · 100 < 10,000 micro)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    let nonce = 0
    const order = (side: "buy" | "sell", price: number, size: number) =>
      postOrder(t, alice, signedOrder(alice.key, { market_id: m, side, outcome: "yes", price, size, nonce: ++nonce }))
    for (const [side, price, size] of [["buy", 99, 1], ["buy", 1, 99], ["buy", 0, 1000], ["sell", 99, 1]] as const) {
      expect({ side, price, size, ...plain(await order(side, price, size)) }).toEqual({ side, price, size, status: 422, body: rejected("dust_order") })
    }
    expect((await order("buy", 100, 1)).status).toBe(200)
    expect((await order("buy", 1, 100)).status).toBe(200)
    expect((await order("buy", 10_000, 1)).status).toBe(200)
    await expectBalance(alice, 10_000_000 - 10_000 - 10_000 - 1_000_000, 1_020_000)
  })

  it("422 unknown_builder for a builder_api_key that no registration returned", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    for (const key of ["0123456789abcdef0123456789abcdef", "", alice.apiKey!.toUpperCase()]) {
      const res = await postOrder(t, alice, { ...signedOrder(alice.key, { market_id: m, side: "buy", outcome: "yes", price: 1000, size: 1, nonce: 1 }), builder_api_key: key })
      expect({ key, ...plain(res) }).toEqual({ key, status: 422, body: errorBody("unknown_builder") })
    }
    // One's own api_key is a registered builder key.
    const own = await postOrder(t, alice, signedOrder(alice.key, { market_id: m, side: "buy", outcome: "yes", price: 1000, size: 1, nonce: 1, builder_api_key: alice.apiKey! }))
    expect(own.status).toBe(200)
  })
})

describe("builder attribution", () => {
  it("fee_bps 0 earns nothing; once the operator raises it, fills carrying the api_key credit the builder wallet (taker or maker side)", async () => {
    const dev = t.client("dev")
    const reg = await dev.register("dev-shop")
    expect(reg.status).toBe(200)
    const apiKey = reg.body.api_key
    const alice = await t.funded("alice", 20_000_000)
    const bob = await t.funded("bob", 20_000_000)
    const carol = await t.funded("carol", 20_000_000)
    const m = g7()

    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 10 }) // order 1
    // While fee_bps is 0 attribution has no effect.
    const free = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 2, builder_api_key: apiKey })
    expect(free.body.fills).toEqual([fill(1, 4000, 2, alice, 1, "mint", 0, 0)])
    await expectBalance(dev.user, 0, 0)
    await expectBalance(bob, 19_200_000, 0)

    const raised = await t.admin("POST", `/v1/admin/builders/${dev.user}`, { fee_bps: 50 })
    expect(raised).toEqual({ status: 200, body: { user: dev.user, name: "dev-shop", api_key: apiKey, fee_bps: 50, enabled: true } })

    // Taker side: builder fee = ceil(8 · 4000 · 50 / 100) = 16,000 micro, paid by bob.
    const taker = await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 8, builder_api_key: apiKey })
    expect(plain(taker)).toEqual({
      status: 200,
      body: { order_id: 3, fills: [fill(2, 4000, 8, alice, 1, "mint", 0, 16_000)], remaining: 0, market_id: m, status: "filled" }
    })
    await expectBalance(bob, 19_200_000 - 3_200_000 - 16_000, 0)
    await expectBalance(dev.user, 16_000, 0)
    await expectBalance(alice, 14_000_000, 0)

    // Maker side: a resting buy locks price + ceil(5000 · 50 / 100) = 502,500 per contract.
    const maker = await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 5000, size: 10, builder_api_key: apiKey })
    expect(maker.body).toMatchObject({ order_id: 4, status: "resting" })
    await expectBalance(alice, 14_000_000 - 5_025_000, 5_025_000)
    // The fee is snapshotted at acceptance: raising it later does not change the resting order's charge.
    expect((await t.admin("POST", `/v1/admin/builders/${dev.user}`, { fee_bps: 100 })).body.fee_bps).toBe(100)
    const hit = await carol.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 5000, size: 4 })
    // Carol carries no key: her fill's builder_fee is 0; alice pays ceil(4 · 5000 · 50 / 100) = 10,000.
    expect(hit.body.fills).toEqual([fill(3, 5000, 4, alice, 4, "mint", 0, 0)])
    await expectBalance(carol, 18_000_000, 0)
    await expectBalance(dev.user, 26_000, 0)
    await expectBalance(alice, 8_975_000, 3_015_000)
    // Cancelling releases exactly the remaining lock.
    expect(plain(await alice.cancel(4))).toEqual({ status: 200, body: { order_id: 4, cancelled: true, remaining: 6 } })
    await expectBalance(alice, 11_990_000, 0)
    // Money is conserved: 60 USDC in, all of it in the three traders, the builder and the mint backing (14 pairs).
    const totals = await Promise.all([alice, bob, carol].map((c) => balanceOf(t, c.user)))
    expect(totals.reduce((s, b) => s + b.total, 0) + 26_000 + 14 * 1_000_000).toBe(60_000_000)
  })
})

describe("self-trade prevention", () => {
  // Bob bids YES 5500 x 2 (order 1), alice bids YES 5000 x 3 (order 2); then alice sells into both
  // bids by buying NO 5000 x 6 (a YES ask at 5000): she fills bob's 2 first, then meets herself.
  const setup = async () => {
    const alice = await t.funded("alice", 20_000_000)
    const bob = await t.funded("bob", 20_000_000)
    const m = g7()
    await bob.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 5500, size: 2 })
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 5000, size: 3 })
    return { alice, bob, m }
  }

  it("cancel_resting (the default) cancels alice's resting bid and keeps matching; the rest rests", async () => {
    const { alice, bob, m } = await setup()
    const res = await alice.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 5000, size: 6 })
    expect(plain(res)).toEqual({
      status: 200,
      body: { order_id: 3, fills: [fill(1, 4500, 2, bob, 1, "mint")], remaining: 4, market_id: m, status: "resting" }
    })
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [restingView(3, m, "buy", "no", 5000, 6, 4)], total: 1 })
    await expectBalance(alice, 20_000_000 - 900_000 - 2_000_000, 2_000_000)
    await expectBalance(bob, 18_900_000, 0)
    expect(await book(m)).toEqual({ bids: [], asks: [{ price: 5000, size: 4 }] })
    // Explicit cancel_resting is the same mode.
    const again = await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 5000, size: 1, stp: "cancel_resting" })
    expect(plain(again)).toEqual({ status: 200, body: { order_id: 4, fills: [], remaining: 1, market_id: m, status: "resting" } })
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [restingView(4, m, "buy", "yes", 5000, 1, 1)], total: 1 })
  })

  it("cancel_taking stops at alice's own order: fills so far stand, the incoming rest is cancelled, the resting bid stays", async () => {
    const { alice, bob, m } = await setup()
    const res = await alice.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 5000, size: 6, stp: "cancel_taking" })
    expect(plain(res)).toEqual({
      status: 200,
      body: { order_id: 3, fills: [fill(1, 4500, 2, bob, 1, "mint")], remaining: 4, market_id: m, status: "cancelled" }
    })
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [restingView(2, m, "buy", "yes", 5000, 3, 3)], total: 1 })
    await expectBalance(alice, 20_000_000 - 1_500_000 - 900_000, 1_500_000)
    await expectBalance(bob, 18_900_000, 0)
    expect(await book(m)).toEqual({ bids: [{ price: 5000, size: 3 }], asks: [] })
  })

  it("cancel_both cancels alice's resting bid and the rest of the incoming order", async () => {
    const { alice, bob, m } = await setup()
    const res = await alice.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 5000, size: 6, stp: "cancel_both" })
    expect(plain(res)).toEqual({
      status: 200,
      body: { order_id: 3, fills: [fill(1, 4500, 2, bob, 1, "mint")], remaining: 4, market_id: m, status: "cancelled" }
    })
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [], total: 0 })
    await expectBalance(alice, 20_000_000 - 900_000, 0)
    await expectBalance(bob, 18_900_000, 0)
    expect(await book(m)).toEqual({ bids: [], asks: [] })
  })
})

describe("the trading switch", () => {
  it("403 trading_disabled while the operator has trading closed; resting orders stay and can be cancelled", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 1 })
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 5000, size: 1 })
    expect(await t.admin("POST", "/v1/admin/trading", { state: "closed" })).toEqual({ status: 200, body: { trading: "closed", released_from_queue: 0 } })
    const free = alice.lastNonce + 1
    const refused = await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 4000, size: 1, nonce: free })
    expect(plain(refused)).toEqual({ status: 403, body: errorBody("trading_disabled") })
    expect((await ordersOf(t, alice.user)).total).toBe(2)
    expect(plain(await alice.cancel(2))).toEqual({ status: 200, body: { order_id: 2, cancelled: true, remaining: 1 } })
    await expectBalance(alice, 9_400_000, 600_000)
    expect(await t.admin("POST", "/v1/admin/trading", { state: "open" })).toEqual({ status: 200, body: { trading: "open", released_from_queue: 0 } })
    // Nothing was queued while closed, and that nonce is still free.
    const reopened = await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 4000, size: 1, nonce: free })
    expect(plain(reopened)).toEqual({ status: 200, body: { order_id: 3, fills: [], remaining: 1, market_id: m, status: "resting" } })
  })

  it("paused: orders answer 202 queued, resting orders stay, and reopening runs the queue in arrival order", async () => {
    const alice = await t.funded("alice", 20_000_000)
    const bob = await t.funded("bob", 20_000_000)
    const carol = await t.funded("carol", 20_000_000)
    const dave = t.client("dave") // registered, never credited
    await dave.register()
    const m = g7()
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 10 }) // order 1

    expect(await t.admin("POST", "/v1/admin/trading", { state: "paused" })).toEqual({ status: 200, body: { trading: "paused", released_from_queue: 0 } })
    const queued = (size: number, position: number) => ({
      status: 202,
      body: { order_id: 0, fills: [], remaining: size, market_id: m, status: "queued", queue_position: position }
    })
    expect(plain(await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 4 }))).toEqual(queued(4, 1))
    expect(plain(await dave.placeOrder({ market_id: G7, side: "buy", outcome: "no", price: 4000, size: 1 }))).toEqual(queued(1, 2))
    expect(plain(await carol.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 10 }))).toEqual(queued(10, 3))
    // Requests are still validated while paused.
    expect(plain(await postOrder(t, carol, { ...signedOrder(carol.key, { market_id: m, side: "buy", outcome: "no", price: 4000, size: 1, nonce: 9 }), signature: ZERO_SIG }))).toEqual({
      status: 403,
      body: errorBody("invalid_signature")
    })

    // Nothing has run: the resting order stays, queued orders lock nothing.
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [restingView(1, m, "buy", "yes", 6000, 10, 10)], total: 1 })
    expect(await ordersOf(t, carol.user)).toEqual({ orders: [], total: 0 })
    await expectBalance(bob, 20_000_000, 0)
    await expectBalance(carol, 20_000_000, 0)
    expect(await book(m)).toEqual({ bids: [{ price: 6000, size: 10 }], asks: [] })

    t.advance(5_000)
    // Bob's and carol's orders run; dave's is rejected (no balance) when its turn comes.
    expect(await t.admin("POST", "/v1/admin/trading", { state: "open" })).toEqual({ status: 200, body: { trading: "open", released_from_queue: 2 } })
    // Arrival order: bob takes 4 of alice's 10, carol the other 6, and carol's last 4 rest.
    await expectBalance(bob, 18_400_000, 0)
    await expectBalance(carol, 20_000_000 - 2_400_000 - 1_600_000, 1_600_000)
    await expectBalance(alice, 14_000_000, 0)
    await expectBalance(dave.user, 0, 0)

    // A queue whose first order is rejected still reopens: the rejection is dave's, not the operator's.
    expect((await t.admin("POST", "/v1/admin/trading", { state: "paused" })).status).toBe(200)
    expect(plain(await dave.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 5000, size: 1 }))).toMatchObject({ status: 202 })
    expect(await t.admin("POST", "/v1/admin/trading", { state: "open" })).toEqual({ status: 200, body: { trading: "open", released_from_queue: 0 } })
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [], total: 0 })
    expect(await ordersOf(t, bob.user)).toEqual({ orders: [], total: 0 })
    expect(await ordersOf(t, carol.user)).toEqual({ orders: [restingView(3, m, "buy", "no", 4000, 10, 4)], total: 1 })
    const pos = (await call(t, "GET", `/v1/position/${m}/${bob.user}`)).body
    expect(pos).toMatchObject({ yes: 0, no: 4 })
    // Trading is live again.
    const live = await bob.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 1000, size: 1 })
    expect(plain(live)).toEqual({ status: 200, body: { order_id: 4, fills: [], remaining: 1, market_id: m, status: "resting" } })
  })
})

describe("POST /v1/orders/cancel", () => {
  it("cancels one's own resting order: 200 { order_id, cancelled: true, remaining } and releases its lock", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 10 })
    await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 4 })
    await expectBalance(alice, 4_000_000, 3_600_000)
    const res = await call(t, "POST", "/v1/orders/cancel", { body: { order_id: 1, signature: "", nonce: 0 }, cookie: alice.cookie })
    expect(plain(res)).toEqual({ status: 200, body: { order_id: 1, cancelled: true, remaining: 6 } })
    await expectBalance(alice, 7_600_000, 0)
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [], total: 0 })
    expect(await book(m)).toEqual({ bids: [], asks: [] })
  })

  it("signature and nonce are accepted but not verified (empty, garbage or absent)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    for (let i = 0; i < 3; i++) await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 1000, size: 2 })
    const bodies = [{ order_id: 1, signature: "", nonce: 0 }, { order_id: 2, signature: "not-a-signature", nonce: 123_456 }, { order_id: 3 }]
    for (const body of bodies) {
      const res = await call(t, "POST", "/v1/orders/cancel", { body, cookie: alice.cookie })
      expect(plain(res)).toEqual({ status: 200, body: { order_id: body.order_id, cancelled: true, remaining: 2 } })
    }
    await expectBalance(alice, 10_000_000, 0)
  })

  it("404 order_not_found for someone else's order, an unknown id, a cancelled or a filled order", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    await bob.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 3000, size: 1 }) // 1: bob's
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 1 }) // 2: filled next
    await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 1 }) // 3: fills 2
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 2000, size: 1 }) // 4
    expect((await alice.cancel(4)).status).toBe(200)
    for (const id of [1, 2, 3, 4, 999, 2 ** 31]) {
      const res = await alice.cancel(id)
      expect({ id, ...plain(res) }).toEqual({ id, status: 404, body: errorBody("order_not_found") })
    }
    // Bob's order is untouched.
    expect(await ordersOf(t, bob.user)).toEqual({ orders: [restingView(1, m, "buy", "yes", 3000, 1, 1)], total: 1 })
  })

  it("401 without a session cookie; 400 for a malformed body", async () => {
    const alice = await t.funded("alice", 10_000_000)
    await alice.placeOrder({ market_id: g7(), side: "buy", outcome: "yes", price: 1000, size: 1 })
    expect(plain(await call(t, "POST", "/v1/orders/cancel", { body: { order_id: 1, signature: "", nonce: 0 } }))).toEqual({
      status: 401,
      body: errorBody("unauthorized")
    })
    const shapes: Array<[string, unknown]> = [
      ["no order_id", { signature: "", nonce: 0 }],
      ["order_id 0", { order_id: 0 }],
      ["order_id 1.5", { order_id: 1.5 }],
      ["order_id as string", { order_id: "1" }],
      ["nonce as string", { order_id: 1, nonce: "0" }]
    ]
    for (const [label, body] of shapes) {
      const res = await call(t, "POST", "/v1/orders/cancel", { body, cookie: alice.cookie })
      expect({ label, ...plain(res) }).toEqual({ label, status: 400, body: errorBody("invalid_shape") })
    }
    expect(plain(await call(t, "POST", "/v1/orders/cancel", { body: "{", cookie: alice.cookie }))).toEqual({ status: 400, body: errorBody("invalid_json") })
    expect((await ordersOf(t, alice.user)).total).toBe(1)
  })
})

describe("POST /v1/orders/cancel-all", () => {
  it("cancels every resting order of the session user, and only those: { cancelled: n }", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    const btc = t.market(BTC)
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 1000, size: 1 })
    await bob.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 1500, size: 1 })
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 1000, size: 2 })
    await alice.placeOrder({ market_id: btc, side: "buy", outcome: "yes", price: 2000, size: 1 })
    // 100,000 + 200,000 + 200,000 locked (a resting buy drops the taker-fee part of its lock).
    await expectBalance(alice, 9_500_000, 500_000)

    const res = await call(t, "POST", "/v1/orders/cancel-all", { body: { signature: "", nonce: 0 }, cookie: alice.cookie })
    expect(plain(res)).toEqual({ status: 200, body: { cancelled: 3 } })
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [], total: 0 })
    await expectBalance(alice, 10_000_000, 0)
    expect(await ordersOf(t, bob.user)).toEqual({ orders: [restingView(2, m, "buy", "yes", 1500, 1, 1)], total: 1 })
    await expectBalance(bob, 9_850_000, 150_000)

    expect(plain(await alice.cancelAll())).toEqual({ status: 200, body: { cancelled: 0 } })
    expect(plain(await bob.cancelAll())).toEqual({ status: 200, body: { cancelled: 1 } })
    // A registered user with no account yet.
    const carol = t.client("carol")
    await carol.register()
    expect(plain(await carol.cancelAll())).toEqual({ status: 200, body: { cancelled: 0 } })
  })

  it("accepts an absent signature and nonce; optional market_id limits it to one market (extension)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const m = g7()
    const btc = t.market(BTC)
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 1000, size: 1 })
    await alice.placeOrder({ market_id: btc, side: "buy", outcome: "yes", price: 1000, size: 1 })
    expect(plain(await call(t, "POST", "/v1/orders/cancel-all", { body: { market_id: G7 }, cookie: alice.cookie }))).toEqual({ status: 200, body: { cancelled: 1 } })
    expect(await ordersOf(t, alice.user)).toEqual({ orders: [restingView(2, btc, "buy", "yes", 1000, 1, 1)], total: 1 })
    expect(plain(await call(t, "POST", "/v1/orders/cancel-all", { body: { market_id: "no-such-market" }, cookie: alice.cookie }))).toEqual({
      status: 404,
      body: errorBody("not_found")
    })
    expect(plain(await call(t, "POST", "/v1/orders/cancel-all", { body: {}, cookie: alice.cookie }))).toEqual({ status: 200, body: { cancelled: 1 } })
  })

  it("401 without a session cookie; 400 invalid_json for a non-JSON body", async () => {
    const alice = await t.funded("alice", 10_000_000)
    await alice.placeOrder({ market_id: g7(), side: "buy", outcome: "yes", price: 1000, size: 1 })
    expect(plain(await call(t, "POST", "/v1/orders/cancel-all", { body: { signature: "", nonce: 0 } }))).toEqual({
      status: 401,
      body: errorBody("unauthorized")
    })
    expect(plain(await call(t, "POST", "/v1/orders/cancel-all", { body: "nope", cookie: alice.cookie }))).toEqual({ status: 400, body: errorBody("invalid_json") })
    expect((await ordersOf(t, alice.user)).total).toBe(1)
  })
})

describe("GET /v1/orders/all/{user}", () => {
  it("lists live resting orders { orders, total } in placement order, with partial fills and without filled ones", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const m = g7()
    const btc = t.market(BTC)
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 6000, size: 5 }) // 1, partly filled below
    t.advance(2_000)
    await alice.placeOrder({ market_id: btc, side: "buy", outcome: "no", price: 2500, size: 3 }) // 2
    await alice.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 1000, size: 2 }) // 3, cancelled below
    await bob.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 4000, size: 2 }) // 4, fills 2 of order 1
    await alice.cancel(3)
    const listing = await call(t, "GET", `/v1/orders/all/${alice.user}`)
    expect(plain(listing)).toEqual({
      status: 200,
      body: {
        orders: [restingView(1, m, "buy", "yes", 6000, 5, 3, t.nowSec() - 2), restingView(2, btc, "buy", "no", 2500, 3, 3)],
        total: 2
      }
    })
    // A valid key that never traded.
    expect(plain(await call(t, "GET", `/v1/orders/all/${keyFromLabel("nobody").user}`))).toEqual({ status: 200, body: { orders: [], total: 0 } })
  })

  it("400 invalid_pubkey for a user that is not a base58 Ed25519 key", async () => {
    const bad = ["not-a-key", "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl", "1111111111111111111111111111111", "0x1111111111111111111111111111111111111111", "ab".repeat(32)]
    for (const user of bad) {
      const res: RawResult = await call(t, "GET", `/v1/orders/all/${encodeURIComponent(user)}`)
      expect({ user, ...plain(res) }).toEqual({ user, status: 400, body: errorBody("invalid_pubkey") })
    }
  })
})
