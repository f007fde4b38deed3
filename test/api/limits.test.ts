// Rate limits over real HTTP (SPEC §8, §7 `rate_limited`): per-wallet order
// placement keyed on the session user, per-IP on /v1/orders/*, per-IP on the
// operator API. Buckets refill continuously (limit / window per second) from the
// injected clock, which the test server freezes unless a test advances it; so
// filling a bucket never races a refill, and nothing ever sleeps.
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { ADMIN_TOKEN, startTestServer, type TestServer } from "../support/server.ts"
import { call, errorBody, ordersOf, postOrder, signedOrder } from "../support/raw-http.ts"

const G7 = "g7-2027-prediction-markets" // taker fee 0

let t: TestServer
beforeEach(async () => {
  t = await startTestServer()
})
afterEach(() => t.close())

const limited = (bucket: string, retryAfter: number) => ({
  status: 429,
  body: { error: "rate_limited", detail: bucket, retry_after: retryAfter },
  retryAfterHeader: String(retryAfter)
})
const seen = (r: { status: number; body: unknown; headers: { get(name: string): string | null } }) => ({
  status: r.status,
  body: r.body,
  retryAfterHeader: r.headers.get("retry-after")
})
const WALLET = "wallet_orders: 50 per 60 s"
const IP_ORDERS = "ip_orders: 600 per 60 s"
const IP_ADMIN = "ip_admin: 60 per 60 s"

/** A resting buy of one YES contract at 1 cent: 10,000 micro locked. */
const cheapOrder = (c: ApiClient, nonce?: number) =>
  c.placeOrder({ market_id: t.market(G7), side: "buy", outcome: "yes", price: 100, size: 1, ...(nonce === undefined ? {} : { nonce }) })

const placeMany = async (c: ApiClient, n: number): Promise<number[]> => {
  const statuses: number[] = []
  for (let i = 0; i < n; i++) statuses.push((await cheapOrder(c)).status)
  return statuses
}

describe("per-wallet order placement: 50 per 60 s, keyed on the session user", () => {
  it("the 51st order in a frozen minute is 429 rate_limited with retry_after and Retry-After; the bucket refills continuously", async () => {
    const alice = await t.funded("alice", 10_000_000)
    expect(await placeMany(alice, 50)).toEqual(Array(50).fill(200))
    // 60 s / 50 = 1.2 s per token: an empty bucket has its next token in 2 s (rounded up).
    const free = alice.lastNonce + 1
    const over = await cheapOrder(alice, free)
    expect(seen(over)).toEqual(limited(WALLET, 2))
    // Nothing of the refused order happened: 50 resting orders, its nonce still free.
    expect((await ordersOf(t, alice.user)).total).toBe(50)

    t.advance(1_000) // 0.83 tokens
    expect(seen(await cheapOrder(alice, free))).toEqual(limited(WALLET, 1))
    t.advance(1_000) // 1.67 tokens
    const refilled = await cheapOrder(alice, free)
    expect({ status: refilled.status, order_id: refilled.body.order_id }).toEqual({ status: 200, order_id: 51 })
    expect(seen(await cheapOrder(alice, free + 1))).toEqual(limited(WALLET, 1)) // 0.67 tokens left

    // A full window later the bucket is full again: exactly 50 more.
    t.advance(60_000)
    expect(await placeMany(alice, 50)).toEqual(Array(50).fill(200))
    expect(seen(await cheapOrder(alice))).toEqual(limited(WALLET, 2))
    expect((await ordersOf(t, alice.user)).total).toBe(101)
  })

  it("is per wallet: another wallet on the same IP is unaffected", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    expect(await placeMany(alice, 50)).toEqual(Array(50).fill(200))
    expect((await cheapOrder(alice)).status).toBe(429)
    expect(await placeMany(bob, 50)).toEqual(Array(50).fill(200))
    expect(seen(await cheapOrder(bob))).toEqual(limited(WALLET, 2))
  })

  it("is keyed on the session user, not the body's user", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    expect(await placeMany(alice, 50)).toEqual(Array(50).fill(200))
    // Alice's cookie with an order signed by and for bob: alice's bucket answers first.
    const bobsOrder = signedOrder(bob.key, { market_id: t.market(G7), side: "buy", outcome: "yes", price: 100, size: 1, nonce: 1 })
    expect(seen(await postOrder(t, alice, bobsOrder))).toEqual(limited(WALLET, 2))
    // Bob's own session is untouched by all of this.
    expect((await postOrder(t, bob, bobsOrder)).status).toBe(200)
  })

  it("counts every placement attempt with a valid session, accepted or not", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const invalid = { ...signedOrder(alice.key, { market_id: t.market(G7), side: "buy", outcome: "yes", price: 100, size: 1, nonce: 1 }), price: 10_001 }
    for (let i = 0; i < 25; i++) expect((await postOrder(t, alice, invalid)).body).toEqual(errorBody("invalid_order_shape"))
    for (let i = 0; i < 25; i++) expect((await cheapOrder(alice, 1)).status).toBe(i === 0 ? 200 : 422) // then nonce_stale
    expect(seen(await cheapOrder(alice, 2))).toEqual(limited(WALLET, 2))
  })

  it("requests without a session use no wallet bucket (they are 401 until the per-IP bucket runs out)", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const anon = signedOrder(alice.key, { market_id: t.market(G7), side: "buy", outcome: "yes", price: 100, size: 1, nonce: 1 })
    for (let i = 0; i < 60; i++) expect((await call(t, "POST", "/v1/orders", { body: anon })).status).toBe(401)
    expect(await placeMany(alice, 50)).toEqual(Array(50).fill(200))
  })
})

describe("per-IP on /v1/orders/*: 600 per 60 s", () => {
  it("the 601st request from one IP is 429, across wallets and across place, cancel and cancel-all", async () => {
    const wallets: ApiClient[] = []
    for (let i = 0; i < 13; i++) wallets.push(await t.funded(`w${i}`, 1_000_000))
    // Twelve wallets at their own limit of 50 make exactly 600.
    for (const w of wallets.slice(0, 12)) expect(await placeMany(w, 50)).toEqual(Array(50).fill(200))
    const fresh = wallets[12]!
    // 600 / 60 s = one token per 100 ms.
    expect(seen(await cheapOrder(fresh, 1))).toEqual(limited(IP_ORDERS, 1))
    expect(seen(await fresh.cancel(1))).toEqual(limited(IP_ORDERS, 1))
    expect(seen(await fresh.cancelAll())).toEqual(limited(IP_ORDERS, 1))
    // Per IP, not per session: a request without any cookie is limited before it is authenticated.
    const anon = await call(t, "POST", "/v1/orders", { body: {} })
    expect({ status: anon.status, body: anon.body, retryAfterHeader: anon.headers.get("retry-after") }).toEqual(limited(IP_ORDERS, 1))
    // SPEC §8 names /v1/orders/*: the open-orders read shares the bucket; registration does not.
    expect((await call(t, "GET", `/v1/orders/all/${wallets[0]!.user}`)).status).toBe(429)
    expect((await fresh.register("again")).status).toBe(200)

    t.advance(100) // exactly one token
    const one = await cheapOrder(fresh, 1)
    expect({ status: one.status, order_id: one.body.order_id }).toEqual({ status: 200, order_id: 601 })
    expect(seen(await cheapOrder(fresh, 2))).toEqual(limited(IP_ORDERS, 1))

    // A minute later both the IP bucket and the wallets' buckets are full again.
    t.advance(60_000)
    expect((await cheapOrder(wallets[0]!)).status).toBe(200)
    expect(plainCancel(await fresh.cancel(601))).toEqual({ status: 200, body: { order_id: 601, cancelled: true, remaining: 1 } })
  })

  it("cancel and cancel-all draw from the same bucket as placement", async () => {
    const alice = await t.funded("alice", 1_000_000)
    expect(await placeMany(alice, 50)).toEqual(Array(50).fill(200))
    for (let i = 1; i <= 50; i++) expect((await alice.cancel(i)).status).toBe(200)
    for (let i = 0; i < 500; i++) expect((await alice.cancelAll()).body).toEqual({ cancelled: 0 })
    expect(seen(await alice.cancelAll())).toEqual(limited(IP_ORDERS, 1))
    expect(seen(await alice.cancel(1))).toEqual(limited(IP_ORDERS, 1))
  })
})

describe("per-IP on the operator API: 60 per 60 s", () => {
  const trading = (token: string | null = ADMIN_TOKEN) =>
    call(t, "POST", "/v1/admin/trading", { body: { state: "open" }, headers: token === null ? {} : { authorization: `Bearer ${token}` } })

  it("the 61st operator call in a frozen minute is 429; one token per second comes back", async () => {
    const alice = await t.funded("alice", 1_000_000) // one operator call (the credit)
    for (let i = 0; i < 59; i++) expect((await trading()).status).toBe(200)
    expect(seen(await trading())).toEqual(limited(IP_ADMIN, 1))
    expect(seen(await call(t, "POST", "/v1/admin/credit", { body: { user: alice.user, amount_micro: 1 }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).toEqual(
      limited(IP_ADMIN, 1)
    )
    // The order surface has its own buckets.
    expect((await cheapOrder(alice)).status).toBe(200)
    t.advance(999)
    expect((await trading()).status).toBe(429)
    t.advance(1)
    expect(await trading()).toMatchObject({ status: 200, body: { trading: "open", released_from_queue: 0 } })
    expect((await trading()).status).toBe(429)
  })

  it("a wrong token never locks out the right one: failures have a bucket of their own (10 per 60 s)", async () => {
    // 70 wrong-token requests from the operator's own address (a NAT, a shared proxy, a hostile neighbour).
    for (let i = 0; i < 5; i++) expect((await trading(null)).body).toEqual(errorBody("unauthorized"))
    for (let i = 0; i < 5; i++) expect((await trading("wrong-token")).body).toEqual(errorBody("unauthorized"))
    for (let i = 0; i < 60; i++) expect(seen(await trading("wrong-token"))).toEqual(limited("ip_admin_failures: 10 per 60 s", 6))
    // The right token still gets its full SPEC bucket of 60 in the same frozen minute.
    for (let i = 0; i < 60; i++) expect((await trading()).status, `valid request ${i + 1}`).toBe(200)
    expect(seen(await trading())).toEqual(limited(IP_ADMIN, 1))
    // Valid requests do not refill the failure bucket either.
    expect(seen(await trading("wrong-token"))).toEqual(limited("ip_admin_failures: 10 per 60 s", 6))
  })
})

const plainCancel = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body })
