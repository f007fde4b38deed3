// Service-level commands: what the journal records. Each is stamped with a
// journal sequence number and time, and applied deterministically by the
// Exchange, which turns them into engine commands plus catalogue changes.
import type { Outcome, PlaceOrder } from "../engine/types.ts"
import type { NewEvent } from "./catalog.ts"
import type { DepositRules } from "./deposits.ts"
import type { StopReason, StrategyState } from "../lp/strategy.ts"

export type TradingState = "open" | "closed" | "paused"
export type LpState = "open" | "closed"

/** An order as the service journals it: the engine's placement without its stamp. */
export type OrderBody = Omit<PlaceOrder, "type" | "seq" | "tsSec">

/** Knobs of the daily LP pool, journaled so accrual never depends on the process's configuration. */
export interface RewardsParams {
  readonly dailyBudgetMicro: number
  readonly bandSpreadBpsMax: number
  readonly perWalletCapPct: number
  readonly minSizeContracts: number
}

export type LpStopReason = "user" | "replaced" | "session_expired" | "session_revoked"

export type ServiceCommand =
  /** `viaSession`: the order was signed by this delegated LP session key (a bot order). */
  | { readonly type: "place_order"; readonly order: OrderBody; readonly viaSession?: string }
  | { readonly type: "cancel_order"; readonly user: string; readonly orderId: number }
  | { readonly type: "cancel_all"; readonly user: string; readonly marketId?: string }
  | { readonly type: "credit"; readonly user: string; readonly amountMicro: number; readonly ref: string }
  | { readonly type: "debit"; readonly user: string; readonly amountMicro: number; readonly withdrawNonce: number; readonly ref: string }
  | { readonly type: "create_event"; readonly event: NewEvent }
  | { readonly type: "set_market_status"; readonly marketId: string; readonly status: "active" | "halted" | "resolved"; readonly winningOutcome?: Outcome }
  | { readonly type: "set_fees"; readonly marketId?: string; readonly takerFeeBps?: number; readonly makerRebateBps?: number }
  | { readonly type: "register_builder"; readonly user: string; readonly name: string; readonly apiKey: string }
  | { readonly type: "set_builder_fee"; readonly user: string; readonly feeBps: number; readonly enabled: boolean }
  | { readonly type: "set_trading"; readonly state: TradingState }
  | { readonly type: "set_lp"; readonly state: LpState }
  /** The user proved control of both keys (docs/api.md "Wallet link"); `wallet` is lowercase. */
  | { readonly type: "link_wallet"; readonly user: string; readonly wallet: string }
  /** The watcher saw a Transfer into a watched address (any token; the rules decide what credits). */
  | {
      readonly type: "deposit_detected"
      readonly txHash: string
      readonly logIndex: number
      readonly address: string
      readonly token: string
      readonly amountMicro: number
      readonly blockNumber: number
      readonly blockHash: string
      readonly rules: DepositRules
    }
  | { readonly type: "deposit_confirming"; readonly key: string }
  /** The block holding the deposit left the canonical chain before it was confirmed. */
  | { readonly type: "deposit_reorged"; readonly key: string }
  /** Enough confirmations (the funds are at the forwarder, which can only pay the vault): credit now, or when the wallet is linked. */
  | { readonly type: "deposit_confirmed"; readonly key: string }
  /** Debit now (engine checks balance and withdraw nonce); the payout worker pays `recipient`. */
  | { readonly type: "withdraw"; readonly user: string; readonly amountMicro: number; readonly withdrawNonce: number; readonly recipient: string }
  | { readonly type: "withdrawal_sent"; readonly id: string; readonly txHash: string }
  | { readonly type: "withdrawal_confirmed"; readonly id: string }
  /** The payout cannot happen: the amount goes back to the user. */
  | { readonly type: "withdrawal_refunded"; readonly id: string; readonly reason: string }
  /** A deposit address the watcher must follow; `wallet` and `address` are lowercase. */
  | { readonly type: "watch_address"; readonly wallet: string; readonly address: string }
  /** A server-generated LP session key (public half only; the secret is re-derived from `counter`). */
  | { readonly type: "lp_session_new"; readonly user: string; readonly sessionPub: string; readonly counter: number; readonly expiresAtSec: number }
  /** The user's signature over the delegation message verified: the session may place orders until `expiresAtSec`. */
  | { readonly type: "lp_delegate"; readonly user: string; readonly sessionPub: string; readonly expiresAtSec: number; readonly nonce: number }
  /** Starts (or replaces) the user's server-managed bot; `strategy` is the canonical wire spec. */
  | { readonly type: "lp_start"; readonly user: string; readonly sessionPub: string; readonly marketIds: ReadonlyArray<string>; readonly strategy: Readonly<Record<string, string | number>> }
  | { readonly type: "lp_stop"; readonly user: string; readonly revokeSession: boolean; readonly reason: LpStopReason }
  /** A bot's acting decision in one market: cancels its orders there and records the strategy state. */
  | {
      readonly type: "lp_bot_step"
      readonly user: string
      readonly startedSeq: number
      readonly marketId: string
      readonly decision: "quote" | "pause" | "stop"
      readonly stopReason?: StopReason
      readonly state: StrategyState
    }
  | { readonly type: "set_rewards_config"; readonly config: RewardsParams }
  /** One rewards sample of the resting books (the LP worker journals one per minute of monotonic time). */
  | { readonly type: "rewards_sample" }
  /** Pays a closed UTC day (days since the epoch) of the LP pool, exactly once. */
  | { readonly type: "pay_rewards"; readonly day: number }

export interface JournalRecord {
  readonly seq: number
  readonly tsSec: number
  readonly cmd: ServiceCommand
}
