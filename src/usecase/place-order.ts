// One placement path for every signed order: POST /v1/orders and the server-managed
// LP bot both come through `placeSignedOrder`, so a bot order is verified and journaled
// exactly like a client's. The caller does transport concerns (rate limits, cookie,
// schema); this does market lookup, signer resolution, signature, builder, journal.
import { parseSignatureHex } from "../auth/ed25519.ts"
import { orderMessage } from "../auth/messages.ts"
import type { Schema } from "effect"
import { ApiError, ERROR_STATUS, type ErrorCode } from "../domain/errors.ts"
import type { OrderRequest } from "../domain/schemas.ts"
import type { EngineEvent, FillEvent, RejectReason } from "../engine/types.ts"
import { requireUserKey, type UseCaseCtx } from "./context.ts"

type PlaceCtx = Pick<UseCaseCtx, "exchange" | "commands" | "verifier">

const REJECTION_DETAIL: Partial<Record<RejectReason, string>> = {
  would_cross: "post-only order would cross the book",
  insufficient_balance: "available balance does not cover price plus fees for the full size",
  insufficient_shares: "selling more shares than held and unlocked (buy the other outcome instead)",
  fok_unfilled: "fill-or-kill order cannot fill completely; nothing changed",
  dust_order: "order notional below one cent (size x price x 100 < 10,000 micro)",
  market_halted: "market is halted",
  market_resolved: "market is resolved",
  nonce_stale: "nonce must be greater than the previous order nonce (a refused order spends its nonce too)",
  unknown_builder: "builder_api_key is not a registered api_key",
  order_not_found: "no resting order of this user"
}

/** An engine rejection as a client error: the engine's stable reason is the error code where the catalogue has it. */
export const rejection = (reason: RejectReason): ApiError => {
  if (reason === "unknown_market") return new ApiError("not_found", "unknown market")
  if (reason in ERROR_STATUS) return new ApiError(reason as ErrorCode, REJECTION_DETAIL[reason] ?? reason)
  return new ApiError("order_rejected", reason)
}

const fillView = (f: FillEvent) => ({
  trade_id: f.tradeId,
  price: f.takerPriceBps,
  size: f.size,
  maker: f.makerUser,
  maker_order_id: f.makerOrderId,
  fee: f.takerFeeMicro,
  builder_fee: f.takerBuilderFeeMicro,
  kind: f.kind
})

/** Status after placement: filled, resting, or cancelled (IOC remainder or self-trade stop). */
const placementOutcome = (events: EngineEvent[], orderId: number) => {
  const fills = events.filter((e): e is FillEvent => e.type === "fill" && e.takerOrderId === orderId)
  const filled = fills.reduce((n, f) => n + f.size, 0)
  const rested = events.some((e) => e.type === "order_rested" && e.orderId === orderId)
  const cancelled = events.some((e) => e.type === "order_cancelled" && e.orderId === orderId)
  return { fills: fills.map(fillView), filled, status: rested ? "resting" : cancelled ? "cancelled" : "filled" }
}

/** A decoded order request (SPEC §2 "Order request"; `session_pub`: signed by this delegated LP session key of `user` instead of the user key). */
export type SignedOrder = Schema.Schema.Type<typeof OrderRequest>

export interface Placed {
  readonly status: 200 | 202
  readonly body: Record<string, unknown>
  readonly orderId: number
}

/** The order response (SPEC §2) or an ApiError. The signature is checked before anything is journaled. */
export const placeSignedOrder = async (ctx: PlaceCtx, body: SignedOrder): Promise<Placed> => {
  const x = ctx.exchange
  const found = x.catalog.market(body.market_id)
  if (found === undefined) throw new ApiError("not_found", `no market ${body.market_id}`)
  const signature = parseSignatureHex(body.signature)
  if (signature === null) throw new ApiError("invalid_signature_format", "signature must be 64 bytes, hex-encoded without 0x")
  const sessionPub = body.session_pub
  if (sessionPub !== undefined) {
    requireUserKey("session_pub", sessionPub, "invalid_pubkey")
    assertSession(ctx, body.user, sessionPub)
  }
  // The client signs the market id exactly as it sent it (hex id or slug).
  const message = orderMessage({ ...body, marketId: body.market_id, priceBps: body.price })
  if (!(await ctx.verifier.verify(sessionPub ?? body.user, message, signature))) {
    throw new ApiError("invalid_signature", sessionPub === undefined ? "order signature does not verify" : "order signature does not verify under session_pub")
  }
  // Re-checked after the (possibly asynchronous) verification: a stop-and-revoke journaled
  // meanwhile must win, and nothing can interleave between this check and the submit.
  if (sessionPub !== undefined) assertSession(ctx, body.user, sessionPub)
  if (body.builder_api_key !== undefined && x.builderByKey(body.builder_api_key) === undefined) {
    throw new ApiError("unknown_builder", "builder_api_key is not a registered api_key")
  }
  const marketId = found.market.market_id
  const { result } = await ctx.commands.submit({
    type: "place_order",
    order: {
      user: body.user,
      marketId,
      side: body.side,
      outcome: body.outcome,
      priceBps: body.price,
      size: body.size,
      orderType: body.order_type ?? "gtc",
      nonce: body.nonce,
      ...(body.stp === undefined ? {} : { stp: body.stp }),
      ...(body.builder_api_key === undefined ? {} : { builderKey: body.builder_api_key })
    },
    ...(sessionPub === undefined ? {} : { viaSession: sessionPub })
  })
  if (result.refused === "trading_disabled") throw new ApiError("trading_disabled", "trading is not open")
  if (result.refused === "stale_bot") throw new ApiError("order_rejected", "session orders are accepted only while its LP bot runs")
  if (result.queuedAt !== undefined) {
    // Trading is paused: the order is journaled and runs when trading reopens.
    return {
      status: 202,
      orderId: 0,
      body: { order_id: 0, fills: [], remaining: body.size, market_id: marketId, status: "queued", queue_position: result.queuedAt }
    }
  }
  const first = result.events[0]
  if (first?.type === "rejected") throw rejection(first.reason)
  if (first?.type !== "order_accepted") throw new ApiError("internal_error", "engine gave no verdict")
  const outcome = placementOutcome(result.events, first.orderId)
  return {
    status: 200,
    orderId: first.orderId,
    body: { order_id: first.orderId, fills: outcome.fills, remaining: body.size - outcome.filled, market_id: marketId, status: outcome.status }
  }
}

/** A session key may sign orders only while delegated by `user`, unrevoked and unexpired (SPEC §5.10). */
const assertSession = (ctx: PlaceCtx, user: string, sessionPub: string): void => {
  const problem = ctx.exchange.lpBook.sessionProblem(user, sessionPub, ctx.exchange.journalSec())
  if (problem !== null) throw new ApiError(problem, SESSION_DETAIL[problem])
}

export const SESSION_DETAIL = {
  session_not_delegated: "session_pub is not a delegated LP session (POST /v1/lp-bot/delegate first)",
  user_mismatch: "session_pub was delegated by another user",
  session_revoked: "the LP session was revoked",
  session_expired: "the LP session's delegation has expired"
} as const
