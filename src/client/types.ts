// The wire shapes of the twinbook API as the client sees them: SPEC.md §2, §4, §6, §7
// plus the extensions of docs/api.md (marked "extension"). One file, so the issue
// "One Effect runtime…" can later replace it with types derived from the API's single
// declaration without touching the client's methods. Money is micro-USDC, prices bps
// (0..10000) unless a field says 0..1, times unix seconds unless named `ts` (ms).
import type { StrategySpec as StrategyWire } from "../lp/strategy-spec.ts"

export type Side = "buy" | "sell"
export type OutcomeSide = "yes" | "no"
export type OrderType = "gtc" | "post_only" | "ioc" | "fok"
export type StpMode = "cancel_resting" | "cancel_taking" | "cancel_both"
export type MarketStatus = "active" | "halted" | "resolved"
export type CandleInterval = "1m" | "5m" | "1h" | "1d"
export type Category = "BTC" | "ETH" | "DOGE" | "SOL" | "XRP" | "BNB" | "Sports" | "Politics" | "Culture"

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
export interface RegisterResponse {
  readonly api_key: string
}

// ---- markets (SPEC §2 "Market", §4 "Markets") ----

export interface OutcomeMarket {
  readonly market_id: string
  /** Extensions: the outcome's label, slug, question, status and winner. */
  readonly label: string
  readonly slug: string
  readonly question: string
  readonly status: MarketStatus
  readonly winning_outcome: OutcomeSide | null
}

export interface Market {
  readonly event_id: string
  readonly question: string
  readonly status: MarketStatus
  readonly category: Category
  readonly slug: string
  readonly image: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly expiry: number
  readonly end_date: number
  readonly fee_bps: number
  /** Taker-side notional traded, micro-USDC. */
  readonly volume: number
  readonly neg_risk: boolean
  readonly outcomes: ReadonlyArray<OutcomeMarket>
  readonly resolution_metadata: Readonly<Record<string, unknown>>
  readonly resolution_source: string
  /** Extension. */
  readonly created_at: number
}

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

export interface MarketsPage {
  readonly markets: ReadonlyArray<Market>
  readonly total: number
  readonly limit: number
  readonly offset: number
}

export interface BookLevel {
  readonly price: number
  readonly size: number
}

/** YES terms, best first; `ts` in unix ms. */
export interface BookSnapshot {
  readonly market_id: string
  readonly bids: ReadonlyArray<BookLevel>
  readonly asks: ReadonlyArray<BookLevel>
  readonly ts: number
}

export interface Trade {
  readonly id: number
  /** The taker's own-outcome price, bps. */
  readonly price: number
  readonly size: number
  /** The taker's side. */
  readonly side: Side
  readonly time: number
  readonly market_id: string
  readonly maker: string
  readonly taker: string
  /** Taker fee, micro-USDC. */
  readonly fee: number
  /** REST lists only: both sides' builder fees, micro-USDC. */
  readonly builder_fee?: number
  /** Extensions. */
  readonly outcome: OutcomeSide
  readonly yes_price: number
  readonly kind: "normal" | "mint" | "merge"
  readonly maker_rebate: number
}

export interface TradesQuery {
  readonly limit?: number
  /** Extension. */
  readonly offset?: number
}

export interface MarketTrades {
  readonly trades: ReadonlyArray<Trade>
  readonly total: number
}

/** `o h l c` are YES probability 0..1; `v` contracts; `n` trades. */
export interface Candle {
  readonly t: number
  readonly o: number
  readonly h: number
  readonly l: number
  readonly c: number
  readonly v: number
  readonly n: number
}

export interface CandlesQuery {
  readonly interval?: CandleInterval
  readonly from?: number
  readonly to?: number
}

export interface Candles {
  readonly market_id: string
  readonly interval: CandleInterval
  readonly candles: ReadonlyArray<Candle>
}

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

export interface Fill {
  readonly trade_id: number
  readonly price: number
  readonly size: number
  readonly maker: string
  readonly maker_order_id: number
  readonly fee: number
  readonly builder_fee: number
  readonly kind: "normal" | "mint" | "merge"
}

export interface OrderResponse {
  readonly order_id: number
  readonly fills: ReadonlyArray<Fill>
  readonly remaining: number
  readonly market_id: string
  /** Extension. */
  readonly status: "filled" | "resting" | "cancelled" | "queued"
  /** Extension: present on a `202 queued` answer while trading is paused. */
  readonly queue_position?: number
}

/** Extension (SPEC: "not shown"). */
export interface CancelResponse {
  readonly order_id: number
  readonly cancelled: true
  readonly remaining: number
}

export interface CancelAllResponse {
  readonly cancelled: number
}

/** Resting order, portfolio form. */
export interface RestingOrder {
  readonly id: number
  readonly market_id: string
  readonly side: Side
  readonly outcome: OutcomeSide
  readonly price: number
  readonly original_size: number
  readonly remaining: number
  readonly created_at: number
}

export interface OpenOrders {
  readonly orders: ReadonlyArray<RestingOrder>
  readonly total: number
}

// ---- account reads (SPEC §4 "Account reads") ----

export interface Balance {
  readonly user: string
  readonly available: number
  readonly locked: number
  readonly total: number
}

export interface Position {
  readonly user: string
  readonly market_id: string
  readonly outcome: "YES" | "NO"
  readonly size: number
  readonly yes: number
  readonly no: number
  readonly yes_locked: number
  readonly no_locked: number
  readonly cost_basis: number
  /** 0..1 */
  readonly avg_price: number
  /** 0..1, or null with no mid and no trade. */
  readonly mark_price: number | null
  readonly cash_pnl: number
  readonly slug: string | null
  readonly question: string | null
  readonly redeemable: boolean
  readonly end_date: number | null
  readonly status: MarketStatus | null
}

export interface Positions {
  readonly positions: ReadonlyArray<Position>
}

export interface PageQuery {
  readonly limit?: number
  readonly offset?: number
}

export interface Page {
  readonly total: number
  readonly limit: number
  readonly offset: number
}

export interface UserTrades extends Page {
  readonly trades: ReadonlyArray<Trade>
}

export type DepositStage = "idle" | "detected" | "bridging" | "confirming" | "credited" | "error"

export interface DepositRow {
  readonly tx_signature: string
  readonly amount_micro: number
  readonly seen_at: number
  readonly credited_at: number | null
  readonly status: "pending" | "credited" | "error"
  /** Extensions. */
  readonly log_index: number
  readonly stage: DepositStage
  readonly error: string | null
}

export interface UserDeposits extends Page {
  readonly deposits: ReadonlyArray<DepositRow>
}

export interface WithdrawalRow {
  readonly recipient: string
  readonly chain: "native"
  readonly amount_micro: number
  readonly status: "pending" | "sent" | "confirmed" | "refunded"
  readonly tx_signature: string | null
  readonly created_at: number
  readonly confirmed_at: number | null
  /** Extensions. */
  readonly id: string
  readonly error: string | null
}

export interface UserWithdrawals extends Page {
  readonly withdrawals: ReadonlyArray<WithdrawalRow>
}

// ---- fees and rewards (SPEC §4 "Fees and rewards"; docs/api.md) ----

export interface Fees {
  readonly default: { readonly taker_fee_bps: number; readonly maker_rebate_bps: number }
  readonly maker_rebate_bps: number
  readonly per_category: Readonly<Record<string, { readonly taker_fee_bps: number }>>
  readonly per_market: Readonly<Record<string, { readonly taker_fee_bps: number; readonly slug: string }>>
}

export interface RewardsConfig {
  readonly daily_budget_micro_usdc: number
  readonly maker_rebate_bps: number
  readonly rewards_band_spread_bps_max: number
  readonly per_wallet_cap_pct: number
}

export interface RewardsMe {
  readonly user: string
  readonly wallet: string | null
  readonly today: {
    readonly day: string
    readonly day_start: number
    readonly estimate_micro_usdc: number
    readonly score: number
    readonly minutes_sampled: number
  }
  readonly pending: ReadonlyArray<{ readonly day: string; readonly day_start: number; readonly estimate_micro_usdc: number; readonly score: number }>
  readonly history: ReadonlyArray<{
    readonly day: string
    readonly day_start: number
    readonly micro_usdc: number
    readonly score: number
    readonly capped: boolean
    readonly paid_at: number
  }>
  readonly totals: { readonly paid_micro_usdc: number; readonly score: number; readonly days_paid: number }
}

export interface LeaderboardRow {
  readonly rank: number
  readonly maker: string
  readonly micro_usdc: number
  readonly score: number
  readonly days_active: number
}

export interface Leaderboard {
  readonly days: number
  readonly rows: ReadonlyArray<LeaderboardRow>
}

// ---- deposits, wallet link, withdraw (SPEC §4; docs/api.md) ----

export interface DepositAddress {
  readonly address: string
  readonly chain: "native"
  readonly chain_id?: number
  readonly token: "USDG"
  readonly token_address: string
  readonly min_usdg_micro: number
  readonly max_usdc_per_tx_micro: number
  readonly instructions: string
}

export interface DepositProgress {
  readonly stage: DepositStage
  readonly amount_micro?: number
  readonly tx_signature?: string
  readonly updated_at?: number
  readonly error?: string | null
}

export interface DepositProgressResponse {
  readonly data: DepositProgress
}

/** Extension (docs/api.md "Wallet link"). */
export interface WalletLinkRequest {
  readonly user: string
  readonly wallet: string
  readonly timestamp: number
  readonly signature: string
  readonly evm_signature: string
}

export interface WalletLink {
  readonly user: string
  readonly wallet: string
}

/** docs/api.md "Withdraw". */
export interface WithdrawRequest {
  readonly user: string
  readonly amount_micro: number
  readonly nonce: number
  readonly signature: string
}

export interface WithdrawResponse {
  readonly withdrawal_id: string
  readonly status: "pending"
  readonly recipient: string
  readonly chain: "native"
  readonly amount_micro: number
  readonly created_at: number
}

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

export interface LpSessionNew {
  readonly user: string
  readonly session_pub: string
  readonly scope: "orders"
  readonly expires_at_unix: number
  readonly nonce: number
  /** The delegation message to sign with the user key, hex. */
  readonly message_bytes_hex: string
  readonly created_at: number
}

export interface LpDelegateRequest {
  readonly user: string
  readonly session_pub: string
  readonly expires_at_unix: number
  readonly nonce: number
  readonly scope: "orders"
  readonly signature: string
}

export interface LpDelegated {
  readonly user: string
  readonly session_pub: string
  readonly scope: "orders"
  readonly status: "delegated"
  readonly expires_at_unix: number
  readonly nonce: number
  readonly delegated_at: number
}

export interface LpStartRequest {
  readonly user: string
  readonly session_pub: string
  readonly markets: ReadonlyArray<string>
  readonly strategy: StrategyWire
}

export type LpMarketState = "waiting" | "quoting" | "paused" | "stopped"

export interface LpMarketStatus {
  readonly market_id: string
  readonly slug: string
  readonly state: LpMarketState
  readonly stop_reason: null | "stop_loss" | "take_profit"
  readonly open_orders: number
  /** May end in .5. */
  readonly mid_bps: number | null
  readonly net_yes: number
  readonly pnl_micro_usdc: number
  readonly last_action_at: number | null
}

export interface LpSessionInfo {
  readonly session_pub: string
  readonly scope: "orders"
  readonly created_at: number
  readonly delegated: boolean
  readonly delegated_at: number | null
  readonly expires_at_unix: number
  readonly nonce: number | null
  readonly revoked: boolean
  readonly revoked_at: number | null
  readonly expired: boolean
}

export interface LpStatus {
  readonly user: string
  readonly status: "none" | "running" | "stopped"
  readonly session_pub: string | null
  readonly started_at: number | null
  readonly stopped_at: number | null
  readonly stop_reason: null | "user" | "replaced" | "session_expired" | "session_revoked"
  readonly strategy: StrategyWire | null
  readonly markets: ReadonlyArray<LpMarketStatus>
  readonly open_orders: number
  readonly sessions: ReadonlyArray<LpSessionInfo>
}

export interface LpStartResponse extends LpStatus {
  readonly replaced: boolean
  readonly cancelled_orders: number
}

export interface LpStopResponse {
  readonly user: string
  readonly status: "stopped"
  readonly was_running: boolean
  readonly cancelled_orders: number
  readonly revoked_sessions: ReadonlyArray<string>
}

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
  | { readonly type: "trade"; readonly market_id: string; readonly trade: Omit<Trade, "builder_fee"> }
  | { readonly type: "portfolio_snapshot" | "portfolio_update"; readonly user: string; readonly ts: number; readonly state: PortfolioState }
  | { readonly type: "error"; readonly code: string; readonly channel: string | null; readonly detail: string }
  | { readonly type: "portfolio_error"; readonly channel: string; readonly error: "unauthorized" | "address_mismatch" | "bad_request" }
