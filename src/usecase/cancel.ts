// Cancel one resting order, or all of a user's (in one market or everywhere). The route has
// checked the rate limit, the session and the body's shape; SPEC §4 accepts the signature and
// nonce of a cancel without verifying them, so nothing here reads them.
import { ApiError } from "../domain/errors.ts"
import type * as W from "../domain/wire.ts"
import type { UseCaseCtx } from "./context.ts"

/** `{ order_id, cancelled, remaining }` once the cancel is durable; 404 when the user has no such resting order. */
export const cancelOrder = async (ctx: Pick<UseCaseCtx, "commands">, user: string, orderId: number): Promise<(typeof W.CancelResponse)["Type"]> => {
  const { result } = await ctx.commands.submit({ type: "cancel_order", user, orderId })
  const first = result.events[0]
  if (first?.type === "rejected") throw new ApiError("order_not_found", `no resting order ${orderId} owned by the session user`)
  return { order_id: orderId, cancelled: true, remaining: first?.type === "order_cancelled" ? first.remaining : 0 }
}

/** `{ cancelled: n }` once durable; `marketRef` (an id or a slug) limits it to one market, 404 when there is none. */
export const cancelAll = async (ctx: Pick<UseCaseCtx, "exchange" | "commands">, user: string, marketRef: string | undefined): Promise<(typeof W.CancelAllResponse)["Type"]> => {
  let marketId: string | undefined
  if (marketRef !== undefined) {
    const found = ctx.exchange.catalog.market(marketRef)
    if (found === undefined) throw new ApiError("not_found", `no market ${marketRef}`)
    marketId = found.market.market_id
  }
  const { result } = await ctx.commands.submit({ type: "cancel_all", user, ...(marketId === undefined ? {} : { marketId }) })
  return { cancelled: result.events.filter((e) => e.type === "order_cancelled").length }
}
