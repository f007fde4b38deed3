// Client-side errors: SPEC §7's envelope `{ error, detail?, retry_after? }` as one tagged
// value, the HTTP status kept beside it, plus the 429 wait and words for people.
import type { ErrorBody } from "./types.ts"

export interface ApiResult<T = any> {
  readonly status: number
  /**
   * The parsed JSON body: `T` on 2xx; SPEC §7's envelope otherwise, whose fields are
   * typed optional on every body so `res.body.error` reads uniformly (or use `unwrap`).
   */
  readonly body: T & Partial<ErrorBody>
  readonly headers: { get(name: string): string | null }
}

/** A non-2xx answer of the API, tagged so callers (and a later Effect layer) can match on it. */
export class ApiFailure extends Error {
  readonly _tag = "ApiFailure" as const
  constructor(
    readonly status: number,
    /** SPEC §7's machine code (`error`), e.g. `nonce_stale`. */
    readonly code: string,
    readonly detail: string | undefined,
    /** Seconds to wait before retrying, from `retry_after` or `Retry-After` (429), else null. */
    readonly retryAfterSec: number | null
  ) {
    super(`${status} ${code}${detail === undefined ? "" : `: ${detail}`}`)
    this.name = "ApiFailure"
  }
}

export const isOk = (res: ApiResult): boolean => res.status >= 200 && res.status < 300

/** `retry_after` of a 429 body, else its `Retry-After` header, else null. */
export const retryAfterSec = (res: ApiResult): number | null => {
  const fromBody = (res.body as Partial<ErrorBody> | null)?.retry_after
  if (typeof fromBody === "number" && Number.isFinite(fromBody) && fromBody >= 0) return fromBody
  const header = res.headers.get("retry-after")
  const n = header === null ? Number.NaN : Number(header)
  return Number.isFinite(n) && n >= 0 ? n : null
}

/** The failure of a non-2xx result (SPEC §7: any non-2xx is a failure), else null. */
export const failureOf = (res: ApiResult): ApiFailure | null => {
  if (isOk(res)) return null
  const b = res.body as Partial<ErrorBody> | null
  const code = typeof b?.error === "string" ? b.error : `http_${res.status}`
  const detail = typeof b?.detail === "string" ? b.detail : undefined
  return new ApiFailure(res.status, code, detail, retryAfterSec(res))
}

/** The body of a 2xx result; throws the ApiFailure otherwise. */
export const unwrap = <T>(res: ApiResult<T>): T => {
  const failure = failureOf(res)
  if (failure !== null) throw failure
  return res.body
}

export interface RetryOptions {
  /** Attempts in all, the first included (default 3). */
  readonly attempts?: number
  /** Waits `ms`; default setTimeout. The simulator passes its virtual clock's sleep. */
  readonly sleep?: (ms: number) => Promise<void>
  /** Wait when a 429 carries no retry_after (default 1 s). */
  readonly fallbackMs?: number
}

const timerSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs `call` again after `retry_after` while it answers 429 rate_limited, at most
 * `attempts` times; returns the last result. Only 429 is retried: it consumed nothing
 * (a refused order keeps its nonce free), whereas other failures need a decision.
 */
export const withRetry = async <T>(call: () => Promise<ApiResult<T>>, opts: RetryOptions = {}): Promise<ApiResult<T>> => {
  const attempts = opts.attempts ?? 3
  const sleep = opts.sleep ?? timerSleep
  let res = await call()
  for (let i = 1; i < attempts && res.status === 429; i++) {
    const wait = retryAfterSec(res)
    await sleep(wait === null ? (opts.fallbackMs ?? 1000) : wait * 1000)
    res = await call()
  }
  return res
}

/** What each code means, in words a person reads (SPEC §7 and docs/api.md's extensions). */
const MESSAGES: Readonly<Record<string, string>> = {
  invalid_json: "The request was not valid JSON.",
  invalid_shape: "The request is missing a field or has one of the wrong form.",
  invalid_order_shape: "The order is malformed (price 0–10000 bps, size at least 1, known type).",
  invalid_order: "Unknown sort order for the market list.",
  invalid_query: "A query parameter is malformed.",
  invalid_interval: "Candle interval must be 1m, 5m, 1h or 1d.",
  invalid_pubkey: "That is not a valid public key.",
  invalid_address: "That is not a valid EVM address (0x followed by 40 hex characters).",
  stale_timestamp: "Your clock is more than 60 seconds off the server's; fix the device clock and retry.",
  invalid_amount: "The amount must be a positive whole number of micro-USDC.",
  invalid_signature_format: "The signature is not 64 bytes of hex.",
  invalid_signature: "The signature does not verify for this key.",
  scope_missing: "The session scope is missing.",
  scope_forbidden: "A bot session may only place orders.",
  expiry_out_of_range: "The delegation must last between 5 minutes and 30 days.",
  session_user_mismatch: "You are signed in as another user.",
  unauthorized: "You are not signed in (or the session expired): sign in again.",
  trading_disabled: "Trading is closed right now.",
  lp_disabled: "Liquidity providing is closed right now.",
  session_revoked: "That bot session was revoked.",
  session_expired: "That bot session expired.",
  user_mismatch: "That belongs to another user.",
  not_found: "Not found.",
  session_not_delegated: "The bot session has not been delegated yet.",
  session_already_delegated: "That bot session was already delegated.",
  nonce_stale: "The order number was already used; place the order again.",
  engine_rejected: "The exchange refused it.",
  rate_limited: "Too many requests; wait a moment.",
  would_cross: "A post-only order would trade immediately; pick a price that rests.",
  insufficient_balance: "Not enough available balance.",
  insufficient_shares: "You do not hold enough shares to sell.",
  fok_unfilled: "Fill-or-kill could not fill entirely; nothing was traded.",
  dust_order: "The order is worth less than 1 cent.",
  market_halted: "This market is halted.",
  market_resolved: "This market is resolved.",
  unknown_builder: "Unknown builder API key.",
  order_not_found: "That order is no longer open.",
  order_rejected: "The exchange refused the order.",
  wallet_already_linked: "Your account is already linked to another wallet.",
  wallet_taken: "That wallet is linked to another account.",
  forbidden_origin: "Requests from this site are not allowed.",
  payload_too_large: "The request is too large.",
  registration_failed: "The deposit address could not be registered for watching; retry (do not send funds yet).",
  derivation_failed: "The deposit address could not be derived; retry.",
  engine_unreachable: "The exchange cannot be reached; retry later.",
  engine_binding_disabled: "Withdrawals are temporarily unavailable.",
  db_error: "A storage error occurred; retry.",
  internal_error: "Something went wrong on the server."
}

/** A sentence for people: the code's meaning, then the server's detail when it adds something. */
export const describeFailure = (f: Pick<ApiFailure, "code" | "detail" | "status" | "retryAfterSec">): string => {
  const base = MESSAGES[f.code] ?? `Request failed (${f.status} ${f.code}).`
  const wait = f.code === "rate_limited" && f.retryAfterSec !== null ? ` Retry in ${f.retryAfterSec} s.` : ""
  const detail = f.detail === undefined || f.detail === "" ? "" : ` (${f.detail})`
  return `${base}${wait}${detail}`
}
