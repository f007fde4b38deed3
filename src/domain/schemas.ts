// Wire schemas of request bodies (Effect Schema): one definition validates
// requests and generates the OpenAPI document.
import { Either, ParseResult, Schema } from "effect"
import { ApiError, type ErrorCode } from "./errors.ts"

const Int = Schema.Int
const Bps = Int.pipe(Schema.between(0, 10_000))
/** Nonces start at 1: the engine's "previous nonce" of a new user is 0. */
const Nonce = Int.pipe(Schema.between(1, Number.MAX_SAFE_INTEGER))

export const OrderRequest = Schema.Struct({
  market_id: Schema.String.pipe(Schema.nonEmptyString(), Schema.maxLength(128)),
  user: Schema.String,
  side: Schema.Literal("buy", "sell"),
  outcome: Schema.Literal("yes", "no"),
  price: Bps,
  size: Int.pipe(Schema.between(1, 100_000_000)),
  /** Default `gtc` when omitted (a decision: SPEC leaves it open). */
  order_type: Schema.optional(Schema.Literal("gtc", "post_only", "ioc", "fok")),
  signature: Schema.String,
  nonce: Nonce,
  builder_api_key: Schema.optional(Schema.String.pipe(Schema.maxLength(128))),
  stp: Schema.optional(Schema.Literal("cancel_resting", "cancel_taking", "cancel_both")),
  /** Extension: signed by this delegated LP session key of `user` (the server-managed bot) instead of the user key. */
  session_pub: Schema.optional(Schema.String)
}).annotations({ identifier: "OrderRequest" })

const ORDER_TYPES: ReadonlySet<unknown> = new Set(["gtc", "post_only", "ioc", "fok"])
const STPS: ReadonlySet<unknown> = new Set(["cancel_resting", "cancel_taking", "cancel_both"])
const intBetween = (v: unknown, min: number, max: number): v is number => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max

/**
 * OrderRequest decided by hand for decodeBody (Effect Schema's decode was ~5% of a signed
 * order's main-thread time): the decoded value of a body every field of which is right, else
 * undefined. Keys come out in the schema's order, absent optional ones absent, as the schema gives.
 */
export const orderRequestFast = (body: unknown): Schema.Schema.Type<typeof OrderRequest> | undefined => {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined
  const b = body as Record<string, unknown>
  const { market_id, user, side, outcome, price, size, order_type, signature, nonce, builder_api_key, stp, session_pub } = b
  if (typeof market_id !== "string" || market_id.length < 1 || market_id.length > 128) return undefined
  if (typeof user !== "string" || typeof signature !== "string") return undefined
  if ((side !== "buy" && side !== "sell") || (outcome !== "yes" && outcome !== "no")) return undefined
  if (!intBetween(price, 0, 10_000) || !intBetween(size, 1, 100_000_000) || !intBetween(nonce, 1, Number.MAX_SAFE_INTEGER)) return undefined
  if (order_type !== undefined && !ORDER_TYPES.has(order_type)) return undefined
  if (builder_api_key !== undefined && (typeof builder_api_key !== "string" || builder_api_key.length > 128)) return undefined
  if (stp !== undefined && !STPS.has(stp)) return undefined
  if (session_pub !== undefined && typeof session_pub !== "string") return undefined
  const out: Record<string, unknown> = { market_id, user, side, outcome, price, size }
  if ("order_type" in b) out.order_type = order_type
  out.signature = signature
  out.nonce = nonce
  if ("builder_api_key" in b) out.builder_api_key = builder_api_key
  if ("stp" in b) out.stp = stp
  if ("session_pub" in b) out.session_pub = session_pub
  return out as Schema.Schema.Type<typeof OrderRequest>
}

export const CancelRequest = Schema.Struct({
  order_id: Int.pipe(Schema.greaterThanOrEqualTo(1)),
  signature: Schema.optional(Schema.String),
  nonce: Schema.optional(Schema.Number)
}).annotations({ identifier: "CancelRequest" })

export const CancelAllRequest = Schema.Struct({
  signature: Schema.optional(Schema.String),
  nonce: Schema.optional(Schema.Number),
  /** Extension: limit to one market. */
  market_id: Schema.optional(Schema.String)
}).annotations({ identifier: "CancelAllRequest" })

export const RegisterRequest = Schema.Struct({
  user: Schema.String,
  name: Schema.String.pipe(Schema.nonEmptyString(), Schema.maxLength(64)),
  signature: Schema.String,
  timestamp: Int
}).annotations({ identifier: "RegisterRequest" })

const Category = Schema.Literal("BTC", "ETH", "DOGE", "SOL", "XRP", "BNB", "Sports", "Politics", "Culture")

export const CreateEventRequest = Schema.Struct({
  question: Schema.String.pipe(Schema.nonEmptyString(), Schema.maxLength(300)),
  category: Category,
  slug: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{0,79}$/)),
  image: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  tags: Schema.optional(Schema.Array(Schema.String)),
  expiry: Int.pipe(Schema.greaterThanOrEqualTo(0)),
  end_date: Schema.optional(Int),
  fee_bps: Schema.optional(Int.pipe(Schema.between(0, 1_000))),
  neg_risk: Schema.optional(Schema.Boolean),
  outcomes: Schema.optional(
    Schema.Array(
      Schema.Struct({
        label: Schema.String.pipe(Schema.nonEmptyString(), Schema.maxLength(100)),
        slug: Schema.optional(Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{0,79}$/))),
        question: Schema.optional(Schema.String)
      })
    ).pipe(Schema.maxItems(50))
  ),
  resolution_metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  resolution_source: Schema.optional(Schema.String)
}).annotations({ identifier: "CreateEventRequest" })

export const MarketStatusRequest = Schema.Struct({
  status: Schema.Literal("active", "halted", "resolved"),
  winning_outcome: Schema.optional(Schema.Literal("yes", "no"))
}).annotations({ identifier: "MarketStatusRequest" })

export const SurfaceRequest = Schema.Struct({
  state: Schema.Literal("open", "closed", "paused")
}).annotations({ identifier: "SurfaceRequest" })

export const FeesRequest = Schema.Struct({
  market_id: Schema.optional(Schema.String),
  taker_fee_bps: Schema.optional(Int.pipe(Schema.between(0, 1_000))),
  maker_rebate_bps: Schema.optional(Int.pipe(Schema.between(0, 1_000)))
}).annotations({ identifier: "FeesRequest" })

export const BuilderFeeRequest = Schema.Struct({
  fee_bps: Int.pipe(Schema.between(0, 1_000)),
  enabled: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "BuilderFeeRequest" })

export const WalletLinkRequest = Schema.Struct({
  user: Schema.String,
  wallet: Schema.String,
  timestamp: Int,
  /** Ed25519 by the user key over the link message, hex without 0x. */
  signature: Schema.String,
  /** EIP-191 personal_sign by the wallet over the same message, 0x-hex (65 bytes). */
  evm_signature: Schema.String
}).annotations({ identifier: "WalletLinkRequest" })

export const WithdrawRequest = Schema.Struct({
  user: Schema.String,
  /** micro-USDC, a positive integer (a JSON number or a decimal string); 400 invalid_amount otherwise. */
  amount_micro: Schema.Unknown.annotations({
    jsonSchema: { oneOf: [{ type: "integer", minimum: 1 }, { type: "string", pattern: "^[0-9]+$" }], description: "micro-USDC, positive" }
  }),
  /** Per-user withdraw nonce, strictly increasing; checked by the engine. */
  nonce: Int.pipe(Schema.between(1, Number.MAX_SAFE_INTEGER)),
  signature: Schema.String
}).annotations({ identifier: "WithdrawRequest" })

export const BindingRequest = Schema.Struct({
  withdraw: Schema.Literal("up", "unreachable", "disabled")
}).annotations({ identifier: "BindingRequest" })

export const CreditRequest = Schema.Struct({
  user: Schema.String,
  amount_micro: Int.pipe(Schema.between(1, 1_000_000_000_000))
}).annotations({ identifier: "CreditRequest" })

/** "orders" (or ["orders"]): the route checks it, so the error can say scope_missing or scope_forbidden. */
const ScopeField = Schema.Unknown.annotations({ jsonSchema: { oneOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] } })

/** `scope` is checked by the route (scope_missing / scope_forbidden), so it is loosely typed here. */
export const LpSessionNewRequest = Schema.Struct({
  user: Schema.String,
  expires_in_secs: Int,
  scope: Schema.optional(ScopeField)
}).annotations({ identifier: "LpSessionNewRequest" })

export const LpDelegateRequest = Schema.Struct({
  user: Schema.String,
  session_pub: Schema.String,
  expires_at_unix: Int.pipe(Schema.between(0, Number.MAX_SAFE_INTEGER)),
  nonce: Nonce,
  /** The user key's Ed25519 signature over message_bytes_hex (docs/api.md "LP bot"), hex without 0x. */
  signature: Schema.String,
  scope: Schema.optional(ScopeField)
}).annotations({ identifier: "LpDelegateRequest" })

export const LpStartRequest = Schema.Struct({
  user: Schema.String,
  session_pub: Schema.String,
  /** 1..20 market ids or slugs; checked by the route so the error names the bad element. */
  markets: Schema.Unknown.annotations({ jsonSchema: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 20 } }),
  /** The wire spec of src/lp/strategy-spec.ts (docs/lp.md "Wire form"). */
  strategy: Schema.Unknown.annotations({ jsonSchema: { type: "object", description: "strategy spec: docs/lp.md \"Wire form\"" } })
}).annotations({ identifier: "LpStartRequest" })

export const LpStopRequest = Schema.Struct({
  user: Schema.String,
  revoke_session: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LpStopRequest" })

/**
 * `<field path>: <problem>` for the first issue of a failed decode (a problem that already names
 * its field is given as is). Formatting prints the offending value, which must never turn a 400
 * into a 500: if it throws (a pathological value), the field's path is still named.
 */
export const describeIssue = (error: ParseResult.ParseError): string => {
  try {
    const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    if (first === undefined) return "invalid body"
    const field = first.path.join(".") || "body"
    return first.message.startsWith(`${field} `) ? first.message : `${field}: ${first.message}`
  } catch {
    return `${firstPath(error.issue) || "body"}: invalid value`
  }
}

/** The path to the first leaf issue, walked without formatting any value. */
const firstPath = (issue: ParseResult.ParseIssue): string => {
  const parts: string[] = []
  let at: ParseResult.ParseIssue | undefined = issue
  for (let hops = 0; at !== undefined && hops < 64; hops++) {
    switch (at._tag) {
      case "Pointer":
        parts.push(...(Array.isArray(at.path) ? at.path : [at.path]).map(String))
        at = at.issue
        break
      case "Composite":
        at = Array.isArray(at.issues) ? at.issues[0] : (at.issues as ParseResult.ParseIssue)
        break
      case "Refinement":
      case "Transformation":
        at = at.issue
        break
      default:
        at = undefined
    }
  }
  return parts.join(".")
}

/**
 * Decodes a body or throws the given 400 code (or the code `codeOf` gives the first refused
 * field) with a short description of the first problem. `fast`, for a hot route, decides the
 * common well-formed body by hand and gives undefined for anything else, which the schema then
 * decides (its answer and its error): it may only accept what the schema accepts, with the same
 * value (test/api/order-decode-fast.test.ts).
 */
export const decodeBody = <A, I>(schema: Schema.Schema<A, I, never>, code: ErrorCode, fast?: (body: unknown) => A | undefined, codeOf?: (field: string) => ErrorCode) => {
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })
  return (body: unknown): A => {
    const quick = fast?.(body)
    if (quick !== undefined) return quick
    const result = decode(body)
    if (Either.isRight(result)) return result.right
    throw new ApiError(codeOf === undefined ? code : codeOf(firstField(result.left)), describeIssue(result.left))
  }
}

/** The top-level field of a decode's first issue ("" when none). */
const firstField = (error: ParseResult.ParseError): string => firstPath(error.issue).split(".")[0] ?? ""
