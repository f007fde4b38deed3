// The hostile suite (docs/security.md): the real server on loopback, driven with
// fast-check from its own OpenAPI document — every operation, with wrong types,
// missing and extra fields, odd numbers and strings, broken, deep and oversize
// bodies, wrong content types, bad cookies and headers — plus raw-socket garbage
// and garbage WebSocket frames and subscription storms. It holds the service to:
// no 5xx, no crash, every error SPEC's envelope with a catalogued code at its
// status, and money that balances afterwards.
//
// `npm test` runs a short seeded form; `HOSTILE_N=100000 npm run test:hostile` the
// long one (HOSTILE_SEED picks another seed). A failure prints the seed and the
// shrunk request.
import { connect } from "node:net"
import { request } from "node:http"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { orderMessage } from "../../src/auth/messages.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import { ERROR_STATUS } from "../../src/domain/errors.ts"
import { findViolations } from "../../src/engine/invariants.ts"
import { ADMIN_TOKEN, ALLOWED_ORIGIN, startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"
import { type Fixtures, type HostileRequest, operationsOf, rawGarbage, requestFor, wsFrame } from "./generators.ts"

const N = Number(process.env.HOSTILE_N ?? 1_500)
const SEED = Number(process.env.HOSTILE_SEED ?? 20_261_124)
const FUNDING_MICRO = 1_000_000_000

let t: TestServer
let fx: Fixtures
let signers: ApiClient[]
let ops: ReturnType<typeof operationsOf>
/** Operator credits the fuzzer itself got accepted: money the audit must expect. */
let creditedMicro = 0
const tally = { requests: 0, byStatus: {} as Record<number, number>, rawConnections: 0, wsFrames: 0, wsConnections: 0 }

beforeAll(async () => {
  t = await startTestServer()
  const clients = await Promise.all(["fuzz-a", "fuzz-b", "fuzz-c"].map((l) => t.funded(l, FUNDING_MICRO)))
  signers = clients
  const markets = ["btc-above-120k-2027-03-31", "g7-2027-prediction-markets"]
  fx = {
    users: clients.map((c) => c.user),
    cookies: clients.map((c) => c.cookie!),
    markets: markets.map((m) => t.market(m)),
    slugs: markets,
    allowedOrigin: ALLOWED_ORIGIN,
    adminToken: ADMIN_TOKEN
  }
  const doc = await (await fetch(`${t.url}/v1/openapi.json`)).json()
  ops = operationsOf(doc)
}, 60_000)

afterAll(async () => {
  console.log(`hostile suite (seed ${SEED}, N ${N}):`, JSON.stringify(tally))
  await t.close()
})

const sourceAddress = (from: number): string => `127.0.${(from >> 8) & 255}.${from & 255}`

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly text: string
}

const send = (r: HostileRequest): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const url = new URL(t.url)
    const req = request(
      { host: url.hostname, port: Number(url.port), method: r.method, path: r.path, headers: r.headers, agent: false, localAddress: sourceAddress(r.from) },
      (res) => {
        const chunks: Buffer[] = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }))
        res.on("error", reject)
      }
    )
    req.setTimeout(10_000, () => req.destroy(new Error("no answer within 10 s")))
    // A 413 closes the connection while an oversize body is still being written: that is its answer.
    const oversize = Buffer.byteLength(r.body ?? "") > 64 * 1024
    req.on("error", (err: NodeJS.ErrnoException) =>
      oversize && (err.code === "EPIPE" || err.code === "ECONNRESET") ? resolve({ status: 413, headers: { "content-type": "application/json" }, text: '{"error":"payload_too_large"}' }) : reject(err)
    )
    req.end(r.body)
  })

/** What is wrong with an answer, or null: no 5xx; errors are the envelope with a catalogued code at its status. */
const problemWith = (r: HostileRequest, a: Answer): string | null => {
  if (a.status >= 500) return `status ${a.status}: ${a.text.slice(0, 300)}`
  // The two documented non-JSON successes: the docs page (HTML) and the Prometheus scrape (text).
  if (r.method === "HEAD" || a.status === 204 || (r.method === "GET" && ["/v1/docs", "/metrics"].includes(r.path.split("?")[0]!) && a.status === 200)) return null
  if (!String(a.headers["content-type"] ?? "").startsWith("application/json")) return `content-type ${a.headers["content-type"]}`
  let body: any
  try {
    body = JSON.parse(a.text)
  } catch {
    return `not JSON: ${a.text.slice(0, 200)}`
  }
  if (a.status < 400) return null
  if (body === null || typeof body !== "object") return `error body is not an object: ${a.text.slice(0, 200)}`
  const extra = Object.keys(body).filter((k) => !["error", "detail", "retry_after"].includes(k))
  if (extra.length > 0) return `envelope has extra keys ${extra.join(", ")}`
  if (!(body.error in ERROR_STATUS)) return `uncatalogued code ${body.error}`
  if (ERROR_STATUS[body.error as keyof typeof ERROR_STATUS] !== a.status) return `code ${body.error} with status ${a.status}`
  if (body.detail !== undefined && (typeof body.detail !== "string" || body.detail.length > 200)) return "detail is not a short string"
  return null
}

let nextNonce = 1_000
/** A signed order, signed when sent (nonces must grow): odd prices, sizes, types and self-trades included. */
const signedOrderArb = fc
  .record({
    who: fc.nat({ max: 2 }),
    cookieOf: fc.nat({ max: 2 }),
    market: fc.nat({ max: 3 }),
    side: fc.constantFrom("buy", "sell"),
    outcome: fc.constantFrom("yes", "no"),
    price: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom(1, 9_999, 10_000, 0)),
    size: fc.oneof(fc.integer({ min: 1, max: 500 }), fc.constantFrom(100_000_000, 1)),
    order_type: fc.constantFrom("gtc", "post_only", "ioc", "fok", undefined),
    stp: fc.constantFrom("cancel_resting", "cancel_taking", "cancel_both", undefined),
    staleNonce: fc.boolean(),
    from: fc.integer({ min: 2, max: 250 })
  })
  .map((o) => (): HostileRequest => {
    const signer = signers[o.who]!
    const marketId = [...fx.markets, ...fx.slugs][o.market]!
    const nonce = o.staleNonce && nextNonce > 1_001 ? nextNonce - 1 : ++nextNonce
    const fields = { marketId, user: signer.user, side: o.side, outcome: o.outcome, priceBps: o.price, size: o.size, nonce } as const
    const body = {
      market_id: marketId,
      user: signer.user,
      side: o.side,
      outcome: o.outcome,
      price: o.price,
      size: o.size,
      nonce,
      signature: signer.key.sign(orderMessage(fields)),
      ...(o.order_type === undefined ? {} : { order_type: o.order_type }),
      ...(o.stp === undefined ? {} : { stp: o.stp })
    }
    return { method: "POST", path: "/v1/orders", headers: { "content-type": "application/json", cookie: fx.cookies[o.cookieOf]! }, body: JSON.stringify(body), from: o.from }
  })

describe("hostile HTTP requests from the OpenAPI document", () => {
  it(`${N} generated requests: no 5xx, every error an envelope with a catalogued code`, async () => {
    expect(ops.length).toBeGreaterThanOrEqual(40)
    // One run in five is a correctly signed order with odd fields, so the engine's own checks are attacked too.
    const arb = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ops).chain((op) => requestFor(op, fx)) }, { weight: 1, arbitrary: signedOrderArb })
    await fc.assert(
      fc.asyncProperty(arb, async (generated) => {
        // A minute passes every 100 requests: buckets refill (cookies last 7 days: 100,000 requests are ~17 h).
        if (tally.requests % 100 === 99) t.advance(60_000)
        const r = typeof generated === "function" ? generated() : generated
        const a = await send(r)
        tally.requests++
        tally.byStatus[a.status] = (tally.byStatus[a.status] ?? 0) + 1
        if (a.status === 200 && r.method === "POST" && r.path.startsWith("/v1/admin/credit") && r.body !== undefined) {
          creditedMicro += Number(JSON.parse(r.body).amount_micro)
        }
        const problem = problemWith(r, a)
        if (problem !== null) throw new Error(`${problem}\n  request: ${r.method} ${r.path} ${JSON.stringify(r.headers)} ${(r.body ?? "").slice(0, 300)}`)
      }),
      { numRuns: N, seed: SEED, endOnFailure: false, verbose: 1 }
    )
    // The run reached past the front door: some requests were accepted, many refused for many reasons.
    expect(Object.keys(tally.byStatus).length).toBeGreaterThanOrEqual(5)
  }, 3_600_000)
})

describe("raw-socket garbage", () => {
  const RAW = Math.min(2_000, Math.ceil(N / 20))

  /** Sends the chunks from one source address; resolves with all the bytes received before the close (or 300 ms). */
  const exchangeBytes = (chunks: ReadonlyArray<string>, close: boolean, from: number): Promise<string> =>
    new Promise((resolve) => {
      const url = new URL(t.url)
      const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: sourceAddress(from) })
      const received: Buffer[] = []
      socket.on("data", (c) => received.push(c))
      socket.on("close", () => resolve(Buffer.concat(received).toString("latin1")))
      socket.on("error", () => {})
      socket.setTimeout(300, () => socket.destroy())
      void (async () => {
        for (const c of chunks) {
          if (socket.destroyed) return
          socket.write(c, "latin1")
          await new Promise((r) => setTimeout(r, 2))
        }
        if (close && !socket.destroyed) socket.end()
      })()
    })

  it(`${RAW} connections of malformed, oversized and truncated bytes: never a 5xx, answers are envelopes`, async () => {
    const cases = fc.sample(fc.tuple(rawGarbage, fc.integer({ min: 2, max: 250 })), { numRuns: RAW, seed: SEED })
    // 25 connections at a time: each may sit until its 300 ms timeout.
    for (let i = 0; i < cases.length; i += 25) {
      const batch = cases.slice(i, i + 25)
      const answers = await Promise.all(batch.map(([g, from]) => exchangeBytes(g.chunks, g.close, from)))
      answers.forEach((received, j) => {
        tally.rawConnections++
        const sent = JSON.stringify(batch[j]![0].chunks).slice(0, 300)
        for (const m of received.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/g)) {
          const status = Number(m[1])
          expect(status, `sent ${sent}, got ${received.slice(0, 300)}`).toBeLessThan(500)
          if (status >= 400) expect(m[2]!.toLowerCase(), `sent ${sent}`).toContain("content-type: application/json")
        }
      })
    }
    // Still serving.
    expect((await fetch(`${t.url}/v1/health`)).status).toBe(200)
  }, 3_600_000)
})

describe("hostile WebSocket traffic", () => {
  const SERVER_TYPES = new Set(["subscribed", "unsubscribed", "pong", "book_update", "trade", "portfolio_snapshot", "portfolio_update", "error", "portfolio_error"])

  it(`${Math.ceil(N / 3)} garbage frames and subscription storms over several connections`, async () => {
    const perSocket = 50
    const sockets = Math.max(1, Math.ceil(N / 3 / perSocket))
    const frames = fc.sample(fc.array(wsFrame(fx), { minLength: perSocket, maxLength: perSocket }), { numRuns: sockets, seed: SEED })
    for (let i = 0; i < sockets; i++) {
      const ws = await WsClient.open(t.wsUrl, i % 3 === 0 ? fx.cookies[0] : null, i % 5 === 0 ? "https://evil.example" : undefined, sourceAddress(2 + (i % 40)))
      tally.wsConnections++
      for (const f of frames[i]!) {
        ws.send(f)
        tally.wsFrames++
      }
      // A binary frame and an oversize one (16 KiB max payload) end some connections; the rest must answer a ping.
      if (i % 7 === 0) ws.ws.send(Buffer.alloc(70 * 1024, 1))
      else if (i % 11 === 0) ws.ws.send(Buffer.from([0, 1, 2, 255]))
      else expect(await ws.barrier()).toMatchObject({ type: "pong" })
      await ws.close()
      const closed = await ws.closed
      expect([1000, 1005, 1006, 1008, 1009, 1013], `close ${closed.code} ${closed.reason}`).toContain(closed.code)
      expect(ws.garbage, "non-JSON frames from the server").toEqual([])
      for (const f of ws.frames) {
        expect(SERVER_TYPES.has(f.type), JSON.stringify(f)).toBe(true)
        if (f.type === "error") expect(["bad_json", "invalid_channel", "unknown_type"]).toContain(f.code)
      }
    }
    expect((await fetch(`${t.url}/v1/health`)).status).toBe(200)
  }, 3_600_000)
})

describe("after the attack", () => {
  it("money balances: every invariant holds and credits minus debits is what was credited", async () => {
    const engine = t.service.exchange.engine
    expect(findViolations(engine)).toEqual([])
    expect(engine.netDepositsMicro).toBe(3 * FUNDING_MICRO + creditedMicro)
    expect((await fetch(`${t.url}/v1/health`)).status).toBe(200)
  })
})
