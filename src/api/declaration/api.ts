// The API, declared once (issues 12 and 35): every route of the service and of the deposit
// service with its parameters, body, responses, error codes and the checks run before its
// handler. Method and path come from table.ts (Effect-free, imported by the browser client).
// From this come the router (src/api/serve.ts: each src/api/routes file implements one group,
// handed the decoded body and parameters), the OpenAPI documents (src/api/openapi.ts) as
// `@effect/platform` HttpApis, the docs page, the typed client's request and response types
// (src/client/types.ts) and the response checks of the black-box suite
// (test/support/conformance.ts). The server stays on its own router, not HttpApi's:
// docs/decisions.md "A transport-free HTTP core" has why; docs/contributing.md how to add a route.
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import {
  CancelAllRequest,
  CancelRequest,
  LpDelegateRequest,
  LpSessionNewRequest,
  LpStartRequest,
  LpStopRequest,
  OrderRequest,
  orderRequestFast,
  RegisterRequest,
  WalletLinkRequest,
  WithdrawRequest
} from "../../domain/schemas.ts"
import type { ErrorCode } from "../../domain/errors.ts"
import { FIRST_HOUR_ROUTES } from "./dev.ts"
import { boolQuery, empty, type Group, Html, intQuery, toEndpoint } from "./endpoint.ts"
import { operator } from "./operator.ts"
import { OPS_ROUTES } from "./ops.ts"
import { EvmAddress, MarketRef, PAGE, USER_FIELD, UserKey } from "./params.ts"
import { API_TABLE as T, DEPOSIT_TABLE } from "./table.ts"
import * as W from "../../domain/wire.ts"
import { WS_FRAMES } from "./ws-frames.ts"


/** Codes of the session-cookie check on a state change (src/api/context.ts requireSession). */
const SESSION: ReadonlyArray<ErrorCode> = ["forbidden_origin", "unauthorized"]
/** Codes of an order the engine rejects (src/usecase/place-order.ts rejection). */
const ENGINE_REJECTIONS: ReadonlyArray<ErrorCode> = [
  "not_found",
  "would_cross",
  "insufficient_balance",
  "insufficient_shares",
  "fok_unfilled",
  "dust_order",
  "market_halted",
  "market_resolved",
  "nonce_stale",
  "unknown_builder",
  "order_not_found",
  "order_rejected"
]
/** Codes of a delegated LP session that cannot sign (src/usecase/place-order.ts assertSession, lp-bot.ts refusalError). */
const LP_SESSION: ReadonlyArray<ErrorCode> = ["session_not_delegated", "user_mismatch", "session_revoked", "session_expired"]
/** Codes of every LP-bot route: the surface gate and its per-IP limit. */
const LP: ReadonlyArray<ErrorCode> = ["lp_disabled", "rate_limited", "invalid_pubkey"]

const session = {
  register: {
    ...T.session.register,
    summary: "Register (idempotent); sets the session cookie, returns api_key",
    body: RegisterRequest,
    success: W.RegisterResponse,
    errors: ["rate_limited", "invalid_shape", "stale_timestamp", "invalid_signature_format", "invalid_signature"],
    preamble: ["ip:ip_register"]
  }
} as const satisfies Group

/** SPEC §8 puts all of /v1/orders/* under the per-IP bucket, reads included. */
const ORDER_SESSION = ["ip:ip_orders", "session"] as const

const orders = {
  place: {
    ...T.orders.place,
    summary: "Place a signed order",
    description: "200 with the order's fills; 202 `queued` with `queue_position` while trading is paused.",
    body: OrderRequest,
    auth: "cookie",
    success: { 200: W.OrderResponse, 202: W.OrderResponse },
    errors: ["rate_limited", "trading_disabled", ...SESSION, "invalid_order_shape", "invalid_pubkey", "session_user_mismatch", "invalid_signature_format", "invalid_signature", ...LP_SESSION, ...ENGINE_REJECTIONS],
    preamble: ["ip:ip_orders", "trading_open", "session", "user:wallet_orders"],
    bodyError: "invalid_order_shape",
    fastBody: orderRequestFast
  },
  cancel: {
    ...T.orders.cancel,
    summary: "Cancel one resting order",
    body: CancelRequest,
    auth: "cookie",
    success: W.CancelResponse,
    errors: ["rate_limited", ...SESSION, "invalid_shape", "order_not_found"],
    preamble: ORDER_SESSION
  },
  cancelAll: {
    ...T.orders.cancelAll,
    summary: "Cancel every resting order of the session user",
    body: CancelAllRequest,
    auth: "cookie",
    success: W.CancelAllResponse,
    errors: ["rate_limited", ...SESSION, "invalid_shape", "not_found"],
    preamble: ORDER_SESSION
  },
  open: {
    ...T.orders.open,
    summary: "A user's resting orders",
    pathParams: { user: UserKey },
    success: W.OpenOrders,
    errors: ["rate_limited", "invalid_pubkey"],
    preamble: ["ip:ip_orders"],
    fieldErrors: USER_FIELD
  }
} as const satisfies Group

const markets = {
  list: {
    ...T.markets.list,
    summary: "List events",
    query: {
      status: Schema.optional(W.MarketStatus),
      category: Schema.optional(Schema.String),
      search: Schema.optional(Schema.String),
      ends_before: Schema.optional(intQuery(0)),
      ends_after: Schema.optional(intQuery(0)),
      neg_risk: Schema.optional(boolQuery),
      order: Schema.optional(Schema.Literal("volume", "expiry", "created_at")),
      ascending: Schema.optional(boolQuery),
      limit: Schema.optional(intQuery(0).annotations({ description: "default 500, at most 500" })),
      offset: Schema.optional(intQuery(0))
    },
    success: W.MarketsPage,
    errors: ["invalid_query", "invalid_order"],
    fieldErrors: { order: "invalid_order" }
  },
  get: { ...T.markets.get, summary: "One event by event_id or slug", pathParams: { id: MarketRef }, success: W.Market, errors: ["not_found"] },
  book: {
    ...T.markets.book,
    summary: "Book snapshot (YES terms); an unknown or unavailable book is an empty one, never a 5xx",
    pathParams: { id: MarketRef },
    success: W.BookSnapshot,
    errors: []
  },
  trades: {
    ...T.markets.trades,
    summary: "Recent trades, newest first",
    pathParams: { id: MarketRef },
    query: PAGE,
    success: W.MarketTrades,
    errors: ["invalid_query", "not_found"]
  },
  candles: {
    ...T.markets.candles,
    summary: "YES-probability candles",
    pathParams: { id: MarketRef },
    query: { interval: Schema.optional(W.CandleInterval), from: Schema.optional(intQuery(0)), to: Schema.optional(intQuery(0)) },
    success: W.Candles,
    errors: ["invalid_interval", "invalid_query", "not_found"],
    fieldErrors: { interval: "invalid_interval" }
  }
} as const satisfies Group

const userPath = { user: UserKey }

const account = {
  balance: { ...T.account.balance, summary: "Balance in micro-USDC", pathParams: userPath, success: W.Balance, errors: ["invalid_pubkey"], fieldErrors: USER_FIELD },
  position: {
    ...T.account.position,
    summary: "One position (zero-shaped when none)",
    pathParams: { market_id: MarketRef, user: UserKey },
    success: W.Position,
    errors: ["invalid_pubkey"],
    fieldErrors: USER_FIELD
  },
  positions: { ...T.account.positions, summary: "All positions", pathParams: userPath, success: W.Positions, errors: ["invalid_pubkey"], fieldErrors: USER_FIELD },
  trades: {
    ...T.account.trades,
    summary: "Fills as maker or taker, newest first",
    pathParams: userPath,
    query: PAGE,
    success: W.UserTrades,
    errors: ["invalid_pubkey", "invalid_query"],
    fieldErrors: USER_FIELD
  },
  deposits: {
    ...T.account.deposits,
    summary: "Deposits, newest first",
    pathParams: userPath,
    query: PAGE,
    success: W.UserDeposits,
    errors: ["invalid_pubkey", "invalid_query"],
    fieldErrors: USER_FIELD
  },
  withdrawals: {
    ...T.account.withdrawals,
    summary: "Withdrawals, newest first",
    pathParams: userPath,
    query: PAGE,
    success: W.UserWithdrawals,
    errors: ["invalid_pubkey", "invalid_query"],
    fieldErrors: USER_FIELD
  }
} as const satisfies Group

const wallet = {
  withdraw: {
    ...T.wallet.withdraw,
    summary: "Withdraw to the linked wallet (signed; session cookie)",
    body: WithdrawRequest,
    auth: "cookie",
    success: W.WithdrawResponse,
    errors: [
      "trading_disabled",
      "rate_limited",
      ...SESSION,
      "invalid_shape",
      "session_user_mismatch",
      "invalid_amount",
      "invalid_signature_format",
      "invalid_signature",
      "engine_rejected",
      "engine_unreachable",
      "engine_binding_disabled"
    ],
    // Paused trading blocks withdrawals before any other check (SPEC §4, §8).
    preamble: ["trading_not_paused", "ip:ip_orders", "session"]
  },
  link: {
    ...T.wallet.link,
    summary: "Link the user key to an EVM wallet (both keys sign)",
    body: WalletLinkRequest,
    success: W.WalletLink,
    errors: ["rate_limited", "invalid_shape", "invalid_address", "stale_timestamp", "invalid_signature_format", "invalid_signature", "wallet_already_linked", "wallet_taken"],
    // Like registration, and no registration needed first (docs/decisions.md "Rate limits").
    preamble: ["ip:ip_wallet_link"]
  },
  get: { ...T.wallet.get, summary: "The user's linked wallet", pathParams: userPath, success: W.WalletLink, errors: ["invalid_pubkey", "not_found"], fieldErrors: USER_FIELD }
} as const satisfies Group

const fees = {
  fees: { ...T.fees.fees, summary: "Default, per-category and per-market fees", success: W.Fees, errors: [] },
  rewardsConfig: { ...T.fees.rewardsConfig, summary: "Rewards configuration", success: W.RewardsConfig, errors: [] },
  rewardsMe: {
    ...T.fees.rewardsMe,
    summary: "A maker's LP rewards: today's estimate, pending and paid days, totals",
    query: { user: UserKey },
    success: W.RewardsMe,
    errors: ["invalid_pubkey"],
    fieldErrors: USER_FIELD
  },
  rewardsWallet: {
    ...T.fees.rewardsWallet,
    summary: "Same as /v1/rewards/me, by user key or linked 0x wallet",
    pathParams: { wallet: Schema.String.annotations({ description: "user key, or a linked 0x wallet" }) },
    success: W.RewardsMe,
    errors: ["invalid_pubkey", "not_found"]
  },
  leaderboard: {
    ...T.fees.leaderboard,
    summary: "Paid LP rewards ranked over the last days",
    query: { days: Schema.optional(intQuery(1, 90)), limit: Schema.optional(intQuery(1, 200)) },
    success: W.Leaderboard,
    errors: ["invalid_query"]
  }
} as const satisfies Group

/** Every LP-bot route: refused while the LP surface is closed, then its per-IP bucket. */
const LP_GATE = ["lp_open", "ip:ip_lp"] as const

const lpBot = {
  sessionNew: {
    ...T["lp-bot"].sessionNew,
    summary: "A server-generated LP session key and the delegation message to sign",
    body: LpSessionNewRequest,
    auth: "cookie",
    success: W.LpSessionNew,
    errors: [...LP, "invalid_shape", ...SESSION, "user_mismatch", "scope_missing", "scope_forbidden", "expiry_out_of_range"],
    preamble: LP_GATE
  },
  delegate: {
    ...T["lp-bot"].delegate,
    summary: "Delegate the session key (scope orders), signed by the user key",
    body: LpDelegateRequest,
    success: W.LpDelegated,
    errors: [
      ...LP,
      "invalid_shape",
      "scope_missing",
      "scope_forbidden",
      "invalid_signature_format",
      "invalid_signature",
      "session_already_delegated",
      "nonce_stale",
      "not_found",
      ...LP_SESSION,
      "expiry_out_of_range",
      "db_error"
    ],
    preamble: LP_GATE
  },
  start: {
    ...T["lp-bot"].start,
    summary: "Start (or replace) the user's server-managed bot",
    body: LpStartRequest,
    auth: "cookie",
    success: W.LpStartResponse,
    errors: [...LP, "invalid_shape", ...SESSION, ...LP_SESSION, "not_found"],
    preamble: LP_GATE
  },
  stop: {
    ...T["lp-bot"].stop,
    summary: "Stop the bot (cancels its orders); optionally revoke the session",
    body: LpStopRequest,
    auth: "cookie",
    success: W.LpStopResponse,
    errors: [...LP, "invalid_shape", ...SESSION, "user_mismatch"],
    preamble: LP_GATE
  },
  status: {
    ...T["lp-bot"].status,
    summary: "The user's bot, its markets and sessions",
    query: { user: UserKey },
    success: W.LpStatus,
    errors: LP,
    preamble: LP_GATE,
    fieldErrors: USER_FIELD
  }
} as const satisfies Group

const feed = {
  ws: {
    ...T.feed.ws,
    summary: "The WebSocket feed (SPEC §6): upgrade this request; a plain GET answers 426",
    description:
      "Send `Connection: Upgrade` and `Upgrade: websocket`. Client frames are JSON objects (subscribe, unsubscribe, ping); " +
      "`x-websocket-frames` gives every client and server frame's shape and the close codes. No history is replayed: seed from REST.",
    success: { 101: empty(101).annotations({ description: "Switching Protocols: the connection is now the WebSocket feed" }) },
    errors: ["upgrade_required"],
    extensions: { "x-websocket-frames": WS_FRAMES }
  }
} as const satisfies Group

const meta = {
  openapi: { ...T.meta.openapi, summary: "This document", success: W.OpenApiDocument, errors: [] },
  docs: { ...T.meta.docs, summary: "Interactive API docs (Swagger UI, served offline)", success: Html, errors: [] }
} as const satisfies Group

/** The API's routes by group (tag), in the router's order: what src/api/app.ts implements. */
export const API = {
  session,
  orders,
  markets,
  account,
  wallet,
  fees,
  "lp-bot": lpBot,
  feed,
  operator,
  meta,
  ...FIRST_HOUR_ROUTES,
  ...OPS_ROUTES
} as const

/** The deposit service's routes (SPEC §4 "Deposit service"): what src/deposit/app.ts implements. */
export const DEPOSIT = {
  deposit: {
    nativeAddress: {
      ...DEPOSIT_TABLE.deposit.nativeAddress,
      summary: "The deposit address of an EVM wallet (derived, registered for watching)",
      pathParams: { user_address: EvmAddress },
      success: W.DepositAddress,
      errors: ["rate_limited", "invalid_address", "derivation_failed", "registration_failed"],
      preamble: ["ip:ip_deposit_address"]
    },
    progress: {
      ...DEPOSIT_TABLE.deposit.progress,
      summary: "Deposit progress of an EVM wallet: { data: DepositProgress }",
      pathParams: { user_address: EvmAddress },
      success: W.DepositProgressResponse,
      errors: ["invalid_pubkey"]
    },
    bridgeAddress: {
      ...DEPOSIT_TABLE.deposit.bridgeAddress,
      summary: "Retired (410); EVM addresses get 400 invalid_pubkey",
      pathParams: { pubkey: Schema.String },
      success: {},
      errors: ["invalid_pubkey", "retired"]
    }
  },
  meta: { openapi: { ...DEPOSIT_TABLE.meta.openapi, summary: "This document", success: W.OpenApiDocument, errors: [] } }
} as const satisfies Readonly<Record<string, Group>>

export interface ApiInfo {
  readonly title: string
  readonly description: string
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

/**
 * Fixes what the generator cannot be told: the error envelope replaces HttpApi's own decode
 * error (this server answers 400s with SPEC §7's envelope), the security schemes, and a
 * relative server (the document describes whichever host served it, behind TLS or not).
 */
const finish = (generated: Record<string, any>): Record<string, any> => {
  const spec = withoutPlaceholderIds(generated) as Record<string, any>
  for (const ops of Object.values(spec.paths as Record<string, Record<string, any>>)) {
    for (const op of Object.values(ops)) {
      for (const [status, res] of Object.entries(op.responses as Record<string, any>)) {
        const schema = res.content?.["application/json"]?.schema
        if (schema?.$ref === "#/components/schemas/HttpApiDecodeError") delete op.responses[status]
        if (schema?.anyOf === undefined) continue
        const kept = schema.anyOf.filter((s: any) => s.$ref !== "#/components/schemas/HttpApiDecodeError")
        if (kept.length === 0) delete op.responses[status]
        else res.content["application/json"].schema = kept.length === 1 ? kept[0] : { ...schema, anyOf: kept }
        if (kept.length === 1 && res.description === "The request did not match the expected schema") res.description = kept[0].description ?? "Error"
      }
      if (op.security?.length === 0) delete op.security
      if (op.parameters?.length === 0) delete op.parameters
    }
  }
  for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete spec.components.schemas[name]
  spec.components.securitySchemes = {
    session: { type: "apiKey", in: "cookie", name: "service_oracle_session" },
    operator: { type: "http", scheme: "bearer" }
  }
  delete spec.security
  spec.servers = [{ url: "/" }]
  return spec
}

const declare = <const Id extends string>(id: Id, info: ApiInfo, groups: Readonly<Record<string, Group>>) => {
  let api: any = HttpApi.make(id)
  for (const [tag, routes] of Object.entries(groups)) {
    let group: any = HttpApiGroup.make(tag)
    for (const [name, spec] of Object.entries(routes)) group = group.add(toEndpoint(name, spec))
    api = api.add(group)
  }
  return api.annotateContext(
    OpenApi.annotations({ title: info.title, version: "1.0.0", description: info.description, transform: finish })
  ) as HttpApi.HttpApi.Any
}

// Built at first use, not at import: building the HttpApi (every endpoint's schemas) took ~80 ms
// of each process's start, and only the OpenAPI documents, the docs page and the checks need it.
let apiOnce: HttpApi.HttpApi.Any | undefined
let depositApiOnce: HttpApi.HttpApi.Any | undefined

/** The service's API as an HttpApi (for the OpenAPI document, the docs page and the tests' checks). */
export const declaredApi = (): HttpApi.HttpApi.Any => (apiOnce ??= declare(
  "twinbook",
  { title: "twinbook API", description: "Prediction-market order book (SPEC.md). Operator routes and fields marked as extensions go beyond SPEC." },
  API
))

/** The deposit service's API as an HttpApi. */
export const declaredDepositApi = (): HttpApi.HttpApi.Any => (depositApiOnce ??= declare(
  "twinbook-deposit",
  { title: "twinbook deposit service", description: "Per-wallet deposit addresses and deposit progress (SPEC §4 \"Deposit service\")." },
  DEPOSIT
))
