// Orders and the trading switch: placement (queued while paused, session orders only while
// their bot runs), cancels, and the pause queue released in arrival order on reopening.
import type { EngineEvent, PlaceOrder } from "../../engine/types.ts"
import type { OrderBody } from "../commands.ts"
import type { Exchange } from "../exchange.ts"
import type { Handler } from "./handler.ts"

/** One literal with every field in one order: a single copy of the journaled order, and one object shape for the engine. */
export const placeOrder = (x: Exchange, o: OrderBody, events: EngineEvent[]): void => {
  const cmd: PlaceOrder = {
    type: "place_order", seq: x.engine.lastSeq + 1, tsSec: x.tsSec, user: o.user, marketId: o.marketId, side: o.side, outcome: o.outcome,
    priceBps: o.priceBps, size: o.size, orderType: o.orderType, nonce: o.nonce, stp: o.stp, builderKey: o.builderKey
  }
  x.engineApplyStamped(cmd, events)
}

export const applyPlaceOrder: Handler<"place_order"> = (x, cmd, events) => {
  // Bot orders never queue: a quote placed after a pause would be stale when it ran.
  if (x.trading === "closed" || (x.trading === "paused" && cmd.viaSession !== undefined)) return { events, refused: "trading_disabled" }
  if (x.trading === "paused") {
    x.queue.push(cmd.order)
    return { events, queuedAt: x.queue.length }
  }
  if (cmd.viaSession === undefined) {
    placeOrder(x, cmd.order, events)
    return { events }
  }
  // Session keys are the server's own (never handed out): their orders are bot orders,
  // accepted only while that bot runs, so a stop journaled first always wins.
  if (x.lpBook.runningBot(cmd.order.user)?.sessionPub !== cmd.viaSession) return { events, refused: "stale_bot" }
  placeOrder(x, cmd.order, events)
  const first = events[0]
  if (first?.type === "order_accepted" && x.engine.orders.get(first.orderId) !== undefined) {
    x.lpBook.trackOrder(first.user, cmd.viaSession, first.marketId, first.orderId)
  }
  return { events }
}

export const applyCancelOrder: Handler<"cancel_order"> = (x, cmd, events) => {
  x.engineApplyStamped({ type: "cancel_order", seq: x.engine.lastSeq + 1, tsSec: x.tsSec, user: cmd.user, orderId: cmd.orderId }, events)
  return { events }
}

export const applyCancelAll: Handler<"cancel_all"> = (x, cmd, events) => {
  x.engineApply({ type: "cancel_all", user: cmd.user, ...(cmd.marketId === undefined ? {} : { marketId: cmd.marketId }) }, events)
  return { events }
}

export const applySetTrading: Handler<"set_trading"> = (x, cmd, events) => {
  x.trading = cmd.state
  // Orders queued during a pause run, in arrival order, once trading opens.
  if (cmd.state === "open") for (const order of x.queue.splice(0)) placeOrder(x, order, events)
  return { events }
}
