// The OpenAPI document, generated from the same Effect schemas that validate
// requests, plus a self-contained docs page (no CDN: this service runs offline).
import { JSONSchema, type Schema } from "effect"
import {
  BindingRequest,
  BuilderFeeRequest,
  CancelAllRequest,
  CancelRequest,
  CreateEventRequest,
  CreditRequest,
  FeesRequest,
  LpDelegateRequest,
  LpSessionNewRequest,
  LpStartRequest,
  LpStopRequest,
  MarketStatusRequest,
  OrderRequest,
  RegisterRequest,
  SurfaceRequest,
  WalletLinkRequest,
  WithdrawRequest
} from "../domain/schemas.ts"
import { ERROR_STATUS } from "../domain/errors.ts"
import type { AppCtx } from "./context.ts"
import { json, type Route } from "./http.ts"

interface Op {
  readonly summary: string
  readonly tag: string
  readonly body?: Schema.Schema<any, any, never>
  readonly auth?: "cookie" | "admin"
  readonly query?: ReadonlyArray<string>
}

const OPS: Record<string, Op> = {
  "POST /v1/builders/register": { summary: "Register (idempotent); sets the session cookie, returns api_key", tag: "session", body: RegisterRequest },
  "POST /v1/orders": { summary: "Place a signed order", tag: "orders", body: OrderRequest, auth: "cookie" },
  "POST /v1/orders/cancel": { summary: "Cancel one resting order", tag: "orders", body: CancelRequest, auth: "cookie" },
  "POST /v1/orders/cancel-all": { summary: "Cancel every resting order of the session user", tag: "orders", body: CancelAllRequest, auth: "cookie" },
  "GET /v1/orders/all/{user}": { summary: "A user's resting orders", tag: "orders" },
  "GET /v1/markets": { summary: "List events", tag: "markets", query: ["status", "category", "search", "ends_before", "ends_after", "neg_risk", "order", "ascending", "limit", "offset"] },
  "GET /v1/markets/{id}": { summary: "One event by event_id or slug", tag: "markets" },
  "GET /v1/markets/{id}/book": { summary: "Book snapshot (YES terms)", tag: "markets" },
  "GET /v1/markets/{id}/trades": { summary: "Recent trades, newest first", tag: "markets", query: ["limit", "offset"] },
  "GET /v1/markets/{id}/candles": { summary: "YES-probability candles", tag: "markets", query: ["interval", "from", "to"] },
  "GET /v1/balance/{user}": { summary: "Balance in micro-USDC", tag: "account" },
  "GET /v1/position/{market_id}/{user}": { summary: "One position (zero-shaped when none)", tag: "account" },
  "GET /v1/positions/all/{user}": { summary: "All positions", tag: "account" },
  "GET /v1/trades/all/{user}": { summary: "Fills as maker or taker, newest first", tag: "account", query: ["limit", "offset"] },
  "GET /v1/deposits/all/{user}": { summary: "Deposits, newest first", tag: "account", query: ["limit", "offset"] },
  "GET /v1/withdrawals/all/{user}": { summary: "Withdrawals, newest first", tag: "account", query: ["limit", "offset"] },
  "POST /v1/withdraw-signed": { summary: "Withdraw to the linked wallet (signed; session cookie)", tag: "wallet", body: WithdrawRequest, auth: "cookie" },
  "POST /v1/wallet/link": { summary: "Link the user key to an EVM wallet (both keys sign)", tag: "wallet", body: WalletLinkRequest },
  "GET /v1/wallet/{user}": { summary: "The user's linked wallet", tag: "wallet" },
  "GET /v1/fees": { summary: "Default, per-category and per-market fees", tag: "fees" },
  "GET /v1/rewards/config": { summary: "Rewards configuration", tag: "fees" },
  "GET /v1/rewards/me": { summary: "A maker's LP rewards: today's estimate, pending and paid days, totals", tag: "fees", query: ["user"] },
  "GET /v1/rewards/wallet/{wallet}": { summary: "Same as /v1/rewards/me, by user key or linked 0x wallet", tag: "fees" },
  "GET /v1/rewards/leaderboard": { summary: "Paid LP rewards ranked over the last days", tag: "fees", query: ["days", "limit"] },
  "POST /v1/lp-bot/session/new": { summary: "A server-generated LP session key and the delegation message to sign", tag: "lp-bot", body: LpSessionNewRequest, auth: "cookie" },
  "POST /v1/lp-bot/delegate": { summary: "Delegate the session key (scope orders), signed by the user key", tag: "lp-bot", body: LpDelegateRequest },
  "POST /v1/lp-bot/start": { summary: "Start (or replace) the user's server-managed bot", tag: "lp-bot", body: LpStartRequest, auth: "cookie" },
  "POST /v1/lp-bot/stop": { summary: "Stop the bot (cancels its orders); optionally revoke the session", tag: "lp-bot", body: LpStopRequest, auth: "cookie" },
  "GET /v1/lp-bot/status": { summary: "The user's bot, its markets and sessions", tag: "lp-bot", query: ["user"] },
  "POST /v1/events": { summary: "Operator: create an event and its outcome markets", tag: "operator", body: CreateEventRequest, auth: "admin" },
  "POST /v1/admin/markets/{id}/status": { summary: "Operator: halt, resume or resolve a market", tag: "operator", body: MarketStatusRequest, auth: "admin" },
  "POST /v1/admin/trading": { summary: "Operator: open, close or pause trading", tag: "operator", body: SurfaceRequest, auth: "admin" },
  "POST /v1/admin/lp": { summary: "Operator: open or close the LP surface", tag: "operator", body: SurfaceRequest, auth: "admin" },
  "POST /v1/admin/fees": { summary: "Operator: taker fees and maker rebate", tag: "operator", body: FeesRequest, auth: "admin" },
  "POST /v1/admin/builders/{user}": { summary: "Operator: a builder's fee_bps", tag: "operator", body: BuilderFeeRequest, auth: "admin" },
  "POST /v1/admin/engine-binding": { summary: "Operator: the withdraw path's engine binding (up, unreachable, disabled)", tag: "operator", body: BindingRequest, auth: "admin" },
  "POST /v1/admin/credit": { summary: "Operator: development credit (DEV_CREDIT)", tag: "operator", body: CreditRequest, auth: "admin" },
  "GET /v1/openapi.json": { summary: "This document", tag: "meta" },
  "GET /v1/docs": { summary: "Human-readable API docs", tag: "meta" },
  "GET /v1/health": { summary: "Liveness", tag: "meta" }
}

const ErrorEnvelope = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string", enum: Object.keys(ERROR_STATUS) }, detail: { type: "string" }, retry_after: { type: "integer" } }
}

/** A request body's JSON Schema; named sub-schemas go to `components.schemas` so every `$ref` resolves in this document. */
const bodySchema = (schema: Schema.Schema<any, any, never>, shared: Record<string, JSONSchema.JsonSchema7>) =>
  JSONSchema.fromAST(schema.ast, {
    definitions: shared,
    definitionPath: "#/components/schemas/",
    target: "openApi3.1",
    // Unknown body fields are ignored by the decoders, not rejected.
    additionalPropertiesStrategy: "allow"
  })

export const openApiDocument = (routes: ReadonlyArray<{ method: string; path: string }>) => {
  const paths: Record<string, Record<string, unknown>> = {}
  const schemas: Record<string, JSONSchema.JsonSchema7> = {}
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, "{$1}")
    // A route without an entry in OPS is still listed, so the document never drops one.
    const op: Op = OPS[`${r.method} ${path}`] ?? { summary: `${r.method} ${path}`, tag: path.split("/")[2] ?? "other" }
    const params = [
      ...[...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } })),
      ...(op.query ?? []).map((name) => ({ name, in: "query", required: false, schema: { type: "string" } }))
    ]
    ;(paths[path] ??= {})[r.method.toLowerCase()] = {
      summary: op.summary,
      tags: [op.tag],
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(op.body === undefined ? {} : { requestBody: { required: true, content: { "application/json": { schema: bodySchema(op.body, schemas) } } } }),
      ...(op.auth === "cookie" ? { security: [{ session: [] }] } : op.auth === "admin" ? { security: [{ operator: [] }] } : {}),
      responses: {
        "200": { description: "OK" },
        default: { description: "Error envelope", content: { "application/json": { schema: ErrorEnvelope } } }
      }
    }
  }
  return {
    openapi: "3.1.0",
    info: { title: "twinbook API", version: "1.0.0", description: "Prediction-market order book (SPEC.md). Operator routes are extensions." },
    paths,
    components: {
      schemas,
      securitySchemes: {
        session: { type: "apiKey", in: "cookie", name: "service_oracle_session" },
        operator: { type: "http", scheme: "bearer" }
      }
    }
  }
}

const DOCS_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>twinbook API</title>
<style>body{font:14px system-ui;margin:2em;max-width:60em}code{background:#eee;padding:0 .3em}h2{margin-top:1.5em}td{padding:.2em .8em;vertical-align:top}</style></head>
<body><h1>twinbook API</h1><p>Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a></p><div id="ops">loading…</div>
<script>fetch('/v1/openapi.json').then(r=>r.json()).then(d=>{const by={};for(const[p,ms]of Object.entries(d.paths))for(const[m,o]of Object.entries(ms))(by[o.tags[0]]??=[]).push([m.toUpperCase(),p,o]);
document.getElementById('ops').innerHTML=Object.entries(by).map(([t,ops])=>'<h2>'+t+'</h2><table>'+ops.map(([m,p,o])=>'<tr><td><code>'+m+'</code></td><td><code>'+p+'</code></td><td>'+o.summary+'</td></tr>').join('')+'</table>').join('')})</script></body></html>`

/** Routes about the API itself. The OpenAPI document is built lazily from the app's router. */
export const metaRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "GET",
    path: "/v1/openapi.json",
    handler: async () => {
      const { makeRouter } = await import("./app.ts")
      return json(200, openApiDocument(makeRouter().list()))
    }
  },
  {
    method: "GET",
    path: "/v1/docs",
    handler: () => ({ status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: DOCS_PAGE })
  },
  { method: "GET", path: "/v1/health", handler: (ctx) => json(200, { ok: true, seq: ctx.exchange.lastSeq }) }
]
