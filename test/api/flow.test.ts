// End to end over real HTTP: register, fund, cross two signed orders (a mint),
// and read everything back.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.ts"

let t: TestServer
beforeAll(async () => {
  t = await startTestServer()
})
afterAll(() => t.close())

describe("a first trade over HTTP", () => {
  it("mints a YES/NO pair between two signed orders and shows it in every read", async () => {
    const alice = await t.funded("alice", 100_000_000)
    const bob = await t.funded("bob", 100_000_000)
    const market = t.market("btc-above-120k-2027-03-31") // taker fee 10 bps

    const rest = await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 6000, size: 10 })
    expect(rest.status).toBe(200)
    expect(rest.body).toMatchObject({ fills: [], remaining: 10, market_id: market, status: "resting" })
    expect(rest.body.order_id).toBeGreaterThan(0)

    // Bob buys NO at 4500 by slug; he crosses alice's bid at YES 6000, paying NO 4000.
    const take = await bob.placeOrder({ market_id: "btc-above-120k-2027-03-31", side: "buy", outcome: "no", price: 4500, size: 4 })
    expect(take.status).toBe(200)
    expect(take.body).toMatchObject({ remaining: 0, status: "filled", market_id: market })
    expect(take.body.fills).toEqual([
      // fee = ceil(4 · 4000 · 10 / 100) = 1600 micro
      { trade_id: 1, price: 4000, size: 4, maker: alice.user, maker_order_id: rest.body.order_id, fee: 1600, builder_fee: 0, kind: "mint" }
    ])

    // Bob: 100 USDC − 4·0.40 − 0.0016 fee.
    expect((await bob.balance()).body).toEqual({ user: bob.user, available: 98_398_400, locked: 0, total: 98_398_400 })
    // Alice: paid 4·0.60, 6 contracts still locked at 0.60, rebate floor(4·6000·5/100) = 1200 capped by the 1600 fee.
    expect((await alice.balance()).body).toEqual({ user: alice.user, available: 94_001_200, locked: 3_600_000, total: 97_601_200 })

    const book = await fetch(`${t.url}/v1/markets/${market}/book`).then((r) => r.json() as Promise<any>)
    expect(book).toMatchObject({ market_id: market, bids: [{ price: 6000, size: 6 }], asks: [] })

    const pos = await fetch(`${t.url}/v1/position/${market}/${bob.user}`).then((r) => r.json() as Promise<any>)
    expect(pos).toMatchObject({ user: bob.user, market_id: market, outcome: "NO", size: 4, yes: 0, no: 4, cost_basis: 1_601_600 })

    const trades = await fetch(`${t.url}/v1/trades/all/${alice.user}`).then((r) => r.json() as Promise<any>)
    expect(trades).toMatchObject({ total: 1, limit: 50, offset: 0 })
    expect(trades.trades[0]).toMatchObject({ id: 1, price: 4000, size: 4, side: "buy", maker: alice.user, taker: bob.user, fee: 1600, builder_fee: 0 })

    const orders = await fetch(`${t.url}/v1/orders/all/${alice.user}`).then((r) => r.json() as Promise<any>)
    expect(orders).toEqual({
      orders: [{ id: rest.body.order_id, market_id: market, side: "buy", outcome: "yes", price: 6000, original_size: 10, remaining: 6, created_at: t.nowSec() }],
      total: 1
    })
  })
})
