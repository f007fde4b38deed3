// What every route handler is handed: the exchange, the injected clock, the
// session secret, configuration, limiters and the edge cache.
import { createHmac, timingSafeEqual } from "node:crypto"
import { readCookie, SESSION_COOKIE, verifySessionCookie } from "../auth/session-cookie.ts"
import { ApiError } from "../domain/errors.ts"
import type { Verifier } from "../auth/verifier.ts"
import type { RewardsParams } from "../service/commands.ts"
import type { Exchange } from "../service/exchange.ts"
import type { EdgeCache } from "./cache.ts"
import type { HttpRequest } from "./http.ts"
import { LIMITS, type RateLimiter } from "./rate-limit.ts"

export interface RewardsConfig {
  readonly dailyBudgetMicro: number
  readonly bandSpreadBpsMax: number
  readonly perWalletCapPct: number
  /** Orders smaller than this score nothing (docs/rewards.md §1-2); default 10 contracts. */
  readonly minSizeContracts?: number
}

export const DEFAULT_REWARDS_MIN_SIZE_CONTRACTS = 10

/** The rewards configuration as the exchange journals it (every field explicit). */
export const rewardsParams = (c: RewardsConfig): RewardsParams => ({
  dailyBudgetMicro: c.dailyBudgetMicro,
  bandSpreadBpsMax: c.bandSpreadBpsMax,
  perWalletCapPct: c.perWalletCapPct,
  minSizeContracts: c.minSizeContracts ?? DEFAULT_REWARDS_MIN_SIZE_CONTRACTS
})

export interface AppConfig {
  readonly adminToken: string
  readonly corsOrigins: ReadonlySet<string>
  readonly secureCookies: boolean
  /** Operator credit endpoint (a development faucet until deposits arrive on chain). */
  readonly devCredit: boolean
  readonly rewards: RewardsConfig
}

export interface AppCtx {
  readonly exchange: Exchange
  readonly nowMs: () => number
  readonly secret: Uint8Array
  readonly config: AppConfig
  readonly limiter: RateLimiter
  readonly cache: EdgeCache
  /** Order signatures: inline in tests and simulation, worker threads live. */
  readonly verifier: Verifier
  /**
   * The withdraw path's binding to the matching engine (SPEC's API/engine split): `up`, or
   * made `unreachable` (502) / `disabled` (503) by the operator or by simulated faults.
   */
  readonly binding: { withdraw: "up" | "unreachable" | "disabled" }
}

export const nowSec = (ctx: AppCtx): number => Math.floor(ctx.nowMs() / 1000)

/** The verified user of the request's session cookie, or null. */
export const sessionUserOf = (ctx: AppCtx, req: HttpRequest): string | null => {
  const value = readCookie(req.headers.cookie, SESSION_COOKIE)
  return value === null ? null : verifySessionCookie(ctx.secret, value, nowSec(ctx))
}

export const requireSession = (ctx: AppCtx, req: HttpRequest): string => {
  const user = sessionUserOf(ctx, req)
  if (user === null) throw new ApiError("unauthorized", `missing or invalid ${SESSION_COOKIE} cookie; POST /v1/builders/register first`)
  return user
}

/** Operator routes: `Authorization: Bearer <ADMIN_TOKEN>`, per-IP 60 per 60 s. */
export const requireAdmin = (ctx: AppCtx, req: HttpRequest): void => {
  ctx.limiter.take(LIMITS.ipAdmin, req.ip)
  const header = req.headers.authorization ?? ""
  const given = Buffer.from(header.startsWith("Bearer ") ? header.slice(7) : "")
  const expected = Buffer.from(ctx.config.adminToken)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new ApiError("unauthorized", "operator token required (Authorization: Bearer <ADMIN_TOKEN>)")
  }
}

/** A user's stable builder api_key: derived from the server secret, so re-registering returns it again. */
export const apiKeyFor = (secret: Uint8Array, user: string): string =>
  createHmac("sha256", secret).update(`api_key:${user}`).digest("hex").slice(0, 32)
