// The wire shapes of the twinbook API as the client sees them: SPEC.md §2, §4, §6, §7
// plus the extensions of docs/api.md (marked "extension"). Every response shape is the
// `Schema.Type` of the API declaration's schema (src/api/declaration/wire.ts), so the
// client cannot drift from what the server is checked to answer; the inputs the client
// builds (requests, queries) and the WebSocket frames are written here. Type-only
// imports: nothing of Effect reaches the browser bundle. Money is micro-USDC, prices bps
// (0..10000) unless a field says 0..1, times unix seconds unless named `ts` (ms).
import type { Schema } from "effect"
import type * as W from "../api/declaration/wire.ts"
import type * as Dev from "../api/declaration/dev.ts"
import type { StrategySpec as StrategyWire } from "../lp/strategy-spec.ts"

export type Side = Schema.Schema.Type<typeof W.Side>
export type OutcomeSide = Schema.Schema.Type<typeof W.OutcomeSide>
export type OrderType = Schema.Schema.Type<typeof W.OrderType>
export type StpMode = Schema.Schema.Type<typeof W.StpMode>
export type MarketStatus = Schema.Schema.Type<typeof W.MarketStatus>
export type CandleInterval = Schema.Schema.Type<typeof W.CandleInterval>
export type Category = Schema.Schema.Type<typeof W.Category>

// ---- errors (SPEC §7) ----

/** `{ error, detail? }`; `429` adds `retry_after` seconds. */
export interface ErrorBody {
  readonly error: string
  readonly detail?: string
  readonly retry_after?: number
}

// ---- session (SPEC §4 "Session and builders") ----

export interface RegisterRequest {
  readonly user: string
  readonly name: string
  readonly signature: string
  readonly timestamp: number
}
export type RegisterResponse = Schema.Schema.Type<typeof W.RegisterResponse>

// ---- markets (SPEC §2 "Market", §4 "Markets") ----

export type OutcomeMarket = Schema.Schema.Type<typeof W.OutcomeMarket>

export type Market = Schema.Schema.Type<typeof W.Market>

export interface MarketsQuery {
  readonly status?: MarketStatus
  readonly category?: string
  readonly search?: string
  readonly ends_before?: number
  readonly ends_after?: number
  readonly neg_risk?: boolean
  readonly order?: "volume" | "expiry" | "created_at"
  readonly ascending?: boolean
  readonly limit?: number
  readonly offset?: number
}

export type MarketsPage = Schema.Schema.Type<typeof W.MarketsPage>

export type BookLevel = Schema.Schema.Type<typeof W.BookLevel>

/** YES terms, best first; `ts` in unix ms. */
export type BookSnapshot = Schema.Schema.Type<typeof W.BookSnapshot>

export type Trade = Schema.Schema.Type<typeof W.Trade>

export interface TradesQuery {
  readonly limit?: number
  /** Extension. */
  readonly offset?: number
}

export type MarketTrades = Schema.Schema.Type<typeof W.MarketTrades>

/** `o h l c` are YES probability 0..1; `v` contracts; `n` trades. */
export type Candle = Schema.Schema.Type<typeof W.Candle>

export interface CandlesQuery {
  readonly interval?: CandleInterval
  readonly from?: number
  readonly to?: number
}

export type Candles = Schema.Schema.Type<typeof W.Candles>

// ---- orders (SPEC §2 "Order request/response", §4 "Orders") ----

/** An order before signing: `price` in bps, `size` in contracts; `nonce` defaults (see ApiClient). */
export interface OrderInput {
  readonly market_id: string
  readonly side: Side
  readonly outcome: OutcomeSide
  readonly price: number
  readonly size: number
  readonly order_type?: OrderType
  readonly nonce?: number
  readonly stp?: StpMode
  readonly builder_api_key?: string
}

export interface OrderRequest extends OrderInput {
  readonly user: string
  readonly nonce: number
  readonly signature: string
  /** Extension: signed by this delegated LP session key instead of the user key. */
  readonly session_pub?: string
}

export type Fill = Schema.Schema.Type<typeof W.Fill>

export type OrderResponse = Schema.Schema.Type<typeof W.OrderResponse>

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

export interface PageQuery {
  readonly limit?: number
  readonly offset?: number
}

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

// ---- deposits, wallet link, withdraw (SPEC §4; docs/api.md) ----

export type DepositAddress = Schema.Schema.Type<typeof W.DepositAddress>

export type DepositProgress = Schema.Schema.Type<typeof W.DepositProgress>

export type DepositProgressResponse = Schema.Schema.Type<typeof W.DepositProgressResponse>

/** Extension (docs/api.md "Wallet link"). */
export interface WalletLinkRequest {
  readonly user: string
  readonly wallet: string
  readonly timestamp: number
  readonly signature: string
  readonly evm_signature: string
}

export type WalletLink = Schema.Schema.Type<typeof W.WalletLink>

/** docs/api.md "Withdraw". */
export interface WithdrawRequest {
  readonly user: string
  readonly amount_micro: number
  readonly nonce: number
  readonly signature: string
}

export type WithdrawResponse = Schema.Schema.Type<typeof W.WithdrawResponse>

/** Extension (docs/api.md "Last nonces"): `GET /v1/account/nonce`. */
export type AccountNonces = Schema.Schema.Type<typeof Dev.AccountNonces>

/** Extension (docs/api.md "Development faucet"): `POST /v1/dev/faucet`. */
export type FaucetResponse = Schema.Schema.Type<typeof Dev.FaucetResponse>

// ---- LP bot (SPEC §4 "LP bot"; docs/api.md "LP bot"; docs/lp.md "Wire form") ----

// The strategy's wire form is the server's own type (src/lp, which the browser bundle uses too).
export type {
  AdvancedStrategySpec as AdvancedStrategyWire,
  SimpleStrategySpec as SimpleStrategyWire,
  StrategySpec as StrategyWire
} from "../lp/strategy-spec.ts"
export type { PresetName as LpPreset } from "../lp/presets.ts"

export interface LpSessionNewRequest {
  readonly user: string
  readonly expires_in_secs: number
  readonly scope: "orders" | ReadonlyArray<"orders">
}

export type LpSessionNew = Schema.Schema.Type<typeof W.LpSessionNew>

export interface LpDelegateRequest {
  readonly user: string
  readonly session_pub: string
  readonly expires_at_unix: number
  readonly nonce: number
  readonly scope: "orders"
  readonly signature: string
}

export type LpDelegated = Schema.Schema.Type<typeof W.LpDelegated>

export interface LpStartRequest {
  readonly user: string
  readonly session_pub: string
  readonly markets: ReadonlyArray<string>
  readonly strategy: StrategyWire
}

export type LpMarketState = Schema.Schema.Type<typeof W.LpMarketState>

export type LpMarketStatus = Schema.Schema.Type<typeof W.LpMarketStatus>

export type LpSessionInfo = Schema.Schema.Type<typeof W.LpSessionInfo>

export type LpStatus = Schema.Schema.Type<typeof W.LpStatus>

export type LpStartResponse = Schema.Schema.Type<typeof W.LpStartResponse>

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
