// The public half of the twinbook client: every read of SPEC §4 that needs no key
// (markets, books, trades, candles, account reads of any user, fees, rewards, the
// deposit service, LP status), over any fetch-like transport: the browser's or Node's
// `fetch` live, the in-process transport in simulation. Browser-safe. Each method names its
// declared route (`call`): method, path and types come from the declaration.
import { API_TABLE, DEPOSIT_TABLE, fillPath, type RouteLine } from "../api/declaration/table.ts"
import { ApiFailure, type ApiResult } from "./errors.ts"
import type {
  Balance,
  Candles,
  CandlesQuery,
  DepositAddress,
  DepositProgressResponse,
  Fees,
  Leaderboard,
  LeaderboardQuery,
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

/** The `:name` parameters of a path, as an object of strings. */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}` ? { readonly [K in Name]: string } & PathParams<`/${Rest}`> : P extends `${string}:${infer Name}` ? { readonly [K in Name]: string } : {}

/** A call's arguments: the path's parameters (required when it has any), a query, a body. */
export type CallArgs<P extends string> = ({} extends PathParams<P> ? { readonly path?: never } : { readonly path: PathParams<P> }) & {
  readonly query?: Readonly<Record<string, QueryValue>>
  readonly body?: unknown
}

/** `?a=1&b=x` from the defined values, in the given order; "" when none. */
export const queryString = (q: Readonly<Record<string, QueryValue>>): string => {
  const parts = Object.entries(q)
    .filter((e): e is [string, string | number | boolean] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
  return parts.length === 0 ? "" : `?${parts.join("&")}`
}


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

  /**
   * One declared route: its method and path from the route table (src/api/declaration/table.ts),
   * the path's `:name` parameters filled in from `args.path`, the query and body sent as given.
   */
  call<T = unknown, const L extends RouteLine = RouteLine>(line: L, args: CallArgs<L["path"]> = {} as CallArgs<L["path"]>, base = this.baseUrl): Promise<ApiResult<T>> {
    const a = args as { readonly path?: Readonly<Record<string, string>>; readonly query?: Readonly<Record<string, QueryValue>>; readonly body?: unknown }
    return this.request<T>(line.method, `${fillPath(line.path, a.path ?? {})}${queryString({ ...a.query })}`, a.body, {}, base)
  }

  // ---- markets (SPEC §4 "Markets") ----

  markets(q: MarketsQuery = {}): Promise<ApiResult<MarketsPage>> {
    return this.call(API_TABLE.markets.list, { query: q })
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
    return this.call(API_TABLE.markets.get, { path: { id } })
  }

  book(marketId: string): Promise<ApiResult<BookSnapshot>> {
    return this.call(API_TABLE.markets.book, { path: { id: marketId } })
  }

  /** The market's trades, newest first. */
  marketTrades(marketId: string, q: TradesQuery = {}): Promise<ApiResult<MarketTrades>> {
    return this.call(API_TABLE.markets.trades, { path: { id: marketId }, query: q })
  }

  candles(marketId: string, q: CandlesQuery = {}): Promise<ApiResult<Candles>> {
    return this.call(API_TABLE.markets.candles, { path: { id: marketId }, query: q })
  }

  // ---- account reads of any user (SPEC §4 "Account reads") ----

  balance(user: string): Promise<ApiResult<Balance>> {
    return this.call(API_TABLE.account.balance, { path: { user } })
  }

  position(marketId: string, user: string): Promise<ApiResult<Position>> {
    return this.call(API_TABLE.account.position, { path: { market_id: marketId, user } })
  }

  positions(user: string): Promise<ApiResult<Positions>> {
    return this.call(API_TABLE.account.positions, { path: { user } })
  }

  /** Live resting orders. */
  orders(user: string): Promise<ApiResult<OpenOrders>> {
    return this.call(API_TABLE.orders.open, { path: { user } })
  }

  /** Every fill as maker or taker, newest first. */
  trades(user: string, q: PageQuery = {}): Promise<ApiResult<UserTrades>> {
    return this.call(API_TABLE.account.trades, { path: { user }, query: q })
  }

  deposits(user: string, q: PageQuery = {}): Promise<ApiResult<UserDeposits>> {
    return this.call(API_TABLE.account.deposits, { path: { user }, query: q })
  }

  withdrawals(user: string, q: PageQuery = {}): Promise<ApiResult<UserWithdrawals>> {
    return this.call(API_TABLE.account.withdrawals, { path: { user }, query: q })
  }

  /** The EVM wallet linked to `user` (extension); 404 when none. */
  wallet(user: string): Promise<ApiResult<WalletLink>> {
    return this.call(API_TABLE.wallet.get, { path: { user } })
  }

  // ---- fees and rewards ----

  fees(): Promise<ApiResult<Fees>> {
    return this.call(API_TABLE.fees.fees, {})
  }

  rewardsConfig(): Promise<ApiResult<RewardsConfig>> {
    return this.call(API_TABLE.fees.rewardsConfig, {})
  }

  rewardsMe(user: string): Promise<ApiResult<RewardsMe>> {
    return this.call(API_TABLE.fees.rewardsMe, { query: { user } })
  }

  /** The same payload by wallet: a user key or a linked 0x wallet (extension). */
  rewardsWallet(wallet: string): Promise<ApiResult<RewardsMe>> {
    return this.call(API_TABLE.fees.rewardsWallet, { path: { wallet } })
  }

  leaderboard(q: LeaderboardQuery = {}): Promise<ApiResult<Leaderboard>> {
    return this.call(API_TABLE.fees.leaderboard, { query: q })
  }

  // ---- deposit service (`{deposit_url}`, SPEC §4 "Deposit service") ----

  /** The deposit address of an EVM wallet (0x + 40 hex; any case). */
  depositAddress(evmAddress: string): Promise<ApiResult<DepositAddress>> {
    return this.call(DEPOSIT_TABLE.deposit.nativeAddress, { path: { user_address: evmAddress } }, this.depositUrl)
  }

  /** The wallet's latest deposit stage (`idle` when none); poll until `credited`. */
  depositProgress(evmAddress: string): Promise<ApiResult<DepositProgressResponse>> {
    return this.call(DEPOSIT_TABLE.deposit.progress, { path: { user_address: evmAddress } }, this.depositUrl)
  }

  // ---- LP bot (public read) ----

  lpStatus(user: string): Promise<ApiResult<LpStatus>> {
    return this.call(API_TABLE["lp-bot"].status, { query: { user } })
  }
}
