// Run: node --import tsx bench/api-frameworks.ts (not part of `npm run bench`; docs/decisions.md "The API declaration").
// Side-by-side: the fast router (src/api/http.ts + node-server adapter shape) vs @effect/platform HttpApi,
// same process, same client, same two routes: a trivial GET and a POST that decodes OrderRequest.
import { createServer, request, Agent } from "node:http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { Router, json, parseJsonBody, type HttpRequest } from "../src/api/http.ts"
import { decodeBody, OrderRequest } from "../src/domain/schemas.ts"

const ORDER = JSON.stringify({ market_id: "ab".repeat(32), user: "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi", side: "buy", outcome: "yes", price: 5000, size: 10, order_type: "gtc", signature: "00".repeat(64), nonce: 1 })
const decodeOrder = decodeBody(OrderRequest, "invalid_order_shape")
const router = new Router<null>().add(
  { method: "GET", path: "/v1/health", handler: () => json(200, { ok: true, seq: 0 }) },
  { method: "POST", path: "/v1/orders", handler: (_c, req) => { const b = decodeOrder(parseJsonBody(req)); return json(200, { order_id: 1, fills: [], remaining: b.size, market_id: b.market_id, status: "resting" }) } }
)
const fast = () => createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on("data", (c) => chunks.push(c)).on("end", () => {
    const u = new URL(req.url!, "http://x")
    const r: HttpRequest = { method: req.method!, path: u.pathname, query: u.searchParams, headers: req.headers as never, body: Buffer.concat(chunks).toString(), ip: "" }
    const m = router.match(r.method, r.path)
    const out = m !== null && m !== "method_not_allowed" ? (m.route.handler(null, r, m.params) as any) : json(404, {})
    res.writeHead(out.status, out.headers).end(out.body)
  })
})

const Api = HttpApi.make("b").add(HttpApiGroup.make("g")
  .add(HttpApiEndpoint.get("health", "/v1/health").addSuccess(Schema.Struct({ ok: Schema.Boolean, seq: Schema.Number })))
  .add(HttpApiEndpoint.post("order", "/v1/orders").setPayload(OrderRequest).addSuccess(Schema.Struct({ order_id: Schema.Number, fills: Schema.Array(Schema.Unknown), remaining: Schema.Number, market_id: Schema.String, status: Schema.String }))))
const G = HttpApiBuilder.group(Api, "g", (h) => h.handle("health", () => Effect.succeed({ ok: true, seq: 0 })).handle("order", ({ payload }) => Effect.succeed({ order_id: 1, fills: [], remaining: payload.size, market_id: payload.market_id, status: "resting" })))

const load = async (port: number, method: string, path: string, body: string | undefined, ms: number) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 })
  let n = 0; const end = Date.now() + ms
  const one = () => new Promise<void>((ok, fail) => { const r = request({ port, method, path, agent, headers: body ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) } : {} }, (res) => { res.resume().on("end", () => { if (res.statusCode !== 200) fail(new Error(String(res.statusCode))); n++; ok() }) }); r.on("error", fail); r.end(body) })
  await Promise.all(Array.from({ length: 32 }, async () => { while (Date.now() < end) await one() }))
  agent.destroy()
  return Math.round(n / (ms / 1000))
}

const main = async () => {
  const s = fast(); await new Promise<void>((r) => s.listen(18081, "127.0.0.1", r))
  const effServer = HttpApiBuilder.serve().pipe(Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(G))), Layer.provide(NodeHttpServer.layer(createServer, { port: 18082, host: "127.0.0.1" })))
  Effect.runFork(Layer.launch(effServer as any) as any)
  await new Promise((r) => setTimeout(r, 500))
  for (const round of [1, 2]) {
    for (const [name, port] of [["fast", 18081], ["HttpApi", 18082]] as const) {
      const g = await load(port, "GET", "/v1/health", undefined, 3000)
      const p = await load(port, "POST", "/v1/orders", ORDER, 3000)
      console.log(`round ${round} ${name}: GET /v1/health ${g} req/s, POST /v1/orders (decode only) ${p} req/s`)
    }
  }
  s.close(); process.exit(0)
}
main()
