// Issue 13, the first hour: (1) the book read is never older than the last change the WebSocket
// told of — the edge cache (1 s, SPEC §4) is retired when the book moves, its headers unchanged;
// (2) the last accepted nonces are readable (`GET /v1/account/nonce`, extension) and the client's
// `syncNonces()` lets a restarted bot whose clock is behind its last nonce place again.
// The test server's monotonic clock stands still unless a test advances it, so a cached book
// would stay cached for the whole test: what these checks see is the invalidation, not timing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"

const SLUG = "doge-1-dollar-2027"
let t: TestServer
const sockets: WsClient[] = []

beforeAll(async () => {
  t = await startTestServer()
})
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.close()))
})
afterAll(() => t.close())

const getBook = async (ref: string) => {
  const res = await t.fetch(`${t.url}/v1/markets/${ref}/book`)
  return { cacheControl: res.headers.get("cache-control"), xCache: res.headers.get("x-cache"), body: (await res.json()) as any }
}

describe("book reads after a WebSocket book_update", () => {
  it("GET /v1/markets/{id}/book right after each book_update shows that update (by id and by slug), with SPEC's cache headers", async () => {
    const marketId = t.market(SLUG)
    const maker = await t.funded("nonce-cache-maker")
    const taker = await t.funded("nonce-cache-taker")
    const ws = await WsClient.open(t.wsUrl)
    sockets.push(ws)
    ws.send({ type: "subscribe", channel: `book:${marketId}` })
    await ws.next((f) => f.type === "subscribed")

    // Prime the cache by id and by slug: both are served from it until something changes.
    for (const ref of [marketId, SLUG]) {
      const first = await getBook(ref)
      expect(first.xCache).toBe("MISS")
      expect(first.cacheControl).toBe("public, s-maxage=1")
      const again = await getBook(ref)
      expect(again.xCache).toBe("HIT")
      expect(again.body).toEqual(first.body)
    }

    const checkAfterUpdate = async () => {
      const update = await ws.next((f) => f.type === "book_update")
      for (const ref of [marketId, SLUG]) {
        const read = await getBook(ref)
        expect(read.cacheControl).toBe("public, s-maxage=1")
        expect({ bids: read.body.bids, asks: read.body.asks }).toEqual({ bids: update.snapshot.bids, asks: update.snapshot.asks })
        expect(read.body.ts).toBeGreaterThanOrEqual(update.snapshot.ts)
      }
      // No change since: the next read is the cached copy again.
      expect((await getBook(marketId)).xCache).toBe("HIT")
      return update.snapshot
    }

    // A bid rests, a NO buyer fills part of it, the rest is cancelled: each change is seen at once.
    const placed = await maker.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 4_200, size: 50, order_type: "gtc" })
    expect(placed.status, JSON.stringify(placed.body)).toBe(200)
    expect((await checkAfterUpdate()).bids).toEqual([{ price: 4_200, size: 50 }])

    const filled = await taker.placeOrder({ market_id: marketId, side: "buy", outcome: "no", price: 5_800, size: 20, order_type: "ioc" })
    expect(filled.status, JSON.stringify(filled.body)).toBe(200)
    expect((await checkAfterUpdate()).bids).toEqual([{ price: 4_200, size: 30 }])

    expect((await maker.cancel(placed.body.order_id)).status).toBe(200)
    expect((await checkAfterUpdate()).bids).toEqual([])
  })

  it("a book nobody changed stays cached for its TTL and is produced again after it", async () => {
    const marketId = t.market("btc-above-120k-2027-03-31")
    expect((await getBook(marketId)).xCache).toBe("MISS")
    expect((await getBook(marketId)).xCache).toBe("HIT")
    t.advance(1_001)
    expect((await getBook(marketId)).xCache).toBe("MISS")
  })
})

describe("GET /v1/account/nonce and the client's nonces", () => {
  it("reads the session user's last accepted order and withdraw nonces; needs the session", async () => {
    const c = await t.funded("nonce-reader")
    expect((await c.nonces()).body).toEqual({ user: c.user, last_order_nonce: 0, last_withdraw_nonce: 0 })
    const marketId = t.market(SLUG)
    // No nonce given: the client's time-based default, the test clock in milliseconds.
    const placed = await c.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 100, size: 10, order_type: "post_only" })
    expect(placed.status, JSON.stringify(placed.body)).toBe(200)
    expect(c.lastNonce).toBe(t.nowSec() * 1000)
    const res = await c.nonces()
    expect(res.status).toBe(200)
    expect(res.headers.get("cache-control")).toBe("no-store")
    expect(res.body.last_order_nonce).toBe(c.lastNonce)
    // A refused order (stale nonce) does not move it.
    expect((await c.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 100, size: 10, order_type: "post_only", nonce: 5 })).body.error).toBe("nonce_stale")
    expect((await c.nonces()).body.last_order_nonce).toBe(c.lastNonce)

    const anonymous = await t.fetch(`${t.url}/v1/account/nonce`)
    expect(anonymous.status).toBe(401)
    expect(((await anonymous.json()) as any).error).toBe("unauthorized")
  })

  it("a restarted bot whose clock is behind its last nonce reads it (syncNonces) instead of guessing", async () => {
    const marketId = t.market(SLUG)
    const before = await t.funded("nonce-restarted-bot")
    // The bot's last run signed a nonce ahead of its clock now (another signer, a clock stepped back).
    const ahead = t.nowMs + 3_600_000
    expect((await before.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 100, size: 10, order_type: "post_only", nonce: ahead })).status).toBe(200)

    // The restart: a new client, same key, counters from zero.
    const restarted = new ApiClient(t.url, keyFromLabel("nonce-restarted-bot"), t.fetch as never, () => t.nowSec())
    expect((await restarted.register("nonce-restarted-bot")).status).toBe(200)
    const guessed = await restarted.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 100, size: 10, order_type: "post_only" })
    expect(guessed.body.error).toBe("nonce_stale")

    const synced = await restarted.syncNonces()
    expect(synced.body.last_order_nonce).toBe(ahead)
    expect(restarted.lastNonce).toBe(ahead)
    const placed = await restarted.placeOrder({ market_id: marketId, side: "buy", outcome: "yes", price: 100, size: 10, order_type: "post_only" })
    expect(placed.status, JSON.stringify(placed.body)).toBe(200)
    expect(restarted.lastNonce).toBe(ahead + 1)
  })
})
