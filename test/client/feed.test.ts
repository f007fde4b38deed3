// FeedClient against the real service over real WebSockets (`ws`), through a TCP proxy
// the test can cut: subscribe and REST seed, pushes, the connection state, reconnects
// with exponential backoff after the server side drops the socket, and the re-seed of a
// book and trades that changed during the outage (the server replays no history).
import WebSocket from "ws"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { type FeedEvent, FeedClient, type FeedOptions } from "../../src/client/feed.ts"
import { keyFromLabel, signSession } from "../../src/client/keys.ts"
import { type FetchLike, PublicClient } from "../../src/client/public-client.ts"
import { unwrap } from "../../src/client/errors.ts"
import { WsClient } from "../support/ws-client.ts"
import { type ClientHarness, startClientHarness } from "./harness.ts"
import { type DropProxy, startDropProxy } from "./proxy.ts"

const G7 = "g7-2027-prediction-markets"

let h: ClientHarness
let proxy: DropProxy
let maker: ApiClient
let taker: ApiClient
let m: string
const feeds: FeedClient[] = []

beforeAll(async () => {
  h = await startClientHarness()
  proxy = await startDropProxy(Number(new URL(h.url).port))
  maker = await h.funded("feed-maker", 500_000_000)
  taker = await h.funded("feed-taker", 500_000_000)
  m = h.market(G7)
})
afterEach(async () => {
  for (const f of feeds.splice(0)) f.close()
  await maker.cancelAll()
  await taker.cancelAll()
  h.advance(5_000) // past every edge cache
})
afterAll(async () => {
  await proxy?.close()
  await h?.close()
})

const feedOf = (opts: Partial<FeedOptions> = {}): FeedClient => {
  const f = new FeedClient({
    url: `ws://127.0.0.1:${proxy.port}/v1/ws`,
    rest: new PublicClient(h.url),
    WebSocket,
    nowSec: () => h.nowSec(),
    random: () => 0.5,
    heartbeatMs: 0,
    ...opts
  })
  feeds.push(f)
  return f
}

/**
 * A CDN edge in front of the service: keeps each 200 GET for its `s-maxage` on the harness's
 * clock and serves it from there meanwhile, never told of a change.
 */
const edge = (): FetchLike => {
  const kept = new Map<string, { untilMs: number; body: string; contentType: string | null }>()
  return async (url, init) => {
    const get = (init?.method ?? "GET") === "GET"
    const hit = get ? kept.get(url) : undefined
    if (hit !== undefined && hit.untilMs > h.nowMs) {
      return { status: 200, headers: { get: (n: string) => (n.toLowerCase() === "content-type" ? hit.contentType : n.toLowerCase() === "x-cache" ? "HIT" : null) }, json: async () => JSON.parse(hit.body), text: async () => hit.body }
    }
    const res = await fetch(url, init as RequestInit)
    const body = await res.text()
    const maxAge = /s-maxage=(\d+)/.exec(res.headers.get("cache-control") ?? "")
    if (get && res.status === 200 && maxAge !== null) kept.set(url, { untilMs: h.nowMs + Number(maxAge[1]) * 1000, body, contentType: res.headers.get("content-type") })
    return { status: res.status, headers: res.headers, json: async () => JSON.parse(body), text: async () => body }
  }
}

/** The first event of `type` matching `pred` from now on (a generous bound, not a speed assertion). */
const next = <K extends FeedEvent["type"]>(f: FeedClient, type: K, pred: (e: Extract<FeedEvent, { type: K }>) => boolean = () => true, ms = 10_000) =>
  new Promise<Extract<FeedEvent, { type: K }>>((resolve, reject) => {
    const timer = setTimeout(() => {
      off()
      reject(new Error(`no ${type} event within ${ms} ms`))
    }, ms)
    const off = f.on(type, (e) => {
      if (!pred(e)) return
      clearTimeout(timer)
      off()
      resolve(e)
    })
  })

const bid = (c: ApiClient, price: number, size = 10) => c.placeOrder({ market_id: m, side: "buy", outcome: "yes", price, size }).then(unwrap)
const hasBid = (price: number) => (e: { book: { bids: ReadonlyArray<{ price: number }> } }) => e.book.bids.some((l) => l.price === price)

describe("FeedClient", () => {
  it("connects, seeds book and trades from REST, then applies pushes; the portfolio comes from the snapshot frame", async () => {
    await bid(maker, 4000)
    h.advance(2_000)
    const f = feedOf({ key: maker.key })
    const states: string[] = []
    f.on("state", (e) => states.push(e.state))
    const seeded = next(f, "book", (e) => e.source === "rest")
    const tradesSeeded = next(f, "trades")
    const snapshot = next(f, "portfolio", (e) => e.source === "snapshot")
    f.subscribeBook(m)
    f.subscribeTrades(m)
    f.subscribeUser()
    f.connect()
    expect((await seeded).book.bids).toEqual([{ price: 4000, size: 10 }])
    expect((await tradesSeeded).trades).toEqual([])
    expect((await snapshot).state.open_orders.map((o) => o.price)).toEqual([4000])
    expect(states).toEqual(["connecting", "open"])
    expect(f.state).toBe("open")

    const pushed = next(f, "book", (e) => e.source === "ws" && hasBid(4500)(e))
    const trade = next(f, "trade")
    const update = next(f, "portfolio", (e) => e.source === "update" && e.state.positions.length > 0)
    await bid(maker, 4500)
    await pushed
    unwrap(await taker.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 5500, size: 3, order_type: "ioc" }))
    expect((await trade).trade).toMatchObject({ market_id: m, size: 3, yes_price: 4500, maker: maker.user })
    expect((await update).state.positions[0]).toMatchObject({ market_id: m, outcome: "YES", size: 3 })
    expect(f.trades(m).map((t) => t.size)).toEqual([3])
    expect(f.book(m)!.bids).toEqual([{ price: 4500, size: 7 }, { price: 4000, size: 10 }])

    // A channel added while open is subscribed and seeded at once too.
    const btc = h.market("btc-above-120k-2027-03-31")
    const late = next(f, "book", (e) => e.marketId === btc && e.source === "rest")
    f.subscribeBook(btc)
    expect((await late).book).toMatchObject({ market_id: btc, bids: [], asks: [] })
  })

  it("reconnects with exponential backoff after the server side drops the socket, and re-seeds what changed meanwhile", async () => {
    const f = feedOf({ key: maker.key, backoff: { initialMs: 40, factor: 2, jitter: 0.5 } })
    f.subscribeBook(m)
    f.subscribeTrades(m)
    f.subscribeUser()
    const first = next(f, "book", (e) => e.source === "rest")
    f.connect()
    await first
    expect(f.book(m)!.bids).toEqual([])

    // The network drops every connection and refuses new ones for a while.
    const delays: number[] = []
    const offState = f.on("state", (e) => void (e.state === "reconnecting" && e.delayMs !== null && delays.push(e.delayMs)))
    const thirdRetry = next(f, "state", (e) => e.state === "reconnecting" && e.attempt === 3)
    proxy.refuse(true)
    proxy.dropAll()
    await thirdRetry
    // 40 · 2^attempt, less half the jitter at random() = 0.5.
    expect(delays.slice(0, 3)).toEqual([30, 60, 120])
    expect(f.state).toBe("reconnecting")

    // Meanwhile the book changes and a trade happens: no push can reach the feed.
    await bid(maker, 4200)
    await bid(maker, 4100)
    unwrap(await taker.placeOrder({ market_id: m, side: "buy", outcome: "no", price: 5800, size: 2, order_type: "ioc" }))
    h.advance(5_000) // the REST edge caches turn over, as they would during a real outage

    const reseeded = next(f, "book", (e) => e.source === "rest")
    const trades = next(f, "trades")
    const portfolio = next(f, "portfolio", (e) => e.source === "snapshot")
    const open = next(f, "state", (e) => e.state === "open")
    proxy.refuse(false)
    await open
    offState()
    expect((await reseeded).book.bids).toEqual([{ price: 4200, size: 8 }, { price: 4100, size: 10 }])
    // Newest first: the outage's trade, then the first test's.
    expect((await trades).trades.map((t) => [t.size, t.yes_price])).toEqual([[2, 4200], [3, 4500]])
    expect((await portfolio).state.open_orders.map((o) => o.price).sort()).toEqual([4100, 4200])

    // The channels were re-subscribed: pushes flow again.
    const pushed = next(f, "book", (e) => e.source === "ws" && hasBid(4300)(e))
    await bid(maker, 4300)
    await pushed
    expect(f.state).toBe("open")
  })

  it("reads an edge-cached book again when it predates the subscription", async () => {
    // The service drops its own cached copy when a book changes (issue 13); an edge in front of
    // it (a CDN honouring `s-maxage`) is not told, so a stale seed still comes from there.
    const cdn = edge()
    const f = feedOf({ backoff: { initialMs: 20 }, bookRereadMs: 50, rest: new PublicClient(h.url, cdn) })
    f.subscribeBook(m)
    const first = next(f, "book", (e) => e.source === "rest")
    f.connect()
    await first
    // The edge cache now holds the empty book; the connection drops; the book changes.
    proxy.refuse(true)
    proxy.dropAll()
    await next(f, "state", (e) => e.state === "reconnecting")
    expect(unwrap(await new PublicClient(h.url, cdn).book(m)).bids).toEqual([])
    h.advance(10)
    await bid(maker, 3900)
    // Reconnect with the stale cache in place: the first seed is stale (no 3900) ...
    const stale = next(f, "book", (e) => e.source === "rest")
    proxy.refuse(false)
    expect((await stale).book.bids).toEqual([])
    // ... older than the subscription point, so the helper reads again once the cache turns over.
    const fresh = next(f, "book", (e) => e.source === "rest" && hasBid(3900)(e))
    h.advance(2_000)
    expect((await fresh).book.bids).toEqual([{ price: 3900, size: 10 }])
  })

  it("signs its user: proof afresh once when that second's proof was already used (another page of the same key)", async () => {
    const user = keyFromLabel("feed-proof-twin").user
    // Another page of the same key, in the same second: its proof is accepted first.
    const page = await WsClient.open(`${h.url.replace(/^http/, "ws")}/v1/ws`)
    const ts = h.nowSec()
    await page.subscribe(`user:${user}`, { signature: signSession(keyFromLabel("feed-proof-twin"), ts), timestamp: ts })
    // This page's key object signs the same second: refused as used, then once more with the next second.
    const f = feedOf({ key: keyFromLabel("feed-proof-twin") })
    const errors: FeedEvent[] = []
    f.on("error", (e) => errors.push(e))
    const snapshot = next(f, "portfolio", (e) => e.source === "snapshot")
    f.subscribeUser()
    f.connect()
    expect((await snapshot).user).toBe(user)
    expect(errors).toEqual([])
    await page.close()
  })

  it("reports a refused user: proof, reconnects at once on reconnectNow, and stays closed after close()", async () => {
    // A 1 ms backoff: a reconnect after close() would show at once.
    const f = feedOf({ key: keyFromLabel("not-the-maker"), backoff: { initialMs: 1 } })
    const refused = next(f, "error", (e) => e.channel === `user:${maker.user}`)
    f.subscribeUser(maker.user) // no proof for this address: the key is another user's, and no cookie
    f.connect()
    expect(await refused).toMatchObject({ code: "unauthorized" })

    const before = proxy.accepted
    const reopened = next(f, "state", (e) => e.state === "open")
    f.reconnectNow()
    await reopened
    expect(proxy.accepted).toBe(before + 1)

    f.close()
    expect(f.state).toBe("closed")
    proxy.dropAll()
    await new Promise((r) => setTimeout(r, 100))
    expect(f.state).toBe("closed")
    expect(proxy.accepted).toBe(before + 1)
    expect(() => f.subscribe("nope:x")).toThrow(RangeError)
  })
})
