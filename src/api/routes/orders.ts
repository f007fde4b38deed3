// The orders group (SPEC §4 "Orders"): place a signed order, cancel one or all, a user's
// resting orders. Buckets, session and body are the declaration's preamble (src/api/serve.ts).
import { ApiError } from "../../domain/errors.ts"
import { openOrders } from "../../service/views.ts"
import { API } from "../declaration/api.ts"
import { type AppCtx, requireUserKey } from "../context.ts"
import { json } from "../http.ts"
import { implement } from "../serve.ts"
import { cancelAll, cancelOrder } from "../../usecase/cancel.ts"
import { placeSignedOrder } from "../../usecase/place-order.ts"

export { rejection } from "../../usecase/place-order.ts"

export const orders = implement<AppCtx>()(API.orders, {
  place: async (ctx, { body, session }) => {
    requireUserKey("user", body.user, "invalid_order_shape")
    if (body.user !== session) throw new ApiError("session_user_mismatch", "order user differs from the session user")
    const placed = await placeSignedOrder(ctx, body)
    return json(placed.status, placed.body)
  },
  cancel: async (ctx, { body, session }) => json(200, await cancelOrder(ctx, session, body.order_id)),
  cancelAll: async (ctx, { body, session }) => json(200, await cancelAll(ctx, session, body.market_id)),
  open: (ctx, { path }) => {
    const orders = openOrders(ctx.exchange, path.user)
    return json(200, { orders, total: orders.length })
  }
})
