// Per-address limits on anonymous work (docs/api.md "Limits"): registrations,
// open WebSocket connections, subscriptions per connection — each refused past
// its limit while a well-behaved client from another address is unaffected — and
// the feed hub keeping no entry for a channel whose last subscriber has left.
import { createHash } from "node:crypto"
import bs58 from "bs58"
import { afterEach, describe, expect, it } from "vitest"
import { sessionMessage } from "../../src/auth/messages.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { FeedHub, type FeedSocket } from "../../src/feed/hub.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { rawHttp } from "../support/reads.ts"
import { registerBody } from "../support/raw-http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"

let t: TestServer | null = null
const sockets: WsClient[] = []
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.close()))
  await t?.close()
  t = null
})

const register = (server: TestServer, label: string, from: string) =>
  rawHttp(server, "POST", "/v1/builders/register", { "content-type": "application/json" }, JSON.stringify(registerBody(keyFromLabel(label), server.nowSec())), from)

describe("registrations per address", () => {
  it("the 31st registration from one address in a minute is 429; another address registers; time refills", async () => {
    t = await startTestServer()
    for (let i = 0; i < 30; i++) expect((await register(t, `flood-${i}`, "127.0.0.2")).status, `registration ${i + 1}`).toBe(200)
    const limited = await register(t, "flood-30", "127.0.0.2")
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ error: "rate_limited", detail: "ip_register: 30 per 60 s", retry_after: 2 })
    // Failed attempts are charged too: each costs a signature verification.
    expect((await rawHttp(t, "POST", "/v1/builders/register", { "content-type": "application/json" }, JSON.stringify({ ...registerBody(keyFromLabel("x"), t.nowSec()), signature: "00".repeat(64) }), "127.0.0.2")).status).toBe(429)
    // A well-behaved client elsewhere is not affected.
    expect((await register(t, "neighbour", "127.0.0.3")).status).toBe(200)
    t.advance(2_000)
    expect((await register(t, "flood-30", "127.0.0.2")).status).toBe(200)
  })
})

describe("WebSocket connections per address", () => {
  it("one connection over the limit is closed with 1008 and a reason; other addresses connect", async () => {
    t = await startTestServer({ limits: { wsConnectionsPerAddress: 3 } })
    for (let i = 0; i < 3; i++) sockets.push(await WsClient.open(t.wsUrl, null, undefined, "127.0.0.2"))
    const fourth = await WsClient.open(t.wsUrl, null, undefined, "127.0.0.2")
    expect(await fourth.closed).toEqual({ code: 1008, reason: "too many connections from this address (max 3)" })
    // The three open ones still work, and a client from another address is served.
    expect(await sockets[0]!.barrier()).toMatchObject({ type: "pong" })
    const other = await WsClient.open(t.wsUrl, null, undefined, "127.0.0.3")
    sockets.push(other)
    expect(await other.subscribe(`book:${t.market("btc-above-120k-2027-03-31")}`)).toMatchObject({ type: "subscribed" })
    // A slot frees when a connection closes (once the server has seen the close).
    await sockets.shift()!.close()
    while (t.service.hub.connections > 3) await new Promise((r) => setTimeout(r, 10))
    const again = await WsClient.open(t.wsUrl, null, undefined, "127.0.0.2")
    sockets.push(again)
    expect(await again.barrier()).toMatchObject({ type: "pong" })
  })
})

describe("subscriptions per connection", () => {
  it("a subscribe past the limit closes the connection with 1008; re-subscribing a held channel is free", async () => {
    t = await startTestServer({ limits: { wsSubscriptionsPerConnection: 4 } })
    const markets = demoCatalog().slice(0, 3).map((e) => t!.market(e.slug))
    const greedy = await WsClient.open(t.wsUrl)
    const modest = await WsClient.open(t.wsUrl)
    sockets.push(greedy, modest)
    for (const ch of [`book:${markets[0]}`, `trades:${markets[0]}`, `book:${markets[1]}`, `trades:${markets[1]}`]) await greedy.subscribe(ch)
    await greedy.subscribe(`book:${markets[0]}`) // already held: not a new subscription
    greedy.send({ type: "subscribe", channel: `book:${markets[2]}` })
    expect(await greedy.closed).toEqual({ code: 1008, reason: "too many subscriptions on one connection (max 4)" })
    expect(await modest.subscribe(`book:${markets[2]}`)).toMatchObject({ type: "subscribed" })
  })
})

describe("WebSocket connections per address, IPv6 by /64", () => {
  it("addresses of one /64 share the per-address count, another /64 and the IPv4-mapped form of an IPv4 address are counted as theirs", () => {
    const exchange = new Exchange(() => 1_795_305_600_000, memoryJournal())
    const hub = new FeedHub(exchange, () => 1_795_305_600_000, { connectionsPerAddress: 2 })
    const closes: Array<{ address: string; code: number }> = []
    const socket = (address: string): FeedSocket => ({ cookieUser: null, address, send: () => {}, bufferedBytes: () => 0, close: (code) => void closes.push({ address, code }) })
    expect(hub.connect(socket("2001:db8:0:1::1"))).toBe(true)
    expect(hub.connect(socket("2001:db8:0:1:ffff:ffff:ffff:ffff"))).toBe(true)
    // A third host address in the same /64 costs its owner nothing to make: it is the same client.
    expect(hub.connect(socket("2001:db8:0:1::abcd"))).toBe(false)
    expect(closes).toEqual([{ address: "2001:db8:0:1::abcd", code: 1008 }])
    expect(hub.connect(socket("2001:db8:0:2::1"))).toBe(true)
    expect(hub.connect(socket("127.0.0.9"))).toBe(true)
    expect(hub.connect(socket("::ffff:127.0.0.9"))).toBe(true)
    expect(hub.connect(socket("::ffff:7f00:9"))).toBe(false)
  })
})

describe("the feed hub's channel map", () => {
  it("returns to its size after 100,000 fresh user: channels are subscribed and left", () => {
    const exchange = new Exchange(() => 1_795_305_600_000, memoryJournal())
    const hub = new FeedHub(exchange, () => 1_795_305_600_000)
    const socket = (cookieUser: string | null): FeedSocket => ({ cookieUser, send: () => {}, bufferedBytes: () => 0, close: () => {} })
    // One long-lived subscriber, so the map is not empty to begin with.
    const alice = keyFromLabel("hub-alice")
    const resident = socket(alice.user)
    hub.connect(resident)
    hub.onMessage(resident, JSON.stringify({ type: "subscribe", channel: `user:${alice.user}` }))
    const before = hub.channelCount
    expect(before).toBe(1)
    for (let i = 0; i < 100_000; i++) {
      // A fresh key each time (any canonical, non-small-order 32 bytes is a user key); the cookie proves it.
      const user = bs58.encode(createHash("sha256").update(`fresh-${i}`).digest())
      const s = socket(user)
      hub.connect(s)
      hub.onMessage(s, JSON.stringify({ type: "subscribe", channel: `user:${user}` }))
      if (i % 2 === 0) hub.onMessage(s, JSON.stringify({ type: "unsubscribe", channel: `user:${user}` }))
      hub.disconnect(s)
    }
    expect(hub.channelCount).toBe(before)
    expect(hub.connections).toBe(1)
  })

  it("a proof-signed user: subscription from a non-cookie socket also leaves no entry", async () => {
    t = await startTestServer()
    const key = keyFromLabel("proof-user")
    const ws = await WsClient.open(t.wsUrl)
    const ts = t.nowSec()
    await ws.subscribe(`user:${key.user}`, { signature: key.sign(sessionMessage(key.user, ts)), timestamp: ts })
    expect(t.service.hub.channelCount).toBe(1)
    await ws.close()
    while (t.service.hub.connections > 0) await new Promise((r) => setTimeout(r, 10))
    expect(t.service.hub.channelCount).toBe(0)
  })
})
