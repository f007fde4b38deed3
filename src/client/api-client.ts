// A small typed client of the twinbook API over any fetch-like transport:
// real `fetch` live, the in-process transport in simulation.
import { signOrder, signSession, type UserKey } from "./keys.ts"

export type FetchLike = (url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<{
  status: number
  headers: { get(name: string): string | null }
  json(): Promise<any>
  text(): Promise<string>
}>

export interface ApiResult<T = any> {
  readonly status: number
  readonly body: T
  readonly headers: { get(name: string): string | null }
}

export interface OrderInput {
  readonly market_id: string
  readonly side: "buy" | "sell"
  readonly outcome: "yes" | "no"
  readonly price: number
  readonly size: number
  readonly order_type?: "gtc" | "post_only" | "ioc" | "fok"
  readonly nonce?: number
  readonly stp?: "cancel_resting" | "cancel_taking" | "cancel_both"
  readonly builder_api_key?: string
}

export class ApiClient {
  cookie: string | null = null
  apiKey: string | null = null
  private nonce = 0

  constructor(
    readonly baseUrl: string,
    readonly key: UserKey,
    private readonly fetchFn: FetchLike,
    private readonly nowSec: () => number
  ) {}

  get user(): string {
    return this.key.user
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResult<T>> {
    const h: Record<string, string> = { ...headers }
    if (body !== undefined) h["content-type"] = "application/json"
    if (this.cookie !== null) h.cookie = this.cookie
    const res = await this.fetchFn(`${this.baseUrl}${path}`, {
      method,
      headers: h,
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
    const text = await res.text()
    return { status: res.status, body: text === "" ? null : JSON.parse(text), headers: res.headers }
  }

  async register(name = "client", timestampSec = this.nowSec()): Promise<ApiResult<{ api_key: string }>> {
    const res = await this.request("POST", "/v1/builders/register", {
      user: this.user,
      name,
      signature: signSession(this.key, timestampSec),
      timestamp: timestampSec
    })
    const setCookie = res.headers.get("set-cookie")
    if (res.status === 200 && setCookie !== null) {
      this.cookie = setCookie.split(";")[0]!
      this.apiKey = res.body.api_key
    }
    return res
  }

  /** Signs and places an order; the nonce defaults to the next one this client has used. */
  placeOrder(o: OrderInput): Promise<ApiResult> {
    const nonce = o.nonce ?? ++this.nonce
    if (nonce > this.nonce) this.nonce = nonce
    const signature = signOrder(this.key, { marketId: o.market_id, outcome: o.outcome, side: o.side, priceBps: o.price, size: o.size, nonce })
    return this.request("POST", "/v1/orders", { ...o, user: this.user, nonce, signature })
  }

  cancel(orderId: number): Promise<ApiResult> {
    return this.request("POST", "/v1/orders/cancel", { order_id: orderId, signature: "", nonce: 0 })
  }

  cancelAll(): Promise<ApiResult<{ cancelled: number }>> {
    return this.request("POST", "/v1/orders/cancel-all", { signature: "", nonce: 0 })
  }

  balance(): Promise<ApiResult<{ user: string; available: number; locked: number; total: number }>> {
    return this.request("GET", `/v1/balance/${this.user}`)
  }
}
