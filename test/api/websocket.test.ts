// The WebSocket feed (SPEC §6, §5.6) end to end over a real socket, plus the
// slow-consumer policy of the transport-free FeedHub. Every wait is on a frame
// (or a ping/pong barrier), never on a fixed sleep.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { sessionMessage } from "../../src/auth/messages.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel, signSession } from "../../src/client/keys.ts"
import { FeedHub, type FeedSocket, MAX_BUFFERED_BYTES } from "../../src/feed/hub.ts"
import { loadCatalog } from "../../src/runtime/boot.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { startTestServer, T0_MS, type TestServer } from "../support/server.ts"
import { type Frame, WsClient } from "../support/ws-client.ts"

let t: TestServer
const sockets: WsClient[] = []

beforeAll(async () => {
  t = await startTestServer()
})
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.close()))
})
afterAll(() => t.close())

/** A socket closed automatically after the test. */
const open = async (cookie?: string | null): Promise<WsClient> => {
  const s = await WsClient.open(t.wsUrl, cookie)
  sockets.push(s)
  return s
}

const getJson = (path: string): Promise<any> => fetch(`${t.url}${path}`).then((r) => r.json())

const isType = (type: string) => (f: Frame) => f.type === type
const isBookFrame = (f: Frame) => f.type === "book_update"
const isPortfolioFrame = (f: Frame) => typeof f.type === "string" && f.type.startsWith("portfolio_")
const TRADE_FIELDS = ["id", "price", "size", "side", "time", "market_id", "maker", "taker", "fee"] as const

/** Places an order and insists it was accepted. */
const place = async (c: ApiClient, o: Parameters<ApiClient["placeOrder"]>[0]) => {
  const res = await c.placeOrder(o)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body
}

/** The user's state as the REST reads show it, in the portfolio channel's shape. */
const restState = async (user: string) => {
  const balance = await getJson(`/v1/balance/${user}`)
  const { positions } = await getJson(`/v1/positions/all/${user}`)
  const { orders } = await getJson(`/v1/orders/all/${user}`)
  return {
    balance: { available: balance.available, locked: balance.locked, total: balance.total },
    positions: positions.map((p: any) => ({
      market_id: p.market_id,
      outcome: p.outcome,
      size: p.size,
      avg_price: p.avg_price,
      mark_price: p.mark_price,
      cash_pnl: p.cash_pnl,
      slug: p.slug,
      redeemable: p.redeemable,
      end_date: p.end_date
    })),
    open_orders: orders
  }
}

describe("ping", () => {
  it("answers pong with the server clock in unix milliseconds", async () => {
    const s = await open()
    expect(await s.barrier()).toEqual({ type: "pong", ts: t.nowMs })
    t.advance(1_234)
    expect(await s.barrier()).toEqual({ type: "pong", ts: t.nowMs })
    expect(t.nowMs).toBeGreaterThan(T0_MS)
  })
})

describe("book and trades channels", () => {
  it("sends the full book snapshot after each place, fill and cancel, and no history on subscribe", async () => {
    const alice = await t.funded("book-alice", 100_000_000)
    const bob = await t.funded("book-bob", 100_000_000)
    const market = t.market("eth-above-6k-2027-h1")
    await place(alice, { market_id: market, side: "buy", outcome: "yes", price: 5000, size: 10 })

    const s = await open()
    const channel = `book:${market}`
    expect(await s.subscribe(channel)).toEqual({ type: "subscribed", channel })
    // The existing bid is not replayed: nothing but the pong arrives.
    await s.barrier()
    expect(s.since(0, isBookFrame)).toEqual([])

    const snapshot = (bids: Array<[number, number]>, asks: Array<[number, number]>) => ({
      type: "book_update",
      market_id: market,
      snapshot: {
        market_id: market,
        bids: bids.map(([price, size]) => ({ price, size })),
        asks: asks.map(([price, size]) => ({ price, size })),
        ts: t.nowMs
      }
    })

    // Place: a better bid.
    const better = await place(alice, { market_id: market, side: "buy", outcome: "yes", price: 5200, size: 5 })
    expect(await s.nextOf("book_update")).toEqual(snapshot([[5200, 5], [5000, 10]], []))

    // Place: bob's NO bid at 4000 rests as a YES ask at 6000.
    t.advance(1_000)
    await place(bob, { market_id: market, side: "buy", outcome: "no", price: 4000, size: 4 })
    expect(await s.nextOf("book_update")).toEqual(snapshot([[5200, 5], [5000, 10]], [[6000, 4]]))

    // Fill: bob's NO bid at 4800 crosses alice's YES 5200 for 3.
    t.advance(1_000)
    const take = await place(bob, { market_id: market, side: "buy", outcome: "no", price: 4800, size: 3 })
    expect(take.remaining).toBe(0)
    expect(await s.nextOf("book_update")).toEqual(snapshot([[5200, 2], [5000, 10]], [[6000, 4]]))

    // Cancel: the rest of alice's 5200 bid.
    t.advance(1_000)
    expect((await alice.cancel(better.order_id)).status).toBe(200)
    expect(await s.nextOf("book_update")).toEqual(snapshot([[5000, 10]], [[6000, 4]]))

    await s.barrier()
    expect(s.since(0, isBookFrame)).toHaveLength(4)
  })

  it("accepts slugs as channel ids and reports the market id in frames", async () => {
    const alice = await t.funded("slug-alice", 100_000_000)
    const bob = await t.funded("slug-bob", 100_000_000)
    const slug = "sol-flips-bnb-2027"
    const market = t.market(slug)
    const s = await open()
    expect(await s.subscribe(`book:${slug}`)).toEqual({ type: "subscribed", channel: `book:${slug}` })
    expect(await s.subscribe(`trades:${slug}`)).toEqual({ type: "subscribed", channel: `trades:${slug}` })

    await place(alice, { market_id: market, side: "buy", outcome: "yes", price: 3000, size: 2 })
    const rest = await s.nextOf("book_update")
    expect(rest).toMatchObject({ market_id: market, snapshot: { market_id: market, bids: [{ price: 3000, size: 2 }], asks: [] } })

    await place(bob, { market_id: slug, side: "buy", outcome: "no", price: 7000, size: 2 })
    const trade = await s.nextOf("trade")
    expect(trade).toMatchObject({ market_id: market, trade: { market_id: market, price: 7000, size: 2, maker: alice.user, taker: bob.user } })
    expect(await s.nextOf("book_update")).toMatchObject({ market_id: market, snapshot: { market_id: market, bids: [], asks: [] } })
  })

  it("sends one trade frame per fill with the Trade fields except builder_fee", async () => {
    const alice = await t.funded("trades-alice", 100_000_000)
    const bob = await t.funded("trades-bob", 100_000_000)
    const market = t.market("doge-1-dollar-2027")
    const s = await open()
    const channel = `trades:${market}`
    expect(await s.subscribe(channel)).toEqual({ type: "subscribed", channel })

    // Resting orders make no trade frames (and this socket is not on the book channel).
    await place(alice, { market_id: market, side: "buy", outcome: "yes", price: 3000, size: 5 })
    await place(alice, { market_id: market, side: "buy", outcome: "yes", price: 2900, size: 5 })
    await s.barrier()
    expect(s.frames.filter((f) => f.type === "trade" || f.type === "book_update")).toEqual([])

    // Bob's NO bid at 7200 takes YES 3000 ×5 (NO 7000) and YES 2900 ×2 (NO 7100).
    t.advance(5_000)
    const take = await place(bob, { market_id: market, side: "buy", outcome: "no", price: 7200, size: 7 })
    expect(take.fills).toHaveLength(2)
    const first = await s.nextOf("trade")
    const second = await s.nextOf("trade")

    const rest = (await getJson(`/v1/trades/all/${bob.user}`)).trades as any[]
    const byId = new Map(rest.map((tr) => [tr.id, tr]))
    for (const [f, price, size] of [[first, 7000, 5], [second, 7100, 2]] as const) {
      expect(Object.keys(f).sort()).toEqual(["market_id", "trade", "type"])
      expect(f.market_id).toBe(market)
      expect(f.trade).toMatchObject({ price, size, side: "buy", time: t.nowSec(), market_id: market, maker: alice.user, taker: bob.user })
      for (const field of TRADE_FIELDS) expect(f.trade).toHaveProperty(field)
      expect(f.trade).not.toHaveProperty("builder_fee")
      // Otherwise the same record as the REST trade list.
      const { builder_fee: _omit, ...expected } = byId.get(f.trade.id)
      expect(f.trade).toEqual(expected)
    }
    expect(first.trade.id).toBeLessThan(second.trade.id)
    await s.barrier()
    expect(s.since(0, isType("trade"))).toHaveLength(2)
  })

  it("stops sending a channel's frames after unsubscribe", async () => {
    const alice = await t.funded("unsub-alice", 100_000_000)
    const bob = await t.funded("unsub-bob", 100_000_000)
    const market = t.market("bnb-above-1000-end-2026")
    const s = await open()
    const watcher = await open()
    await s.subscribe(`book:${market}`)
    await s.subscribe(`trades:${market}`)
    await watcher.subscribe(`book:${market}`)

    await place(alice, { market_id: market, side: "buy", outcome: "yes", price: 4000, size: 10 })
    await s.nextOf("book_update")
    await watcher.nextOf("book_update")

    expect(await s.request({ type: "unsubscribe", channel: `book:${market}` }, isType("unsubscribed"))).toEqual({
      type: "unsubscribed",
      channel: `book:${market}`
    })

    // A fill: the trade still arrives, the book update does not.
    let mark = s.frames.length
    await place(bob, { market_id: market, side: "buy", outcome: "no", price: 6000, size: 2 })
    await watcher.nextOf("book_update")
    await s.nextOf("trade")
    await s.barrier()
    expect(s.since(mark, isBookFrame)).toEqual([])

    expect(await s.request({ type: "unsubscribe", channel: `trades:${market}` }, isType("unsubscribed"))).toEqual({
      type: "unsubscribed",
      channel: `trades:${market}`
    })
    mark = s.frames.length
    await place(bob, { market_id: market, side: "buy", outcome: "no", price: 6000, size: 3 })
    await watcher.nextOf("book_update")
    await s.barrier()
    expect(s.since(mark, (f) => f.type !== "pong")).toEqual([])
  })
})

describe("user channel", () => {
  it("with the cookie of addr: subscribed, an immediate snapshot, then the full state on every change", async () => {
    const carol = await t.funded("user-carol", 50_000_000)
    const dave = await t.funded("user-dave", 50_000_000)
    const market = t.market("xrp-above-3-end-2026")
    const s = await open(carol.cookie)
    const channel = `user:${carol.user}`

    const from = s.frames.length
    s.send({ type: "subscribe", channel })
    expect(await s.nextOf("subscribed")).toEqual({ type: "subscribed", channel })
    const snap = await s.nextOf("portfolio_snapshot")
    // The snapshot is the very next frame after `subscribed`.
    expect(s.frames.slice(from, from + 2).map((f) => f.type)).toEqual(["subscribed", "portfolio_snapshot"])
    expect(snap).toEqual({
      type: "portfolio_snapshot",
      user: carol.user,
      ts: t.nowMs,
      state: { balance: { available: 50_000_000, locked: 0, total: 50_000_000 }, positions: [], open_orders: [] }
    })

    // Order placed.
    t.advance(2_000)
    const order = await place(carol, { market_id: market, side: "buy", outcome: "yes", price: 4000, size: 10 })
    const placed = await s.nextOf("portfolio_update")
    expect(Object.keys(placed).sort()).toEqual(["state", "ts", "type", "user"])
    expect(placed).toMatchObject({ type: "portfolio_update", user: carol.user, ts: t.nowMs })
    expect(placed.state.balance.locked).toBeGreaterThanOrEqual(4_000_000)
    expect(placed.state.balance.total).toBe(placed.state.balance.available + placed.state.balance.locked)
    expect(placed.state.positions).toEqual([])
    expect(placed.state.open_orders).toEqual([
      { id: order.order_id, market_id: market, side: "buy", outcome: "yes", price: 4000, original_size: 10, remaining: 10, created_at: t.nowSec() }
    ])
    expect(placed.state).toEqual(await restState(carol.user))

    // Fill as maker: dave's NO bid at 6000 takes 4 of carol's YES 4000.
    t.advance(2_000)
    await place(dave, { market_id: market, side: "buy", outcome: "no", price: 6000, size: 4 })
    const filled = await s.nextOf("portfolio_update")
    expect(filled).toMatchObject({ type: "portfolio_update", user: carol.user, ts: t.nowMs })
    expect(filled.state.open_orders).toMatchObject([{ id: order.order_id, remaining: 6, original_size: 10 }])
    expect(filled.state.positions).toHaveLength(1)
    expect(filled.state.positions[0]).toMatchObject({ market_id: market, outcome: "YES", size: 4, slug: "xrp-above-3-end-2026", redeemable: false })
    expect(filled.state.positions[0].avg_price).toBeCloseTo(0.4, 6)
    expect(Object.keys(filled.state.positions[0]).sort()).toEqual(
      ["avg_price", "cash_pnl", "end_date", "market_id", "mark_price", "outcome", "redeemable", "size", "slug"].sort()
    )
    expect(filled.state.balance.locked).toBeLessThan(placed.state.balance.locked)
    expect(filled.state).toEqual(await restState(carol.user))

    // Cancel.
    t.advance(2_000)
    expect((await carol.cancel(order.order_id)).status).toBe(200)
    const cancelled = await s.nextOf("portfolio_update")
    expect(cancelled).toMatchObject({ type: "portfolio_update", user: carol.user, ts: t.nowMs })
    expect(cancelled.state.open_orders).toEqual([])
    expect(cancelled.state.balance.locked).toBe(0)
    expect(cancelled.state.positions).toEqual(filled.state.positions)
    expect(cancelled.state).toEqual(await restState(carol.user))

    await s.barrier()
    expect(s.since(0, isPortfolioFrame).map((f) => f.type)).toEqual([
      "portfolio_snapshot",
      "portfolio_update",
      "portfolio_update",
      "portfolio_update"
    ])
  })

  it("accepts a signature without a cookie within 5 minutes of the server clock, and not beyond", async () => {
    const erin = await t.funded("user-erin", 20_000_000)
    const channel = `user:${erin.user}`
    const proof = (offsetSec: number) => {
      const timestamp = t.nowSec() + offsetSec
      return { signature: signSession(erin.key, timestamp), timestamp }
    }

    // Not offset 0: erin registered with that second's proof, and each proof is accepted once.
    for (const offset of [-1, -299, 299]) {
      const s = await open()
      s.send({ type: "subscribe", channel, ...proof(offset) })
      expect(await s.nextOf("subscribed")).toEqual({ type: "subscribed", channel })
      expect(await s.nextOf("portfolio_snapshot")).toMatchObject({
        user: erin.user,
        ts: t.nowMs,
        state: { balance: { available: 20_000_000, locked: 0, total: 20_000_000 }, positions: [], open_orders: [] }
      })
    }

    for (const offset of [-301, 301]) {
      const s = await open()
      const rejected = await s.request({ type: "subscribe", channel, ...proof(offset) }, isType("portfolio_error"))
      expect(rejected).toEqual({ type: "portfolio_error", channel, error: "unauthorized" })
      await s.barrier()
      expect(s.frames.filter((f) => f.type === "subscribed" || f.type === "portfolio_snapshot")).toEqual([])
    }

    // A signature-authorized subscription receives updates like a cookie one.
    const s = await open()
    await s.subscribe(channel, proof(-120))
    await s.nextOf("portfolio_snapshot")
    const order = await place(erin, { market_id: t.market("g7-2027-prediction-markets"), side: "buy", outcome: "no", price: 1000, size: 3 })
    const update = await s.nextOf("portfolio_update")
    expect(update).toMatchObject({ user: erin.user, state: { open_orders: [{ id: order.order_id, remaining: 3 }] } })
  })

  it("never lets a proof for A open user:B", async () => {
    const a = await t.funded("user-frank", 20_000_000)
    const b = await t.funded("user-grace", 20_000_000)
    const channelB = `user:${b.user}`
    const ts = t.nowSec()

    // No cookie: A's signature over A's message, and A's signature over B's message.
    const plain = await open()
    for (const signature of [signSession(a.key, ts), a.key.sign(sessionMessage(b.user, ts))]) {
      const err = await plain.request({ type: "subscribe", channel: channelB, signature, timestamp: ts }, isType("portfolio_error"))
      expect(err).toMatchObject({ type: "portfolio_error", channel: channelB })
      expect(["unauthorized", "address_mismatch"]).toContain(err.error)
    }

    // A's cookie, no signature: address_mismatch.
    const withCookie = await open(a.cookie)
    expect(await withCookie.request({ type: "subscribe", channel: channelB }, isType("portfolio_error"))).toEqual({
      type: "portfolio_error",
      channel: channelB,
      error: "address_mismatch"
    })
    // A's cookie plus A's signature used for user:B: still rejected.
    const both = await withCookie.request(
      { type: "subscribe", channel: channelB, signature: signSession(a.key, ts), timestamp: ts },
      isType("portfolio_error")
    )
    expect(both).toMatchObject({ type: "portfolio_error", channel: channelB })
    expect(["unauthorized", "address_mismatch"]).toContain(both.error)

    // A's cookie still opens user:A on the same socket.
    expect(await withCookie.subscribe(`user:${a.user}`)).toEqual({ type: "subscribed", channel: `user:${a.user}` })
    expect(await withCookie.nextOf("portfolio_snapshot")).toMatchObject({ user: a.user })

    // B changes; only B's own subscriber hears it.
    const own = await open(b.cookie)
    await own.subscribe(channelB)
    await own.nextOf("portfolio_snapshot")
    await place(b, { market_id: t.market("phone-film-oscar-2027"), side: "buy", outcome: "yes", price: 1500, size: 2 })
    await own.nextOf("portfolio_update")
    await plain.barrier()
    await withCookie.barrier()
    for (const s of [plain, withCookie]) {
      expect(s.frames.filter((f) => f.channel === channelB && f.type === "subscribed")).toEqual([])
      expect(s.frames.filter((f) => isPortfolioFrame(f) && f.user === b.user)).toEqual([])
    }
  })

  it("rejects a missing proof as unauthorized and malformed proofs as bad_request", async () => {
    const h = await t.funded("user-heidi", 10_000_000)
    const channel = `user:${h.user}`
    const ts = t.nowSec()
    const good = signSession(h.key, ts)
    const s = await open()
    const attempt = (extra: Record<string, unknown>) =>
      s.request({ type: "subscribe", channel, ...extra }, (f) => f.type === "portfolio_error" || f.type === "subscribed")

    expect(await attempt({})).toEqual({ type: "portfolio_error", channel, error: "unauthorized" })
    const malformed: Array<Record<string, unknown>> = [
      { signature: "zz", timestamp: ts },
      { signature: `0x${good}`, timestamp: ts },
      { signature: good.slice(0, 126), timestamp: ts },
      { signature: 12345, timestamp: ts },
      { signature: good, timestamp: String(ts) },
      { signature: good, timestamp: ts + 0.5 },
      { signature: good }
    ]
    for (const extra of malformed) {
      expect(await attempt(extra), JSON.stringify(extra)).toEqual({ type: "portfolio_error", channel, error: "bad_request" })
    }
  })

  it("leaves the public channels of a socket working after a rejected user: subscribe", async () => {
    const ivan = await t.funded("user-ivan", 50_000_000)
    const judy = await t.funded("user-judy", 50_000_000)
    const market = t.market("btc-range-2027-03-31-lt-80k")
    const s = await open(ivan.cookie)
    await s.subscribe(`book:${market}`)

    const rejections = [
      await s.request({ type: "subscribe", channel: `user:${judy.user}` }, isType("portfolio_error")),
      await s.request({ type: "subscribe", channel: `user:${judy.user}`, signature: "00", timestamp: t.nowSec() }, isType("portfolio_error"))
    ]
    expect(rejections.map((r) => r.error)).toEqual(["address_mismatch", "bad_request"])

    await place(judy, { market_id: market, side: "buy", outcome: "yes", price: 2500, size: 8 })
    expect(await s.nextOf("book_update")).toMatchObject({ market_id: market, snapshot: { bids: [{ price: 2500, size: 8 }], asks: [] } })
    // And new public subscriptions still work.
    expect(await s.subscribe(`trades:${market}`)).toEqual({ type: "subscribed", channel: `trades:${market}` })
  })
})

describe("error frames", () => {
  it("answers non-JSON with bad_json and keeps the socket open", async () => {
    const s = await open()
    for (const text of ["not json", "{", ""]) {
      const err = await s.request(text, isType("error"))
      expect(err).toMatchObject({ type: "error", code: "bad_json" })
      expect(err).toHaveProperty("channel")
      expect(typeof err.detail).toBe("string")
    }
    expect(await s.barrier()).toMatchObject({ type: "pong" })
  })

  it("answers an unknown channel with invalid_channel", async () => {
    const s = await open()
    for (const channel of ["book:no-such-market", "trades:0xdeadbeef", "candles:btc-above-120k-2027-03-31", "nocolon", ""]) {
      const err = await s.request({ type: "subscribe", channel }, isType("error"))
      expect(err, channel).toMatchObject({ type: "error", code: "invalid_channel", channel })
      expect(typeof err.detail).toBe("string")
    }
    await s.barrier()
    expect(s.frames.filter(isType("subscribed"))).toEqual([])
  })

  it("answers an unknown frame type with an error frame", async () => {
    const s = await open()
    for (const msg of [{ type: "hello" }, { type: "SUBSCRIBE", channel: "book:x" }, { channel: "book:x" }]) {
      const err = await s.request(msg, isType("error"))
      expect(err, JSON.stringify(msg)).toMatchObject({ type: "error" })
      expect(typeof err.code).toBe("string")
      expect(err).toHaveProperty("channel")
      expect(err).toHaveProperty("detail")
    }
    expect(await s.barrier()).toMatchObject({ type: "pong" })
  })
})

describe("fan-out", () => {
  it("sends the same book_update to every subscriber; closing one leaves the others", async () => {
    const alice = await t.funded("fan-alice", 100_000_000)
    const market = t.market("btc-range-2027-03-31-80-100k")
    const channel = `book:${market}`
    const [s1, s2, s3] = [await open(), await open(), await open()] as const
    for (const s of [s1, s2, s3]) await s.subscribe(channel)

    await place(alice, { market_id: market, side: "buy", outcome: "yes", price: 4100, size: 3 })
    const got = await Promise.all([s1, s2, s3].map((s) => s.nextOf("book_update")))
    expect(got[0]).toMatchObject({ market_id: market, snapshot: { bids: [{ price: 4100, size: 3 }] } })
    expect(got[1]).toEqual(got[0])
    expect(got[2]).toEqual(got[0])

    await s2.close()
    const seenByClosed = s2.frames.length
    await place(alice, { market_id: market, side: "buy", outcome: "yes", price: 4200, size: 1 })
    const after = await Promise.all([s1, s3].map((s) => s.nextOf("book_update")))
    expect(after[0]).toMatchObject({ snapshot: { bids: [{ price: 4200, size: 1 }, { price: 4100, size: 3 }] } })
    expect(after[1]).toEqual(after[0])
    expect(s2.frames).toHaveLength(seenByClosed)
    for (const s of [s1, s3]) expect(await s.barrier()).toMatchObject({ type: "pong" })
  })
})

describe("slow consumers (FeedHub unit)", () => {
  class FakeSocket implements FeedSocket {
    readonly cookieUser = null
    readonly sent: Frame[] = []
    readonly closes: Array<{ code: number; reason: string }> = []
    buffered = 0
    send(frame: string): void {
      this.sent.push(JSON.parse(frame) as Frame)
    }
    bufferedBytes(): number {
      return this.buffered
    }
    close(code: number, reason: string): void {
      this.closes.push({ code, reason })
    }
  }

  it("closes a socket over MAX_BUFFERED_BYTES with 1013 and stops sending to it; others keep receiving", () => {
    const clock = { ms: T0_MS }
    const exchange = new Exchange(() => clock.ms, memoryJournal())
    void loadCatalog(exchange, demoCatalog())
    const hub = new FeedHub(exchange, () => clock.ms)
    const market = exchange.catalog.market("btc-above-120k-2027-03-31")!.market.market_id
    const maker = keyFromLabel("hub-maker").user
    const taker = keyFromLabel("hub-taker").user
    for (const user of [maker, taker]) exchange.submit({ type: "credit", user, amountMicro: 100_000_000, ref: `seed-${user}` })
    let nonce = 0
    const order = (user: string, outcome: "yes" | "no", priceBps: number, size: number) =>
      exchange.submit({ type: "place_order", order: { user, marketId: market, side: "buy", outcome, priceBps, size, orderType: "gtc", nonce: ++nonce } })

    const fast = new FakeSocket()
    const atLimit = new FakeSocket()
    const slow = new FakeSocket()
    for (const s of [fast, atLimit, slow]) {
      hub.connect(s)
      hub.onMessage(s, JSON.stringify({ type: "subscribe", channel: `book:${market}` }))
      hub.onMessage(s, JSON.stringify({ type: "subscribe", channel: `trades:${market}` }))
      expect(s.sent.map((f) => f.type)).toEqual(["subscribed", "subscribed"])
    }
    expect(hub.connections).toBe(3)

    atLimit.buffered = MAX_BUFFERED_BYTES // not over the limit
    slow.buffered = MAX_BUFFERED_BYTES + 1
    order(maker, "yes", 5000, 10)
    order(taker, "no", 5000, 4) // a fill: a trade frame and a book update in one flush
    hub.flush()

    expect(slow.closes).toEqual([{ code: 1013, reason: expect.any(String) }])
    expect(slow.sent.map((f) => f.type)).toEqual(["subscribed", "subscribed"])
    // Its subscriptions are gone at once; its connection slot until the transport reports the close.
    expect(hub.subscriptions).toBe(4)
    expect(hub.connections).toBe(3)
    for (const s of [fast, atLimit]) {
      expect(s.closes).toEqual([])
      expect(s.sent.map((f) => f.type)).toEqual(["subscribed", "subscribed", "trade", "book_update"])
    }

    // The slow socket drains, but it is gone: later flushes skip it, and frames it
    // still sends while closing (a subscribe in flight) neither answer nor re-subscribe it.
    slow.buffered = 0
    hub.onMessage(slow, JSON.stringify({ type: "subscribe", channel: `book:${market}` }))
    hub.onMessage(slow, JSON.stringify({ type: "ping" }))
    hub.disconnect(slow) // the transport's close event
    clock.ms += 1_000
    order(maker, "yes", 4900, 2)
    hub.flush()
    expect(slow.sent).toHaveLength(2)
    expect(slow.closes).toHaveLength(1)
    expect(hub.connections).toBe(2)
    for (const s of [fast, atLimit]) {
      expect(s.sent.at(-1)).toMatchObject({
        type: "book_update",
        market_id: market,
        snapshot: { market_id: market, bids: [{ price: 5000, size: 6 }, { price: 4900, size: 2 }], asks: [], ts: clock.ms }
      })
    }
  })
})

describe("portfolio freshness and origin", () => {
  it("pushes portfolio_update to a holder when someone else's order moves the mark", async () => {
    const market = t.market("xrp-above-3-end-2026")
    const holder = await t.funded("ws-mark-holder", 100_000_000)
    const maker = await t.funded("ws-mark-maker", 100_000_000)
    const other = await t.funded("ws-mark-other", 100_000_000)
    // holder mints 5 YES against maker's NO bid; both now hold positions.
    await place(maker, { market_id: market, side: "buy", outcome: "no", price: 5000, size: 5 })
    await place(holder, { market_id: market, side: "buy", outcome: "yes", price: 5000, size: 5 })
    const s = await open(holder.cookie)
    s.send({ type: "subscribe", channel: `user:${holder.user}` })
    const snapshot = await s.next(isType("portfolio_snapshot"))
    expect(snapshot.state.positions[0].mark_price).toBe(0.5) // last trade: no book on either side
    // A third party quotes both sides: the mid (0.45) is the holder's new mark.
    await place(other, { market_id: market, side: "buy", outcome: "yes", price: 4000, size: 5 })
    const update = await s.next(isType("portfolio_update"))
    expect(update.state.positions[0]).toMatchObject({ market_id: market, outcome: "YES", size: 5 })
    await place(other, { market_id: market, side: "buy", outcome: "no", price: 5000, size: 5 })
    const update2 = await s.next(isType("portfolio_update"))
    expect(update2.state.positions[0].mark_price).toBe(0.45)
    expect(update2.state).toEqual(await restState(holder.user))
  })

  it("ignores the session cookie on an upgrade from an origin that is not allowed", async () => {
    const user = await t.funded("ws-origin-user", 1_000_000)
    const foreign = await WsClient.open(t.wsUrl, user.cookie, "http://evil.example")
    sockets.push(foreign)
    foreign.send({ type: "subscribe", channel: `user:${user.user}` })
    expect(await foreign.next(isPortfolioFrame)).toEqual({ type: "portfolio_error", channel: `user:${user.user}`, error: "unauthorized" })
    const allowed = await WsClient.open(t.wsUrl, user.cookie, "http://app.twinbook.test")
    sockets.push(allowed)
    allowed.send({ type: "subscribe", channel: `user:${user.user}` })
    expect((await allowed.next(isPortfolioFrame)).type).toBe("portfolio_snapshot")
  })
})
