// The server-managed LP bot over real HTTP (SPEC §3 "LP-bot session", §4 "LP bot",
// §5.9-10, §7): session keys and the delegation message, every delegation error,
// replay, expiry, start/replace/stop/status, bot ticks placing session-signed orders
// that show up in the user's orders, balance and WebSocket portfolio, and the session
// key refused for withdraw. Each test runs on a fresh server.
import { privateKeyToAccount } from "viem/accounts"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { deriveSessionKey } from "../../src/auth/lp-session.ts"
import { orderMessage, walletLinkMessage, withdrawMessage } from "../../src/auth/messages.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { botStatus, delegate, delegatedSession, delegationBytes, LADDER, newSession, type Session, startBot, stopBot } from "../support/lp.ts"
import { startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"

const G7 = "g7-2027-prediction-markets" // taker fee 0
const BTC = "btc-above-120k-2027-03-31"
const SECRET = new Uint8Array(32).fill(7) // the test server's secret (test/support/server.ts)

let t: TestServer
let alice: ApiClient
beforeEach(async () => {
  t = await startTestServer()
  alice = await t.funded("lp-alice", 1_000_000_000)
})
afterEach(() => t.close())

const err = (r: { status: number; body: any }) => ({ status: r.status, error: r.body?.error })
const ordersOf = async (c: ApiClient) => (await c.request("GET", `/v1/orders/all/${c.user}`)).body.orders as any[]
const brief = (orders: any[]) => orders.map((o) => `${o.side} ${o.outcome} ${o.price} x${o.remaining}`)

/** A second maker quoting YES 4700 / 5300 around mid 5000, so the bot has a mid to quote on. */
const externalQuotes = async (market = t.market(G7)) => {
  const mm = await t.funded("lp-mm", 100_000_000)
  expect((await mm.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4700, size: 10 })).status).toBe(200)
  expect((await mm.placeOrder({ market_id: market, side: "buy", outcome: "no", price: 4700, size: 10 })).status).toBe(200)
  return mm
}

describe("POST /v1/lp-bot/session/new", () => {
  it("returns a server-generated session key and the canonical delegation message", async () => {
    const res = await newSession(alice, { expires_in_secs: 86_400 })
    expect(res.status).toBe(200)
    const s = res.body as Session
    expect(Object.keys(s).sort()).toEqual(["created_at", "expires_at_unix", "message_bytes_hex", "nonce", "scope", "session_pub", "user"])
    expect(s).toMatchObject({ user: alice.user, scope: "orders", expires_at_unix: t.nowSec() + 86_400, nonce: 1, created_at: t.nowSec() })
    // The documented layout, built independently: 25 + 32 + 32 + 1 + 6 + 8 + 8 bytes.
    const expected = delegationBytes(alice.user, s.session_pub, s.expires_at_unix, 1)
    expect(expected.length).toBe(112)
    expect(s.message_bytes_hex).toBe(expected.toString("hex"))
    // The key is derived, not stored: HMAC-SHA256(secret, "lp-session:<user>:<counter>").
    expect(deriveSessionKey(SECRET, alice.user, 1).pub).toBe(s.session_pub)
    const second = (await newSession(alice)).body as Session
    expect(second.session_pub).toBe(deriveSessionKey(SECRET, alice.user, 2).pub)
    expect(second.nonce).toBe(1) // nothing delegated yet
  })

  it("needs the user's session cookie and a valid user, scope and lifetime", async () => {
    const bob = await t.funded("lp-bob")
    expect(err(await newSession(t.client("lp-alice")))).toEqual({ status: 401, error: "unauthorized" })
    expect(err(await newSession(bob, { user: alice.user }))).toEqual({ status: 403, error: "user_mismatch" })
    expect(err(await newSession(alice, { user: "not-a-key" }))).toEqual({ status: 400, error: "invalid_pubkey" })
    expect(err(await newSession(alice, { expires_in_secs: "soon" }))).toEqual({ status: 400, error: "invalid_shape" })
    for (const scope of [undefined, "", []]) expect(err(await newSession(alice, { scope }))).toEqual({ status: 400, error: "scope_missing" })
    for (const scope of ["withdraw", "orders,withdraw", ["orders", "withdraw"], 7]) {
      expect(err(await newSession(alice, { scope }))).toEqual({ status: 400, error: "scope_forbidden" })
    }
    expect((await newSession(alice, { scope: ["orders"] })).status).toBe(200)
    for (const secs of [299, 30 * 86_400 + 1, 0]) expect(err(await newSession(alice, { expires_in_secs: secs }))).toEqual({ status: 400, error: "expiry_out_of_range" })
    for (const secs of [300, 30 * 86_400]) expect((await newSession(alice, { expires_in_secs: secs })).status).toBe(200)
  })
})

describe("POST /v1/lp-bot/delegate", () => {
  it("accepts the user's signature once; nonces strictly increase per user", async () => {
    const s = (await newSession(alice)).body as Session
    const res = await delegate(alice, s)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ user: alice.user, session_pub: s.session_pub, scope: "orders", status: "delegated", expires_at_unix: s.expires_at_unix, nonce: 1, delegated_at: t.nowSec() })
    // Replaying the very same request: the session is already delegated.
    expect(err(await delegate(alice, s))).toEqual({ status: 409, error: "session_already_delegated" })
    // A new session offers the next nonce; an old nonce on it is stale, a jump ahead is fine.
    const s2 = (await newSession(alice)).body as Session
    expect(s2.nonce).toBe(2)
    expect(err(await delegate(alice, s2, { nonce: 1 }))).toEqual({ status: 422, error: "nonce_stale" })
    expect((await delegate(alice, s2, { nonce: 10 })).status).toBe(200)
    const s3 = (await newSession(alice)).body as Session
    expect(s3.nonce).toBe(11)
    expect(err(await delegate(alice, s3, { nonce: 10 }))).toEqual({ status: 422, error: "nonce_stale" })
    const status = (await botStatus(alice)).body
    expect(status.sessions.map((x: any) => [x.delegated, x.nonce])).toEqual([[true, 1], [true, 10], [false, null]])
  })

  it("rejects bad keys, scopes, signatures, expiries and foreign or unknown sessions", async () => {
    const bob = await t.funded("lp-bob")
    const s = (await newSession(alice)).body as Session
    expect(err(await delegate(alice, s, { user: "nope" }))).toEqual({ status: 400, error: "invalid_pubkey" })
    expect(err(await delegate(alice, s, { session_pub: "0xabc" }))).toEqual({ status: 400, error: "invalid_pubkey" })
    expect(err(await delegate(alice, s, { scope: undefined }))).toEqual({ status: 400, error: "scope_missing" })
    expect(err(await delegate(alice, s, { scope: "withdraw" }))).toEqual({ status: 400, error: "scope_forbidden" })
    expect(err(await delegate(alice, s, { signature: "ab".repeat(32) }))).toEqual({ status: 400, error: "invalid_signature_format" })
    expect(err(await delegate(alice, s, {}, bob.key))).toEqual({ status: 403, error: "invalid_signature" })
    // The signature covers the fields: a different expiry or nonce than signed fails.
    const signedOther = delegationBytes(alice.user, s.session_pub, s.expires_at_unix, 1)
    const forged = { user: alice.user, session_pub: s.session_pub, expires_at_unix: s.expires_at_unix + 60, nonce: 1, scope: "orders", signature: alice.key.sign(signedOther) }
    expect(err(await alice.request("POST", "/v1/lp-bot/delegate", forged))).toEqual({ status: 403, error: "invalid_signature" })
    const now = t.nowSec()
    for (const expires of [now + 299, now + 30 * 86_400 + 1, now - 1]) {
      expect(err(await delegate(alice, s, { expires_at_unix: expires }))).toEqual({ status: 400, error: "expiry_out_of_range" })
    }
    expect(err(await delegate(alice, { ...s, session_pub: keyFromLabel("nobody").user }))).toEqual({ status: 404, error: "not_found" })
    const bobs = (await newSession(bob)).body as Session
    expect(err(await delegate(alice, bobs))).toEqual({ status: 403, error: "user_mismatch" })
    // No cookie needed: the user's signature is the authorisation. Nothing above consumed the nonce.
    expect((await delegate(t.client("lp-alice"), s, { expires_at_unix: now + 30 * 86_400 })).status).toBe(200)
    expect(err(await alice.request("POST", "/v1/lp-bot/delegate", "{"))).toEqual({ status: 400, error: "invalid_json" })
  })

  it("measures the lifetime from session/new, so a 5-minute delegation signed a little later still fits", async () => {
    const s = (await newSession(alice, { expires_in_secs: 300 })).body as Session
    t.advance(20_000)
    expect((await delegate(alice, s)).status).toBe(200)
    const late = (await newSession(alice, { expires_in_secs: 300 })).body as Session
    t.advance(301_000)
    expect(err(await delegate(alice, late))).toEqual({ status: 400, error: "expiry_out_of_range" })
  })
})

describe("LP surface switch", () => {
  it("answers 403 lp_disabled on every /v1/lp-bot route while LP is closed", async () => {
    const s = await delegatedSession(alice)
    expect((await t.admin("POST", "/v1/admin/lp", { state: "closed" })).status).toBe(200)
    expect(err(await newSession(alice))).toEqual({ status: 403, error: "lp_disabled" })
    expect(err(await delegate(alice, s))).toEqual({ status: 403, error: "lp_disabled" })
    expect(err(await startBot(alice, s.session_pub, [G7]))).toEqual({ status: 403, error: "lp_disabled" })
    expect(err(await botStatus(alice))).toEqual({ status: 403, error: "lp_disabled" })
    expect(err(await stopBot(alice))).toEqual({ status: 403, error: "lp_disabled" })
    await t.admin("POST", "/v1/admin/lp", { state: "open" })
    expect((await botStatus(alice)).status).toBe(200)
  })
})

describe("POST /v1/lp-bot/start", () => {
  it("validates the basket and the strategy, naming the bad field", async () => {
    const s = await delegatedSession(alice)
    const shape = async (markets: unknown, strategy: unknown = LADDER) => {
      const r = await alice.request("POST", "/v1/lp-bot/start", { user: alice.user, session_pub: s.session_pub, markets, strategy })
      expect(r.status, JSON.stringify(r.body)).toBe(400)
      expect(r.body.error).toBe("invalid_shape")
      return r.body.detail as string
    }
    expect(await shape("g7")).toMatch(/^markets:/)
    expect(await shape([])).toMatch(/^markets:/)
    expect(await shape([G7, "no-such-market"])).toMatch(/^markets\[1\]: no such market/)
    expect(await shape([G7, t.market(G7)])).toMatch(/^markets\[1\]: listed twice/)
    expect(await shape([G7], { ...LADDER, spread_bps: 1 })).toMatch(/^strategy\.spread_bps:/)
    expect(await shape([G7], { ...LADDER, surprise: 1 })).toMatch(/^strategy\.surprise:/)
    expect(await shape([G7], null)).toMatch(/^strategy:/)
    expect(await shape([G7], { ...LADDER, mode: "turbo" })).toMatch(/^strategy\.mode:/)
    expect(err(await startBot(alice, "nope", [G7]))).toEqual({ status: 400, error: "invalid_pubkey" })
  })

  it("needs the cookie of the user, a delegated, unrevoked, unexpired session of that user", async () => {
    const bob = await t.funded("lp-bob")
    const s = await delegatedSession(alice, 600)
    const pending = (await newSession(alice)).body as Session
    expect(err(await startBot(t.client("lp-alice"), s.session_pub, [G7]))).toEqual({ status: 401, error: "unauthorized" })
    expect(err(await bob.request("POST", "/v1/lp-bot/start", { user: alice.user, session_pub: s.session_pub, markets: [G7], strategy: LADDER }))).toEqual({ status: 403, error: "user_mismatch" })
    expect(err(await startBot(bob, s.session_pub, [G7]))).toEqual({ status: 403, error: "user_mismatch" })
    expect(err(await startBot(alice, pending.session_pub, [G7]))).toEqual({ status: 404, error: "session_not_delegated" })
    expect(err(await startBot(alice, keyFromLabel("nobody").user, [G7]))).toEqual({ status: 404, error: "session_not_delegated" })
    t.advance(600_000)
    expect(err(await startBot(alice, s.session_pub, [G7]))).toEqual({ status: 403, error: "session_expired" })
    const fresh = await delegatedSession(alice)
    expect((await stopBot(alice, true)).body.revoked_sessions).toEqual(expect.arrayContaining([fresh.session_pub, s.session_pub]))
    expect(err(await startBot(alice, fresh.session_pub, [G7]))).toEqual({ status: 403, error: "session_revoked" })
    expect((await botStatus(alice)).body).toMatchObject({ status: "none", markets: [] })
  })
})

describe("the bot at work", () => {
  it("quotes on tick with session-signed post-only orders seen in orders, balance and the user channel; re-quotes, replaces, stops", async () => {
    const mm = await externalQuotes()
    const s = await delegatedSession(alice)
    const ws = await WsClient.open(t.wsUrl, alice.cookie)
    await ws.subscribe(`user:${alice.user}`)
    await ws.nextOf("portfolio_snapshot")

    const started = await startBot(alice, s.session_pub, [G7, BTC])
    expect(started.status).toBe(200)
    expect(started.body).toMatchObject({
      user: alice.user, status: "running", session_pub: s.session_pub, started_at: t.nowSec(), replaced: false, cancelled_orders: 0,
      strategy: LADDER, open_orders: 0
    })
    expect(started.body.markets.map((m: any) => [m.slug, m.state])).toEqual([[G7, "waiting"], [BTC, "waiting"]])

    // BTC has no other quotes and no trades: no mid, so the bot waits there.
    const first = await t.tick()
    expect(first).toMatchObject({ steps: 1, placed: 4, rejected: 0 })
    const quoted = await ordersOf(alice)
    expect(brief(quoted)).toEqual(["buy yes 4900 x10", "buy yes 4800 x10", "buy no 4900 x10", "buy no 4800 x10"])
    expect((await alice.balance()).body).toMatchObject({ locked: 19_400_000, total: 1_000_000_000 })
    const update = await ws.nextOf("portfolio_update", (f) => f.state.open_orders.length === 4)
    expect(update.state.open_orders.map((o: any) => o.id)).toEqual(quoted.map((o) => o.id))
    const status = (await botStatus(alice)).body
    expect(status.markets[0]).toMatchObject({ slug: G7, state: "quoting", open_orders: 4, mid_bps: 5000, net_yes: 0, pnl_micro_usdc: 0, last_action_at: t.nowSec() })
    expect(status.markets[1]).toMatchObject({ slug: BTC, state: "waiting", open_orders: 0, mid_bps: null })

    // Nothing is due before the interval; then the ladder is replaced by fresh orders.
    t.advance(10_000)
    expect(await t.tick()).toMatchObject({ steps: 0, placed: 0 })
    t.advance(5_000)
    expect(await t.tick()).toMatchObject({ steps: 1, placed: 4 })
    const requoted = await ordersOf(alice)
    expect(brief(requoted)).toEqual(brief(quoted))
    expect(requoted.every((o) => !quoted.some((q) => q.id === o.id))).toBe(true)

    // A taker hits the 4900 bid (a mint): the bot is long 10 YES, leans and sells them first.
    const taker = await t.funded("lp-taker", 100_000_000)
    expect((await taker.placeOrder({ market_id: G7, side: "buy", outcome: "no", price: 5100, size: 10, order_type: "ioc" })).body.remaining).toBe(0)
    expect((await botStatus(alice)).body.markets[0]).toMatchObject({ net_yes: 10, pnl_micro_usdc: 100_000 })
    t.advance(15_000)
    await t.tick()
    // lean = trunc(75 · 10 / 20) = 37: bids 4863, 4763; asks 5063 (sell the 10 YES), 5163 (buy NO at 4837).
    expect(brief(await ordersOf(alice))).toEqual(["buy yes 4863 x10", "buy yes 4763 x10", "sell yes 5063 x10", "buy no 4837 x10"])

    // A new start replaces the bot: its orders are cancelled at once.
    const replaced = await startBot(alice, s.session_pub, [G7], { mode: "simple", capital_micro_usdc: 50_000_000, preset: "conservative" })
    expect(replaced.body).toMatchObject({ status: "running", replaced: true, cancelled_orders: 4, open_orders: 0 })
    expect(await ordersOf(alice)).toEqual([])
    await t.tick()
    expect((await ordersOf(alice)).length).toBeGreaterThan(0)

    // Stop cancels every bot order; the user's own orders are left alone. Bot orders take the
    // user's next nonces, so a hand-placed order alongside uses a larger one: a counter from 1
    // collides with them, the client's default time-based nonce (docs/sdk.md "Nonces") is ahead.
    expect((await alice.placeOrder({ market_id: BTC, side: "buy", outcome: "yes", price: 1000, size: 10, nonce: 1 })).body.error).toBe("nonce_stale")
    expect((await alice.placeOrder({ market_id: BTC, side: "buy", outcome: "yes", price: 1000, size: 10 })).status).toBe(200)
    const bots = (await ordersOf(alice)).length - 1
    const stopped = await stopBot(alice)
    expect(stopped.body).toEqual({ user: alice.user, status: "stopped", was_running: true, cancelled_orders: bots, revoked_sessions: [] })
    expect(brief(await ordersOf(alice))).toEqual(["buy yes 1000 x10"])
    expect((await botStatus(alice)).body).toMatchObject({ status: "stopped", stop_reason: "user", stopped_at: t.nowSec(), open_orders: 0 })
    t.advance(60_000)
    expect(await t.tick()).toMatchObject({ steps: 0, placed: 0 })
    expect((await stopBot(alice)).body).toMatchObject({ was_running: false, cancelled_orders: 0 })
    await ws.close()
    void mm
  })

  it("pauses on inventory skew: shows paused, quotes only the unwinding side, resumes two-sided once unwound", async () => {
    // LADDER: maxInventory 20, tolerance 80% → pause when |net| > 16, resume when |net| < 8 (7 at most), lean 75.
    await externalQuotes()
    const s = await delegatedSession(alice)
    await startBot(alice, s.session_pub, [G7])
    await t.tick()
    const taker = await t.funded("lp-taker", 100_000_000)
    // The taker sells 20 YES into both bids: the bot is long 20.
    expect((await taker.placeOrder({ market_id: G7, side: "buy", outcome: "no", price: 5200, size: 20, order_type: "ioc" })).body.remaining).toBe(0)
    // The skew is checked on every tick, not on the cadence: paused at once, asks only (sell the YES held),
    // full lean (centre 4925, ask0 5025), 20 − 7 = 13 contracts in all.
    expect(await t.tick()).toMatchObject({ steps: 1, placed: 2, rejected: 0 })
    expect(brief(await ordersOf(alice))).toEqual(["sell yes 5025 x10", "sell yes 5125 x3"])
    expect((await botStatus(alice)).body.markets[0]).toMatchObject({ state: "paused", open_orders: 2, net_yes: 20 })

    // A buyer lifts 10: still paused (10 is not below 8); the next paused re-quote waits for the interval.
    expect((await taker.placeOrder({ market_id: G7, side: "buy", outcome: "yes", price: 5100, size: 10, order_type: "ioc" })).body.remaining).toBe(0)
    expect(await t.tick()).toMatchObject({ steps: 0 })
    t.advance(15_000)
    expect(await t.tick()).toMatchObject({ steps: 1, placed: 1 })
    expect(brief(await ordersOf(alice))).toEqual(["sell yes 5063 x3"]) // lean 37, excess 10 − 7 = 3
    expect((await botStatus(alice)).body.markets[0]).toMatchObject({ state: "paused", net_yes: 10 })

    // Those 3 fill: net 7 resumes at once with both sides (lean 26).
    expect((await taker.placeOrder({ market_id: G7, side: "buy", outcome: "yes", price: 5100, size: 3, order_type: "ioc" })).body.remaining).toBe(0)
    expect(await t.tick()).toMatchObject({ steps: 1, rejected: 0 })
    expect(brief(await ordersOf(alice))).toEqual(["buy yes 4874 x10", "buy yes 4774 x10", "sell yes 5074 x7", "buy no 4926 x3", "buy no 4826 x10"])
    expect((await botStatus(alice)).body.markets[0]).toMatchObject({ state: "quoting", net_yes: 7 })
  })

  it("stops the bot and cancels its orders when the delegation expires", async () => {
    await externalQuotes()
    const s = await delegatedSession(alice, 600)
    await startBot(alice, s.session_pub, [G7])
    await t.tick()
    expect((await ordersOf(alice)).length).toBe(4)
    t.advance(600_000)
    expect(await t.tick()).toMatchObject({ stopped: 1, placed: 0 })
    expect(await ordersOf(alice)).toEqual([])
    expect((await botStatus(alice)).body).toMatchObject({ status: "stopped", stop_reason: "session_expired" })
  })

  it("stop with revoke_session revokes instantly: the session can sign nothing more", async () => {
    await externalQuotes()
    const s = await delegatedSession(alice)
    await startBot(alice, s.session_pub, [G7])
    const key = deriveSessionKey(SECRET, alice.user, 1)
    const order = (nonce: number) => ({ market_id: t.market(G7), side: "buy", outcome: "yes", price: 4000, size: 10, nonce, user: alice.user, session_pub: s.session_pub })
    const sign = (o: ReturnType<typeof order>, k = key) =>
      k.sign(orderMessage({ marketId: o.market_id, user: alice.user, outcome: "yes", side: "buy", priceBps: o.price, size: o.size, nonce: o.nonce }))
    // An order signed by the running bot's session key is accepted like any order and belongs to the bot.
    const ok = await alice.request("POST", "/v1/orders", { ...order(100), signature: sign(order(100)) })
    expect(ok.status).toBe(200)
    // The user's own key does not verify as the session key.
    expect(err(await alice.request("POST", "/v1/orders", { ...order(101), signature: alice.key.sign(orderMessage({ marketId: t.market(G7), user: alice.user, outcome: "yes", side: "buy", priceBps: 4000, size: 10, nonce: 101 })) }))).toEqual({ status: 403, error: "invalid_signature" })
    const stopped = await stopBot(alice, true)
    expect(stopped.body).toMatchObject({ was_running: true, cancelled_orders: 1, revoked_sessions: [s.session_pub] })
    expect(err(await alice.request("POST", "/v1/orders", { ...order(102), signature: sign(order(102)) }))).toEqual({ status: 403, error: "session_revoked" })
    expect((await botStatus(alice)).body.sessions[0]).toMatchObject({ session_pub: s.session_pub, revoked: true, revoked_at: t.nowSec() })
  })

  it("accepts session-signed orders only while that session's bot runs", async () => {
    const s = await delegatedSession(alice)
    const key = deriveSessionKey(SECRET, alice.user, 1)
    const body = { market_id: t.market(G7), side: "buy", outcome: "yes", price: 4000, size: 10, nonce: 5, user: alice.user, session_pub: s.session_pub }
    const signature = key.sign(orderMessage({ marketId: body.market_id, user: alice.user, outcome: "yes", side: "buy", priceBps: 4000, size: 10, nonce: 5 }))
    expect(err(await alice.request("POST", "/v1/orders", { ...body, signature }))).toEqual({ status: 422, error: "order_rejected" })
    expect(await ordersOf(alice)).toEqual([])
  })
})

describe("the session key and withdraw (SPEC §5.10)", () => {
  it("is hard-rejected: a withdraw signed by the session key never verifies", async () => {
    const evm = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a")
    const wallet = evm.address.toLowerCase()
    const ts = t.nowSec()
    const message = walletLinkMessage(alice.user, wallet, ts)
    const link = await alice.request("POST", "/v1/wallet/link", { user: alice.user, wallet, timestamp: ts, signature: alice.key.sign(Buffer.from(message)), evm_signature: await evm.signMessage({ message }) })
    expect(link.status).toBe(200)
    const s = await delegatedSession(alice)
    await startBot(alice, s.session_pub, [G7])
    const key = deriveSessionKey(SECRET, alice.user, 1)
    const signed = key.sign(Buffer.from(withdrawMessage(alice.user, wallet, 1_000_000, 1)))
    const base = { user: alice.user, amount_micro: 1_000_000, nonce: 1, signature: signed }
    expect(err(await alice.request("POST", "/v1/withdraw-signed", base))).toEqual({ status: 403, error: "invalid_signature" })
    const named = await alice.request("POST", "/v1/withdraw-signed", { ...base, session_pub: s.session_pub })
    expect(err(named)).toEqual({ status: 403, error: "invalid_signature" })
    expect(named.body.detail).toMatch(/scoped to orders/)
    expect((await alice.balance()).body.available).toBe(1_000_000_000)
    // The user's own signature still withdraws.
    const own = alice.key.sign(Buffer.from(withdrawMessage(alice.user, wallet, 1_000_000, 1)))
    expect((await alice.request("POST", "/v1/withdraw-signed", { ...base, signature: own })).status).toBe(200)
  })
})
