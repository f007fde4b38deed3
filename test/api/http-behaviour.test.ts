// Transport-level behaviour over real HTTP: the edge cache (Cache-Control,
// X-Cache, TTLs on the test clock), CORS by Origin only, the JSON error
// envelope everywhere, body limits, and the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRouter } from "../../src/api/app.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import { adminPost, cross, expectError, get, ok, place, rawHttp, refsOf, req } from "../support/reads.ts"
import { ALLOWED_ORIGIN, startTestServer, type TestServer } from "../support/server.ts"

let t: TestServer
let maker: ApiClient
let taker: ApiClient
let btc: string
beforeAll(async () => {
  t = await startTestServer()
  maker = await t.funded("http-maker")
  taker = await t.funded("http-taker")
  btc = t.market("btc-above-120k-2027-03-31")
  await cross(maker, taker, btc, 5_000, 2, "yes")
})
afterAll(() => t.close())

describe("edge cache", () => {
  const routes = (): Array<[string, number]> => [
    ["/v1/markets", 30],
    ["/v1/markets?category=btc&limit=5", 30],
    ["/v1/markets/btc-above-120k-2027-03-31", 30],
    [`/v1/markets/${btc}/book`, 1],
    [`/v1/markets/${btc}/trades`, 3],
    [`/v1/markets/${btc}/candles?interval=1m`, 5],
    [`/v1/markets/${btc}/candles?interval=5m`, 15],
    [`/v1/markets/${btc}/candles?interval=1h`, 60],
    [`/v1/markets/${btc}/candles`, 60],
    [`/v1/markets/${btc}/candles?interval=1d`, 300],
    ["/v1/fees", 30],
    ["/v1/rewards/config", 30]
  ]

  it("Cache-Control public, s-maxage=N per route; X-Cache MISS, then HIT until N seconds have passed, then MISS", async () => {
    for (const [path, ttl] of routes()) {
      const first = await get(t, path)
      expect(first.status, path).toBe(200)
      expect(first.headers.get("cache-control"), path).toBe(`public, s-maxage=${ttl}`)
      expect(first.headers.get("x-cache"), path).toBe("MISS")
      const second = await get(t, path)
      expect(second.headers.get("x-cache"), path).toBe("HIT")
      expect(second.headers.get("cache-control"), path).toBe(`public, s-maxage=${ttl}`)
      expect(second.text, path).toBe(first.text)
      t.advance(ttl * 1000 - 1)
      expect((await get(t, path)).headers.get("x-cache"), `${path} just inside ${ttl} s`).toBe("HIT")
      t.advance(1)
      const third = await get(t, path)
      expect(third.headers.get("x-cache"), `${path} after ${ttl} s`).toBe("MISS")
      expect(third.headers.get("cache-control"), path).toBe(`public, s-maxage=${ttl}`)
    }
  })

  it("a cached read is stale within its TTL and fresh after it", async () => {
    const path = `/v1/markets/${btc}/trades`
    const before = await ok(t, path)
    await cross(maker, taker, btc, 5_500, 1, "no")
    const within = await get(t, path)
    expect(within.headers.get("x-cache")).toBe("HIT")
    expect(within.body.total).toBe(before.total)
    t.advance(3_000)
    const after = await get(t, path)
    expect(after.headers.get("x-cache")).toBe("MISS")
    expect(after.body.total).toBe(before.total + 1)
    expect(after.body.trades[0]).toMatchObject({ price: 4_500, size: 1 })
  })

  it("the query string is part of the key", async () => {
    t.advance(30_000)
    expect((await get(t, "/v1/markets?limit=1")).headers.get("x-cache")).toBe("MISS")
    expect((await get(t, "/v1/markets?limit=2")).headers.get("x-cache")).toBe("MISS")
    const again = await get(t, "/v1/markets?limit=1")
    expect(again.headers.get("x-cache")).toBe("HIT")
    expect(again.body.markets).toHaveLength(1)
  })

  it("errors are never cached and say no-store", async () => {
    for (const [path, status, code] of [
      ["/v1/markets?order=price", 400, "invalid_order"],
      ["/v1/markets?limit=x", 400, "invalid_query"],
      ["/v1/markets/not-yet-created", 404, "not_found"],
      [`/v1/markets/${btc}/candles?interval=2h`, 400, "invalid_interval"],
      [`/v1/markets/${btc}/candles?interval=1m&from=x`, 400, "invalid_query"],
      ["/v1/markets/nope/trades", 404, "not_found"],
      [`/v1/markets/${btc}/trades?limit=0`, 400, "invalid_query"]
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const res = await get(t, path)
        expectError(res, status, code)
        expect(res.headers.get("x-cache"), path).not.toBe("HIT")
        expect(res.headers.get("cache-control"), path).toBe("no-store")
      }
    }
    // A 404 does not stick: the event is readable the moment it exists.
    expect((await adminPost(t, "/v1/events", { question: "Not yet created?", category: "Culture", slug: "not-yet-created", expiry: 1_900_000_000 })).status).toBe(200)
    expect((await get(t, "/v1/markets/not-yet-created")).status).toBe(200)
  })

  it("HEAD answers without a body and does not empty the cached GET", async () => {
    for (const path of ["/v1/markets?limit=3", "/v1/markets/eth-above-6k-2027-h1", `/v1/markets/${btc}/book`, "/v1/fees"]) {
      const head = await req(t, "HEAD", path)
      expect(head.status, path).toBe(200)
      expect(head.text, path).toBe("")
      const body = await get(t, path)
      expect(body.status, path).toBe(200)
      expect(body.headers.get("x-cache"), path).toBe("HIT")
      expect(body.body, path).not.toBeNull()
      expect(body.text.length, path).toBeGreaterThan(2)
    }
  })
})

describe("CORS is gated on Origin, never on Host", () => {
  const appHost = new URL(ALLOWED_ORIGIN).host

  it("the allowed origin gets Access-Control-Allow-Origin and credentials, on success and on errors", async () => {
    for (const path of ["/v1/markets", `/v1/markets/${btc}/book`, `/v1/balance/${maker.user}`, "/v1/markets/nope", "/v1/nope"]) {
      const res = await get(t, path, { origin: ALLOWED_ORIGIN })
      expect(res.headers.get("access-control-allow-origin"), path).toBe(ALLOWED_ORIGIN)
      expect(res.headers.get("access-control-allow-credentials"), path).toBe("true")
      expect(res.headers.get("vary") ?? "", path).toMatch(/origin/i)
    }
    const post = await req(t, "POST", "/v1/events", { body: "{", headers: { origin: ALLOWED_ORIGIN } })
    expectError(post, 401, "unauthorized")
    expect(post.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN)
  })

  it("any other origin, or none, gets no CORS headers", async () => {
    const others = [
      "http://evil.test",
      `${ALLOWED_ORIGIN}.evil.test`,
      `${ALLOWED_ORIGIN}:8080`,
      ALLOWED_ORIGIN.replace("http:", "https:"),
      ALLOWED_ORIGIN.toUpperCase(),
      `${ALLOWED_ORIGIN}/`,
      "null"
    ]
    for (const origin of others) {
      const res = await get(t, "/v1/markets", { origin })
      expect(res.status).toBe(200)
      expect(res.headers.get("access-control-allow-origin"), origin).toBeNull()
      expect(res.headers.get("access-control-allow-credentials"), origin).toBeNull()
    }
    const none = await get(t, "/v1/markets")
    expect(none.headers.get("access-control-allow-origin")).toBeNull()
    // Vary: Origin either way, so a shared cache keeps the two answers apart.
    expect(none.headers.get("vary")).toBe("Origin")
    expect((await get(t, "/v1/markets", { origin: "http://evil.test" })).headers.get("vary")).toBe("Origin")
  })

  it("a Host equal to the allowed origin's host grants nothing to a disallowed Origin", async () => {
    const res = await rawHttp(t, "GET", "/v1/markets?limit=1", { host: appHost, origin: "http://evil.test" })
    expect(res.status).toBe(200)
    expect(res.headers.get("access-control-allow-origin")).toBeNull()
    expect(res.headers.get("access-control-allow-credentials")).toBeNull()
    const noOrigin = await rawHttp(t, "GET", "/v1/markets?limit=1", { host: appHost })
    expect(noOrigin.headers.get("access-control-allow-origin")).toBeNull()
    const preflight = await rawHttp(t, "OPTIONS", "/v1/orders", { host: appHost, origin: "http://evil.test", "access-control-request-method": "POST" })
    expect(preflight.status).toBe(403)
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull()
    // And the allowed Origin works whatever the Host.
    const allowed = await rawHttp(t, "GET", "/v1/markets?limit=1", { host: "elsewhere.test", origin: ALLOWED_ORIGIN })
    expect(allowed.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN)
  })

  it("a cached response carries the CORS headers of the request it answers, not of the one that filled the cache", async () => {
    t.advance(30_000)
    const path = "/v1/markets?search=ETH"
    const filled = await get(t, path, { origin: ALLOWED_ORIGIN })
    expect(filled.headers.get("x-cache")).toBe("MISS")
    expect(filled.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN)
    const evil = await get(t, path, { origin: "http://evil.test" })
    expect(evil.headers.get("x-cache")).toBe("HIT")
    expect(evil.headers.get("access-control-allow-origin")).toBeNull()
    expect(evil.headers.get("access-control-allow-credentials")).toBeNull()
    expect((await get(t, path)).headers.get("access-control-allow-origin")).toBeNull()
    expect((await get(t, path, { origin: ALLOWED_ORIGIN })).headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN)
  })

  it("OPTIONS preflight: 204 with the allowances for the allowed origin, 403 JSON otherwise", async () => {
    for (const path of ["/v1/orders", "/v1/markets", "/v1/builders/register"]) {
      const res = await req(t, "OPTIONS", path, {
        headers: { origin: ALLOWED_ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "content-type" }
      })
      expect(res.status).toBe(204)
      expect(res.text).toBe("")
      expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN)
      expect(res.headers.get("access-control-allow-credentials")).toBe("true")
      expect(res.headers.get("access-control-allow-methods")).toMatch(/POST/)
      expect(res.headers.get("access-control-allow-methods")).toMatch(/GET/)
      expect(res.headers.get("access-control-allow-headers")).toMatch(/content-type/i)
    }
    for (const headers of [{ origin: "http://evil.test" }, {}, { origin: `${ALLOWED_ORIGIN}.evil.test` }]) {
      const res = await req(t, "OPTIONS", "/v1/orders", { headers: { ...headers, "access-control-request-method": "POST" } })
      expectError(res, 403, "forbidden_origin")
      expect(res.headers.get("access-control-allow-origin")).toBeNull()
    }
  })
})

describe("every error is a JSON envelope; nothing but /v1/docs is HTML", () => {
  it("unknown routes are 404 not_found", async () => {
    for (const path of ["/", "/v1", "/v1/nope", "/v2/markets", "/v1/markets/x/y/z", "/index.html", "/v1/docs/extra", "/%", "/v1/markets/%ZZ/book"]) {
      expectError(await get(t, path), 404, "not_found")
    }
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) expectError(await req(t, method, "/v1/nope"), 404, "not_found")
  })

  it("a known path with the wrong method is 405 method_not_allowed, with Allow", async () => {
    for (const [method, path, allow] of [
      ["POST", "/v1/markets", "GET, HEAD"],
      ["PUT", "/v1/markets/btc-above-120k-2027-03-31", "GET, HEAD"],
      ["DELETE", `/v1/markets/${btc}/book`, "GET, HEAD"],
      ["PATCH", `/v1/balance/${maker.user}`, "GET, HEAD"],
      ["GET", "/v1/orders", "POST"],
      ["HEAD", "/v1/orders", "POST"],
      ["GET", "/v1/builders/register", "POST"],
      ["GET", "/v1/events", "POST"],
      ["GET", "/v1/admin/credit", "POST"],
      ["POST", "/v1/fees", "GET, HEAD"],
      ["POST", "/v1/openapi.json", "GET, HEAD"]
    ] as const) {
      const res = await req(t, method, path)
      expect(res.status, `${method} ${path}`).toBe(405)
      expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow)
      if (method !== "HEAD") expectError(res, 405, "method_not_allowed")
    }
  })

  it("a body over 64 KiB is 413 JSON; exactly 64 KiB is read", async () => {
    const over = "x".repeat(64 * 1024 + 1)
    for (const path of ["/v1/builders/register", "/v1/orders", "/v1/events", "/v1/nope"]) {
      expectError(await req(t, "POST", path, { body: over }), 413, "payload_too_large")
    }
    const big = JSON.stringify({ pad: "x".repeat(64 * 1024 - 10) })
    expect(Buffer.byteLength(big)).toBe(64 * 1024)
    // Read and judged: a register body without its fields.
    expectError(await req(t, "POST", "/v1/builders/register", { body: big }), 400, "invalid_shape")
    expectError(await req(t, "POST", "/v1/builders/register", { body: `${"x".repeat(64 * 1024)}` }), 400, "invalid_json")
  })

  it("a 413 is refused from Content-Length alone, readable cross-origin, never cached, and closes the connection", async () => {
    const res = await req(t, "POST", "/v1/orders", { body: "x".repeat(200 * 1024), headers: { origin: ALLOWED_ORIGIN } })
    expectError(res, 413, "payload_too_large")
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN)
    expect(res.headers.get("cache-control")).toBe("no-store")
    expect(res.headers.get("connection")).toBe("close")
  })

  it("HEAD carries the Content-Length of the GET it stands for", async () => {
    const path = "/v1/markets/eth-above-6k-2027-h1"
    const body = await get(t, path)
    const head = await req(t, "HEAD", path)
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(body.text)))
  })

  it("a POST body that is not JSON is 400 invalid_json", async () => {
    for (const body of ["", "not json", "{", "{'a':1}", "[1,2", "null", "42"]) {
      expectError(await req(t, "POST", "/v1/builders/register", { body }), 400, "invalid_json")
      expectError(await adminPost(t, "/v1/admin/trading", body), 400, "invalid_json")
      expectError(await maker.request("POST", "/v1/orders", body), 400, "invalid_json")
      expectError(await maker.request("POST", "/v1/orders/cancel", body), 400, "invalid_json")
    }
    t.advance(60_000) // the operator bucket
  })

  it("every response except GET /v1/docs is JSON", async () => {
    const probes: Array<[string, string, unknown?]> = [
      ["GET", "/v1/markets"],
      ["GET", "/v1/markets/btc-above-120k-2027-03-31"],
      ["GET", `/v1/markets/${btc}/book`],
      ["GET", `/v1/markets/${btc}/trades`],
      ["GET", `/v1/markets/${btc}/candles`],
      ["GET", `/v1/balance/${maker.user}`],
      ["GET", `/v1/position/${btc}/${maker.user}`],
      ["GET", `/v1/positions/all/${maker.user}`],
      ["GET", `/v1/trades/all/${maker.user}`],
      ["GET", `/v1/deposits/all/${maker.user}`],
      ["GET", `/v1/withdrawals/all/${maker.user}`],
      ["GET", `/v1/orders/all/${maker.user}`],
      ["GET", "/v1/fees"],
      ["GET", "/v1/rewards/config"],
      ["GET", "/v1/openapi.json"],
      ["GET", "/v1/health"],
      ["GET", "/v1/ws"],
      ["GET", "/favicon.ico"],
      ["GET", "/v1/balance/bad"],
      ["POST", "/v1/orders", { market_id: btc }],
      ["POST", "/v1/builders/register", {}],
      ["POST", "/v1/events", {}],
      ["POST", "/v1/orders/cancel-all", {}],
      ["DELETE", "/v1/docs"],
      ["OPTIONS", "/v1/docs"]
    ]
    for (const [method, path, body] of probes) {
      const res = await req(t, method, path, body === undefined ? {} : { body })
      expect(res.headers.get("content-type"), `${method} ${path}`).toMatch(/^application\/json/)
      expect(() => JSON.parse(res.text), `${method} ${path}`).not.toThrow()
      if (res.status >= 400) expect(typeof res.body.error, `${method} ${path}`).toBe("string")
    }
    const docs = await get(t, "/v1/docs")
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
    expect(docs.text).toContain("/v1/openapi.json")
  })
})

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document listing every route, with every $ref resolvable", async () => {
    const doc = await ok(t, "/v1/openapi.json")
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
    expect(typeof doc.info.title).toBe("string")
    expect(typeof doc.info.version).toBe("string")
    expect(typeof doc.paths).toBe("object")

    // Every route the server answers is documented under its method.
    const routes = makeRouter().list()
    expect(routes.length).toBeGreaterThan(20)
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, "{$1}")
      expect(doc.paths[path], path).toBeDefined()
      expect(doc.paths[path][r.method.toLowerCase()], `${r.method} ${path}`).toBeDefined()
    }
    // The spec's public read routes among them.
    for (const path of [
      "/v1/builders/register",
      "/v1/orders",
      "/v1/orders/cancel",
      "/v1/orders/cancel-all",
      "/v1/orders/all/{user}",
      "/v1/markets",
      "/v1/markets/{id}",
      "/v1/markets/{id}/book",
      "/v1/markets/{id}/trades",
      "/v1/markets/{id}/candles",
      "/v1/balance/{user}",
      "/v1/position/{market_id}/{user}",
      "/v1/positions/all/{user}",
      "/v1/trades/all/{user}",
      "/v1/deposits/all/{user}",
      "/v1/withdrawals/all/{user}",
      "/v1/fees",
      "/v1/rewards/config"
    ]) {
      expect(doc.paths[path], path).toBeDefined()
    }

    // Operations: responses, declared path parameters, known security schemes.
    const schemes = Object.keys(doc.components?.securitySchemes ?? {})
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      expect(path.startsWith("/")).toBe(true)
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      for (const [method, op] of Object.entries<any>(ops)) {
        expect(["get", "post", "put", "delete", "patch", "options", "head"]).toContain(method)
        expect(Object.keys(op.responses ?? {}).length, `${method} ${path}`).toBeGreaterThan(0)
        for (const res of Object.values<any>(op.responses)) expect(typeof res.description).toBe("string")
        const declared = (op.parameters ?? []).filter((p: any) => p.in === "path").map((p: any) => p.name)
        expect(declared.sort(), `${method} ${path}`).toEqual([...names].sort())
        for (const p of op.parameters ?? []) if (p.in === "path") expect(p.required).toBe(true)
        for (const s of op.security ?? []) for (const name of Object.keys(s)) expect(schemes).toContain(name)
      }
    }

    // Every $ref points inside this document.
    const refs = refsOf(doc)
    expect(refs.length).toBeGreaterThan(0)
    for (const ref of refs) {
      expect(ref.startsWith("#/"), ref).toBe(true)
      let node: any = doc
      for (const part of ref.slice(2).split("/")) node = node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")]
      expect(node, ref).toBeDefined()
    }
    // The order body documents its fields.
    const orderBody = doc.paths["/v1/orders"].post.requestBody.content["application/json"].schema
    const order = orderBody.$ref === undefined ? orderBody : doc.components.schemas[orderBody.$ref.split("/").pop()]
    expect(order.required).toEqual(expect.arrayContaining(["market_id", "user", "side", "outcome", "price", "size", "signature", "nonce"]))
  })
})

describe("place is unaffected by read caching", () => {
  it("an order placed right after a cached book read shows on the very next read (a book change drops its cached copy)", async () => {
    const eth = t.market("eth-above-6k-2027-h1")
    t.advance(1_000)
    expect((await ok(t, `/v1/markets/${eth}/book`)).bids).toEqual([])
    // Issue 13: a client never reads a book older than the last change the WebSocket told it of.
    await place(maker, { market_id: eth, side: "buy", outcome: "yes", price: 4_200, size: 3 })
    expect((await ok(t, `/v1/markets/${eth}/book`)).bids).toEqual([{ price: 4_200, size: 3 }])
  })
})
