// Orders: place (signed, cookie), cancel, cancel-all, and a user's resting orders.
import { isUserKey, parseSignatureHex } from "../../auth/ed25519.ts"
import { orderMessage } from "../../auth/messages.ts"
import type { EngineEvent, FillEvent, RejectReason } from "../../engine/types.ts"
import { ApiError, ERROR_STATUS, type ErrorCode } from "../../domain/errors.ts"
import { CancelAllRequest, CancelRequest, decodeBody, OrderRequest } from "../../domain/schemas.ts"
import { openOrders } from "../../service/views.ts"
import { type AppCtx, requireSession } from "../context.ts"
import { json, parseJsonBody, type Route } from "../http.ts"
import { LIMITS } from "../rate-limit.ts"

const decodeOrder = decodeBody(OrderRequest, "invalid_order_shape")
const decodeCancel = decodeBody(CancelRequest, "invalid_shape")
const decodeCancelAll = decodeBody(CancelAllRequest, "invalid_shape")

const REJECTION_DETAIL: Partial<Record<RejectReason, string>> = {
  would_cross: "post-only order would cross the book",
  insufficient_balance: "available balance does not cover price plus fees for the full size",
  insufficient_shares: "selling more shares than held and unlocked (buy the other outcome instead)",
  fok_unfilled: "fill-or-kill order cannot fill completely; nothing changed",
  dust_order: "order notional below one cent (size x price x 100 < 10,000 micro)",
  market_halted: "market is halted",
  market_resolved: "market is resolved",
  nonce_stale: "nonce must be greater than the previous accepted order nonce",
  unknown_builder: "builder_api_key is not a registered api_key",
  order_not_found: "no such resting order of this user"
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

export const orderRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "POST",
    path: "/v1/orders",
    handler: async (ctx, req) => {
      ctx.limiter.take(LIMITS.ipOrders, req.ip)
      if (ctx.exchange.trading === "closed") throw new ApiError("trading_disabled", "trading is not open")
      const sessionUser = requireSession(ctx, req)
      ctx.limiter.take(LIMITS.walletOrders, sessionUser)
      const body = decodeOrder(parseJsonBody(req))
      if (!isUserKey(body.user)) throw new ApiError("invalid_order_shape", "user: not a base58 Ed25519 public key")
      if (body.user !== sessionUser) throw new ApiError("session_user_mismatch", "order user differs from the session user")
      const found = ctx.exchange.catalog.market(body.market_id)
      if (found === undefined) throw new ApiError("not_found", `no market ${body.market_id}`)
      const signature = parseSignatureHex(body.signature)
      if (signature === null) throw new ApiError("invalid_signature_format", "signature must be 64 bytes, hex-encoded without 0x")
      // The client signs the market id exactly as it sent it (hex id or slug).
      const message = orderMessage({ ...body, marketId: body.market_id, priceBps: body.price })
      if (!(await ctx.verifier.verify(body.user, message, signature))) throw new ApiError("invalid_signature", "order signature does not verify")
      if (body.builder_api_key !== undefined && ctx.exchange.builderByKey(body.builder_api_key) === undefined) {
        throw new ApiError("unknown_builder", "builder_api_key is not a registered api_key")
      }
      const marketId = found.market.market_id
      const { result, durable } = ctx.exchange.submit({
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
        }
      })
      await durable
      if (result.refused === "trading_disabled") throw new ApiError("trading_disabled", "trading is not open")
      if (result.queuedAt !== undefined) {
        // Trading is paused: the order is journaled and runs when trading reopens.
        return json(202, { order_id: 0, fills: [], remaining: body.size, market_id: marketId, status: "queued", queue_position: result.queuedAt })
      }
      const first = result.events[0]
      if (first?.type === "rejected") throw rejection(first.reason)
      if (first?.type !== "order_accepted") throw new ApiError("internal_error", "engine gave no verdict")
      const outcome = placementOutcome(result.events, first.orderId)
      return json(200, {
        order_id: first.orderId,
        fills: outcome.fills,
        remaining: body.size - outcome.filled,
        market_id: marketId,
        status: outcome.status
      })
    }
  },
  {
    method: "POST",
    path: "/v1/orders/cancel",
    handler: async (ctx, req) => {
      ctx.limiter.take(LIMITS.ipOrders, req.ip)
      const user = requireSession(ctx, req)
      const body = decodeCancel(parseJsonBody(req))
      const { result, durable } = ctx.exchange.submit({ type: "cancel_order", user, orderId: body.order_id })
      await durable
      const first = result.events[0]
      if (first?.type === "rejected") throw new ApiError("order_not_found", `no resting order ${body.order_id} owned by the session user`)
      const remaining = first?.type === "order_cancelled" ? first.remaining : 0
      return json(200, { order_id: body.order_id, cancelled: true, remaining })
    }
  },
  {
    method: "POST",
    path: "/v1/orders/cancel-all",
    handler: async (ctx, req) => {
      ctx.limiter.take(LIMITS.ipOrders, req.ip)
      const user = requireSession(ctx, req)
      const body = decodeCancelAll(parseJsonBody(req))
      let marketId: string | undefined
      if (body.market_id !== undefined) {
        const found = ctx.exchange.catalog.market(body.market_id)
        if (found === undefined) throw new ApiError("not_found", `no market ${body.market_id}`)
        marketId = found.market.market_id
      }
      const { result, durable } = ctx.exchange.submit({ type: "cancel_all", user, ...(marketId === undefined ? {} : { marketId }) })
      await durable
      return json(200, { cancelled: result.events.filter((e) => e.type === "order_cancelled").length })
    }
  },
  {
    method: "GET",
    path: "/v1/orders/all/:user",
    handler: (ctx, req, params) => {
      // SPEC §8 puts all of /v1/orders/* under the per-IP bucket, reads included.
      ctx.limiter.take(LIMITS.ipOrders, req.ip)
      const user = params.user!
      if (!isUserKey(user)) throw new ApiError("invalid_pubkey", "user: not a base58 Ed25519 public key")
      const orders = openOrders(ctx.exchange, user)
      return json(200, { orders, total: orders.length })
    }
  }
]
