// Commands in, events out. Every command carries its sequence number and its
// time (stamped by the caller from the Clock layer), so a journal of commands
// replays to the same state bit for bit.

export type Side = "buy" | "sell"
export type Outcome = "yes" | "no"
export type OrderType = "gtc" | "post_only" | "ioc" | "fok"
export type Stp = "cancel_resting" | "cancel_taking" | "cancel_both"
export type MarketStatus = "active" | "halted" | "resolved"
export type SettlementKind = "normal" | "mint" | "merge"

export const SIDES: ReadonlyArray<Side> = ["buy", "sell"]
export const OUTCOMES: ReadonlyArray<Outcome> = ["yes", "no"]
export const ORDER_TYPES: ReadonlyArray<OrderType> = ["gtc", "post_only", "ioc", "fok"]
export const STP_MODES: ReadonlyArray<Stp> = ["cancel_resting", "cancel_taking", "cancel_both"]
export const MARKET_STATUSES: ReadonlyArray<MarketStatus> = ["active", "halted", "resolved"]

interface CommandBase {
  readonly seq: number
  readonly tsSec: number
}

export interface CreateMarket extends CommandBase {
  readonly type: "create_market"
  readonly marketId: string
  /** Taker fee for this market; the engine default when omitted. */
  readonly takerFeeBps?: number
}

export interface PlaceOrder extends CommandBase {
  readonly type: "place_order"
  readonly user: string
  readonly marketId: string
  readonly side: Side
  readonly outcome: Outcome
  readonly priceBps: number
  readonly size: number
  readonly orderType: OrderType
  readonly nonce: number
  /** Self-trade prevention; `cancel_resting` when omitted (or undefined). */
  readonly stp?: Stp | undefined
  readonly builderKey?: string | undefined
}

export interface CancelOrder extends CommandBase {
  readonly type: "cancel_order"
  readonly user: string
  readonly orderId: number
}

export interface CancelAll extends CommandBase {
  readonly type: "cancel_all"
  readonly user: string
  /** Limit to one market; every market when omitted. */
  readonly marketId?: string
}

export interface Credit extends CommandBase {
  readonly type: "credit"
  readonly user: string
  readonly amountMicro: number
  /** Where the money came from (deposit tx hash and log index, reward day…). */
  readonly ref: string
}

export interface Debit extends CommandBase {
  readonly type: "debit"
  readonly user: string
  readonly amountMicro: number
  /** Per-user withdraw nonce; must be strictly greater than the last accepted one. */
  readonly withdrawNonce: number
  readonly ref: string
}

export interface SetMarketStatus extends CommandBase {
  readonly type: "set_market_status"
  readonly marketId: string
  readonly status: MarketStatus
  /** Required when (and only when) status is `resolved`. */
  readonly winningOutcome?: Outcome
}

export interface SetFees extends CommandBase {
  readonly type: "set_fees"
  /** With a market: that market's taker fee. Without: the default for new markets. */
  readonly marketId?: string
  readonly takerFeeBps?: number
  /** Global maker rebate. */
  readonly makerRebateBps?: number
}

export interface SetBuilder extends CommandBase {
  readonly type: "set_builder"
  readonly apiKey: string
  readonly wallet: string
  readonly feeBps: number
  readonly enabled: boolean
}

export interface Redeem extends CommandBase {
  readonly type: "redeem"
  readonly user: string
  readonly marketId: string
}

export type Command =
  | CreateMarket
  | PlaceOrder
  | CancelOrder
  | CancelAll
  | Credit
  | Debit
  | SetMarketStatus
  | SetFees
  | SetBuilder
  | Redeem

export type CommandType = Command["type"]

/** Stable reason codes for rejected commands. A rejection changes nothing. */
export type RejectReason =
  | "bad_sequence"
  | "bad_time"
  | "invalid_command"
  | "invalid_user"
  | "invalid_market_id"
  | "invalid_side"
  | "invalid_outcome"
  | "invalid_order_type"
  | "invalid_stp"
  | "invalid_price"
  | "invalid_size"
  | "invalid_nonce"
  | "invalid_amount"
  | "invalid_fee"
  | "invalid_status"
  | "unknown_market"
  | "market_exists"
  | "market_halted"
  | "market_resolved"
  | "market_not_resolved"
  | "nonce_stale"
  | "withdraw_nonce_stale"
  | "dust_order"
  | "unknown_builder"
  | "would_cross"
  | "insufficient_balance"
  | "insufficient_shares"
  | "fok_unfilled"
  | "order_not_found"
  | "nothing_to_redeem"
  | "amount_overflow"

export type CancelReason = "user" | "stp" | "ioc" | "resolution"

export interface MarketCreatedEvent {
  readonly type: "market_created"
  readonly marketId: string
  readonly takerFeeBps: number
}

export interface MarketStatusEvent {
  readonly type: "market_status"
  readonly marketId: string
  readonly status: MarketStatus
  readonly winningOutcome: Outcome | null
}

export interface FeesSetEvent {
  readonly type: "fees_set"
  readonly marketId: string | null
  readonly takerFeeBps: number | null
  readonly makerRebateBps: number
  readonly defaultTakerFeeBps: number
}

export interface BuilderSetEvent {
  readonly type: "builder_set"
  readonly apiKey: string
  readonly wallet: string
  readonly feeBps: number
  readonly enabled: boolean
}

export interface RejectedEvent {
  readonly type: "rejected"
  readonly command: CommandType
  readonly reason: RejectReason
  /** The user the command was for, or null for operator commands. */
  readonly user: string | null
}

export interface OrderAcceptedEvent {
  readonly type: "order_accepted"
  readonly orderId: number
  readonly user: string
  readonly marketId: string
  readonly side: Side
  readonly outcome: Outcome
  readonly priceBps: number
  readonly size: number
  readonly orderType: OrderType
  readonly stp: Stp
  readonly nonce: number
  readonly builderKey: string | null
  readonly tsSec: number
}

export interface FillEvent {
  readonly type: "fill"
  readonly tradeId: number
  readonly marketId: string
  readonly kind: SettlementKind
  /** Execution price in YES terms: always the resting (maker) order's price. */
  readonly yesPriceBps: number
  readonly size: number
  readonly tsSec: number
  readonly takerOrderId: number
  readonly takerUser: string
  readonly takerSide: Side
  readonly takerOutcome: Outcome
  /** Execution price in the taker's own outcome terms. */
  readonly takerPriceBps: number
  readonly makerOrderId: number
  readonly makerUser: string
  readonly makerSide: Side
  readonly makerOutcome: Outcome
  readonly makerPriceBps: number
  readonly makerRemaining: number
  readonly takerFeeMicro: number
  readonly makerRebateMicro: number
  readonly takerBuilderFeeMicro: number
  readonly makerBuilderFeeMicro: number
  readonly takerBuilderWallet: string | null
  readonly makerBuilderWallet: string | null
}

export interface OrderRestedEvent {
  readonly type: "order_rested"
  readonly orderId: number
  readonly remaining: number
}

export interface OrderCancelledEvent {
  readonly type: "order_cancelled"
  readonly orderId: number
  readonly user: string
  readonly marketId: string
  readonly remaining: number
  readonly reason: CancelReason
}

export interface CreditedEvent {
  readonly type: "credited"
  readonly user: string
  readonly amountMicro: number
  readonly ref: string
}

export interface DebitedEvent {
  readonly type: "debited"
  readonly user: string
  readonly amountMicro: number
  readonly withdrawNonce: number
  readonly ref: string
}

export interface RedeemedEvent {
  readonly type: "redeemed"
  readonly user: string
  readonly marketId: string
  readonly winningShares: number
  readonly losingShares: number
  readonly payoutMicro: number
}

/** Emitted once per touched account at the end of a command: its new state. */
export interface BalanceEvent {
  readonly type: "balance"
  readonly user: string
  readonly availableMicro: number
  readonly lockedMicro: number
}

/** Emitted once per touched position at the end of a command: its new state. */
export interface PositionEvent {
  readonly type: "position"
  readonly user: string
  readonly marketId: string
  readonly yes: number
  readonly no: number
  readonly yesLocked: number
  readonly noLocked: number
  readonly costYesMicro: number
  readonly costNoMicro: number
}

export type EngineEvent =
  | MarketCreatedEvent
  | MarketStatusEvent
  | FeesSetEvent
  | BuilderSetEvent
  | RejectedEvent
  | OrderAcceptedEvent
  | FillEvent
  | OrderRestedEvent
  | OrderCancelledEvent
  | CreditedEvent
  | DebitedEvent
  | RedeemedEvent
  | BalanceEvent
  | PositionEvent
