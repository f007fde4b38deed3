// The public half of the twinbook client: every read of SPEC §4 that needs no key
// (markets, books, trades, candles, account reads of any user, fees, rewards, the
// deposit service, LP status), over any fetch-like transport: the browser's or Node's
// `fetch` live, the in-process transport in simulation. Browser-safe.
import { ApiFailure, type ApiResult } from "./errors.ts"
import type {
  Balance,
  Candles,
  CandlesQuery,
  DepositAddress,
  DepositProgressResponse,
  Fees,
  Leaderboard,
  LpStatus,
  Market,
  MarketsPage,
  MarketsQuery,
  MarketTrades,
  OpenOrders,
  PageQuery,
  Position,
  Positions,
  RewardsConfig,
  RewardsMe,
  BookSnapshot,
  TradesQuery,
  UserDeposits,
  UserTrades,
  UserWithdrawals,
  WalletLink
} from "./types.ts"

export type FetchLike = (
  url: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string; credentials?: "include" | "omit" | "same-origin" }
) => Promise<{
  status: number
  headers: { get(name: string): string | null }
  json(): Promise<any>
  text(): Promise<string>
}>

export interface ClientOptions {
  /** `{deposit_url}`: the deposit service's base URL (its own port); default: the API's. */
  readonly depositUrl?: string
  /**
   * Fetch's `credentials` (default "include"): in a browser the HttpOnly session cookie of
   * another origin rides only with "include"; Node's fetch ignores it (the client replays
   * the captured cookie itself).
   */
  readonly credentials?: "include" | "omit" | "same-origin"
}

/** `fetch` called as a function: browsers refuse a `fetch` detached from `window`. */
export const globalFetch: FetchLike = (url, init) => globalThis.fetch(url, init as RequestInit) as ReturnType<FetchLike>

type QueryValue = string | number | boolean | undefined

/** `?a=1&b=x` from the defined values, in the given order; "" when none. */
export const queryString = (q: Readonly<Record<string, QueryValue>>): string => {
  const parts = Object.entries(q)
    .filter((e): e is [string, string | number | boolean] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
  return parts.length === 0 ? "" : `?${parts.join("&")}`
}

const seg = encodeURIComponent

export class PublicClient {
  /** The session cookie captured from `set-cookie` (Node); always null in a browser, where it is HttpOnly. */
  cookie: string | null = null
  /**
   * The highest `x-twinbook-seq` a cluster gateway answered with (0 until one did: a single
   * process sends none). Sent back as `x-twinbook-min-seq`, so every later read, through any
   * gateway, sees what this client was already shown (docs/cluster.md "Read-your-writes").
   */
  seenSeq = 0
  readonly depositUrl: string

  constructor(
    readonly baseUrl: string,
    protected readonly fetchFn: FetchLike = globalFetch,
    readonly options: ClientOptions = {}
  ) {
    this.depositUrl = options.depositUrl ?? baseUrl
  }

  /** One call: JSON in and out; non-2xx answers are results too (see `unwrap`). */
  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, base = this.baseUrl): Promise<ApiResult<T>> {
    const h: Record<string, string> = { ...headers }
    if (body !== undefined) h["content-type"] = "application/json"
    if (this.cookie !== null) h.cookie = this.cookie
    if (this.seenSeq > 0) h["x-twinbook-min-seq"] = String(this.seenSeq)
    const res = await this.fetchFn(`${base}${path}`, {
      method,
      headers: h,
      credentials: this.options.credentials ?? "include",
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
    const seq = Number(res.headers.get("x-twinbook-seq"))
    if (Number.isSafeInteger(seq) && seq > this.seenSeq) this.seenSeq = seq
    const text = await res.text()
    let parsed: unknown = null
    if (text !== "") {
      try {
        parsed = JSON.parse(text)
      } catch {
        // Not the API speaking (a proxy's page, a truncated body): a failure with the status.
        throw new ApiFailure(res.status, "invalid_response", text.slice(0, 200), null)
      }
    }
    return { status: res.status, body: parsed as ApiResult<T>["body"], headers: res.headers }
  }

  // ---- markets (SPEC §4 "Markets") ----

  markets(q: MarketsQuery = {}): Promise<ApiResult<MarketsPage>> {
    return this.request("GET", `/v1/markets${queryString({ ...q })}`)
  }

  /** Every page of the list (SPEC: paginate until offset + markets.length >= total). */
  async allMarkets(q: Omit<MarketsQuery, "offset"> = {}): Promise<ApiResult<MarketsPage>> {
    const markets: Market[] = []
    for (;;) {
      const res = await this.markets({ ...q, offset: markets.length })
      if (res.status !== 200) return res
      markets.push(...res.body.markets)
      if (res.body.markets.length === 0 || markets.length >= res.body.total) {
        return { ...res, body: { markets, total: res.body.total, limit: markets.length, offset: 0 } }
      }
    }
  }

  /** One event by event_id or slug (or an outcome's market id or slug, extension). */
  market(id: string): Promise<ApiResult<Market>> {
    return this.request("GET", `/v1/markets/${seg(id)}`)
  }

  book(marketId: string): Promise<ApiResult<BookSnapshot>> {
    return this.request("GET", `/v1/markets/${seg(marketId)}/book`)
  }

  /** The market's trades, newest first. */
  marketTrades(marketId: string, q: TradesQuery = {}): Promise<ApiResult<MarketTrades>> {
    return this.request("GET", `/v1/markets/${seg(marketId)}/trades${queryString({ ...q })}`)
  }

  candles(marketId: string, q: CandlesQuery = {}): Promise<ApiResult<Candles>> {
    return this.request("GET", `/v1/markets/${seg(marketId)}/candles${queryString({ ...q })}`)
  }

  // ---- account reads of any user (SPEC §4 "Account reads") ----

  balance(user: string): Promise<ApiResult<Balance>> {
    return this.request("GET", `/v1/balance/${seg(user)}`)
  }

  position(marketId: string, user: string): Promise<ApiResult<Position>> {
    return this.request("GET", `/v1/position/${seg(marketId)}/${seg(user)}`)
  }

  positions(user: string): Promise<ApiResult<Positions>> {
    return this.request("GET", `/v1/positions/all/${seg(user)}`)
  }

  /** Live resting orders. */
  orders(user: string): Promise<ApiResult<OpenOrders>> {
    return this.request("GET", `/v1/orders/all/${seg(user)}`)
  }

  /** Every fill as maker or taker, newest first. */
  trades(user: string, q: PageQuery = {}): Promise<ApiResult<UserTrades>> {
    return this.request("GET", `/v1/trades/all/${seg(user)}${queryString({ ...q })}`)
  }

  deposits(user: string, q: PageQuery = {}): Promise<ApiResult<UserDeposits>> {
    return this.request("GET", `/v1/deposits/all/${seg(user)}${queryString({ ...q })}`)
  }

  withdrawals(user: string, q: PageQuery = {}): Promise<ApiResult<UserWithdrawals>> {
    return this.request("GET", `/v1/withdrawals/all/${seg(user)}${queryString({ ...q })}`)
  }

  /** The EVM wallet linked to `user` (extension); 404 when none. */
  wallet(user: string): Promise<ApiResult<WalletLink>> {
    return this.request("GET", `/v1/wallet/${seg(user)}`)
  }

  // ---- fees and rewards ----

  fees(): Promise<ApiResult<Fees>> {
    return this.request("GET", "/v1/fees")
  }

  rewardsConfig(): Promise<ApiResult<RewardsConfig>> {
    return this.request("GET", "/v1/rewards/config")
  }

  rewardsMe(user: string): Promise<ApiResult<RewardsMe>> {
    return this.request("GET", `/v1/rewards/me${queryString({ user })}`)
  }

  /** The same payload by wallet: a user key or a linked 0x wallet (extension). */
  rewardsWallet(wallet: string): Promise<ApiResult<RewardsMe>> {
    return this.request("GET", `/v1/rewards/wallet/${seg(wallet)}`)
  }

  leaderboard(q: { readonly days?: number; readonly limit?: number } = {}): Promise<ApiResult<Leaderboard>> {
    return this.request("GET", `/v1/rewards/leaderboard${queryString({ ...q })}`)
  }

  // ---- deposit service (`{deposit_url}`, SPEC §4 "Deposit service") ----

  /** The deposit address of an EVM wallet (0x + 40 hex; any case). */
  depositAddress(evmAddress: string): Promise<ApiResult<DepositAddress>> {
    return this.request("GET", `/v1/deposit/native-address/${seg(evmAddress)}`, undefined, {}, this.depositUrl)
  }

  /** The wallet's latest deposit stage (`idle` when none); poll until `credited`. */
  depositProgress(evmAddress: string): Promise<ApiResult<DepositProgressResponse>> {
    return this.request("GET", `/v1/deposit/progress/${seg(evmAddress)}`, undefined, {}, this.depositUrl)
  }

  // ---- LP bot (public read) ----

  lpStatus(user: string): Promise<ApiResult<LpStatus>> {
    return this.request("GET", `/v1/lp-bot/status${queryString({ user })}`)
  }
}
