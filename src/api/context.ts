// What every route handler is handed: the exchange, the injected clock, the
// session secret, configuration, limiters and the edge cache.
import { createHash, createHmac, timingSafeEqual } from "node:crypto"
import { readCookie, SESSION_COOKIE, verifySessionCookie } from "../auth/session-cookie.ts"
import type { SessionProofs } from "../auth/session-proofs.ts"
import { ApiError } from "../domain/errors.ts"
import type { ClockWatch } from "../time/clock.ts"
import type { EdgeCache } from "./cache.ts"
import type { HttpRequest } from "./http.ts"
import type { RewardsConfig, UseCaseCtx } from "../usecase/context.ts"
import type { FaucetAccess } from "../usecase/faucet.ts"
import { type BucketSpec, DEFAULT_MAX_BUCKETS, LIMITS } from "../usecase/rate-limit.ts"

// Defined below the routes (the LP bot and the use cases need them too); re-exported for the routes.
export { DEFAULT_REWARDS_MIN_SIZE_CONTRACTS, nowSec, requireUserKey, type RewardsConfig, rewardsParams } from "../usecase/context.ts"

/**
 * Limits on anonymous work (extensions beside SPEC §8; docs/api.md "Limits"), per address and,
 * for the WebSocket feed, in total (many addresses cost an attacker little).
 * Registrations cost a journal record and an fsync each and keys cost nothing to make;
 * WebSocket connections and subscriptions cost memory and fan-out work, queued frames memory.
 */
export interface AbuseLimits {
  /** `POST /v1/builders/register` per source address per minute (429 beyond). */
  readonly registrationsPerMinute: number
  /** Open WebSocket connections per source address (a new one beyond is closed with 1008). */
  readonly wsConnectionsPerAddress: number
  /** Channels one WebSocket connection may hold (a subscribe beyond closes it with 1008). */
  readonly wsSubscriptionsPerConnection: number
  /** Rate-limit buckets held at most, all names and keys together (src/usecase/rate-limit.ts). */
  readonly rateLimitBuckets: number
  /** Open WebSocket connections in total (a new one beyond is closed with 1013). */
  readonly wsConnections: number
  /** Channels all WebSocket connections together may hold (a subscribe beyond closes its connection with 1013). */
  readonly wsSubscriptions: number
  /** Bytes queued for all WebSocket clients together (beyond, the longest queues are closed with 1013 as slow consumers). */
  readonly wsBufferedBytes: number
}

/** Sized for a 2-core box: a full storm is at most ~1,000 frames per event-loop turn (docs/api.md "Limits"). */
export const DEFAULT_ABUSE_LIMITS: AbuseLimits = {
  registrationsPerMinute: 30,
  wsConnectionsPerAddress: 50,
  wsSubscriptionsPerConnection: 500,
  wsConnections: 1_000,
  wsSubscriptions: 10_000,
  wsBufferedBytes: 32 * 1024 * 1024,
  rateLimitBuckets: DEFAULT_MAX_BUCKETS
}

export interface AppConfig {
  readonly adminToken: string
  readonly corsOrigins: ReadonlySet<string>
  readonly secureCookies: boolean
  /** Operator credit endpoint (a development faucet until deposits arrive on chain). */
  readonly devCredit: boolean
  readonly rewards: RewardsConfig
  /** DEFAULT_ABUSE_LIMITS where absent. */
  readonly limits?: Partial<AbuseLimits>
}

export const abuseLimits = (config: AppConfig): AbuseLimits => ({ ...DEFAULT_ABUSE_LIMITS, ...config.limits })

/**
 * The per-address bucket of an anonymous journal write: registration and wallet link, each a
 * bucket of its own at `registrationsPerMinute`. Charged on every attempt, before any check: a
 * success is a journal record, a failure a signature verification.
 */
export const anonymousWriteLimit = (config: AppConfig, name: "ip_register" | "ip_wallet_link"): BucketSpec => ({
  name,
  limit: abuseLimits(config).registrationsPerMinute,
  windowSec: 60
})

/** A route's context: the use cases' (exchange, verifier, limiter, secret, binding) and the transport's. */
export interface AppCtx extends UseCaseCtx {
  /** The wall clock. Read only through `wallSec` (signed client timestamps) and the exchange's stamp (docs/time.md). */
  readonly nowMs: () => number
  /** The monotonic clock: durations only (limits, TTLs). */
  readonly monoMs: () => number
  /** Wall-clock step detection (operator status); absent in bare test contexts. */
  readonly clockWatch?: ClockWatch
  readonly config: AppConfig
  readonly cache: EdgeCache
  /** Notable security events (refused operator tokens, limits hit), one object each; never given a secret. */
  readonly log?: (event: Readonly<Record<string, unknown>>) => void
  /** The development faucet, or why there is none (src/usecase/faucet.ts); absent: none. */
  readonly faucet?: FaucetAccess
  /** Refuses a route before its handler runs (cluster mode: `not_leader` once leadership is lost; never the ops routes). */
  readonly gate?: (route: string) => ApiError | null
  /** Session proofs accepted so far, shared with the feed hub's `user:` channel: each is accepted once. */
  readonly sessionProofs: SessionProofs
}

/**
 * The wall clock, for checking a client's signed timestamp only: the client signs its own
 * wall time, so that is what it is compared with. A server whose clock is wrong refuses
 * fresh timestamps (docs/time.md); the refusal is logged with the skew.
 */
export const wallSec = (ctx: AppCtx): number => Math.floor(ctx.nowMs() / 1000) // live-only: a client's signed timestamp is checked against the wall clock

/** Refuses a signed timestamp more than `maxSkewSec` from the wall clock (400 stale_timestamp), and logs it. */
export const requireFreshTimestamp = (ctx: AppCtx, req: HttpRequest, timestampSec: number, maxSkewSec: number): void => {
  const skewSec = wallSec(ctx) - timestampSec
  if (Math.abs(skewSec) <= maxSkewSec) return
  ctx.log?.({ event: "stale_timestamp", ip: req.ip, path: req.path, skew_sec: skewSec, max_skew_sec: maxSkewSec, clock_steps_detected: ctx.clockWatch?.stepsDetected ?? 0 })
  throw new ApiError("stale_timestamp", `timestamp is ${skewSec} s from the server clock (max ${maxSkewSec})`)
}

/** The verified user of the request's session cookie, or null. */
export const sessionUserOf = (ctx: AppCtx, req: HttpRequest): string | null => {
  const value = readCookie(req.headers.cookie, SESSION_COOKIE)
  // A session cookie's expiry is an instant the server signed on the wall clock: checked like a signed timestamp.
  return value === null ? null : verifySessionCookie(ctx.secret, value, wallSec(ctx))
}

/**
 * The session user of a cookie-authenticated state change. Beyond SameSite, a request
 * from a page of another site is refused (403 forbidden_origin): its `Origin` must be
 * an allowed origin, and without an Origin it must not be marked `Sec-Fetch-Site:
 * cross-site`. Programs that send no Origin (signed API clients) are unaffected.
 */
export const requireSession = (ctx: AppCtx, req: HttpRequest): string => {
  const origin = req.headers.origin
  if (origin !== undefined ? !ctx.config.corsOrigins.has(origin) : req.headers["sec-fetch-site"] === "cross-site") {
    throw new ApiError("forbidden_origin", `cookie-authenticated requests are accepted only from an allowed origin (CORS_ORIGINS), not ${origin ?? "a cross-site page"}`)
  }
  const user = sessionUserOf(ctx, req)
  if (user === null) throw new ApiError("unauthorized", `missing or invalid ${SESSION_COOKIE} cookie; POST /v1/builders/register first`)
  return user
}

/** Constant-time in the token's length too: both sides are hashed before they are compared. */
const tokenMatches = (given: string, expected: string): boolean =>
  timingSafeEqual(createHash("sha256").update(given).digest(), createHash("sha256").update(expected).digest())

/**
 * Operator routes: `Authorization: Bearer <ADMIN_TOKEN>`. The token is checked first, so
 * other clients' failures can never lock the operator out: a valid token is charged to
 * SPEC's per-IP admin bucket (60 per 60 s), a wrong one to a bucket of failures of its
 * own (429 once an address has failed too often), and a failure is logged without the token.
 */
export const requireAdmin = (ctx: AppCtx, req: HttpRequest): void => {
  const header = req.headers.authorization ?? ""
  if (!tokenMatches(header.startsWith("Bearer ") ? header.slice(7) : "", ctx.config.adminToken)) {
    // Charged first: once throttled, further failures are refused without a log line each.
    ctx.limiter.takeForAddress(LIMITS.ipAdminFailures, req.ip)
    ctx.log?.({ event: "admin_auth_failed", ip: req.ip, path: req.path, had_token: header !== "" })
    throw new ApiError("unauthorized", "operator token required (Authorization: Bearer <ADMIN_TOKEN>)")
  }
  ctx.limiter.takeForAddress(LIMITS.ipAdmin, req.ip)
}

/** A user's stable builder api_key: derived from the server secret, so re-registering returns it again. */
export const apiKeyFor = (secret: Uint8Array, user: string): string =>
  createHmac("sha256", secret).update(`api_key:${user}`).digest("hex").slice(0, 32)
