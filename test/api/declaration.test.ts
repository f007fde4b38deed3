// The fast router and the API declaration (src/api/declaration/api.ts) are the same
// API: every route served is declared and every declared route is served, for the
// service and for the deposit service; and the response check every black-box test runs
// through (test/support/conformance.ts) really refuses a response that drifts.
import { describe, expect, it } from "vitest"
import { makeRouter } from "../../src/api/app.ts"
import { API, Api, DEPOSIT, DepositApi } from "../../src/api/declaration/api.ts"
import { makeDepositApp } from "../../src/deposit/app.ts"
import { SimChain } from "../../src/chain/sim.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { RateLimiter } from "../../src/usecase/rate-limit.ts"
import { conformingFetch, declaredRoutes, NonConformingResponse, nonConformance } from "../support/conformance.ts"

const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`

describe("the router serves exactly the declared routes", () => {
  it("API: same methods and paths, both ways", () => {
    const served = makeRouter().list().map(key).sort()
    const declared = declaredRoutes(Api).map(key).sort()
    expect(served).toEqual(declared)
    // The declaration read back from the HttpApi is the table it was built from.
    expect(declared).toEqual(Object.values(API).flatMap((g) => Object.values(g)).map(key).sort())
  })

  it("deposit service: the same, answered by the running app", async () => {
    const app = makeDepositApp({
      exchange: new Exchange(() => 0, memoryJournal()),
      chain: new SimChain({ seed: 1 }),
      limiter: new RateLimiter(() => 0),
      config: { minUsdgMicro: 1, maxPerTxMicro: 2, corsOrigins: new Set() }
    })
    const declared = declaredRoutes(DepositApi)
    expect(declared.map(key).sort()).toEqual(Object.values(DEPOSIT).flatMap((g) => Object.values(g)).map(key).sort())
    // Every declared route is served: a request to it is never the router's "no route" 404 nor a 405.
    for (const r of declared) {
      const path = r.path.replace(/:\w+/g, "0x0000000000000000000000000000000000000001")
      const res = await app({ method: r.method, path, query: new URLSearchParams(), headers: {}, body: "", ip: "127.0.0.1" })
      expect(res.body, key(r)).not.toMatch(/no route|is not allowed/)
    }
    // And nothing beyond: an undeclared path under the service's prefix is not served.
    const res = await app({ method: "GET", path: "/v1/deposit/other/0x1", query: new URLSearchParams(), headers: {}, body: "", ip: "127.0.0.1" })
    expect(res.status).toBe(404)
  })
})

describe("the conformance check", () => {
  const routes = declaredRoutes(Api)
  const json = "application/json; charset=utf-8"
  const balance = JSON.stringify({ user: "u", available: 1, locked: 0, total: 1 })

  it("passes a body of the declared shape", () => {
    expect(nonConformance(routes, "GET", "/v1/balance/abc", 200, json, balance)).toBeNull()
    expect(nonConformance(routes, "GET", "/v1/balance/abc", 400, json, JSON.stringify({ error: "invalid_pubkey", detail: "x" }))).toBeNull()
  })

  it("catches a planted mismatch: a field renamed, retyped, added, or an undeclared status or code", () => {
    const planted: Array<[number, string]> = [
      [200, JSON.stringify({ user: "u", available_micro: 1, locked: 0, total: 1 })],
      [200, JSON.stringify({ user: "u", available: "1", locked: 0, total: 1 })],
      [200, JSON.stringify({ user: "u", available: 1, locked: 0, total: 1, extra: true })],
      [201, balance],
      [400, JSON.stringify({ error: "invalid_order", detail: "x" })],
      [500, "<html>oops</html>"]
    ]
    for (const [status, body] of planted) expect(nonConformance(routes, "GET", "/v1/balance/abc", status, json, body), body).not.toBeNull()
    // An error of another status than the catalogue's, on an undeclared path.
    expect(nonConformance(routes, "GET", "/v1/nowhere", 400, json, JSON.stringify({ error: "not_found" }))).not.toBeNull()
    expect(nonConformance(routes, "GET", "/v1/nowhere", 404, json, JSON.stringify({ error: "not_found" }))).toBeNull()
  })

  it("fails the request (and so the test) through the checking fetch", async () => {
    const base = "http://declared.test"
    const fake = (async () => new Response(JSON.stringify({ user: "u", available: 1, locked: 0 }), { status: 200, headers: { "content-type": json } })) as unknown as typeof fetch
    const checked = conformingFetch(Api, base, fake)
    await expect(checked(`${base}/v1/balance/abc`)).rejects.toThrow(NonConformingResponse)
    // Another origin is not checked.
    expect((await checked("http://elsewhere.test/v1/balance/abc")).status).toBe(200)
  })
})
