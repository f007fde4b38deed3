// Bounded parsing: JSON nested deeper than MAX_JSON_DEPTH is refused with a 400
// before anything decodes it, on every POST route and on the WebSocket; decoding
// failures always name the field; an unexpected error answers 500 with a request
// id and is logged with the route's template.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serveRouter } from "../../src/api/app.ts"
import { Router } from "../../src/api/http.ts"
import { MAX_JSON_DEPTH } from "../../src/domain/json-depth.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import { adminPost, req } from "../support/reads.ts"
import { ADMIN_TOKEN, startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"

let t: TestServer
let alice: ApiClient
let postRoutes: string[]

beforeAll(async () => {
  // With a faucet, so POST /v1/dev/faucet reaches its parser too (without one it is a 404 before reading the body); no body here decodes, so it never mints.
  t = await startTestServer({ faucet: { faucet: () => Promise.reject(new Error("the parsing tests never mint")) } })
  alice = await t.funded("parse-alice", 10_000_000)
  const doc = (await req(t, "GET", "/v1/openapi.json")).body
  postRoutes = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .filter(([, ops]) => "post" in ops)
    .map(([path]) => path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === "id" ? t.market("btc-above-120k-2027-03-31") : alice.user)))
})
afterAll(() => t.close())

const nestedArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
const nestedObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth)
const headers = () => ({ cookie: alice.cookie!, authorization: `Bearer ${ADMIN_TOKEN}` })

describe("JSON nested thousands deep", () => {
  it("is 400 invalid_json on every POST route, as the body and inside a field, with or without credentials", async () => {
    expect(postRoutes.length).toBeGreaterThanOrEqual(14)
    for (const path of postRoutes) {
      t.advance(60_000) // fresh rate-limit buckets per route: this test is about parsing
      for (const body of [nestedArray(5_000), nestedObject(5_000), `{"user":${nestedArray(5_000)}}`, `{"market_id":"x","resolution_metadata":${nestedObject(3_000)}}`]) {
        // With credentials every route reaches its parser; without, authenticated routes stop at 401 first.
        const authed = await req(t, "POST", path, { body, headers: headers() })
        expect(authed.status, `${path}: ${authed.text.slice(0, 200)}`).toBe(400)
        expect(authed.body).toEqual({ error: "invalid_json", detail: `request body nests deeper than ${MAX_JSON_DEPTH} levels` })
        const anonymous = await req(t, "POST", path, { body })
        expect([400, 401, 429], `${path}: ${anonymous.text.slice(0, 200)}`).toContain(anonymous.status)
      }
    }
  })

  it("the limit is exact: depth 20 decodes (and fails on the field, named), depth 21 does not parse", async () => {
    const at = (depth: number) => `{"user":${nestedArray(depth - 1)},"name":"n","signature":"s","timestamp":1}`
    const ok = await req(t, "POST", "/v1/builders/register", { body: at(MAX_JSON_DEPTH) })
    expect(ok.status).toBe(400)
    expect(ok.body.error).toBe("invalid_shape")
    expect(ok.body.detail).toMatch(/^user: /)
    const deep = await req(t, "POST", "/v1/builders/register", { body: at(MAX_JSON_DEPTH + 1) })
    expect(deep.body.error).toBe("invalid_json")
  })

  it("a resolution_metadata too deep for the journal encoder is refused, and the service keeps running", async () => {
    const event = { question: "Deep?", category: "Culture", slug: "deep-metadata", expiry: 1_900_000_000 }
    const res = await adminPost(t, "/v1/events", `{"question":"Deep?","category":"Culture","slug":"deep-metadata","expiry":1900000000,"resolution_metadata":${nestedObject(4_000)}}`)
    expect(res.status).toBe(400)
    expect((await adminPost(t, "/v1/events", { ...event, resolution_metadata: { a: { b: { c: [1, 2, { d: "e" }] } } } })).status).toBe(200)
    expect((await req(t, "GET", "/v1/markets/deep-metadata")).body.resolution_metadata).toEqual({ a: { b: { c: [1, 2, { d: "e" }] } } })
  })

  it("a WebSocket frame nested thousands deep gets an error frame and the socket stays usable", async () => {
    const ws = await WsClient.open(t.wsUrl)
    try {
      ws.send(`{"type":"subscribe","channel":${nestedArray(5_000)}}`) // 10 KB: under the 16 KiB frame limit
      expect(await ws.nextOf("error")).toEqual({ type: "error", code: "bad_json", channel: null, detail: `frame nests deeper than ${MAX_JSON_DEPTH} levels` })
      expect(await ws.barrier()).toMatchObject({ type: "pong" })
    } finally {
      await ws.close()
    }
  })
})

describe("schema failures name the field", () => {
  it.each([
    ["/v1/builders/register", { user: 1, name: "n", signature: "s", timestamp: 1 }, "invalid_shape", /^user: /],
    ["/v1/builders/register", { user: "u", name: "n", signature: "s", timestamp: 1.5 }, "invalid_shape", /^timestamp: /],
    ["/v1/orders", { market_id: "m", user: "u", side: "hold", outcome: "yes", price: 1, size: 1, signature: "s", nonce: 1 }, "invalid_order_shape", /^side: /],
    ["/v1/orders", { market_id: "m", user: "u", side: "buy", outcome: "yes", price: 1e308, size: 1, signature: "s", nonce: 1 }, "invalid_order_shape", /^price: /],
    ["/v1/orders/cancel", { order_id: "1" }, "invalid_shape", /^order_id: /],
    ["/v1/lp-bot/delegate", { user: "u", session_pub: "s", expires_at_unix: -1, nonce: 1, signature: "x" }, "invalid_shape", /^expires_at_unix: /]
  ])("%s %j → %s", async (path, body, code, detail) => {
    const res = await req(t, "POST", path, { body, headers: { cookie: alice.cookie! } })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe(code)
    expect(res.body.detail).toMatch(detail)
  })
})

describe("an unexpected error", () => {
  it("answers 500 with a request id, and is logged with the route's template and that id", async () => {
    const logged: Array<{ err: unknown; where: unknown }> = []
    const router = new Router<null>().add({ method: "GET", path: "/v1/boom/:id", handler: () => { throw new RangeError("Maximum call stack size exceeded") } })
    const app = serveRouter(router, null, new Set(), (err, where) => logged.push({ err, where }))
    const res = await app({ method: "GET", path: "/v1/boom/secret-value", query: new URLSearchParams(), headers: {}, body: "", ip: "1.2.3.4" })
    expect(res.status).toBe(500)
    expect(JSON.parse(res.body)).toEqual({ error: "internal_error", detail: "unexpected server error (request r1)" })
    expect(res.headers["x-request-id"]).toBe("r1")
    expect(logged).toEqual([{ err: expect.any(RangeError), where: { requestId: "r1", method: "GET", route: "/v1/boom/:id" } }])
  })
})
