// The operator API over real HTTP: market halt / resume / resolve (with automatic
// settlement checked to the micro), trading and LP surfaces, fees and the rewards
// config, builder fees, credit, the token, and the per-IP 60 / 60 s limit.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { adminPost, cross, expectError, get, ok, place, req } from "../support/reads.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const BTC = "btc-above-120k-2027-03-31"
const BAYERN = "ucl-final-2027-winner-bayern-munich"

describe("market status: halt, resume, resolve with automatic settlement", () => {
  let t: TestServer
  let alice: ApiClient
  let bob: ApiClient
  let carol: ApiClient
  let dave: ApiClient
  let btc: string
  let bayern: string

  beforeAll(async () => {
    t = await startTestServer()
    alice = await t.funded("alice", 100_000_000)
    bob = await t.funded("bob", 100_000_000)
    carol = await t.funded("carol", 100_000_000)
    dave = await t.funded("dave", 100_000_000)
    btc = t.market(BTC) // 10 bps taker fee
    bayern = t.market(BAYERN) // 20 bps
    // BTC: alice bids YES 6000 × 10, bob takes 4 with buy NO (a mint at NO 4000).
    await place(alice, { market_id: btc, side: "buy", outcome: "yes", price: 6_000, size: 10 })
    await place(bob, { market_id: btc, side: "buy", outcome: "no", price: 4_500, size: 4 })
    // Carol rests buy NO 3000 × 2 (a YES ask at 7000).
    await place(carol, { market_id: btc, side: "buy", outcome: "no", price: 3_000, size: 2 })
    // Bayern: alice YES 5, bob NO 5 at YES 2000.
    await cross(alice, bob, bayern, 2_000, 5, "no")
  })
  afterAll(() => t.close())

  it("halting rejects new orders (422 market_halted) and keeps resting ones; resuming reopens", async () => {
    const halted = await adminPost(t, `/v1/admin/markets/${btc}/status`, { status: "halted" })
    expect(halted.status).toBe(200)
    expect(halted.body).toEqual({ market_id: btc, status: "halted", winning_outcome: null, redeemed: 0 })
    expectError(await dave.placeOrder({ market_id: btc, side: "buy", outcome: "yes", price: 5_000, size: 1 }), 422, "market_halted")
    expect((await ok(t, `/v1/orders/all/${alice.user}`)).total).toBe(1)
    t.advance(30_000)
    expect((await ok(t, `/v1/markets/${BTC}`)).status).toBe("halted")
    // Halting again is accepted (idempotent for retrying operators).
    expect((await adminPost(t, `/v1/admin/markets/${BTC}/status`, { status: "halted" })).status).toBe(200)

    const resumed = await adminPost(t, `/v1/admin/markets/${BTC}/status`, { status: "active" })
    expect(resumed.body).toEqual({ market_id: btc, status: "active", winning_outcome: null, redeemed: 0 })
    // Dave bids YES 5000 × 1: below alice's 6000 bid and carol's 7000 ask, so it rests.
    expect((await place(dave, { market_id: btc, side: "buy", outcome: "yes", price: 5_000, size: 1 })).status).toBe("resting")
    expect(await ok(t, `/v1/balance/${dave.user}`)).toEqual({ user: dave.user, available: 99_500_000, locked: 500_000, total: 100_000_000 })
    t.advance(30_000)
    expect((await ok(t, `/v1/markets/${BTC}`)).status).toBe("active")
  })

  it("resolving cancels every resting order and pays every winner, to the micro", async () => {
    const res = await adminPost(t, `/v1/admin/markets/${btc}/status`, { status: "resolved", winning_outcome: "yes" })
    expect(res.status).toBe(200)
    // Two holders (alice YES 4, bob NO 4) were redeemed.
    expect(res.body).toEqual({ market_id: btc, status: "resolved", winning_outcome: "yes", redeemed: 2 })

    // alice: 100 − 2.40 + rebate 0.0012 − 1.00 (Bayern) + rebate 0.0005 + 4 × 1.00; her 6 × 0.60 lock is released.
    expect(await ok(t, `/v1/balance/${alice.user}`)).toEqual({ user: alice.user, available: 100_601_700, locked: 0, total: 100_601_700 })
    // bob: 100 − 1.6016 − 4.008 (Bayern); his NO 4 lost.
    expect(await ok(t, `/v1/balance/${bob.user}`)).toEqual({ user: bob.user, available: 94_390_400, locked: 0, total: 94_390_400 })
    // carol and dave only rested orders: fully refunded.
    expect(await ok(t, `/v1/balance/${carol.user}`)).toEqual({ user: carol.user, available: 100_000_000, locked: 0, total: 100_000_000 })
    expect(await ok(t, `/v1/balance/${dave.user}`)).toEqual({ user: dave.user, available: 100_000_000, locked: 0, total: 100_000_000 })
    for (const u of [alice, carol, dave]) expect(await ok(t, `/v1/orders/all/${u.user}`)).toEqual({ orders: [], total: 0 })
    t.advance(1_000)
    expect(await ok(t, `/v1/markets/${btc}/book`)).toMatchObject({ bids: [], asks: [] })
    // Settled positions are gone; the single-position read is zero-shaped and says resolved.
    expect((await ok(t, `/v1/positions/all/${alice.user}`)).positions.map((p: any) => p.slug)).toEqual([BAYERN])
    expect(await ok(t, `/v1/position/${btc}/${alice.user}`)).toMatchObject({ size: 0, yes: 0, no: 0, status: "resolved", redeemable: false })

    // Resolving NO on Bayern pays bob 5 × 1.00.
    const no = await adminPost(t, `/v1/admin/markets/${BAYERN}/status`, { status: "resolved", winning_outcome: "no" })
    expect(no.body).toEqual({ market_id: bayern, status: "resolved", winning_outcome: "no", redeemed: 2 })
    expect((await ok(t, `/v1/balance/${bob.user}`)).available).toBe(99_390_400)
    expect((await ok(t, `/v1/balance/${alice.user}`)).available).toBe(100_601_700)
    // Money is conserved: 400 USDC credited = balances + the house's 0.0079 in fees.
    const sum = (await Promise.all([alice, bob, carol, dave].map((u) => ok(t, `/v1/balance/${u.user}`)))).reduce((s, b) => s + b.total, 0)
    expect(sum + (1_600 - 1_200) + (8_000 - 500)).toBe(400_000_000)

    t.advance(30_000)
    const event = await ok(t, `/v1/markets/${BTC}`)
    expect(event.status).toBe("resolved")
    expect(event.outcomes[0]).toMatchObject({ status: "resolved", winning_outcome: "yes" })
    expect((await ok(t, "/v1/markets/ucl-final-2027-winner")).status).toBe("active")
  })

  it("resolution is final; malformed status bodies are 400 invalid_shape; unknown markets 404", async () => {
    expectError(await dave.placeOrder({ market_id: btc, side: "buy", outcome: "yes", price: 5_000, size: 1 }), 422, "market_resolved")
    expectError(await adminPost(t, `/v1/admin/markets/${btc}/status`, { status: "active" }), 422, "market_resolved")
    expectError(await adminPost(t, `/v1/admin/markets/${btc}/status`, { status: "resolved", winning_outcome: "no" }), 422, "market_resolved")
    const eth = t.market("eth-above-6k-2027-h1")
    for (const body of [
      { status: "resolved" },
      { status: "halted", winning_outcome: "yes" },
      { status: "open" },
      { status: "resolved", winning_outcome: "maybe" },
      {}
    ]) {
      expectError(await adminPost(t, `/v1/admin/markets/${eth}/status`, body), 400, "invalid_shape")
    }
    expectError(await adminPost(t, "/v1/admin/markets/nope/status", { status: "halted" }), 404, "not_found")
    // A multi-outcome event's own id is not a market.
    const ucl = await ok(t, "/v1/markets/ucl-final-2027-winner")
    expectError(await adminPost(t, `/v1/admin/markets/${ucl.event_id}/status`, { status: "halted" }), 404, "not_found")
    t.advance(30_000)
    expect((await ok(t, "/v1/markets/eth-above-6k-2027-h1")).status).toBe("active")
  })
})

describe("fees and the rewards config", () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer()
  })
  afterAll(() => t.close())

  it("GET /v1/fees: default, per-category and per-market taker fees and the maker rebate", async () => {
    const fees = await ok(t, "/v1/fees")
    expect(fees.default).toEqual({ taker_fee_bps: 0, maker_rebate_bps: 5 })
    expect(fees.maker_rebate_bps).toBe(5)
    expect(fees.per_category).toEqual({
      BTC: { taker_fee_bps: 10 },
      ETH: { taker_fee_bps: 10 },
      SOL: { taker_fee_bps: 10 },
      DOGE: { taker_fee_bps: 10 },
      Sports: { taker_fee_bps: 20 },
      Politics: { taker_fee_bps: 0 },
      Culture: { taker_fee_bps: 0 },
      XRP: { taker_fee_bps: 10 },
      BNB: { taker_fee_bps: 10 }
    })
    // 8 binary markets + 4 + 4 outcome markets.
    expect(Object.keys(fees.per_market)).toHaveLength(16)
    expect(fees.per_market[t.market(BTC)]).toEqual({ taker_fee_bps: 10, slug: BTC })
    expect(fees.per_market[t.market(BAYERN)]).toEqual({ taker_fee_bps: 20, slug: BAYERN })
    expect(await ok(t, "/v1/rewards/config")).toEqual({
      daily_budget_micro_usdc: 1_000_000_000,
      maker_rebate_bps: 5,
      rewards_band_spread_bps_max: 300,
      per_wallet_cap_pct: 40
    })
  })

  it("POST /v1/admin/fees changes the rebate, the default and a market's taker fee; the reads follow after their cache", async () => {
    const rebate = await adminPost(t, "/v1/admin/fees", { maker_rebate_bps: 8 })
    expect(rebate.body).toEqual({ default_taker_fee_bps: 0, maker_rebate_bps: 8 })
    const dflt = await adminPost(t, "/v1/admin/fees", { taker_fee_bps: 3 })
    expect(dflt.body).toEqual({ default_taker_fee_bps: 3, maker_rebate_bps: 8 })
    const market = await adminPost(t, "/v1/admin/fees", { market_id: BTC, taker_fee_bps: 25 })
    expect(market.body).toEqual({ default_taker_fee_bps: 3, maker_rebate_bps: 8, market_id: t.market(BTC), taker_fee_bps: 25 })

    // Both reads are edge-cached for 30 s.
    const stale = await get(t, "/v1/fees")
    expect(stale.headers.get("x-cache")).toBe("HIT")
    expect(stale.body.maker_rebate_bps).toBe(5)
    t.advance(30_000)
    const fees = await ok(t, "/v1/fees")
    expect(fees.default).toEqual({ taker_fee_bps: 3, maker_rebate_bps: 8 })
    expect(fees.maker_rebate_bps).toBe(8)
    expect(fees.per_market[t.market(BTC)]).toEqual({ taker_fee_bps: 25, slug: BTC })
    // Existing markets keep their own fee; BTC's two events now differ, so the category shows the default.
    expect(fees.per_market[t.market("eth-above-6k-2027-h1")].taker_fee_bps).toBe(10)
    expect(fees.per_category.BTC).toEqual({ taker_fee_bps: 3 })
    expect(fees.per_category.ETH).toEqual({ taker_fee_bps: 10 })
    expect((await ok(t, "/v1/rewards/config")).maker_rebate_bps).toBe(8)

    // A new event without fee_bps gets the new default.
    const created = await adminPost(t, "/v1/events", { question: "Default fee?", category: "Culture", slug: "default-fee", expiry: 1_900_000_000 })
    expect(created.body.fee_bps).toBe(3)
  })

  it("the new rates apply to the next fill, to the micro", async () => {
    const maker = await t.funded("fee-maker", 10_000_000)
    const taker = await t.funded("fee-taker", 10_000_000)
    const taken = await cross(maker, taker, t.market(BTC), 5_000, 2, "no")
    // Taker fee ceil(2 · 5000 · 25 / 100) = 2,500; rebate floor(2 · 5000 · 8 / 100) = 800.
    expect(taken.fills[0].fee).toBe(2_500)
    expect((await ok(t, `/v1/balance/${taker.user}`)).total).toBe(10_000_000 - 1_000_000 - 2_500)
    expect((await ok(t, `/v1/balance/${maker.user}`)).total).toBe(10_000_000 - 1_000_000 + 800)
    const trade = (await ok(t, `/v1/markets/${BTC}/trades`)).trades[0]
    expect(trade).toMatchObject({ price: 5_000, size: 2, fee: 2_500, builder_fee: 0, maker: maker.user, taker: taker.user })
  })

  it("malformed fee changes are 400 invalid_shape; an unknown market is 404", async () => {
    for (const body of [{}, { taker_fee_bps: 1_001 }, { maker_rebate_bps: -1 }, { taker_fee_bps: 2.5 }, { maker_rebate_bps: "5" }]) {
      expectError(await adminPost(t, "/v1/admin/fees", body), 400, "invalid_shape")
    }
    expectError(await adminPost(t, "/v1/admin/fees", { market_id: "nope", taker_fee_bps: 5 }), 404, "not_found")
  })
})

describe("trading and LP surfaces, builder fees, credit", () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer()
  })
  afterAll(() => t.close())

  it("trading closed: 403 trading_disabled; paused: orders queue; open: the queue runs; reads stay open throughout", async () => {
    const u = await t.funded("surface-user")
    const market = t.market("sol-flips-bnb-2027")
    const closed = await adminPost(t, "/v1/admin/trading", { state: "closed" })
    expect(closed.body).toEqual({ trading: "closed", released_from_queue: 0 })
    expectError(await u.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4_000, size: 3 }), 403, "trading_disabled")
    expect((await ok(t, "/v1/markets")).total).toBe(10)
    expect((await ok(t, `/v1/balance/${u.user}`)).available).toBe(1_000_000_000)

    expect((await adminPost(t, "/v1/admin/trading", { state: "paused" })).body).toEqual({ trading: "paused", released_from_queue: 0 })
    const queued = await u.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4_000, size: 3 })
    expect(queued.status).toBe(202)
    expect(queued.body).toMatchObject({ order_id: 0, status: "queued" })
    expect(await ok(t, `/v1/orders/all/${u.user}`)).toEqual({ orders: [], total: 0 })

    const open = await adminPost(t, "/v1/admin/trading", { state: "open" })
    expect(open.body).toEqual({ trading: "open", released_from_queue: 1 })
    const orders = await ok(t, `/v1/orders/all/${u.user}`)
    expect(orders.orders.map((o: any) => [o.market_id, o.price, o.remaining])).toEqual([[market, 4_000, 3]])
    expect(await ok(t, `/v1/balance/${u.user}`)).toEqual({ user: u.user, available: 998_800_000, locked: 1_200_000, total: 1_000_000_000 })

    for (const state of ["OPEN", "halted", 1, null]) expectError(await adminPost(t, "/v1/admin/trading", { state }), 400, "invalid_shape")
  })

  it("LP surface: open and closed (paused is not an LP state)", async () => {
    expect((await adminPost(t, "/v1/admin/lp", { state: "closed" })).body).toEqual({ lp: "closed" })
    expect((await adminPost(t, "/v1/admin/lp", { state: "open" })).body).toEqual({ lp: "open" })
    expectError(await adminPost(t, "/v1/admin/lp", { state: "paused" }), 400, "invalid_shape")
    expectError(await adminPost(t, "/v1/admin/lp", {}), 400, "invalid_shape")
  })

  it("builder fee: fee_bps above 0 pays the builder on every attributed fill; disabled pays nothing", async () => {
    const builder = await t.funded("builder", 1_000_000)
    const maker = await t.funded("b-maker", 100_000_000)
    const taker = await t.funded("b-taker", 100_000_000)
    const market = t.market("g7-2027-prediction-markets") // no taker fee
    const set = await adminPost(t, `/v1/admin/builders/${builder.user}`, { fee_bps: 50 })
    expect(set.body).toEqual({ user: builder.user, name: "builder", api_key: builder.apiKey, fee_bps: 50, enabled: true })

    await place(maker, { market_id: market, side: "buy", outcome: "yes", price: 5_000, size: 4 })
    const taken = await place(taker, { market_id: market, side: "buy", outcome: "no", price: 5_000, size: 4, builder_api_key: builder.apiKey! })
    // ceil(4 · 5000 · 50 / 100) = 10,000 micro to the builder.
    expect(taken.fills[0]).toMatchObject({ size: 4, fee: 0, builder_fee: 10_000 })
    expect((await ok(t, `/v1/balance/${builder.user}`)).total).toBe(1_010_000)
    expect((await ok(t, `/v1/balance/${taker.user}`)).total).toBe(100_000_000 - 2_000_000 - 10_000)
    // No taker fees on this market, so the house has nothing to pay a rebate from.
    expect((await ok(t, `/v1/balance/${maker.user}`)).total).toBe(100_000_000 - 2_000_000)
    const trade = (await ok(t, `/v1/trades/all/${builder.user}`)).trades
    expect(trade).toEqual([]) // the builder is neither maker nor taker
    expect((await ok(t, `/v1/trades/all/${taker.user}`)).trades[0]).toMatchObject({ builder_fee: 10_000, fee: 0 })

    const off = await adminPost(t, `/v1/admin/builders/${builder.user}`, { fee_bps: 50, enabled: false })
    expect(off.body).toMatchObject({ fee_bps: 50, enabled: false })
    await place(maker, { market_id: market, side: "buy", outcome: "yes", price: 5_000, size: 2 })
    const again = await place(taker, { market_id: market, side: "buy", outcome: "no", price: 5_000, size: 2, builder_api_key: builder.apiKey! })
    expect(again.fills[0].builder_fee).toBe(0)
    expect((await ok(t, `/v1/balance/${builder.user}`)).total).toBe(1_010_000)

    expectError(await adminPost(t, `/v1/admin/builders/${keyFromLabel("not-a-builder").user}`, { fee_bps: 10 }), 404, "not_found")
    for (const body of [{}, { fee_bps: 1_001 }, { fee_bps: -1 }, { fee_bps: 10, enabled: "yes" }]) {
      expectError(await adminPost(t, `/v1/admin/builders/${builder.user}`, body), 400, "invalid_shape")
    }
  })

  it("credit adds to available; malformed credits are 400 invalid_shape", async () => {
    const user = keyFromLabel("credited").user
    expect((await adminPost(t, "/v1/admin/credit", { user, amount_micro: 2_500_000 })).body).toEqual({ user, available: 2_500_000 })
    expect((await adminPost(t, "/v1/admin/credit", { user, amount_micro: 1 })).body).toEqual({ user, available: 2_500_001 })
    expect(await ok(t, `/v1/balance/${user}`)).toEqual({ user, available: 2_500_001, locked: 0, total: 2_500_001 })
    for (const body of [
      { user, amount_micro: 0 },
      { user, amount_micro: -5 },
      { user, amount_micro: 1.5 },
      { user, amount_micro: "100" },
      { user: "notakey", amount_micro: 100 },
      { amount_micro: 100 }
    ]) {
      expectError(await adminPost(t, "/v1/admin/credit", body), 400, "invalid_shape")
    }
  })

  it("every operator route is 401 without the right token", async () => {
    t.advance(60_000) // a full operator bucket for the 28 requests below
    const someone = keyFromLabel("someone").user
    const routes: Array<[string, unknown]> = [
      ["/v1/events", { question: "No token?", category: "Culture", slug: "no-token", expiry: 1_900_000_000 }],
      [`/v1/admin/markets/${t.market(BTC)}/status`, { status: "halted" }],
      ["/v1/admin/trading", { state: "closed" }],
      ["/v1/admin/lp", { state: "closed" }],
      ["/v1/admin/fees", { maker_rebate_bps: 0 }],
      [`/v1/admin/builders/${someone}`, { fee_bps: 10 }],
      ["/v1/admin/credit", { user: someone, amount_micro: 1_000_000 }]
    ]
    for (const [path, body] of routes) {
      for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: "test-admin-token" }, { authorization: "Basic dGVzdC1hZG1pbi10b2tlbg==" }]) {
        t.advance(6_000) // failed attempts have their own bucket: 10 per 60 s
        expectError(await req(t, "POST", path, { body, headers }), 401, "unauthorized")
      }
    }
    // Nothing changed.
    t.advance(30_000)
    expect((await ok(t, `/v1/markets/${BTC}`)).status).toBe("active")
    expect(await ok(t, `/v1/balance/${someone}`)).toEqual({ user: someone, available: 0, locked: 0, total: 0 })
    expect((await ok(t, "/v1/fees")).maker_rebate_bps).toBe(5)
    expectError(await get(t, "/v1/markets/no-token"), 404, "not_found")
  })
})

describe("operator per-IP limit: 60 per 60 s", () => {
  let t: TestServer
  beforeAll(async () => {
    t = await startTestServer()
  })
  afterAll(() => t.close())

  it("the 61st request in a frozen minute is 429 rate_limited with retry_after and Retry-After; tokens return with time", async () => {
    for (let i = 0; i < 60; i++) {
      const res = await adminPost(t, "/v1/admin/trading", { state: "open" })
      expect(res.status, `request ${i + 1}`).toBe(200)
    }
    const limited = await adminPost(t, "/v1/admin/trading", { state: "open" })
    expectError(limited, 429, "rate_limited")
    expect(limited.body.retry_after).toBe(1)
    expect(limited.headers.get("retry-after")).toBe("1")
    // One bucket for every operator route; a request without the token is refused (401) and not charged to it;
    // public reads are not counted.
    expectError(await adminPost(t, "/v1/events", { question: "Limited?", category: "Culture", slug: "limited", expiry: 1_900_000_000 }), 429, "rate_limited")
    expectError(await req(t, "POST", "/v1/admin/credit", { body: { user: keyFromLabel("x").user, amount_micro: 1 } }), 401, "unauthorized")
    expect((await get(t, "/v1/markets")).status).toBe(200)

    t.advance(999)
    expectError(await adminPost(t, "/v1/admin/trading", { state: "open" }), 429, "rate_limited")
    t.advance(1)
    expect((await adminPost(t, "/v1/admin/trading", { state: "open" })).status).toBe(200)
    expectError(await adminPost(t, "/v1/admin/trading", { state: "open" }), 429, "rate_limited")

    // A full minute refills the bucket: 60 more, then 429 again.
    t.advance(60_000)
    for (let i = 0; i < 60; i++) expect((await adminPost(t, "/v1/admin/lp", { state: "open" })).status).toBe(200)
    const again = await adminPost(t, "/v1/admin/lp", { state: "open" })
    expectError(again, 429, "rate_limited")
    expect(again.headers.get("retry-after")).toBe(String(again.body.retry_after))
  })
})
