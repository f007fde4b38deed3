// Orders: place (signed, cookie), cancel, cancel-all, and a user's resting orders.
import { ApiError } from "../../domain/errors.ts"
import { CancelAllRequest, CancelRequest, decodeBody, OrderRequest } from "../../domain/schemas.ts"
import { openOrders } from "../../service/views.ts"
import { type AppCtx, requireSession, requireUserKey } from "../context.ts"
import { json, parseJsonBody, type Route } from "../http.ts"
import { placeSignedOrder } from "../../usecase/place-order.ts"
import { LIMITS } from "../../usecase/rate-limit.ts"

export { rejection } from "../../usecase/place-order.ts"

const decodeOrder = decodeBody(OrderRequest, "invalid_order_shape")
const decodeCancel = decodeBody(CancelRequest, "invalid_shape")
const decodeCancelAll = decodeBody(CancelAllRequest, "invalid_shape")

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
      requireUserKey("user", body.user, "invalid_order_shape")
      if (body.user !== sessionUser) throw new ApiError("session_user_mismatch", "order user differs from the session user")
      const placed = await placeSignedOrder(ctx, body)
      return json(placed.status, placed.body)
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
      requireUserKey("user", user, "invalid_pubkey")
      const orders = openOrders(ctx.exchange, user)
      return json(200, { orders, total: orders.length })
    }
  }
]
