// The error catalogue: every client-facing code and its HTTP status (SPEC §7),
// plus twinbook's extensions. Errors travel as tagged values and are mapped to
// the `{ error, detail? }` envelope in exactly one place (`errorResponse`, src/api/http.ts);
// the API declaration (src/api/declaration) describes that envelope from this catalogue.
import { Schema } from "effect"

export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_shape: 400,
  invalid_order_shape: 400,
  invalid_order: 400,
  invalid_interval: 400,
  invalid_pubkey: 400,
  invalid_address: 400,
  stale_timestamp: 400,
  invalid_amount: 400,
  invalid_signature_format: 400,
  scope_missing: 400,
  scope_forbidden: 400,
  expiry_out_of_range: 400,
  invalid_query: 400,
  // Requests node:http cannot read as HTTP/1.1 (src/api/node-server.ts).
  bad_request: 400,
  request_timeout: 408,
  headers_too_large: 431,
  invalid_signature: 403,
  session_user_mismatch: 403,
  trading_disabled: 403,
  lp_disabled: 403,
  session_revoked: 403,
  session_expired: 403,
  user_mismatch: 403,
  unauthorized: 401,
  forbidden_origin: 403,
  not_found: 404,
  session_not_delegated: 404,
  method_not_allowed: 405,
  session_already_delegated: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  upgrade_required: 426,
  nonce_stale: 422,
  engine_rejected: 422,
  // Order rejections by the engine (extension: SPEC leaves these codes open).
  would_cross: 422,
  insufficient_balance: 422,
  insufficient_shares: 422,
  fok_unfilled: 422,
  dust_order: 422,
  market_halted: 422,
  market_resolved: 422,
  unknown_builder: 422,
  order_rejected: 422,
  order_not_found: 404,
  event_exists: 409,
  wallet_already_linked: 409,
  wallet_taken: 409,
  retired: 410,
  rate_limited: 429,
  db_error: 500,
  derivation_failed: 500,
  internal_error: 500,
  engine_unreachable: 502,
  // Extension: the development faucet could not mint on the embedded chain (src/usecase/faucet.ts).
  faucet_failed: 502,
  engine_binding_disabled: 503,
  registration_failed: 503,
  // Extension (cluster mode, docs/cluster.md): this sequencer is not (or no longer) the leader; retry after `retry_after` s.
  not_leader: 503
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** The wire's error body (SPEC: `{ error, detail? }`; `retry_after` and readiness's checks are extensions). */
export interface ErrorBody {
  readonly error: string
  readonly detail?: string
  readonly [extra: string]: unknown
}

/**
 * The one constructor of the error envelope's body (the declaration's Schema is `errorEnvelope` below): every error answer of the API, the deposit service,
 * the standby, the raw-socket answers of node-server and the web app's server is built here
 * (test/api/error-body.test.ts holds the source to that). `not_ready` is readiness's own code
 * (docs/metrics.md), outside the error catalogue because no route throws it.
 */
export const errorBody = (code: ErrorCode | "not_ready", detail?: string, extra: Readonly<Record<string, unknown>> = {}): ErrorBody => ({
  error: code,
  ...(detail === undefined ? {} : { detail }),
  ...extra
})

/** A client-facing failure: a code from the catalogue and an optional detail (≤ 200 chars on the wire). */
export class ApiError {
  readonly _tag = "ApiError"
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    /** Seconds, for `rate_limited` and `not_leader` only. */
    readonly retryAfterSec?: number
  ) {}

  get status(): number {
    return ERROR_STATUS[this.code]
  }
}

export const fail = (code: ErrorCode, detail?: string): never => {
  throw new ApiError(code, detail)
}

/** The codes of a list that answer with `status`, in the list's order. */
export const codesWithStatus = (codes: ReadonlyArray<ErrorCode>, status: number): ErrorCode[] => codes.filter((c) => ERROR_STATUS[c] === status)

/**
 * The wire envelope of these codes (SPEC §7): `{ error, detail?, retry_after? }`, `error` one of
 * `codes`. The declaration gives each route one per status; `retry_after` comes with `rate_limited` and `not_leader` only.
 */
export const errorEnvelope = (codes: readonly [ErrorCode, ...ErrorCode[]]) =>
  Schema.Struct({
    error: Schema.Literal(...codes),
    detail: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(200)), { exact: true }),
    ...(codes.includes("rate_limited") || codes.includes("not_leader") ? { retry_after: Schema.optionalWith(Schema.Int, { exact: true }) } : {})
  })
