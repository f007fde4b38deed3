// A WebSocket storm (issue 31, item 8): many source addresses, many connections each, many
// subscriptions each, and slow readers that never read while their replies pile up — with
// `GET /v1/health` asked over and over from another address the whole time. Per-address limits
// alone let it all in; the feed's totals (docs/api.md "Limits") refuse what is past them, and
// this test asserts what they did: the refusals and their close codes, the totals never past
// their caps, error frames that echo only a short prefix, and health answered 200 throughout.
// How fast health answers under such a storm is a figure, not an assertion: `npm run bench -- ws-storm`.
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_ECHOED_CHANNEL_CHARS } from "../../src/feed/hub.ts"
import { rawHttp } from "../support/reads.ts"
import { startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"

const LIMITS = {
  wsConnectionsPerAddress: 8,
  wsSubscriptionsPerConnection: 40,
  wsConnections: 40,
  wsSubscriptions: 300,
  wsBufferedBytes: 256 * 1024
}
const ADDRESSES = 6
const SLOW_READERS = 4
const SUBSCRIBES = 30

let t: TestServer
const clients: WsClient[] = []

beforeAll(async () => {
  t = await startTestServer({ limits: LIMITS })
})
afterAll(async () => {
  for (const c of clients) c.ws.terminate()
  await t.close()
})

const open = async (from: string): Promise<WsClient> => {
  const c = await WsClient.open(t.wsUrl, null, undefined, from)
  clients.push(c)
  return c
}

/** The first of: a pong (the connection is served) or the close the server sent. */
const servedOrClosed = (c: WsClient): Promise<"served" | "no pong" | { code: number; reason: string }> =>
  Promise.race([
    c.request({ type: "ping" }, (f) => f.type === "pong", 120_000).then(
      () => "served" as const,
      () => "no pong" as const
    ),
    c.closed
  ])

const tick = (): Promise<void> => new Promise((r) => setImmediate(r))

describe("a WebSocket storm across many addresses with slow readers, while /v1/health is timed", () => {
  it("is held to the totals: refusals with 1013 and a reason, totals bounded, short echoes, health 200 throughout", async () => {
    const hub = t.service.hub
    const channels = t.service.exchange.catalog.events.flatMap((e) => e.outcomes.flatMap((o) => [`book:${o.market_id}`, `trades:${o.market_id}`]))
    expect(channels.length).toBeGreaterThanOrEqual(SUBSCRIBES)

    // The totals, sampled on every turn of the event loop while the storm lasts.
    const peak = { connections: 0, subscriptions: 0, bufferedBytes: 0 }
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        peak.connections = Math.max(peak.connections, hub.connections)
        peak.subscriptions = Math.max(peak.subscriptions, hub.subscriptions)
        peak.bufferedBytes = Math.max(peak.bufferedBytes, hub.bufferedBytes)
        await tick()
      }
    })()

    // Health, asked again as soon as answered, from an address of its own; counted once the
    // slow readers have begun and while the storm's sockets are open.
    const health: number[] = []
    let storming = true
    let filling = false
    let answeredDuringStorm = 0
    let answeredOnce: () => void = () => {}
    const answered = new Promise<void>((resolve) => (answeredOnce = resolve))
    const prober = (async () => {
      while (storming) {
        const res = await rawHttp(t, "GET", "/v1/health", {}, undefined, "127.0.0.250")
        health.push(res.status)
        if (filling && storming && ++answeredDuringStorm === 1) answeredOnce()
      }
    })()

    // Slow readers first (two addresses), then 8 connections from each of 6 more addresses:
    // 52 connections against a total of 40.
    const slow = await Promise.all(Array.from({ length: SLOW_READERS }, (_, i) => open(`127.0.1.${1 + (i % 2)}`)))
    const storm = await Promise.all(Array.from({ length: ADDRESSES * LIMITS.wsConnectionsPerAddress }, (_, i) => open(`127.0.2.${1 + (i % ADDRESSES)}`)))
    const outcomes = await Promise.all(storm.map(servedOrClosed))
    const refused = outcomes.filter((o) => o !== "served")
    expect(refused).toHaveLength(SLOW_READERS + storm.length - LIMITS.wsConnections)
    for (const r of refused) expect(r).toEqual({ code: 1013, reason: `server connection limit reached (max ${LIMITS.wsConnections}); retry later` })
    expect(hub.connections).toBe(LIMITS.wsConnections)
    expect(hub.limitCloses.connections).toBe(refused.length)
    expect(hub.limitCloses.connections_per_address).toBe(0)
    const served = storm.filter((_, i) => outcomes[i] === "served")

    // The slow readers read nothing from here on, and each sends frames whose answers are as
    // long as the server makes them: an error echoing the longest channel prefix it echoes.
    const longest = JSON.stringify({ type: "subscribe", channel: "x".repeat(MAX_ECHOED_CHANNEL_CHARS) })
    const slowClosedByHub = (): number => hub.limitCloses.buffered_bytes
    filling = true
    const fills = slow.map(async (c) => {
      c.ws.pause()
      let closed = false
      void c.closed.then(() => (closed = true))
      // Bounded by frames, not time: 50 MB of answers, far more than the loopback buffers hold.
      for (let sent = 0; sent < 200_000 && !closed && slowClosedByHub() < SLOW_READERS; sent += 64) {
        for (let i = 0; i < 64; i++) c.send(longest)
        while (c.ws.bufferedAmount > 128 * 1024 && !closed) await new Promise((r) => setTimeout(r, 2))
        await tick()
      }
    })

    // Meanwhile the served storm connections: a 10 KB channel name (echoed as a short prefix),
    // then 30 subscriptions each (1,080 in all against a total of 300), then a ping.
    const subscribing = served.map(async (c) => {
      c.send({ type: "subscribe", channel: "y".repeat(10_000) })
      for (const ch of channels.slice(0, SUBSCRIBES)) c.send({ type: "subscribe", channel: ch })
      return servedOrClosed(c)
    })
    const ends = await Promise.all(subscribing)
    await Promise.all(fills)
    // Health has been answered while the storm's sockets were still open.
    await answered
    storming = false
    await prober
    sampling = false
    await sampler

    // Subscriptions: connections that would pass the total were closed with 1013 and a reason.
    const overSubscribed = ends.filter((e) => e !== "served")
    expect(overSubscribed.length).toBeGreaterThan(0)
    for (const e of overSubscribed) expect(e).toEqual({ code: 1013, reason: `server subscription limit reached (max ${LIMITS.wsSubscriptions}); retry later` })
    expect(hub.limitCloses.subscriptions).toBe(overSubscribed.length)
    expect(hub.limitCloses.subscriptions_per_connection).toBe(0)
    expect(peak.subscriptions).toBeLessThanOrEqual(LIMITS.wsSubscriptions)
    expect(peak.connections).toBeLessThanOrEqual(LIMITS.wsConnections)

    // The 10 KB channel came back as its first 128 characters, in SPEC's error frame.
    for (const c of served) {
      const echo = c.frames.find((f) => f.type === "error")
      expect(echo).toEqual({ type: "error", code: "invalid_channel", channel: "y".repeat(MAX_ECHOED_CHANNEL_CHARS), detail: expect.any(String) })
    }

    // Slow readers: closed as slow consumers (1013) by the total, before any reached 4 MiB of its own.
    expect(slowClosedByHub()).toBeGreaterThanOrEqual(SLOW_READERS)
    expect(hub.slowConsumerCloses).toBe(hub.limitCloses.buffered_bytes)
    expect(peak.bufferedBytes).toBeLessThanOrEqual(LIMITS.wsBufferedBytes)

    // Health: answered every time, during the storm too.
    expect(answeredDuringStorm).toBeGreaterThan(0)
    expect(health.every((s) => s === 200)).toBe(true)
  }, 180_000)
})

describe("a refused WebSocket connection that goes on sending", () => {
  it("an oversize frame on it is a protocol error of that socket, never the process's", async () => {
    const own = await startTestServer({ limits: { wsConnectionsPerAddress: 1 } })
    // Live, an 'error' event nobody listens to ends the process; here it would surface as an uncaught exception.
    const uncaught: unknown[] = []
    const onUncaught = (err: unknown): void => void uncaught.push(err)
    process.on("uncaughtException", onUncaught)
    try {
      const first = await WsClient.open(own.wsUrl, null, undefined, "127.0.3.1")
      // The upgrade and, in the same write, the header of a frame over the size limit: the server
      // refuses the connection (its address's one slot is taken) and reads the frame before any close.
      const port = Number(new URL(own.url).port)
      const header = Buffer.alloc(14)
      header[0] = 0x81 // FIN, text
      header[1] = 0x80 | 127 // masked, 64-bit length
      header.writeBigUInt64BE(BigInt(1024 * 1024), 2)
      const upgrade = Buffer.from(
        `GET /v1/ws HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n` +
          "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
      )
      // Read until the server's close frame (opcode 8) or the end of the connection.
      const answer = await new Promise<Buffer>((resolve) => {
        let got = Buffer.alloc(0)
        const socket = connect({ port, host: "127.0.0.1", localAddress: "127.0.3.1" }, () => socket.write(Buffer.concat([upgrade, header])))
        socket.on("data", (c: Buffer) => {
          got = Buffer.concat([got, c])
          const body = got.indexOf("\r\n\r\n")
          if (body >= 0 && got.length > body + 4 && (got[body + 4]! & 0x0f) === 0x8) socket.destroy()
        })
        socket.on("close", () => resolve(got))
        socket.on("error", () => {})
      })
      expect(answer.toString("latin1")).toMatch(/^HTTP\/1\.1 101 /)
      // The service goes on: the first connection answers, health answers, a new address connects.
      expect(await first.barrier()).toMatchObject({ type: "pong" })
      expect((await rawHttp(own, "GET", "/v1/health", {})).status).toBe(200)
      const other = await WsClient.open(own.wsUrl, null, undefined, "127.0.3.2")
      expect(await other.barrier()).toMatchObject({ type: "pong" })
      await Promise.all([first.close(), other.close()])
      expect(uncaught).toEqual([])
    } finally {
      process.off("uncaughtException", onUncaught)
      await own.close()
    }
  })
})
