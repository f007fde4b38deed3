// The served API documents are valid OpenAPI 3.1 (checked by a maintained
// validator, every $ref resolving) and complete: the API's lists every route the
// router serves, GET /v1/ws with its frames among them, with typed parameters and a
// schema for every response; the deposit service serves its own. Both are generated
// from the declaration (src/api/declaration/api.ts).
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRouter } from "../../src/api/app.ts"
import { RateLimiter } from "../../src/usecase/rate-limit.ts"
import { listen, type RunningServer } from "../../src/api/node-server.ts"
import { SimChain } from "../../src/chain/sim.ts"
import { makeDepositApp } from "../../src/deposit/app.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { get } from "../support/reads.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let t: TestServer
let deposit: RunningServer
beforeAll(async () => {
  t = await startTestServer()
  const exchange = new Exchange(() => 1_795_305_600_000, memoryJournal())
  const app = makeDepositApp({
    exchange,
    chain: new SimChain({ seed: 1 }),
    limiter: new RateLimiter(() => 1_795_305_600_000),
    config: { minUsdgMicro: 1_000_000, maxPerTxMicro: 100_000_000, corsOrigins: new Set() }
  })
  deposit = await listen({ app, hub: null, host: "127.0.0.1", port: 0, secret: new Uint8Array(32), nowMs: () => 0, corsOrigins: new Set() })
})
afterAll(async () => {
  await deposit.close()
  await t.close()
})

const validate = async (doc: unknown) => {
  const v = new Validator()
  const res = await v.validate(doc as never)
  expect(res.errors ?? [], JSON.stringify(res.errors)).toEqual([])
  expect(res.valid).toBe(true)
  expect(v.version).toBe("3.1")
  expect(() => v.resolveRefs()).not.toThrow()
}

const operations = (doc: any): string[] =>
  Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))

describe("the API's OpenAPI document", () => {
  it("is valid OpenAPI 3.1 with no placeholder schemas", async () => {
    const doc = (await get(t, "/v1/openapi.json")).body
    await validate(doc)
    expect(JSON.stringify(doc)).not.toMatch(/\/schemas\/(unknown|any)/)
    expect(doc.servers).toEqual([{ url: "/" }])
  })

  it("lists exactly the routes the router serves, each with a summary and a unique operationId", async () => {
    const doc = (await get(t, "/v1/openapi.json")).body
    const served = makeRouter()
      .list()
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`)
    expect(operations(doc).sort()).toEqual([...served].sort())
    const ids = operations(doc).map((op) => {
      const [m, p] = op.split(" ")
      const o = doc.paths[p!][m!.toLowerCase()]
      expect(o.summary, op).toBeTruthy()
      return o.operationId
    })
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("documents GET /v1/ws with its upgrade, every frame and the close codes", async () => {
    const doc = (await get(t, "/v1/openapi.json")).body
    const ws = doc.paths["/v1/ws"].get
    expect(ws.responses["101"].description).toMatch(/WebSocket/)
    const frames = ws["x-websocket-frames"]
    expect(Object.keys(frames.client).sort()).toEqual(["ping", "subscribe", "unsubscribe"])
    expect(Object.keys(frames.server)).toEqual(expect.arrayContaining(["subscribed", "pong", "book_update", "trade", "portfolio_snapshot", "portfolio_update", "error", "portfolio_error"]))
    expect(Object.keys(frames.close_codes)).toEqual(["1008", "1013"])
    // A plain GET (no upgrade) is told what to do instead of a 404.
    const plain = await get(t, "/v1/ws")
    expect(plain.status).toBe(426)
    expect(plain.body.error).toBe("upgrade_required")
  })

  it("gives every operation its response schemas: each success and each error status", async () => {
    const doc = (await get(t, "/v1/openapi.json")).body
    for (const op of operations(doc)) {
      const [m, p] = op.split(" ")
      const responses = doc.paths[p!][m!.toLowerCase()].responses as Record<string, any>
      const statuses = Object.keys(responses)
      expect(statuses.some((s) => s.startsWith("2") || s === "101"), op).toBe(true)
      // Every route can fail unexpectedly: 500 is always declared, with the envelope.
      expect(responses["500"]?.content?.["application/json"]?.schema?.properties?.error?.enum, op).toContain("internal_error")
      for (const [status, res] of Object.entries(responses)) {
        if (status === "101") continue
        const content = Object.values(res.content ?? {}) as Array<{ schema?: unknown }>
        expect(content.length, `${op} ${status}`).toBe(1)
        expect(content[0]!.schema, `${op} ${status}`).toBeTruthy()
        if (Number(status) >= 400) expect(res.content["application/json"].schema.required, `${op} ${status}`).toEqual(["error"])
      }
      for (const param of doc.paths[p!][m!.toLowerCase()].parameters ?? []) {
        expect(param.schema.type ?? param.schema.$ref ?? param.schema.enum, `${op} ${param.name}`).toBeDefined()
      }
    }
    // A SPEC §7 code under its status, on its route.
    expect(doc.paths["/v1/markets"].get.responses["400"].content["application/json"].schema.properties.error.enum).toEqual(["invalid_query", "invalid_order"])
    expect(doc.paths["/v1/orders"].post.responses["403"].content["application/json"].schema.properties.error.enum).toContain("trading_disabled")
  })

  it("types its query parameters", async () => {
    const doc = (await get(t, "/v1/openapi.json")).body
    const candles = doc.paths["/v1/markets/{id}/candles"].get.parameters
    expect(candles.find((p: any) => p.name === "interval").schema).toEqual({ type: "string", enum: ["1m", "5m", "1h", "1d"] })
    expect(doc.paths["/v1/rewards/leaderboard"].get.parameters.find((p: any) => p.name === "days").schema).toEqual({ type: "integer", minimum: 1, maximum: 90 })
    expect(doc.paths["/v1/markets"].get.parameters.find((p: any) => p.name === "neg_risk").schema).toEqual({ type: "string", enum: ["true", "false"] })
  })

  it("is served as an interactive Swagger UI page that needs no network", async () => {
    const page = await get(t, "/v1/docs")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(page.text).toContain("SwaggerUIBundle")
    // The document is embedded; no script or stylesheet comes from elsewhere.
    expect(page.text).toContain('"/v1/markets/{id}/candles"')
    expect(page.text).not.toMatch(/<(script|link)[^>]+(src|href)=["']?https?:/i)
  })
})

describe("the deposit service's OpenAPI document", () => {
  it("is served, valid, and lists its routes", async () => {
    const res = await fetch(`${deposit.url}/v1/openapi.json`)
    expect(res.status).toBe(200)
    const doc = await res.json()
    await validate(doc)
    expect(operations(doc).sort()).toEqual([
      "GET /v1/deposit/bridge-address/{pubkey}",
      "GET /v1/deposit/native-address/{user_address}",
      "GET /v1/deposit/progress/{user_address}",
      "GET /v1/openapi.json"
    ])
  })
})
