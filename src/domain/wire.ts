// The response shapes of the API (SPEC §2, §4 and the extensions of docs/api.md), as
// Effect Schemas: the declaration (api.ts) gives each route's responses from these, the
// OpenAPI document renders them, the typed client's wire types are `Schema.Type` of them
// (src/client/types.ts) and the black-box suite decodes every response with them.
// Money is micro-USDC, prices bps (0..10000) unless a field says 0..1, times unix
// seconds unless named `ts`/`*_ms` (milliseconds).
import { Schema } from "effect"
import type { StrategySpec } from "../lp/strategy-spec.ts"

const Int = Schema.Int
const Str = Schema.String
const Bool = Schema.Boolean
const Num = Schema.Number
const NullOr = Schema.NullOr
const Opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })
const Arr = Schema.Array

export const Side = Schema.Literal("buy", "sell")
export const OutcomeSide = Schema.Literal("yes", "no")
export const OrderType = Schema.Literal("gtc", "post_only", "ioc", "fok")
export const StpMode = Schema.Literal("cancel_resting", "cancel_taking", "cancel_both")
export const MarketStatus = Schema.Literal("active", "halted", "resolved")
export const CandleInterval = Schema.Literal("1m", "5m", "1h", "1d")
export const Category = Schema.Literal("BTC", "ETH", "DOGE", "SOL", "XRP", "BNB", "Sports", "Politics", "Culture")
export const DepositStage = Schema.Literal("idle", "detected", "bridging", "confirming", "credited", "error")
const TradeKind = Schema.Literal("normal", "mint", "merge")

// ---- session ----

export const RegisterResponse = Schema.Struct({ api_key: Str }).annotations({ identifier: "RegisterResponse" })

// ---- markets ----

export const OutcomeMarket = Schema.Struct({
  market_id: Str,
  /** Extensions: the outcome's label, slug, question, status and winner. */
  label: Str,
  slug: Str,
  question: Str,
  status: MarketStatus,
  winning_outcome: NullOr(OutcomeSide)
}).annotations({ identifier: "OutcomeMarket" })

export const Market = Schema.Struct({
  event_id: Str,
  question: Str,
  status: MarketStatus,
  category: Category,
  slug: Str,
  image: Str,
  description: Str,
  tags: Arr(Str),
  expiry: Int,
  end_date: Int,
  fee_bps: Int,
  /** Taker-side notional traded, micro-USDC. */
  volume: Int,
  neg_risk: Bool,
  outcomes: Arr(OutcomeMarket),
  resolution_metadata: Schema.Record({ key: Str, value: Schema.Unknown }),
  resolution_source: Str,
  /** Extension. */
  created_at: Int
}).annotations({ identifier: "Market" })

export const MarketsPage = Schema.Struct({ markets: Arr(Market), total: Int, limit: Int, offset: Int }).annotations({ identifier: "MarketsPage" })

export const BookLevel = Schema.Struct({ price: Int, size: Int }).annotations({ identifier: "BookLevel" })

/** YES terms, best first; `ts` in unix ms. */
export const BookSnapshot = Schema.Struct({ market_id: Str, bids: Arr(BookLevel), asks: Arr(BookLevel), ts: Int }).annotations({ identifier: "BookSnapshot" })

const tradeFields = {
  id: Int,
  /** The taker's own-outcome price, bps. */
  price: Int,
  size: Int,
  /** The taker's side. */
  side: Side,
  time: Int,
  market_id: Str,
  maker: Str,
  taker: Str,
  /** Taker fee, micro-USDC. */
  fee: Int,
  /** Extensions. */
  outcome: OutcomeSide,
  yes_price: Int,
  kind: TradeKind,
  maker_rebate: Int
}

/** The WebSocket trade frame's trade: the REST row without `builder_fee`. */
export const FeedTrade = Schema.Struct(tradeFields).annotations({ identifier: "FeedTrade" })

export const Trade = Schema.Struct({
  ...tradeFields,
  /** REST lists only: both sides' builder fees, micro-USDC. */
  builder_fee: Opt(Int)
}).annotations({ identifier: "Trade" })

export const MarketTrades = Schema.Struct({ trades: Arr(Trade), total: Int }).annotations({ identifier: "MarketTrades" })

/** `o h l c` are YES probability 0..1; `v` contracts; `n` trades. */
export const Candle = Schema.Struct({ t: Int, o: Num, h: Num, l: Num, c: Num, v: Int, n: Int }).annotations({ identifier: "Candle" })

export const Candles = Schema.Struct({ market_id: Str, interval: CandleInterval, candles: Arr(Candle) }).annotations({ identifier: "Candles" })

// ---- orders ----

export const Fill = Schema.Struct({
  trade_id: Int,
  price: Int,
  size: Int,
  maker: Str,
  maker_order_id: Int,
  fee: Int,
  builder_fee: Int,
  kind: TradeKind
}).annotations({ identifier: "Fill" })

export const OrderResponse = Schema.Struct({
  order_id: Int,
  fills: Arr(Fill),
  remaining: Int,
  market_id: Str,
  /** Extension. */
  status: Schema.Literal("filled", "resting", "cancelled", "queued"),
  /** Extension: present on a `202 queued` answer while trading is paused. */
  queue_position: Opt(Int)
}).annotations({ identifier: "OrderResponse" })

/** Extension (SPEC: "not shown"). */
export const CancelResponse = Schema.Struct({ order_id: Int, cancelled: Schema.Literal(true), remaining: Int }).annotations({ identifier: "CancelResponse" })

export const CancelAllResponse = Schema.Struct({ cancelled: Int }).annotations({ identifier: "CancelAllResponse" })

/** Resting order, portfolio form. */
export const RestingOrder = Schema.Struct({
  id: Int,
  market_id: Str,
  side: Side,
  outcome: OutcomeSide,
  price: Int,
  original_size: Int,
  remaining: Int,
  created_at: Int
}).annotations({ identifier: "RestingOrder" })

export const OpenOrders = Schema.Struct({ orders: Arr(RestingOrder), total: Int }).annotations({ identifier: "OpenOrders" })

// ---- account reads ----

export const Balance = Schema.Struct({ user: Str, available: Int, locked: Int, total: Int }).annotations({ identifier: "Balance" })

export const Position = Schema.Struct({
  user: Str,
  market_id: Str,
  outcome: Schema.Literal("YES", "NO"),
  size: Int,
  yes: Int,
  no: Int,
  yes_locked: Int,
  no_locked: Int,
  cost_basis: Int,
  /** 0..1 */
  avg_price: Num,
  /** 0..1, or null with no mid and no trade. */
  mark_price: NullOr(Num),
  cash_pnl: Int,
  slug: NullOr(Str),
  question: NullOr(Str),
  redeemable: Bool,
  end_date: NullOr(Int),
  status: NullOr(MarketStatus)
}).annotations({ identifier: "Position" })

export const Positions = Schema.Struct({ positions: Arr(Position) }).annotations({ identifier: "Positions" })

const page = { total: Int, limit: Int, offset: Int }

export const UserTrades = Schema.Struct({ trades: Arr(Trade), ...page }).annotations({ identifier: "UserTrades" })

export const DepositRow = Schema.Struct({
  tx_signature: Str,
  amount_micro: Int,
  seen_at: Int,
  credited_at: NullOr(Int),
  status: Schema.Literal("pending", "credited", "error"),
  /** Extensions. */
  log_index: Int,
  stage: DepositStage,
  error: NullOr(Str)
}).annotations({ identifier: "DepositRow" })

export const UserDeposits = Schema.Struct({ deposits: Arr(DepositRow), ...page }).annotations({ identifier: "UserDeposits" })

export const WithdrawalRow = Schema.Struct({
  recipient: Str,
  chain: Schema.Literal("native"),
  amount_micro: Int,
  status: Schema.Literal("pending", "sent", "confirmed", "refunded"),
  tx_signature: NullOr(Str),
  created_at: Int,
  confirmed_at: NullOr(Int),
  /** Extensions. */
  id: Str,
  error: NullOr(Str)
}).annotations({ identifier: "WithdrawalRow" })

export const UserWithdrawals = Schema.Struct({ withdrawals: Arr(WithdrawalRow), ...page }).annotations({ identifier: "UserWithdrawals" })

// ---- fees and rewards ----

export const Fees = Schema.Struct({
  default: Schema.Struct({ taker_fee_bps: Int, maker_rebate_bps: Int }),
  maker_rebate_bps: Int,
  per_category: Schema.Record({ key: Str, value: Schema.Struct({ taker_fee_bps: Int }) }),
  per_market: Schema.Record({ key: Str, value: Schema.Struct({ taker_fee_bps: Int, slug: Str }) })
}).annotations({ identifier: "Fees" })

export const RewardsConfig = Schema.Struct({
  daily_budget_micro_usdc: Int,
  maker_rebate_bps: Int,
  rewards_band_spread_bps_max: Int,
  per_wallet_cap_pct: Num
}).annotations({ identifier: "RewardsConfig" })

const dayFields = { day: Str, day_start: Int }

export const RewardsMe = Schema.Struct({
  user: Str,
  wallet: NullOr(Str),
  today: Schema.Struct({ ...dayFields, estimate_micro_usdc: Int, score: Num, minutes_sampled: Int }),
  pending: Arr(Schema.Struct({ ...dayFields, estimate_micro_usdc: Int, score: Num })),
  history: Arr(Schema.Struct({ ...dayFields, micro_usdc: Int, score: Num, capped: Bool, paid_at: Int })),
  totals: Schema.Struct({ paid_micro_usdc: Int, score: Num, days_paid: Int })
}).annotations({ identifier: "RewardsMe" })

export const LeaderboardRow = Schema.Struct({ rank: Int, maker: Str, micro_usdc: Int, score: Num, days_active: Int }).annotations({ identifier: "LeaderboardRow" })

export const Leaderboard = Schema.Struct({ days: Int, rows: Arr(LeaderboardRow) }).annotations({ identifier: "Leaderboard" })

// ---- deposits, wallet link, withdraw ----

export const DepositAddress = Schema.Struct({
  address: Str,
  chain: Schema.Literal("native"),
  chain_id: Opt(Int),
  token: Schema.Literal("USDG"),
  token_address: Str,
  min_usdg_micro: Int,
  max_usdc_per_tx_micro: Int,
  instructions: Str
}).annotations({ identifier: "DepositAddress" })

export const DepositProgress = Schema.Struct({
  stage: DepositStage,
  amount_micro: Opt(Int),
  tx_signature: Opt(Str),
  updated_at: Opt(Int),
  error: Opt(NullOr(Str))
}).annotations({ identifier: "DepositProgress" })

export const DepositProgressResponse = Schema.Struct({ data: DepositProgress }).annotations({ identifier: "DepositProgressResponse" })

/** Extension (docs/api.md "Wallet link"). */
export const WalletLink = Schema.Struct({ user: Str, wallet: Str }).annotations({ identifier: "WalletLink" })

export const WithdrawResponse = Schema.Struct({
  withdrawal_id: Str,
  status: Schema.Literal("pending"),
  recipient: Str,
  chain: Schema.Literal("native"),
  amount_micro: Int,
  created_at: Int
}).annotations({ identifier: "WithdrawResponse" })

// ---- LP bot ----

/** The strategy's wire form (src/lp/strategy-spec.ts, docs/lp.md "Wire form"): checked by its own parser. */
export const StrategyWire = Schema.declare((u: unknown): u is StrategySpec => typeof u === "object" && u !== null && !Array.isArray(u), {
  identifier: "StrategySpec",
  jsonSchema: { type: "object", description: "strategy spec: docs/lp.md \"Wire form\"" }
})

export const LpSessionNew = Schema.Struct({
  user: Str,
  session_pub: Str,
  scope: Schema.Literal("orders"),
  expires_at_unix: Int,
  nonce: Int,
  /** The delegation message to sign with the user key, hex. */
  message_bytes_hex: Str,
  created_at: Int
}).annotations({ identifier: "LpSessionNew" })

export const LpDelegated = Schema.Struct({
  user: Str,
  session_pub: Str,
  scope: Schema.Literal("orders"),
  status: Schema.Literal("delegated"),
  expires_at_unix: Int,
  nonce: Int,
  delegated_at: Int
}).annotations({ identifier: "LpDelegated" })

export const LpMarketState = Schema.Literal("waiting", "quoting", "paused", "stopped")

export const LpMarketStatus = Schema.Struct({
  market_id: Str,
  slug: Str,
  state: LpMarketState,
  stop_reason: NullOr(Schema.Literal("stop_loss", "take_profit")),
  open_orders: Int,
  /** May end in .5. */
  mid_bps: NullOr(Num),
  net_yes: Int,
  pnl_micro_usdc: Int,
  last_action_at: NullOr(Int)
}).annotations({ identifier: "LpMarketStatus" })

export const LpSessionInfo = Schema.Struct({
  session_pub: Str,
  scope: Schema.Literal("orders"),
  created_at: Int,
  delegated: Bool,
  delegated_at: NullOr(Int),
  expires_at_unix: Int,
  nonce: NullOr(Int),
  revoked: Bool,
  revoked_at: NullOr(Int),
  expired: Bool
}).annotations({ identifier: "LpSessionInfo" })

const lpStatusFields = {
  user: Str,
  status: Schema.Literal("none", "running", "stopped"),
  session_pub: NullOr(Str),
  started_at: NullOr(Int),
  stopped_at: NullOr(Int),
  stop_reason: NullOr(Schema.Literal("user", "replaced", "session_expired", "session_revoked")),
  strategy: NullOr(StrategyWire),
  markets: Arr(LpMarketStatus),
  open_orders: Int,
  sessions: Arr(LpSessionInfo)
}

export const LpStatus = Schema.Struct(lpStatusFields).annotations({ identifier: "LpStatus" })

export const LpStartResponse = Schema.Struct({ ...lpStatusFields, replaced: Bool, cancelled_orders: Int }).annotations({ identifier: "LpStartResponse" })

export const LpStopResponse = Schema.Struct({
  user: Str,
  status: Schema.Literal("stopped"),
  was_running: Bool,
  cancelled_orders: Int,
  revoked_sessions: Arr(Str)
}).annotations({ identifier: "LpStopResponse" })

// ---- operator (extension; docs/api.md "Operator API") ----

export const MarketStatusChanged = Schema.Struct({
  market_id: Str,
  status: MarketStatus,
  winning_outcome: NullOr(OutcomeSide),
  redeemed: Int
}).annotations({ identifier: "MarketStatusChanged" })

export const TradingSurface = Schema.Struct({ trading: Schema.Literal("open", "closed", "paused"), released_from_queue: Int }).annotations({ identifier: "TradingSurface" })

export const LpSurface = Schema.Struct({ lp: Schema.Literal("open", "closed") }).annotations({ identifier: "LpSurface" })

export const FeesChanged = Schema.Struct({
  default_taker_fee_bps: Int,
  maker_rebate_bps: Int,
  market_id: Opt(Str),
  taker_fee_bps: Opt(Int)
}).annotations({ identifier: "FeesChanged" })

export const BuilderRecord = Schema.Struct({ user: Str, name: Str, api_key: Str, fee_bps: Int, enabled: Bool }).annotations({ identifier: "BuilderRecord" })

export const EngineBinding = Schema.Struct({ withdraw: Schema.Literal("up", "unreachable", "disabled") }).annotations({ identifier: "EngineBinding" })

export const Credited = Schema.Struct({ user: Str, available: Int }).annotations({ identifier: "Credited" })

export const ChainStatus = Schema.Struct({
  state: Str,
  checkpoint: NullOr(Schema.Struct({ block_number: Int, hash: Str })),
  saved_through_block: NullOr(Int),
  halt: NullOr(
    Schema.Struct({
      reason: Str,
      block_number: Int,
      expected_hash: NullOr(Str),
      found_hash: NullOr(Str),
      head: Int,
      at: Int
    })
  )
}).annotations({ identifier: "ChainStatus" })

export const ClockStatus = Schema.Struct({
  wall_ms: Int,
  mono_ms: Int,
  journal_ms: Int,
  wall_minus_journal_ms: Int,
  steps_detected: Int,
  last_step: NullOr(Schema.Struct({ direction: Schema.Literal("back", "forward"), step_ms: Int, at_wall_ms: Int })),
  thresholds: Schema.Struct({ back_ms: Int, forward_ms: Int })
}).annotations({ identifier: "ClockStatus" })

// ---- meta ----

/** An OpenAPI document (validated by its own test, not re-described here). */
export const OpenApiDocument = Schema.Record({ key: Str, value: Schema.Unknown }).annotations({ identifier: "OpenApiDocument", jsonSchema: { type: "object", description: "an OpenAPI 3.1 document" } })
