// The wire shapes of the twinbook API as the client sees them: SPEC.md §2, §4, §6, §7
// plus the extensions of docs/api.md (marked "extension"). Every request body, query and
// response is the type of the API declaration's own schema (src/api/declaration), so the
// client cannot drift from what the server decodes and is checked to answer; only the
// WebSocket frames are written here. Type-only imports: nothing of Effect reaches the browser
// bundle. Money is micro-USDC, prices bps (0..10000) unless a field says 0..1, times unix
// seconds unless named `ts` (ms).
import type { Schema } from "effect"
import type { Api, QueryOf, RequestOf } from "./declared.ts"
import type * as W from "../domain/wire.ts"
import type * as Dev from "../api/declaration/dev.ts"
// In scope so the package's flattened types name the strategy (scripts/client-declarations.ts).
import type { StrategySpec as StrategyWire } from "../lp/strategy-spec.ts"

// ---- errors (SPEC §7) ----

/** `{ error, detail? }`; `429` adds `retry_after` seconds. */
export interface ErrorBody {
  readonly error: string
  readonly detail?: string
  readonly retry_after?: number
}

// ---- session (SPEC §4 "Session and builders") ----

export type RegisterRequest = RequestOf<Api["session"]["register"]>
export type RegisterResponse = Schema.Schema.Type<typeof W.RegisterResponse>

// ---- markets (SPEC §2 "Market", §4 "Markets") ----

export type OutcomeMarket = Schema.Schema.Type<typeof W.OutcomeMarket>

export type Market = Schema.Schema.Type<typeof W.Market>

export type MarketsQuery = QueryOf<Api["markets"]["list"]>

export type MarketsPage = Schema.Schema.Type<typeof W.MarketsPage>

export type BookLevel = Schema.Schema.Type<typeof W.BookLevel>

/** YES terms, best first; `ts` in unix ms. */
export type BookSnapshot = Schema.Schema.Type<typeof W.BookSnapshot>

export type Trade = Schema.Schema.Type<typeof W.Trade>

/** `offset` is an extension. */
export type TradesQuery = QueryOf<Api["markets"]["trades"]>

export type MarketTrades = Schema.Schema.Type<typeof W.MarketTrades>

/** `o h l c` are YES probability 0..1; `v` contracts; `n` trades. */
export type Candle = Schema.Schema.Type<typeof W.Candle>

export type CandlesQuery = QueryOf<Api["markets"]["candles"]>

export type Candles = Schema.Schema.Type<typeof W.Candles>

// ---- orders (SPEC §2 "Order request/response", §4 "Orders") ----

/** SPEC §2's order request; `session_pub` (extension) signs with a delegated LP session key instead of the user key. */
export type OrderRequest = RequestOf<Api["orders"]["place"]>

/** An order before signing: the request without what the client fills in; `nonce` defaults (see ApiClient). */
export type OrderInput = Omit<OrderRequest, "user" | "signature" | "nonce" | "session_pub"> & { readonly nonce?: number }

export type Fill = Schema.Schema.Type<typeof W.Fill>

export type OrderResponse = Schema.Schema.Type<typeof W.OrderResponse>

export type CancelRequest = RequestOf<Api["orders"]["cancel"]>

export type CancelAllRequest = RequestOf<Api["orders"]["cancelAll"]>

/** Extension (SPEC: "not shown"). */
export type CancelResponse = Schema.Schema.Type<typeof W.CancelResponse>

export type CancelAllResponse = Schema.Schema.Type<typeof W.CancelAllResponse>

/** Resting order, portfolio form. */
export type RestingOrder = Schema.Schema.Type<typeof W.RestingOrder>

export type OpenOrders = Schema.Schema.Type<typeof W.OpenOrders>

// ---- account reads (SPEC §4 "Account reads") ----

export type Balance = Schema.Schema.Type<typeof W.Balance>

export type Position = Schema.Schema.Type<typeof W.Position>

export type Positions = Schema.Schema.Type<typeof W.Positions>

export type PageQuery = QueryOf<Api["account"]["trades"]>

export type Page = Pick<UserTrades, "total" | "limit" | "offset">

export type UserTrades = Schema.Schema.Type<typeof W.UserTrades>

export type DepositStage = Schema.Schema.Type<typeof W.DepositStage>

export type DepositRow = Schema.Schema.Type<typeof W.DepositRow>

export type UserDeposits = Schema.Schema.Type<typeof W.UserDeposits>

export type WithdrawalRow = Schema.Schema.Type<typeof W.WithdrawalRow>

export type UserWithdrawals = Schema.Schema.Type<typeof W.UserWithdrawals>

// ---- fees and rewards (SPEC §4 "Fees and rewards"; docs/api.md) ----

export type Fees = Schema.Schema.Type<typeof W.Fees>

export type RewardsConfig = Schema.Schema.Type<typeof W.RewardsConfig>

export type RewardsMe = Schema.Schema.Type<typeof W.RewardsMe>

export type LeaderboardRow = Schema.Schema.Type<typeof W.LeaderboardRow>

export type Leaderboard = Schema.Schema.Type<typeof W.Leaderboard>

export type LeaderboardQuery = QueryOf<Api["fees"]["leaderboard"]>

// ---- deposits, wallet link, withdraw (SPEC §4; docs/api.md) ----

export type DepositAddress = Schema.Schema.Type<typeof W.DepositAddress>

export type DepositProgress = Schema.Schema.Type<typeof W.DepositProgress>

export type DepositProgressResponse = Schema.Schema.Type<typeof W.DepositProgressResponse>

/** Extension (docs/api.md "Wallet link"). */
export type WalletLinkRequest = RequestOf<Api["wallet"]["link"]>

export type WalletLink = Schema.Schema.Type<typeof W.WalletLink>

/** docs/api.md "Withdraw": `amount_micro` a positive integer, or its decimal string. */
export type WithdrawRequest = RequestOf<Api["wallet"]["withdraw"]>

export type WithdrawResponse = Schema.Schema.Type<typeof W.WithdrawResponse>

/** Extension (docs/api.md "Last nonces"): `GET /v1/account/nonce`. */
export type AccountNonces = Schema.Schema.Type<typeof Dev.AccountNonces>

/** Extension (docs/api.md "Development faucet"): `POST /v1/dev/faucet`. */
export type FaucetResponse = Schema.Schema.Type<typeof Dev.FaucetResponse>

// ---- LP bot (SPEC §4 "LP bot"; docs/api.md "LP bot"; docs/lp.md "Wire form") ----

// The strategy's wire form is the server's own type (src/lp, which the browser bundle uses too).
export type { StrategyWire }
export type { AdvancedStrategySpec as AdvancedStrategyWire, SimpleStrategySpec as SimpleStrategyWire } from "../lp/strategy-spec.ts"
export type { PresetName as LpPreset } from "../lp/presets.ts"

/** `scope`: "orders" (or ["orders"]). */
export type LpSessionNewRequest = RequestOf<Api["lp-bot"]["sessionNew"]>

export type LpSessionNew = Schema.Schema.Type<typeof W.LpSessionNew>

export type LpDelegateRequest = RequestOf<Api["lp-bot"]["delegate"]>

export type LpDelegated = Schema.Schema.Type<typeof W.LpDelegated>

/** `markets`: 1..20 market ids or slugs; `strategy`: a StrategyWire (docs/lp.md "Wire form"). */
export type LpStartRequest = RequestOf<Api["lp-bot"]["start"]>

/** Extension (docs/api.md "Development faucet"). */
export type FaucetRequest = RequestOf<Api["dev"]["faucet"]>

export type LpMarketState = Schema.Schema.Type<typeof W.LpMarketState>

export type LpMarketStatus = Schema.Schema.Type<typeof W.LpMarketStatus>

export type LpSessionInfo = Schema.Schema.Type<typeof W.LpSessionInfo>

export type LpStatus = Schema.Schema.Type<typeof W.LpStatus>

export type LpStartResponse = Schema.Schema.Type<typeof W.LpStartResponse>

export type LpStopRequest = RequestOf<Api["lp-bot"]["stop"]>

export type LpStopResponse = Schema.Schema.Type<typeof W.LpStopResponse>

// ---- WebSocket (SPEC §6) ----

export type Channel = `book:${string}` | `trades:${string}` | `user:${string}`

export type ClientFrame =
  | { readonly type: "subscribe"; readonly channel: string; readonly signature?: string; readonly timestamp?: number }
  | { readonly type: "unsubscribe"; readonly channel: string }
  | { readonly type: "ping" }

export interface PortfolioPosition {
  readonly market_id: string
  readonly outcome: "YES" | "NO"
  readonly size: number
  readonly avg_price: number
  readonly mark_price: number | null
  readonly cash_pnl: number
  readonly slug: string | null
  readonly redeemable: boolean
  readonly end_date: number | null
}

export interface PortfolioState {
  readonly balance: { readonly available: number; readonly locked: number; readonly total: number }
  readonly positions: ReadonlyArray<PortfolioPosition>
  readonly open_orders: ReadonlyArray<RestingOrder>
}

export type ServerFrame =
  | { readonly type: "subscribed"; readonly channel: string }
  | { readonly type: "unsubscribed"; readonly channel: string }
  | { readonly type: "pong"; readonly ts: number }
  | { readonly type: "book_update"; readonly market_id: string; readonly snapshot: BookSnapshot }
  | { readonly type: "trade"; readonly market_id: string; readonly trade: Schema.Schema.Type<typeof W.FeedTrade> }
  | { readonly type: "portfolio_snapshot" | "portfolio_update"; readonly user: string; readonly ts: number; readonly state: PortfolioState }
  | { readonly type: "error"; readonly code: string; readonly channel: string | null; readonly detail: string }
  | { readonly type: "portfolio_error"; readonly channel: string; readonly error: "unauthorized" | "address_mismatch" | "bad_request" }
