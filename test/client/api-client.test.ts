// Every ApiClient / PublicClient method against the real service on loopback, with real
// Ed25519 signatures (and a real EIP-191 wallet signature for the link): orders with the
// time-based nonce, cancels, every public read, the deposit service, wallet link, deposit
// and withdraw on the in-memory chain, the LP bot routes, and the error helpers.
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Address } from "../../src/chain/chain.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { ApiFailure, describeFailure, failureOf, isOk, retryAfterSec, unwrap, withRetry } from "../../src/client/errors.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { PublicClient } from "../../src/client/public-client.ts"
import { type ClientHarness, startClientHarness } from "./harness.ts"

const G7 = "g7-2027-prediction-markets" // taker fee 0
const BTC = "btc-above-120k-2027-03-31"

let h: ClientHarness
beforeAll(async () => {
  h = await startClientHarness()
})
afterAll(async () => {
  await h?.close()
})

const lastAcceptedNonce = (user: string): number => h.service.exchange.engine.accounts.get(user)?.lastNonce ?? 0

describe("session and orders", () => {
  it("register keeps the api key and, in Node, the cookie from set-cookie; signOut forgets both", async () => {
    const c = h.client("reg")
    const res = await c.register("reg")
    expect(res.status).toBe(200)
    expect(c.apiKey).toMatch(/^[0-9a-f]{32}$/)
    expect(c.apiKey).toBe(res.body.api_key)
    expect(c.cookie).toMatch(/^service_oracle_session=/)
    // Re-registering returns the same key (SPEC §4).
    expect(unwrap(await c.register("reg")).api_key).toBe(c.apiKey)
    c.signOut()
    expect([c.cookie, c.apiKey]).toEqual([null, null])
    expect(failureOf(await c.cancelAll())).toMatchObject({ status: 401, code: "unauthorized" })
  })

  it("register signs once more with the next second when another page of the key used this second's proof", async () => {
    // Another page (its own key object) registered first, with this second's proof.
    const other = h.client("two-pages")
    expect((await other.register("two-pages", h.nowSec())).status).toBe(200)
    // This page's key object has signed nothing yet: its first proof is the same second, refused as used.
    const c = h.client("two-pages")
    const res = await c.register("two-pages")
    expect(res.status).toBe(200)
    expect(c.apiKey).toBe(other.apiKey)
    // A timestamp the caller chose is sent as it is: no second try.
    const exact = await h.client("two-pages").register("two-pages", h.nowSec())
    expect(failureOf(exact)).toMatchObject({ status: 403, code: "invalid_signature" })
  })

  it("in a browser the cookie is invisible: register still succeeds and keeps the api key", async () => {
    // A browser's fetch never shows set-cookie (HttpOnly, forbidden response header).
    const browserLike: typeof fetch = async (url, init) => {
      const res = await fetch(url, init)
      const headers = new Headers(res.headers)
      headers.delete("set-cookie")
      return new Response(await res.text(), { status: res.status, headers })
    }
    const c = new ApiClient(h.url, keyFromLabel("browser"), browserLike as never, () => h.nowSec())
    const res = await c.register("browser")
    expect(res.status).toBe(200)
    expect(c.cookie).toBeNull()
    expect(c.apiKey).toBe(res.body.api_key)
  })

  it("time-based nonce: max(last + 1, nowMs); accepted by the server; a given nonce is used as is and raises the counter", async () => {
    const funded = await h.funded("nonces", 100_000_000)
    // The client's own clock, apart from the server's, so it can jump back like a device clock.
    let clientMs = h.nowMs
    // The same key object: its register signs the next second's proof (each proof is accepted once).
    const c = new ApiClient(h.url, funded.key, fetch, () => h.nowSec(), { nowMs: () => clientMs })
    unwrap(await c.register("nonces"))
    const m = h.market(G7)
    const order = { market_id: m, side: "buy" as const, outcome: "yes" as const, price: 1000, size: 1 }
    expect(c.lastNonce).toBe(0)
    expect(unwrap(await c.placeOrder(order)).status).toBe("resting")
    expect(c.lastNonce).toBe(clientMs)
    expect(lastAcceptedNonce(c.user)).toBe(clientMs)
    // The same millisecond: one more.
    expect((await c.placeOrder(order)).status).toBe(200)
    expect(lastAcceptedNonce(c.user)).toBe(clientMs + 1)
    // Time moves on: the nonce follows the clock.
    clientMs += 5_000
    expect((await c.placeOrder(order)).status).toBe(200)
    expect(lastAcceptedNonce(c.user)).toBe(clientMs)
    // A clock set back still moves forward (last + 1).
    const before = clientMs
    clientMs -= 60_000
    expect((await c.placeOrder(order)).status).toBe(200)
    expect(lastAcceptedNonce(c.user)).toBe(before + 1)
    clientMs = before
    // A second client of the same key (another tab, a reload) needs no read: its clock is past the last nonce.
    h.advance(7_000)
    const tab2 = h.client("nonces")
    unwrap(await tab2.register("nonces"))
    expect((await tab2.placeOrder(order)).status).toBe(200)
    expect(lastAcceptedNonce(c.user)).toBe(h.nowMs)
    // A given nonce is used as is; the counter continues above it.
    clientMs = h.nowMs + 1
    expect((await c.placeOrder({ ...order, nonce: h.nowMs + 1_000_000 })).status).toBe(200)
    expect(c.lastNonce).toBe(h.nowMs + 1_000_000)
    expect((await c.placeOrder(order)).status).toBe(200)
    expect(lastAcceptedNonce(c.user)).toBe(h.nowMs + 1_000_001)
    expect(unwrap(await c.cancelAll()).cancelled).toBe(7)
  })

  it("a live client's default clock counts nonces in milliseconds: a second client of the key a moment later is ahead of the first", async () => {
    // With whole seconds (the old default) both took the same second's nonce, and the second
    // client's order was refused `nonce_stale` (docs/quickstart.md's WebSocket step in CI).
    const key = keyFromLabel("live-clock")
    const first = new ApiClient(h.url, key)
    let beforeMs = Date.now()
    while (beforeMs % 1000 === 0) beforeMs = Date.now() // a whole-second nonce can only tie here
    const firstNonce = first.nextNonce()
    expect(firstNonce).toBeGreaterThanOrEqual(beforeMs)
    expect(firstNonce).toBeLessThanOrEqual(Date.now())
    const start = Date.now()
    while (Date.now() < start + 2) {} // two milliseconds, well inside one second
    expect(new ApiClient(h.url, key).nextNonce()).toBeGreaterThan(firstNonce)
  })

  it("places, cancels one, cancels all (and all of one market)", async () => {
    const c = await h.funded("trader", 100_000_000)
    const g7 = h.market(G7)
    const btc = h.market(BTC)
    const a = unwrap(await c.placeOrder({ market_id: g7, side: "buy", outcome: "yes", price: 2000, size: 5, order_type: "post_only" }))
    expect(a).toMatchObject({ fills: [], remaining: 5, market_id: g7, status: "resting" })
    // A slug is signed as sent (SPEC §5.3).
    const b = unwrap(await c.placeOrder({ market_id: G7, side: "buy", outcome: "yes", price: 2100, size: 5 }))
    unwrap(await c.placeOrder({ market_id: btc, side: "buy", outcome: "yes", price: 1500, size: 5 }))
    expect(unwrap(await c.orders()).total).toBe(3)
    expect(unwrap(await c.cancel(a.order_id))).toEqual({ order_id: a.order_id, cancelled: true, remaining: 5 })
    expect(failureOf(await c.cancel(a.order_id))).toMatchObject({ status: 404, code: "order_not_found" })
    expect(unwrap(await c.cancelAll(btc)).cancelled).toBe(1)
    expect(unwrap(await c.orders()).orders.map((o) => o.id)).toEqual([b.order_id])
    expect(unwrap(await c.cancelAll()).cancelled).toBe(1)
    expect(unwrap(await c.balance())).toEqual({ user: c.user, available: 100_000_000, locked: 0, total: 100_000_000 })
  })
})

describe("public reads", () => {
  let maker: ApiClient
  let taker: ApiClient
  const pub = () => new PublicClient(h.url)

  beforeAll(async () => {
    maker = await h.funded("reads-maker", 200_000_000)
    taker = await h.funded("reads-taker", 200_000_000)
    const m = h.market(G7)
    unwrap(await maker.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 4000, size: 10 }))
    unwrap(await maker.placeOrder({ market_id: m, side: "buy", outcome: "yes", price: 4500, size: 10 }))
    // The NO buy at 5500 meets the YES bid at 4500: a mint of 4.
    unwrap(await taker.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 5500, size: 4, order_type: "ioc" }))
    h.advance(61_000) // past the trades' and book's edge caches
  })

  it("markets: the list with parameters, every page, one market by slug or id", async () => {
    const all = unwrap(await pub().markets())
    expect(all.markets.length).toBe(all.total)
    expect(all).toMatchObject({ limit: 500, offset: 0 })
    const sports = unwrap(await pub().markets({ category: "sports", order: "expiry" }))
    expect(sports.markets.length).toBeGreaterThan(0)
    expect(sports.markets.every((m) => m.category === "Sports")).toBe(true)
    const expiries = sports.markets.map((m) => m.expiry)
    expect(expiries).toEqual([...expiries].sort((a, b) => a - b)) // ascending by default for expiry
    const search = unwrap(await pub().markets({ search: "G7" }))
    expect(search.markets.map((m) => m.slug)).toContain(G7)
    const negRisk = unwrap(await pub().markets({ neg_risk: true }))
    expect(negRisk.markets.length).toBeGreaterThan(0)
    expect(negRisk.markets.every((m) => m.neg_risk && m.outcomes.length >= 2)).toBe(true)
    const paged = unwrap(await pub().allMarkets({ limit: 2 }))
    expect(paged.markets.map((m) => m.event_id)).toEqual(all.markets.map((m) => m.event_id))
    expect(failureOf(await pub().markets({ order: "nope" as never }))).toMatchObject({ status: 400, code: "invalid_order" })
    const g7 = unwrap(await pub().market(G7))
    expect(g7).toMatchObject({ slug: G7, status: "active", neg_risk: false })
    expect(unwrap(await pub().market(g7.event_id)).slug).toBe(G7)
    expect(failureOf(await pub().market("no-such-market"))).toMatchObject({ status: 404, code: "not_found" })
  })

  it("book, market trades, candles", async () => {
    const m = h.market(G7)
    const book = unwrap(await pub().book(m))
    expect(book).toEqual({ market_id: m, bids: [{ price: 4500, size: 6 }, { price: 4000, size: 10 }], asks: [], ts: h.nowMs })
    const trades = unwrap(await pub().marketTrades(m, { limit: 10 }))
    expect(trades.total).toBe(1)
    expect(trades.trades[0]).toMatchObject({ price: 5500, size: 4, side: "buy", outcome: "no", yes_price: 4500, maker: maker.user, taker: taker.user, kind: "mint" })
    expect(unwrap(await pub().marketTrades(m, { limit: 10, offset: 1 })).trades).toEqual([])
    const candles = unwrap(await pub().candles(m, { interval: "1m" }))
    expect(candles).toMatchObject({ market_id: m, interval: "1m" })
    expect(candles.candles).toEqual([expect.objectContaining({ o: 0.45, h: 0.45, l: 0.45, c: 0.45, v: 4, n: 1 })])
    expect(failureOf(await pub().candles(m, { interval: "2m" as never }))).toMatchObject({ status: 400, code: "invalid_interval" })
  })

  it("account reads: balance, position(s), orders, trades, deposits, withdrawals, wallet", async () => {
    const m = h.market(G7)
    expect(unwrap(await taker.balance())).toEqual(unwrap(await pub().balance(taker.user)))
    const pos = unwrap(await taker.position(m))
    expect(pos).toMatchObject({ user: taker.user, market_id: m, outcome: "NO", size: 4, yes: 0, no: 4, cost_basis: 2_200_000 })
    expect(unwrap(await pub().position(m, taker.user))).toEqual(pos)
    expect(unwrap(await taker.positions()).positions).toEqual([expect.objectContaining({ market_id: m, outcome: "NO", size: 4, avg_price: 0.55 })])
    expect(unwrap(await maker.orders())).toMatchObject({ total: 2 })
    expect(unwrap(await pub().orders(maker.user)).orders.map((o) => o.price).sort()).toEqual([4000, 4500])
    const tr = unwrap(await maker.trades(undefined, { limit: 1 }))
    expect(tr).toMatchObject({ total: 1, limit: 1, offset: 0 })
    expect(unwrap(await pub().trades(taker.user)).trades.map((t) => t.id)).toEqual(tr.trades.map((t) => t.id))
    expect(unwrap(await maker.deposits())).toEqual({ deposits: [], total: 0, limit: 50, offset: 0 })
    expect(unwrap(await maker.withdrawals(maker.user, { limit: 5 }))).toEqual({ withdrawals: [], total: 0, limit: 5, offset: 0 })
    expect(failureOf(await maker.wallet())).toMatchObject({ status: 404, code: "not_found" })
  })

  it("fees and rewards", async () => {
    const fees = unwrap(await pub().fees())
    expect(fees.default).toEqual({ taker_fee_bps: expect.any(Number), maker_rebate_bps: expect.any(Number) })
    expect(fees.per_market[h.market(BTC)]).toMatchObject({ slug: BTC, taker_fee_bps: 10 })
    expect(unwrap(await pub().rewardsConfig())).toEqual({ daily_budget_micro_usdc: 1_000_000_000, maker_rebate_bps: fees.maker_rebate_bps, rewards_band_spread_bps_max: 300, per_wallet_cap_pct: 40 })
    const me = unwrap(await maker.rewardsMe())
    expect(me).toMatchObject({ user: maker.user, wallet: null, pending: [], history: [] })
    expect(me.today.day).toMatch(/^\d{4}-\d\d-\d\d$/)
    expect(unwrap(await pub().rewardsWallet(maker.user))).toEqual(me)
    expect(unwrap(await pub().leaderboard({ days: 7, limit: 10 }))).toEqual({ days: 7, rows: [] })
    expect(failureOf(await pub().leaderboard({ days: 91 }))).toMatchObject({ status: 400, code: "invalid_query" })
  })
})

describe("deposits, wallet link and withdraw", () => {
  it("deposit address and progress, link a wallet, deposit on chain until credited, withdraw until confirmed", async () => {
    const c = h.client("depositor")
    unwrap(await c.register("depositor"))
    const evm = privateKeyToAccount(`0x${"42".repeat(32)}`)
    const wallet = evm.address.toLowerCase() as Address
    const addr = unwrap(await c.depositAddress(evm.address))
    expect(addr).toMatchObject({ chain: "native", token: "USDG", min_usdg_micro: 1_000_000, max_usdc_per_tx_micro: 100_000_000 })
    expect(addr.address).toBe(h.chain.depositAddress(wallet))
    expect(unwrap(await c.depositAddress(wallet))).toEqual(addr) // any case, same address
    expect(failureOf(await c.depositAddress("0x123"))).toMatchObject({ status: 400, code: "invalid_address" })
    expect(unwrap(await c.depositProgress(wallet))).toEqual({ data: { stage: "idle" } })

    // Link: the user key and the wallet (EIP-191) sign the same text.
    expect(unwrap(await c.linkWallet(evm.address, (message) => evm.signMessage({ message })))).toEqual({ user: c.user, wallet })
    expect(unwrap(await c.wallet())).toEqual({ user: c.user, wallet })
    const other = privateKeyToAccount(`0x${"43".repeat(32)}`)
    expect(failureOf(await c.linkWallet(other.address, (message) => other.signMessage({ message })))).toMatchObject({ status: 409, code: "wallet_already_linked" })

    // Deposit 25 USDG on the chain: detected → credited.
    h.chain.mint(h.chain.info.token, wallet, 25_000_000n)
    h.chain.mine()
    h.chain.transfer(h.chain.info.token, wallet, addr.address as Address, 25_000_000n)
    await h.settle(3)
    expect(unwrap(await c.depositProgress(wallet)).data).toMatchObject({ stage: "credited", amount_micro: 25_000_000 })
    expect(unwrap(await c.balance()).available).toBe(25_000_000)
    expect(unwrap(await c.deposits()).deposits).toEqual([expect.objectContaining({ amount_micro: 25_000_000, status: "credited" })])

    // Withdraw 10 USDG: signed over the linked wallet; the payout confirms.
    const w = unwrap(await c.withdraw(10_000_000))
    expect(w).toMatchObject({ status: "pending", recipient: wallet, chain: "native", amount_micro: 10_000_000, created_at: h.nowSec() })
    expect(unwrap(await c.balance()).available).toBe(15_000_000)
    await h.settle(3)
    expect(unwrap(await c.withdrawals()).withdrawals[0]).toMatchObject({ id: w.withdrawal_id, status: "confirmed", amount_micro: 10_000_000 })
    expect(h.chain.balance(h.chain.info.token, wallet)).toBe(10_000_000n)
    // Over the balance: the engine refuses; a refused attempt consumes no nonce.
    expect(failureOf(await c.withdraw(99_000_000))).toMatchObject({ status: 422, code: "engine_rejected", detail: "insufficient_balance" })
    // A nonce at or below the last is stale.
    expect(failureOf(await c.withdraw(1_000_000, { nonce: 1 }))).toMatchObject({ status: 422, code: "engine_rejected", detail: "withdraw_nonce_stale" })
    // Without a linked wallet the client answers the wallet read's 404 and signs nothing.
    const loner = h.client("loner")
    unwrap(await loner.register("loner"))
    expect(failureOf(await loner.withdraw(1_000_000))).toMatchObject({ status: 404, code: "not_found" })
  })
})

describe("the server-managed LP bot", () => {
  const strategy = { mode: "simple", capital_micro_usdc: 50_000_000, preset: "balanced" } as const

  it("session/new, delegate (checked before signing), start, status, stop with revoke; lpLaunch in one call", async () => {
    const c = await h.funded("lp-user", 200_000_000)
    const s = unwrap(await c.lpSessionNew(3600))
    expect(s).toMatchObject({ user: c.user, scope: "orders", expires_at_unix: h.nowSec() + 3600 })
    // The client refuses to sign bytes that do not match the fields it shows.
    expect(() => c.lpDelegate({ ...s, expires_at_unix: s.expires_at_unix + 1 })).toThrow(/refusing to sign/)
    expect(() => c.lpDelegate({ ...s, user: keyFromLabel("someone").user })).toThrow(/refusing to sign/)
    const d = unwrap(await c.lpDelegate(s))
    expect(d).toEqual({ user: c.user, session_pub: s.session_pub, scope: "orders", status: "delegated", expires_at_unix: s.expires_at_unix, nonce: s.nonce, delegated_at: h.nowSec() })
    expect(failureOf(await c.lpDelegate(s))).toMatchObject({ status: 409, code: "session_already_delegated" })
    const started = unwrap(await c.lpStart(s.session_pub, [G7], strategy))
    expect(started).toMatchObject({ user: c.user, status: "running", session_pub: s.session_pub, replaced: false, strategy })
    expect(unwrap(await c.lpStatus())).toMatchObject({ status: "running", markets: [expect.objectContaining({ slug: G7 })] })
    expect(unwrap(await new PublicClient(h.url).lpStatus(c.user)).status).toBe("running")
    const stopped = unwrap(await c.lpStop(true))
    expect(stopped).toEqual({ user: c.user, status: "stopped", was_running: true, cancelled_orders: 0, revoked_sessions: [s.session_pub] })
    expect(failureOf(await c.lpStart(s.session_pub, [G7], strategy))).toMatchObject({ status: 403, code: "session_revoked" })

    const launched = unwrap(await c.lpLaunch([G7, BTC], strategy, 600))
    expect(launched).toMatchObject({ status: "running", replaced: false })
    expect(unwrap(await c.lpStatus()).markets.map((m) => m.slug)).toEqual([G7, BTC])
    const bad = await c.lpLaunch([G7], { ...strategy, preset: "reckless" as never })
    expect(failureOf(bad)).toMatchObject({ status: 400, code: "invalid_shape", detail: expect.stringContaining("strategy.preset") })
    unwrap(await c.lpStop())
  })
})

describe("errors", () => {
  it("unwrap throws a tagged ApiFailure; describeFailure says it in words", async () => {
    const c = h.client("broke")
    unwrap(await c.register("broke"))
    const res = await c.placeOrder({ market_id: h.market(G7), side: "buy", outcome: "yes", price: 5000, size: 10 })
    expect(isOk(res)).toBe(false)
    let thrown: unknown
    try {
      unwrap(res)
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(ApiFailure)
    expect(thrown).toMatchObject({ _tag: "ApiFailure", status: 422, code: "insufficient_balance", retryAfterSec: null })
    expect(describeFailure(thrown as ApiFailure)).toMatch(/^Not enough available balance\./)
  })

  it("429 carries retry_after; withRetry waits it (on an injected, virtual sleep) and succeeds", async () => {
    const c = await h.funded("flooder", 100_000_000)
    const order = { market_id: h.market(G7), side: "buy" as const, outcome: "yes" as const, price: 100, size: 1 }
    // SPEC §8: 50 orders per wallet per 60 s.
    for (let i = 0; i < 50; i++) expect((await c.placeOrder(order)).status).toBe(200)
    const limited = await c.placeOrder(order)
    const f = failureOf(limited)!
    expect(f).toMatchObject({ status: 429, code: "rate_limited" })
    expect(f.retryAfterSec).toBeGreaterThan(0)
    expect(retryAfterSec(limited)).toBe(f.retryAfterSec)
    expect(describeFailure(f)).toContain(`Retry in ${f.retryAfterSec} s.`)
    const waits: number[] = []
    const res = await withRetry(() => c.placeOrder(order), {
      sleep: async (ms) => {
        waits.push(ms)
        h.advance(ms) // the test clock is the server's: waiting is advancing it
      }
    })
    expect(res.status).toBe(200)
    expect(waits.length).toBeGreaterThanOrEqual(1)
    expect(waits[0]).toBe(f.retryAfterSec! * 1000)
    unwrap(await c.cancelAll())
  })
})
