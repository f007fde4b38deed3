// The served API documents are valid OpenAPI 3.1 (checked by a maintained
// validator, every $ref resolving) and complete: the API's lists every route the
// router serves, GET /v1/ws with its frames among them; the deposit service
// serves its own. If the document is ever generated another way, this guards it.
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

  it("types its query parameters", async () => {
    const doc = (await get(t, "/v1/openapi.json")).body
    const candles = doc.paths["/v1/markets/{id}/candles"].get.parameters
    expect(candles.find((p: any) => p.name === "interval").schema).toEqual({ enum: ["1m", "5m", "1h", "1d"] })
    expect(doc.paths["/v1/rewards/leaderboard"].get.parameters.find((p: any) => p.name === "days").schema).toEqual({ type: "integer", minimum: 1, maximum: 90 })
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
