// The server-managed LP bot's use cases (SPEC §3 "LP-bot session", §4 "LP bot", §5.9-10):
// create a session key, delegate it (the user's signature), start a bot on a basket of
// markets, stop it. The routes (src/api/routes/lp-bot.ts) gate, parse and check the cookie;
// these check against the exchange's state, journal, and return the response body.
import { verifyUser } from "../auth/ed25519.ts"
import { deriveSessionKey } from "../auth/lp-session.ts"
import { delegationMessage } from "../auth/messages.ts"
import { ApiError } from "../domain/errors.ts"
import { botStatusView } from "../service/lp-bot-status.ts"
import { type StrategySpec, specToJson } from "../lp/strategy-spec.ts"
import type { ServiceCommand } from "../service/commands.ts"
import type { ApplyResult } from "../service/exchange.ts"
import { type LpScope, MAX_BOT_MARKETS, MAX_DELEGATION_SEC, MIN_DELEGATION_SEC } from "../service/lp-book.ts"
import { nowSec, type UseCaseCtx } from "./context.ts"
import { SESSION_DETAIL } from "./place-order.ts"

type LpCtx = Pick<UseCaseCtx, "exchange" | "commands" | "secret">

/** Maps a refusal (of a check here, or of the apply step when a concurrent request won the race) to its error. */
export const refusalError = (refused: NonNullable<ApplyResult["refused"]>): ApiError => {
  switch (refused) {
    case "session_already_delegated":
      return new ApiError("session_already_delegated", "this session_pub is already delegated")
    case "nonce_stale":
      return new ApiError("nonce_stale", "nonce must be greater than the user's previous delegation nonce")
    case "not_found":
      return new ApiError("not_found", "unknown session_pub: create it with POST /v1/lp-bot/session/new")
    case "session_not_delegated":
    case "user_mismatch":
    case "session_revoked":
    case "session_expired":
      return new ApiError(refused, SESSION_DETAIL[refused])
    default:
      return new ApiError("internal_error", `refused: ${refused}`)
  }
}

const submit = async (ctx: LpCtx, cmd: ServiceCommand): Promise<ApplyResult> => {
  const { result } = await ctx.commands.submit(cmd)
  if (result.refused !== undefined) throw refusalError(result.refused)
  return result
}

/** Each market id or slug, resolved to a distinct active market; 400 invalid_shape names the element. */
export const resolveBotMarkets = (ctx: Pick<UseCaseCtx, "exchange">, markets: unknown): string[] => {
  if (!Array.isArray(markets) || markets.length < 1 || markets.length > MAX_BOT_MARKETS) {
    throw new ApiError("invalid_shape", `markets: an array of 1..${MAX_BOT_MARKETS} market ids or slugs`)
  }
  const ids: string[] = []
  markets.forEach((m, i) => {
    const found = typeof m === "string" ? ctx.exchange.catalog.market(m) : undefined
    if (found === undefined) throw new ApiError("invalid_shape", `markets[${i}]: no such market`)
    if (found.market.status !== "active") throw new ApiError("invalid_shape", `markets[${i}]: market is ${found.market.status}`)
    if (ids.includes(found.market.market_id)) throw new ApiError("invalid_shape", `markets[${i}]: listed twice`)
    ids.push(found.market.market_id)
  })
  return ids
}

/** A new server-held session key for `user`, journaled, with the delegation message the user is to sign. */
export const newLpSession = async (ctx: LpCtx, user: string, scope: LpScope, expiresInSec: number): Promise<Record<string, unknown>> => {
  if (expiresInSec < MIN_DELEGATION_SEC || expiresInSec > MAX_DELEGATION_SEC) {
    throw new ApiError("expiry_out_of_range", `expires_in_secs: ${MIN_DELEGATION_SEC}..${MAX_DELEGATION_SEC} (5 minutes to 30 days)`)
  }
  const now = nowSec(ctx)
  const counter = ctx.exchange.lpBook.nextCounter(user)
  const key = deriveSessionKey(ctx.secret, user, counter)
  const expiresAtUnix = now + expiresInSec
  const nonce = ctx.exchange.lpBook.nextNonce(user)
  await submit(ctx, { type: "lp_session_new", user, sessionPub: key.pub, counter, expiresAtSec: expiresAtUnix })
  const message = delegationMessage({ user, sessionPub: key.pub, scope, expiresAtUnix, nonce })
  return { user, session_pub: key.pub, scope, expires_at_unix: expiresAtUnix, nonce, message_bytes_hex: Buffer.from(message).toString("hex"), created_at: now }
}

export interface Delegation {
  readonly user: string
  readonly sessionPub: string
  readonly scope: LpScope
  readonly signature: Uint8Array
  readonly expiresAtUnix: number
  readonly nonce: number
}

/** The user's signed delegation of a session key, checked against the session and journaled. */
export const delegateLpSession = async (ctx: LpCtx, d: Delegation): Promise<Record<string, unknown>> => {
  const { user, sessionPub, scope, nonce } = d
  const session = ctx.exchange.lpBook.sessions.get(sessionPub)
  if (session === undefined) throw refusalError("not_found")
  if (session.user !== user) throw new ApiError("user_mismatch", "session_pub was created for another user")
  const now = nowSec(ctx)
  // Lifetime counted from session/new (so a minimum-length delegation signed a few seconds
  // later still fits), never past 30 days from now, and not already over.
  const expiresAt = d.expiresAtUnix
  if (expiresAt - session.createdAtSec < MIN_DELEGATION_SEC || expiresAt - now > MAX_DELEGATION_SEC || expiresAt <= now) {
    throw new ApiError("expiry_out_of_range", `expires_at_unix: between session creation + ${MIN_DELEGATION_SEC} s and now + ${MAX_DELEGATION_SEC} s, in the future`)
  }
  const message = delegationMessage({ user, sessionPub, scope, expiresAtUnix: expiresAt, nonce })
  if (!verifyUser(user, message, d.signature)) throw new ApiError("invalid_signature", "signature does not verify over the delegation message")
  if (session.delegation !== null) throw refusalError("session_already_delegated")
  if (session.revokedAtSec !== null) throw refusalError("session_revoked")
  if (nonce <= ctx.exchange.lpBook.nextNonce(user) - 1) throw refusalError("nonce_stale")
  await submit(ctx, { type: "lp_delegate", user, sessionPub, expiresAtSec: expiresAt, nonce })
  return { user, session_pub: sessionPub, scope, status: "delegated", expires_at_unix: expiresAt, nonce, delegated_at: now }
}

/** Starts (or replaces) the user's bot on resolved markets with a parsed strategy. */
export const startLpBot = async (ctx: LpCtx, user: string, sessionPub: string, marketIds: string[], spec: StrategySpec): Promise<Record<string, unknown>> => {
  const problem = ctx.exchange.lpBook.sessionProblem(user, sessionPub, nowSec(ctx))
  if (problem !== null) throw refusalError(problem)
  const replaced = ctx.exchange.lpBook.runningBot(user) !== undefined
  const result = await submit(ctx, { type: "lp_start", user, sessionPub, marketIds, strategy: specToJson(spec) })
  const cancelled = result.events.filter((e) => e.type === "order_cancelled").length
  return { ...botStatusView(ctx.exchange, user, nowSec(ctx)), replaced, cancelled_orders: cancelled }
}

/** Stops the user's bot (cancelling its orders), optionally revoking its sessions. */
export const stopLpBot = async (ctx: LpCtx, user: string, revoke: boolean): Promise<Record<string, unknown>> => {
  const wasRunning = ctx.exchange.lpBook.runningBot(user) !== undefined
  const before = new Set(ctx.exchange.lpBook.userSessions(user).filter((s) => s.revokedAtSec !== null).map((s) => s.sessionPub))
  const result = await submit(ctx, { type: "lp_stop", user, revokeSession: revoke, reason: "user" })
  const revoked = ctx.exchange.lpBook.userSessions(user).filter((s) => s.revokedAtSec !== null && !before.has(s.sessionPub)).map((s) => s.sessionPub)
  return {
    user,
    status: "stopped",
    was_running: wasRunning,
    cancelled_orders: result.events.filter((e) => e.type === "order_cancelled").length,
    revoked_sessions: revoked
  }
}
