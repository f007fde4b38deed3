// Public account reads over real HTTP: balance, one position, all positions,
// the per-user trade list, and the deposit / withdrawal envelopes — exact to the micro.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { cross, expectError, get, manyTrades, ok, place } from "../support/reads.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const BTC_SLUG = "btc-above-120k-2027-03-31"
const BTC_QUESTION = "Will BTC close above $120,000 on 2027-03-31?"
const BAYERN_SLUG = "ucl-final-2027-winner-bayern-munich"

/** Keys that are not base58 Ed25519 public keys. */
const BAD_KEYS = ["notakey", `0x${"ab".repeat(20)}`, "1111111111111111111111111111111", "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OI", "x".repeat(200)]

describe("balances and positions, exact to the micro", () => {
  let t: TestServer
  let alice: ApiClient
  let bob: ApiClient
  let carol: ApiClient
  let btc: string
  let bayern: string
  const never = keyFromLabel("never-traded").user

  beforeAll(async () => {
    t = await startTestServer()
    alice = await t.funded("alice", 100_000_000)
    bob = await t.funded("bob", 100_000_000)
    carol = await t.funded("carol", 100_000_000)
    btc = t.market(BTC_SLUG) // taker fee 10 bps
    bayern = t.market(BAYERN_SLUG) // taker fee 20 bps

    // BTC: alice bids YES 6000 × 10; bob buys NO × 4 at 4500 and pays NO 4000 (a mint).
    await place(alice, { market_id: btc, side: "buy", outcome: "yes", price: 6_000, size: 10 })
    await place(bob, { market_id: btc, side: "buy", outcome: "no", price: 4_500, size: 4 })
    // Bayern: alice bids YES 2000 × 5; bob buys NO 8000 × 5 against it.
    await cross(alice, bob, bayern, 2_000, 5, "no")
    // Carol rests buy NO 3000 × 2: a YES ask at 7000, so the BTC mid is 0.65.
    await place(carol, { market_id: btc, side: "buy", outcome: "no", price: 3_000, size: 2 })
  })
  afterAll(() => t.close())

  it("GET /v1/balance/{user}: available, locked and total in micro-USDC", async () => {
    // alice: −4·0.60 paid, 6 × 0.60 locked, rebate floor(4·6000·5/100) = 1200;
    //        −5·0.20 paid on Bayern, rebate floor(5·2000·5/100) = 500.
    expect(await ok(t, `/v1/balance/${alice.user}`)).toEqual({ user: alice.user, available: 93_001_700, locked: 3_600_000, total: 96_601_700 })
    // bob: −(1,600,000 + fee ceil(4·4000·10/100) = 1,600) − (4,000,000 + fee ceil(5·8000·20/100) = 8,000).
    expect(await ok(t, `/v1/balance/${bob.user}`)).toEqual({ user: bob.user, available: 94_390_400, locked: 0, total: 94_390_400 })
    // carol: 2 × 0.30 locked by her resting buy.
    expect(await ok(t, `/v1/balance/${carol.user}`)).toEqual({ user: carol.user, available: 99_400_000, locked: 600_000, total: 100_000_000 })
    // Never seen: zeros, 200.
    expect(await ok(t, `/v1/balance/${never}`)).toEqual({ user: never, available: 0, locked: 0, total: 0 })
  })

  it("GET /v1/position/{market_id}/{user}: the record, by market id or slug", async () => {
    const a = await ok(t, `/v1/position/${btc}/${alice.user}`)
    expect(a).toMatchObject({
      user: alice.user,
      market_id: btc,
      outcome: "YES",
      size: 4,
      yes: 4,
      no: 0,
      cost_basis: 2_400_000,
      avg_price: 0.6,
      mark_price: 0.65,
      // 4 × 0.65 − 2.40 USDC
      cash_pnl: 200_000,
      slug: BTC_SLUG,
      question: BTC_QUESTION,
      redeemable: false,
      end_date: 1806451200,
      status: "active"
    })
    expect(await ok(t, `/v1/position/${BTC_SLUG}/${alice.user}`)).toEqual(a)

    const b = await ok(t, `/v1/position/${btc}/${bob.user}`)
    expect(b).toMatchObject({ user: bob.user, market_id: btc, outcome: "NO", size: 4, yes: 0, no: 4, cost_basis: 1_601_600, avg_price: 0.4004, cash_pnl: -201_600 })
    expect(b.mark_price).toBeCloseTo(0.35, 12)
  })

  it("a user who never traded (or a market nobody traded) gets a zero-shaped 200", async () => {
    const zero = { outcome: "YES", size: 0, yes: 0, no: 0, cost_basis: 0, avg_price: 0, cash_pnl: 0, redeemable: false }
    expect(await ok(t, `/v1/position/${btc}/${never}`)).toMatchObject({ user: never, market_id: btc, ...zero, slug: BTC_SLUG, status: "active" })
    const doge = t.market("doge-1-dollar-2027")
    expect(await ok(t, `/v1/position/${doge}/${alice.user}`)).toMatchObject({ user: alice.user, market_id: doge, ...zero, mark_price: null, slug: "doge-1-dollar-2027" })
    // An id no market has: still 200 and zero-shaped.
    expect(await ok(t, `/v1/position/nope/${never}`)).toMatchObject({ user: never, market_id: "nope", ...zero, slug: null, status: null })
    expect(await ok(t, `/v1/positions/all/${never}`)).toEqual({ positions: [] })
  })

  it("GET /v1/positions/all/{user}: every listed field of every position", async () => {
    const all = (await ok(t, `/v1/positions/all/${alice.user}`)).positions
    expect(all).toHaveLength(2)
    for (const p of all) {
      for (const k of ["outcome", "size", "yes", "no", "cost_basis", "avg_price", "mark_price", "cash_pnl", "slug", "question", "redeemable", "end_date", "status"]) {
        expect(p, `${p.slug} lacks ${k}`).toHaveProperty(k)
      }
    }
    const bySlug = Object.fromEntries(all.map((p: any) => [p.slug, p]))
    expect(bySlug[BTC_SLUG]).toEqual(await ok(t, `/v1/position/${btc}/${alice.user}`))
    expect(bySlug[BAYERN_SLUG]).toMatchObject({
      market_id: bayern,
      outcome: "YES",
      size: 5,
      yes: 5,
      no: 0,
      cost_basis: 1_000_000,
      avg_price: 0.2,
      // No book left: the mark is the last trade.
      mark_price: 0.2,
      cash_pnl: 0,
      slug: BAYERN_SLUG,
      question: "Champions League 2026/27 final: who wins? — Bayern Munich",
      redeemable: false,
      end_date: 1811808000,
      status: "active"
    })
    const bobs = (await ok(t, `/v1/positions/all/${bob.user}`)).positions
    expect(bobs.map((p: any) => [p.slug, p.outcome, p.size, p.cost_basis]).sort()).toEqual(
      [
        [BTC_SLUG, "NO", 4, 1_601_600],
        [BAYERN_SLUG, "NO", 5, 4_008_000]
      ].sort()
    )
    // Carol only rests an order: no position yet.
    expect(await ok(t, `/v1/positions/all/${carol.user}`)).toEqual({ positions: [] })
  })

  it("account reads are never edge-cached: a fill shows at once", async () => {
    const before = await get(t, `/v1/balance/${carol.user}`)
    expect(before.headers.get("cache-control")).toBe("no-store")
    // Bob lifts carol's ask: carol is now a maker holding NO 1.
    await place(bob, { market_id: btc, side: "buy", outcome: "yes", price: 7_000, size: 1 })
    const after = await ok(t, `/v1/balance/${carol.user}`)
    // Paid 0.30 from the lock, 1 × 0.30 still locked, rebate floor(1·3000·5/100) = 150.
    expect(after).toEqual({ user: carol.user, available: 99_400_150, locked: 300_000, total: 99_700_150 })
    expect(await ok(t, `/v1/position/${btc}/${carol.user}`)).toMatchObject({ outcome: "NO", size: 1, no: 1, cost_basis: 300_000 })
  })

  it("400 invalid_pubkey for a malformed user on every account read", async () => {
    for (const bad of BAD_KEYS) {
      for (const path of [
        `/v1/balance/${bad}`,
        `/v1/position/${btc}/${bad}`,
        `/v1/positions/all/${bad}`,
        `/v1/trades/all/${bad}`,
        `/v1/deposits/all/${bad}`,
        `/v1/withdrawals/all/${bad}`
      ]) {
        expectError(await get(t, path), 400, "invalid_pubkey")
      }
    }
  })
})

describe("GET /v1/trades/all/{user}", () => {
  let t: TestServer
  let maker: ApiClient
  let taker: ApiClient
  let first: number
  let market: string

  beforeAll(async () => {
    t = await startTestServer()
    maker = await t.funded("list-maker")
    taker = await t.funded("list-taker")
    market = t.market("g7-2027-prediction-markets") // no taker fee
    ;({ first } = await manyTrades(t, maker, taker, market, 205))
  })
  afterAll(() => t.close())

  it("every fill as maker or taker, newest first, in the shared envelope; limit defaults to 50", async () => {
    for (const who of [maker, taker]) {
      const body = await ok(t, `/v1/trades/all/${who.user}`)
      expect(Object.keys(body).sort()).toEqual(["limit", "offset", "total", "trades"])
      expect(body).toMatchObject({ total: 205, limit: 50, offset: 0 })
      expect(body.trades).toHaveLength(50)
      body.trades.forEach((x: any, i: number) =>
        expect(x).toMatchObject({
          id: 205 - i,
          price: 5_000,
          size: 1,
          side: "buy",
          time: first + 2 * (204 - i),
          market_id: market,
          maker: maker.user,
          taker: taker.user,
          fee: 0,
          builder_fee: 0
        })
      )
    }
  })

  it("limit is at most 200; offset pages from the newest; bad values are 400 invalid_query", async () => {
    const capped = await ok(t, `/v1/trades/all/${maker.user}?limit=500`)
    expect(capped).toMatchObject({ total: 205, limit: 200, offset: 0 })
    expect(capped.trades).toHaveLength(200)
    expect(capped.trades[199].id).toBe(6)
    const tail = await ok(t, `/v1/trades/all/${maker.user}?limit=200&offset=200`)
    expect(tail).toMatchObject({ total: 205, limit: 200, offset: 200 })
    expect(tail.trades.map((x: any) => x.id)).toEqual([5, 4, 3, 2, 1])
    const mid = await ok(t, `/v1/trades/all/${taker.user}?limit=10&offset=10`)
    expect(mid.trades.map((x: any) => x.id)).toEqual([195, 194, 193, 192, 191, 190, 189, 188, 187, 186])
    expect(await ok(t, `/v1/trades/all/${taker.user}?offset=205`)).toEqual({ trades: [], total: 205, limit: 50, offset: 205 })

    // Paging by 64 covers every trade exactly once.
    const ids: number[] = []
    for (let offset = 0; ; ) {
      const page = await ok(t, `/v1/trades/all/${maker.user}?limit=64&offset=${offset}`)
      ids.push(...page.trades.map((x: any) => x.id))
      offset += page.trades.length
      if (offset >= page.total) break
    }
    expect(ids).toEqual(Array.from({ length: 205 }, (_, i) => 205 - i))

    for (const q of ["limit=0", "limit=-1", "limit=abc", "offset=-1", "offset=1.5"]) {
      expectError(await get(t, `/v1/trades/all/${maker.user}?${q}`), 400, "invalid_query")
    }
  })

  it("a user on both sides sees both; a user with no fills sees an empty page", async () => {
    const x = await t.funded("both-sides")
    const y = await t.funded("other-side")
    const btc = t.market(BTC_SLUG)
    await cross(x, y, btc, 5_000, 2, "yes") // x maker
    t.advance(1_000)
    await cross(y, x, btc, 5_000, 3, "no") // x taker
    const body = await ok(t, `/v1/trades/all/${x.user}`)
    expect(body.total).toBe(2)
    expect(body.trades.map((tr: any) => [tr.maker === x.user ? "maker" : "taker", tr.size])).toEqual([
      ["taker", 3],
      ["maker", 2]
    ])
    expect(body.trades[0].time).toBe(body.trades[1].time + 1)
    const nobody = keyFromLabel("no-fills").user
    expect(await ok(t, `/v1/trades/all/${nobody}`)).toEqual({ trades: [], total: 0, limit: 50, offset: 0 })
  })

  it("deposits and withdrawals: the shared envelope, empty", async () => {
    const u = maker.user
    expect(await ok(t, `/v1/deposits/all/${u}`)).toEqual({ deposits: [], total: 0, limit: 50, offset: 0 })
    expect(await ok(t, `/v1/withdrawals/all/${u}`)).toEqual({ withdrawals: [], total: 0, limit: 50, offset: 0 })
    expect(await ok(t, `/v1/deposits/all/${u}?limit=500&offset=3`)).toEqual({ deposits: [], total: 0, limit: 200, offset: 3 })
    expect(await ok(t, `/v1/withdrawals/all/${u}?limit=7`)).toEqual({ withdrawals: [], total: 0, limit: 7, offset: 0 })
    expectError(await get(t, `/v1/deposits/all/${u}?limit=0`), 400, "invalid_query")
    expectError(await get(t, `/v1/withdrawals/all/${u}?offset=-2`), 400, "invalid_query")
  })
})
