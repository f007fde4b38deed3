// Orders: place (signed, cookie), cancel, cancel-all, and a user's resting orders.
import { ApiError } from "../../domain/errors.ts"
import { CancelAllRequest, CancelRequest, decodeBody, OrderRequest, orderRequestFast } from "../../domain/schemas.ts"
import { openOrders } from "../../service/views.ts"
import { type AppCtx, requireSession, requireUserKey } from "../context.ts"
import { json, parseJsonBody, type Route } from "../http.ts"
import { cancelAll, cancelOrder } from "../../usecase/cancel.ts"
import { placeSignedOrder } from "../../usecase/place-order.ts"
import { LIMITS } from "../../usecase/rate-limit.ts"

export { rejection } from "../../usecase/place-order.ts"

const decodeOrder = decodeBody(OrderRequest, "invalid_order_shape", orderRequestFast)
const decodeCancel = decodeBody(CancelRequest, "invalid_shape")
const decodeCancelAll = decodeBody(CancelAllRequest, "invalid_shape")

export const orderRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "POST",
    path: "/v1/orders",
    handler: async (ctx, req) => {
      ctx.limiter.takeForAddress(LIMITS.ipOrders, req.ip)
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
      ctx.limiter.takeForAddress(LIMITS.ipOrders, req.ip)
      const user = requireSession(ctx, req)
      const body = decodeCancel(parseJsonBody(req))
      return json(200, await cancelOrder(ctx, user, body.order_id))
    }
  },
  {
    method: "POST",
    path: "/v1/orders/cancel-all",
    handler: async (ctx, req) => {
      ctx.limiter.takeForAddress(LIMITS.ipOrders, req.ip)
      const user = requireSession(ctx, req)
      const body = decodeCancelAll(parseJsonBody(req))
      return json(200, await cancelAll(ctx, user, body.market_id))
    }
  },
  {
    method: "GET",
    path: "/v1/orders/all/:user",
    handler: (ctx, req, params) => {
      // SPEC §8 puts all of /v1/orders/* under the per-IP bucket, reads included.
      ctx.limiter.takeForAddress(LIMITS.ipOrders, req.ip)
      const user = params.user!
      requireUserKey("user", user, "invalid_pubkey")
      const orders = openOrders(ctx.exchange, user)
      return json(200, { orders, total: orders.length })
    }
  }
]
