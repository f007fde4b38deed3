// Every journal command kind → its handler. Exchange.apply looks the handler up here.
import { applyCreateEvent, applyRegisterBuilder, applySetBuilderFee, applySetFees, applySetLp, applySetMarketStatus } from "./admin.ts"
import {
  applyCredit,
  applyDebit,
  applyDepositConfirmed,
  applyDepositConfirming,
  applyDepositDetected,
  applyDepositReorged,
  applyLinkWallet,
  applyWatchAddress
} from "./funds.ts"
import type { HandlerTable } from "./handler.ts"
import { applyLp, applyPayRewards, applyRewardsSample, applySetRewardsConfig } from "./lp.ts"
import { applyCancelAll, applyCancelOrder, applyPlaceOrder, applySetTrading } from "./orders.ts"
import { applyWithdraw, applyWithdrawalConfirmed, applyWithdrawalRefunded, applyWithdrawalSent } from "./withdrawals.ts"

const table: HandlerTable = {
  place_order: applyPlaceOrder,
  cancel_order: applyCancelOrder,
  cancel_all: applyCancelAll,
  set_trading: applySetTrading,
  credit: applyCredit,
  debit: applyDebit,
  create_event: applyCreateEvent,
  set_market_status: applySetMarketStatus,
  set_fees: applySetFees,
  register_builder: applyRegisterBuilder,
  set_builder_fee: applySetBuilderFee,
  set_lp: applySetLp,
  link_wallet: applyLinkWallet,
  watch_address: applyWatchAddress,
  deposit_detected: applyDepositDetected,
  deposit_confirming: applyDepositConfirming,
  deposit_reorged: applyDepositReorged,
  deposit_confirmed: applyDepositConfirmed,
  withdraw: applyWithdraw,
  withdrawal_sent: applyWithdrawalSent,
  withdrawal_confirmed: applyWithdrawalConfirmed,
  withdrawal_refunded: applyWithdrawalRefunded,
  lp_session_new: applyLp,
  lp_delegate: applyLp,
  lp_start: applyLp,
  lp_stop: applyLp,
  lp_bot_step: applyLp,
  set_rewards_config: applySetRewardsConfig,
  rewards_sample: applyRewardsSample,
  pay_rewards: applyPayRewards
}

/** No prototype: a journal record of an unknown kind finds no handler (and changes nothing), as before the split. */
export const HANDLERS: HandlerTable = Object.freeze(Object.assign(Object.create(null) as object, table)) as HandlerTable
