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
import { ApiError, ERROR_STATUS } from "../domain/errors.ts"
import type { AppCtx } from "./context.ts"
import { json, type Route } from "./http.ts"

/** A typed query parameter: the generator of hostile requests and the typed client read these. */
interface QueryParam {
  readonly name: string
  readonly schema: Record<string, unknown>
  readonly description?: string
}

export interface Op {
  readonly summary: string
  readonly tag: string
  readonly description?: string
  readonly body?: Schema.Schema<any, any, never>
  readonly auth?: "cookie" | "admin"
  readonly query?: ReadonlyArray<QueryParam>
  /** Responses beyond `200 OK` and the error envelope (the WebSocket upgrade's 101). */
  readonly responses?: Record<string, { readonly description: string }>
  /** Vendor extensions of the operation (the WebSocket frames). */
  readonly extensions?: Record<string, unknown>
}

const int = (minimum: number, maximum?: number) => ({ type: "integer", minimum, ...(maximum === undefined ? {} : { maximum }) })
const q = (name: string, schema: Record<string, unknown>, description?: string): QueryParam => ({ name, schema, ...(description === undefined ? {} : { description }) })
const PAGE = [q("limit", int(1, 200), "default 50, at most 200"), q("offset", int(0))]
const USER_KEY = { type: "string", pattern: "^[1-9A-HJ-NP-Za-km-z]{32,44}$", description: "base58 Ed25519 public key (32 bytes, not of small order)" }

/** SPEC §6 frames, as JSON Schemas: documented on GET /v1/ws. */
const WS_FRAMES = {
  client: {
    subscribe: { type: "object", required: ["type", "channel"], properties: { type: { const: "subscribe" }, channel: { type: "string", description: "book:<market_id>, trades:<market_id> or user:<addr>" }, signature: { type: "string", description: "user: channels without the cookie: hex Ed25519 over the session message" }, timestamp: { type: "integer" } } },
    unsubscribe: { type: "object", required: ["type", "channel"], properties: { type: { const: "unsubscribe" }, channel: { type: "string" } } },
    ping: { type: "object", required: ["type"], properties: { type: { const: "ping" } } }
  },
  server: {
    subscribed: { type: "object", properties: { type: { const: "subscribed" }, channel: { type: "string" } } },
    unsubscribed: { type: "object", properties: { type: { const: "unsubscribed" }, channel: { type: "string" } } },
    pong: { type: "object", properties: { type: { const: "pong" }, ts: { type: "integer", description: "unix ms" } } },
    book_update: { type: "object", properties: { type: { const: "book_update" }, market_id: { type: "string" }, snapshot: { type: "object", properties: { market_id: { type: "string" }, bids: { type: "array", items: { type: "object", properties: { price: { type: "integer" }, size: { type: "integer" } } } }, asks: { type: "array" }, ts: { type: "integer" } } } } },
    trade: { type: "object", properties: { type: { const: "trade" }, market_id: { type: "string" }, trade: { type: "object" } } },
    portfolio_snapshot: { type: "object", properties: { type: { const: "portfolio_snapshot" }, user: { type: "string" }, ts: { type: "integer" }, state: { type: "object" } } },
    portfolio_update: { type: "object", properties: { type: { const: "portfolio_update" }, user: { type: "string" }, ts: { type: "integer" }, state: { type: "object" } } },
    error: { type: "object", properties: { type: { const: "error" }, code: { enum: ["bad_json", "invalid_channel", "unknown_type"] }, channel: { type: ["string", "null"] }, detail: { type: "string" } } },
    portfolio_error: { type: "object", properties: { type: { const: "portfolio_error" }, channel: { type: "string" }, error: { enum: ["unauthorized", "address_mismatch", "bad_request"] } } }
  },
  close_codes: {
    "1008": "policy: too many connections from one address, or too many subscriptions on one connection",
    "1013": "slow consumer: more than 4 MiB queued; re-seed from REST and reconnect"
  }
}

const OPS: Record<string, Op> = {
  "POST /v1/builders/register": { summary: "Register (idempotent); sets the session cookie, returns api_key", tag: "session", body: RegisterRequest },
  "POST /v1/orders": { summary: "Place a signed order", tag: "orders", body: OrderRequest, auth: "cookie" },
  "POST /v1/orders/cancel": { summary: "Cancel one resting order", tag: "orders", body: CancelRequest, auth: "cookie" },
  "POST /v1/orders/cancel-all": { summary: "Cancel every resting order of the session user", tag: "orders", body: CancelAllRequest, auth: "cookie" },
  "GET /v1/orders/all/{user}": { summary: "A user's resting orders", tag: "orders" },
  "GET /v1/markets": {
    summary: "List events",
    tag: "markets",
    query: [
      q("status", { enum: ["active", "halted", "resolved"] }),
      q("category", { type: "string" }),
      q("search", { type: "string" }),
      q("ends_before", int(0)),
      q("ends_after", int(0)),
      q("neg_risk", { enum: ["true", "false"] }),
      q("order", { enum: ["volume", "expiry", "created_at"] }),
      q("ascending", { enum: ["true", "false"] }),
      q("limit", int(0, 500)),
      q("offset", int(0))
    ]
  },
  "GET /v1/markets/{id}": { summary: "One event by event_id or slug", tag: "markets" },
  "GET /v1/markets/{id}/book": { summary: "Book snapshot (YES terms)", tag: "markets" },
  "GET /v1/markets/{id}/trades": { summary: "Recent trades, newest first", tag: "markets", query: PAGE },
  "GET /v1/markets/{id}/candles": { summary: "YES-probability candles", tag: "markets", query: [q("interval", { enum: ["1m", "5m", "1h", "1d"] }), q("from", int(0)), q("to", int(0))] },
  "GET /v1/balance/{user}": { summary: "Balance in micro-USDC", tag: "account" },
  "GET /v1/position/{market_id}/{user}": { summary: "One position (zero-shaped when none)", tag: "account" },
  "GET /v1/positions/all/{user}": { summary: "All positions", tag: "account" },
  "GET /v1/trades/all/{user}": { summary: "Fills as maker or taker, newest first", tag: "account", query: PAGE },
  "GET /v1/deposits/all/{user}": { summary: "Deposits, newest first", tag: "account", query: PAGE },
  "GET /v1/withdrawals/all/{user}": { summary: "Withdrawals, newest first", tag: "account", query: PAGE },
  "POST /v1/withdraw-signed": { summary: "Withdraw to the linked wallet (signed; session cookie)", tag: "wallet", body: WithdrawRequest, auth: "cookie" },
  "POST /v1/wallet/link": { summary: "Link the user key to an EVM wallet (both keys sign)", tag: "wallet", body: WalletLinkRequest },
  "GET /v1/wallet/{user}": { summary: "The user's linked wallet", tag: "wallet" },
  "GET /v1/fees": { summary: "Default, per-category and per-market fees", tag: "fees" },
  "GET /v1/rewards/config": { summary: "Rewards configuration", tag: "fees" },
  "GET /v1/rewards/me": { summary: "A maker's LP rewards: today's estimate, pending and paid days, totals", tag: "fees", query: [q("user", USER_KEY)] },
  "GET /v1/rewards/wallet/{wallet}": { summary: "Same as /v1/rewards/me, by user key or linked 0x wallet", tag: "fees" },
  "GET /v1/rewards/leaderboard": { summary: "Paid LP rewards ranked over the last days", tag: "fees", query: [q("days", int(1, 90)), q("limit", int(1, 200))] },
  "POST /v1/lp-bot/session/new": { summary: "A server-generated LP session key and the delegation message to sign", tag: "lp-bot", body: LpSessionNewRequest, auth: "cookie" },
  "POST /v1/lp-bot/delegate": { summary: "Delegate the session key (scope orders), signed by the user key", tag: "lp-bot", body: LpDelegateRequest },
  "POST /v1/lp-bot/start": { summary: "Start (or replace) the user's server-managed bot", tag: "lp-bot", body: LpStartRequest, auth: "cookie" },
  "POST /v1/lp-bot/stop": { summary: "Stop the bot (cancels its orders); optionally revoke the session", tag: "lp-bot", body: LpStopRequest, auth: "cookie" },
  "GET /v1/lp-bot/status": { summary: "The user's bot, its markets and sessions", tag: "lp-bot", query: [q("user", USER_KEY)] },
  "GET /v1/ws": {
    summary: "The WebSocket feed (SPEC §6): upgrade this request; a plain GET answers 426",
    tag: "feed",
    description:
      "Send `Connection: Upgrade` and `Upgrade: websocket`. Client frames are JSON objects (subscribe, unsubscribe, ping); " +
      "`x-websocket-frames` gives every client and server frame's shape and the close codes. No history is replayed: seed from REST.",
    responses: { "101": { description: "Switching Protocols: the connection is now the WebSocket feed" } },
    extensions: { "x-websocket-frames": WS_FRAMES }
  },
  "POST /v1/events": { summary: "Operator: create an event and its outcome markets", tag: "operator", body: CreateEventRequest, auth: "admin" },
  "POST /v1/admin/markets/{id}/status": { summary: "Operator: halt, resume or resolve a market", tag: "operator", body: MarketStatusRequest, auth: "admin" },
  "POST /v1/admin/trading": { summary: "Operator: open, close or pause trading", tag: "operator", body: SurfaceRequest, auth: "admin" },
  "POST /v1/admin/lp": { summary: "Operator: open or close the LP surface", tag: "operator", body: SurfaceRequest, auth: "admin" },
  "POST /v1/admin/fees": { summary: "Operator: taker fees and maker rebate", tag: "operator", body: FeesRequest, auth: "admin" },
  "POST /v1/admin/builders/{user}": { summary: "Operator: a builder's fee_bps", tag: "operator", body: BuilderFeeRequest, auth: "admin" },
  "POST /v1/admin/engine-binding": { summary: "Operator: the withdraw path's engine binding (up, unreachable, disabled)", tag: "operator", body: BindingRequest, auth: "admin" },
  "POST /v1/admin/credit": { summary: "Operator: development credit (DEV_CREDIT)", tag: "operator", body: CreditRequest, auth: "admin" },
  "GET /v1/admin/chain": { summary: "Operator: the chain guard — checkpoint, saved chain state, and why crediting and payouts halted", tag: "operator", auth: "admin" },
  "POST /v1/admin/chain/resume": { summary: "Operator: after reconciling a chain halt, anchor again on the chain as it is and resume", tag: "operator", auth: "admin" },
  "GET /v1/admin/clock": { summary: "Operator: wall, monotonic and journal clocks, and wall-clock steps detected", tag: "operator", auth: "admin" },
  "GET /v1/openapi.json": { summary: "This document", tag: "meta" },
  "GET /v1/docs": { summary: "Human-readable API docs", tag: "meta" },
  "GET /v1/health": { summary: "Liveness", tag: "meta" }
}

/** The deposit service's own operations (SPEC §4 "Deposit service"). */
export const DEPOSIT_OPS: Record<string, Op> = {
  "GET /v1/deposit/native-address/{user_address}": { summary: "The deposit address of an EVM wallet (derived, registered for watching)", tag: "deposit" },
  "GET /v1/deposit/progress/{user_address}": { summary: "Deposit progress of an EVM wallet: { data: DepositProgress }", tag: "deposit" },
  "GET /v1/deposit/bridge-address/{pubkey}": { summary: "Retired (410); EVM addresses get 400 invalid_pubkey", tag: "deposit" },
  "GET /v1/openapi.json": { summary: "This document", tag: "meta" }
}

const ErrorEnvelope = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string", enum: Object.keys(ERROR_STATUS) }, detail: { type: "string" }, retry_after: { type: "integer" } }
}

/**
 * Effect renders `Schema.Unknown`/`Any` as `{ "$id": "/schemas/unknown", "title": "unknown" }`: the same
 * `$id` on several subschemas makes the document invalid. "Any value" in JSON Schema is `{}`.
 */
const withoutPlaceholderIds = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(withoutPlaceholderIds)
  if (node === null || typeof node !== "object") return node
  const out: Record<string, unknown> = {}
  const placeholder = /^\/schemas\/(unknown|any)$/.test(String((node as Record<string, unknown>).$id))
  for (const [k, v] of Object.entries(node)) {
    if (placeholder && (k === "$id" || k === "title")) continue
    out[k] = withoutPlaceholderIds(v)
  }
  return out
}

/** A request body's JSON Schema; named sub-schemas go to `components.schemas` so every `$ref` resolves in this document. */
const bodySchema = (schema: Schema.Schema<any, any, never>, shared: Record<string, JSONSchema.JsonSchema7>) => {
  const local: Record<string, JSONSchema.JsonSchema7> = {}
  const root = JSONSchema.fromAST(schema.ast, {
    definitions: local,
    definitionPath: "#/components/schemas/",
    target: "openApi3.1",
    // Unknown body fields are ignored by the decoders, not rejected.
    additionalPropertiesStrategy: "allow"
  })
  for (const [name, def] of Object.entries(local)) shared[name] = withoutPlaceholderIds(def) as JSONSchema.JsonSchema7
  return withoutPlaceholderIds(root)
}

export interface DocumentInfo {
  readonly title: string
  readonly description: string
  /** `servers[0].url`: the address this document was served from. */
  readonly serverUrl?: string
}

// A relative server: the document describes whichever host served it (behind TLS or not).
const API_INFO: DocumentInfo = { title: "twinbook API", description: "Prediction-market order book (SPEC.md). Operator routes and fields marked as extensions go beyond SPEC.", serverUrl: "/" }

export const openApiDocument = (routes: ReadonlyArray<{ method: string; path: string }>, ops: Record<string, Op> = OPS, info: DocumentInfo = API_INFO) => {
  const paths: Record<string, Record<string, unknown>> = {}
  const schemas: Record<string, JSONSchema.JsonSchema7> = {}
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, "{$1}")
    // A route without an entry in the table is still listed, so the document never drops one.
    const op: Op = ops[`${r.method} ${path}`] ?? { summary: `${r.method} ${path}`, tag: path.split("/")[2] ?? "other" }
    const params = [
      ...[...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } })),
      ...(op.query ?? []).map((p) => ({ name: p.name, in: "query", required: false, schema: p.schema, ...(p.description === undefined ? {} : { description: p.description }) }))
    ]
    ;(paths[path] ??= {})[r.method.toLowerCase()] = {
      operationId: `${r.method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`,
      summary: op.summary,
      ...(op.description === undefined ? {} : { description: op.description }),
      tags: [op.tag],
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(op.body === undefined ? {} : { requestBody: { required: true, content: { "application/json": { schema: bodySchema(op.body, schemas) } } } }),
      ...(op.auth === "cookie" ? { security: [{ session: [] }] } : op.auth === "admin" ? { security: [{ operator: [] }] } : {}),
      responses: {
        ...(op.responses ?? { "200": { description: "OK" } }),
        default: { description: "Error envelope", content: { "application/json": { schema: ErrorEnvelope } } }
      },
      ...op.extensions
    }
  }
  return {
    openapi: "3.1.0",
    info: { title: info.title, version: "1.0.0", description: info.description },
    ...(info.serverUrl === undefined ? {} : { servers: [{ url: info.serverUrl }] }),
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
    path: "/v1/ws",
    handler: () => {
      throw new ApiError("upgrade_required", "GET /v1/ws upgrades to a WebSocket: send Connection: Upgrade and Upgrade: websocket")
    }
  },
  {
    method: "GET",
    path: "/v1/docs",
    handler: () => ({ status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: DOCS_PAGE })
  },
  { method: "GET", path: "/v1/health", handler: (ctx) => json(200, { ok: true, seq: ctx.exchange.lastSeq }) }
]
