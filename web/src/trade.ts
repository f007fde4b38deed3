// Order placement and cancels through the typed client, with every refusal in words and the
// surfaces (trading closed / paused) noted for the banners.
import type { OrderSpec } from "../../src/lp/quotes.ts"
import { describeError, type ErrorBody } from "./errors.ts"
import { client, noteSurface, noteTradingOpen } from "./session.ts"
import type { PlaceResult } from "./bot/loop.ts"

export interface TicketOrder {
  readonly market_id: string
  readonly side: "buy" | "sell"
  readonly outcome: "yes" | "no"
  readonly price: number
  readonly size: number
  readonly order_type: "gtc" | "post_only" | "ioc" | "fok"
}

export type Outcome<T> = { readonly ok: true; readonly value: T; readonly status: number } | { readonly ok: false; readonly code: string; readonly message: string }

const NETWORK = { ok: false as const, code: "network_error", message: describeError(0, { error: "network_error" }) }

export const placeOrder = async (o: TicketOrder): Promise<Outcome<{ readonly order_id: number; readonly status?: string; readonly remaining: number; readonly fills: ReadonlyArray<unknown> }>> => {
  const c = client.value
  if (c === null) return { ok: false, code: "unauthorized", message: "Sign in first." }
  try {
    const res = await c.placeOrder(o)
    noteSurface(res.status, res.body)
    if (res.status === 200) noteTradingOpen()
    if (res.status === 200 || res.status === 202) return { ok: true, value: res.body, status: res.status }
    const body = res.body as ErrorBody
    return { ok: false, code: body?.error ?? `http_${res.status}`, message: describeError(res.status, body) }
  } catch {
    return NETWORK
  }
}

export const cancelOrder = async (orderId: number): Promise<Outcome<unknown>> => {
  const c = client.value
  if (c === null) return { ok: false, code: "unauthorized", message: "Sign in first." }
  try {
    const res = await c.cancel(orderId)
    if (res.status === 200) return { ok: true, value: res.body, status: 200 }
    return { ok: false, code: (res.body as ErrorBody)?.error ?? "error", message: describeError(res.status, res.body as ErrorBody) }
  } catch {
    return NETWORK
  }
}

export const cancelAll = async (marketId?: string): Promise<Outcome<{ cancelled: number }>> => {
  const c = client.value
  if (c === null) return { ok: false, code: "unauthorized", message: "Sign in first." }
  try {
    const res = marketId === undefined ? await c.cancelAll() : await c.request("POST", "/v1/orders/cancel-all", { signature: "", nonce: 0, market_id: marketId })
    if (res.status === 200) return { ok: true, value: res.body as { cancelled: number }, status: 200 }
    return { ok: false, code: (res.body as ErrorBody)?.error ?? "error", message: describeError(res.status, res.body as ErrorBody) }
  } catch {
    return NETWORK
  }
}

/** The bot's placement: post-only, signed by the user's key. */
export const placeQuote = async (marketId: string, o: OrderSpec): Promise<PlaceResult> => {
  const r = await placeOrder({ market_id: marketId, side: o.side, outcome: o.outcome, price: o.priceBps, size: o.size, order_type: "post_only" })
  if (r.ok) return { ok: true, orderId: r.value.order_id, queued: r.status === 202 }
  return { ok: false, code: r.code, message: r.message }
}
