// How one route is declared: path, typed path and query parameters, body, every
// success response and every error code, turned into an `@effect/platform`
// HttpApiEndpoint. Error codes are grouped by their status (src/domain/errors.ts) into
// one envelope schema per status, so a code's status is never written twice.
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ParseResult, Schema } from "effect"
import { codesWithStatus, ERROR_STATUS, type ErrorCode, errorEnvelope } from "../../domain/errors.ts"
import type { RouteLine } from "./table.ts"

export type Auth = "cookie" | "admin"

/** Per-address buckets a route charges (their names are the 429's detail; src/api/steps.ts has their sizes). */
export type IpBucket = "ip_orders" | "ip_lp" | "ip_register" | "ip_wallet_link" | "faucet_ip" | "ip_deposit_address"
/** Per-user buckets, charged to the session user (so after "session"). */
export type UserBucket = "wallet_orders" | "faucet_user"

/**
 * What the router does before a route's handler, in the declared order (src/api/steps.ts
 * implements each): charge a bucket, require the session cookie (its user is handed to the
 * handler) or the operator token, or refuse while a surface is closed.
 */
export type Step =
  | "session"
  | "admin"
  | "trading_open"
  | "trading_not_paused"
  | "lp_open"
  | "dev_credit"
  | "faucet"
  | `ip:${IpBucket}`
  | `user:${UserBucket}`

export interface RouteSpec extends RouteLine {
  readonly summary: string
  readonly description?: string
  readonly pathParams?: Schema.Struct.Fields
  readonly query?: Schema.Struct.Fields
  readonly body?: Schema.Schema.Any
  /** The 200 body, or responses by status (an HTML page, a 202, an upgrade's 101). */
  readonly success: Schema.Schema.Any | Readonly<Record<number, Schema.Schema.Any>>
  /** Every error code the route itself can answer (the common ones are added below). */
  readonly errors: ReadonlyArray<ErrorCode>
  readonly auth?: Auth
  /** Answered by every sequencer, leader or not (the ops routes): never `not_leader`. */
  readonly alwaysServed?: true
  /** Vendor extensions of the OpenAPI operation (the WebSocket frames). */
  readonly extensions?: Readonly<Record<string, unknown>>
  // ---- read by the router only (src/api/serve.ts): the order of the checks a handler may rely on ----
  /** Run before the body is read (a refused request costs no parsing). */
  readonly preamble?: ReadonlyArray<Step>
  /** The code of a body the schema refuses (default `invalid_shape`). */
  readonly bodyError?: ErrorCode
  /** A hand decoder for a hot route's body: the schema's value for a well-formed body, else undefined (src/domain/schemas.ts decodeBody). */
  readonly fastBody?: (body: unknown) => unknown
  /** The code of a refused body, path or query field, by field name (default: `bodyError` for the body, `invalid_query` for parameters). */
  readonly fieldErrors?: Readonly<Record<string, ErrorCode>>
}

/** A declared group: its routes by name (the operation's name in the HttpApi). */
export type Group = Readonly<Record<string, RouteSpec>>

/** Answered by any route: an unexpected failure. */
const ANY_ROUTE: ReadonlyArray<ErrorCode> = ["internal_error"]
/** Answered by any route but the ops ones in cluster mode: a sequencer that does not lead (docs/cluster.md). */
const LEADER_ONLY: ReadonlyArray<ErrorCode> = ["not_leader"]
/** Answered by any POST before its handler runs: the body's type, size and JSON (src/api/app.ts, node-server.ts). */
const ANY_POST: ReadonlyArray<ErrorCode> = ["invalid_json", "unsupported_media_type", "payload_too_large"]

/** The operationId the hand table used (`getV1MarketsIdBook`), kept so generated clients stay stable. */
export const operationId = (method: string, path: string): string =>
  `${method.toLowerCase()}${path.replace(/:(\w+)/g, "{$1}").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`

/** Every error code a route answers with: its own and the common ones, without repeats. */
export const routeErrorCodes = (spec: RouteSpec): ErrorCode[] => [
  ...new Set([...spec.errors, ...(spec.method === "POST" ? ANY_POST : []), ...ANY_ROUTE, ...(spec.alwaysServed === true ? [] : LEADER_ONLY)])
]

const isSchema = (u: unknown): u is Schema.Schema.Any => Schema.isSchema(u)

/** Annotates a query parameter whose empty value (`?limit=`) means absent, as the integers' did before decoding was declared. */
export const EmptyIsAbsent: unique symbol = Symbol.for("twinbook/EmptyIsAbsent")

/**
 * A query parameter carrying an integer in [min, max], documented as an integer: decimal digits
 * only (no `1e3`, `1.0` or spaces), a safe integer, in range; the router hands the number over.
 * Empty is absent (the default applies).
 */
export const intQuery = (min: number, max?: number) => {
  const hi = max ?? Number.MAX_SAFE_INTEGER
  return Schema.transformOrFail(Schema.String, Schema.Number, {
    strict: true,
    decode: (s, _o, ast) => {
      if (!/^-?\d+$/.test(s)) return ParseResult.fail(new ParseResult.Type(ast, s, "expected an integer"))
      const n = Number(s)
      return Number.isSafeInteger(n) && n >= min && n <= hi ? ParseResult.succeed(n) : ParseResult.fail(new ParseResult.Type(ast, s, `must be between ${min} and ${hi}`))
    },
    encode: (n) => ParseResult.succeed(String(n))
  }).annotations({ jsonSchema: { type: "integer", minimum: min, ...(max === undefined ? {} : { maximum: max }) }, [EmptyIsAbsent]: true })
}

/** A query flag: `true` or `false`. */
export const boolQuery = Schema.Literal("true", "false")

export const toEndpoint = (name: string, spec: RouteSpec): HttpApiEndpoint.HttpApiEndpoint.AnyWithProps => {
  // The HttpApi is data for documents and checks, not a typed server (src/api/serve.ts serves): the builder's types are not needed.
  let e: any = spec.method === "GET" ? HttpApiEndpoint.get(name, spec.path) : HttpApiEndpoint.post(name, spec.path)
  if (spec.pathParams !== undefined) e = e.setPath(Schema.Struct(spec.pathParams))
  if (spec.query !== undefined) e = e.setUrlParams(Schema.Struct(spec.query))
  if (spec.body !== undefined) e = e.setPayload(spec.body)
  const successes: Record<number, Schema.Schema.Any> = isSchema(spec.success) ? { 200: spec.success } : spec.success
  for (const [status, schema] of Object.entries(successes)) e = e.addSuccess(schema, { status: Number(status) })
  const codes = routeErrorCodes(spec)
  for (const status of [...new Set(codes.map((c) => ERROR_STATUS[c]))].sort()) {
    const [first, ...rest] = codesWithStatus(codes, status)
    e = e.addError(errorEnvelope([first!, ...rest]).annotations({ description: `Error envelope (SPEC §7): ${[first, ...rest].join(", ")}` }), { status })
  }
  e = e.annotate(OpenApi.Identifier, operationId(spec.method, spec.path)).annotate(OpenApi.Summary, spec.summary)
  if (spec.description !== undefined) e = e.annotate(OpenApi.Description, spec.description)
  const security = spec.auth === "cookie" ? [{ session: [] }] : spec.auth === "admin" ? [{ operator: [] }] : undefined
  if (security !== undefined || spec.extensions !== undefined) e = e.annotate(OpenApi.Override, { ...(security === undefined ? {} : { security }), ...spec.extensions })
  return e
}

/** An HTML page's response (text/html). */
export const Html = HttpApiSchema.Text({ contentType: "text/html" })

/** A response with no body at `status` (the WebSocket upgrade's 101). */
export const empty = (status: number) => HttpApiSchema.Empty(status)
