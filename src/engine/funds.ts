// Money in and out of the ledger: deposits credit, withdrawals debit.
import type { Engine } from "./engine.ts"
import { isIntIn, MAX_AMOUNT_MICRO, MAX_BALANCE_MICRO } from "./money.ts"
import type { Credit, Debit } from "./types.ts"
import { isValidId } from "./validate.ts"

export const applyCredit = (e: Engine, cmd: Credit): void => {
  if (!isValidId(cmd.user)) return void e.reject("credit", "invalid_user", null)
  if (!isIntIn(cmd.amountMicro, 1, MAX_AMOUNT_MICRO)) return void e.reject("credit", "invalid_amount", cmd.user)
  if (typeof cmd.ref !== "string") return void e.reject("credit", "invalid_command", cmd.user)
  const existing = e.accounts.get(cmd.user)
  const held = existing === undefined ? 0 : existing.availableMicro + existing.lockedMicro
  if (held + cmd.amountMicro > MAX_BALANCE_MICRO) return void e.reject("credit", "amount_overflow", cmd.user)
  const acct = existing ?? e.account(cmd.user)
  acct.availableMicro += cmd.amountMicro
  e.netDepositsMicro += cmd.amountMicro
  e.out.push({ type: "credited", user: cmd.user, amountMicro: cmd.amountMicro, ref: cmd.ref })
  e.touch(acct)
}

export const applyDebit = (e: Engine, cmd: Debit): void => {
  if (!isValidId(cmd.user)) return void e.reject("debit", "invalid_user", null)
  if (!isIntIn(cmd.amountMicro, 1, MAX_AMOUNT_MICRO)) return void e.reject("debit", "invalid_amount", cmd.user)
  if (!isIntIn(cmd.withdrawNonce, 1, Number.MAX_SAFE_INTEGER)) return void e.reject("debit", "invalid_nonce", cmd.user)
  if (typeof cmd.ref !== "string") return void e.reject("debit", "invalid_command", cmd.user)
  const acct = e.accounts.get(cmd.user)
  if (cmd.withdrawNonce <= (acct === undefined ? 0 : acct.lastWithdrawNonce)) {
    return void e.reject("debit", "withdraw_nonce_stale", cmd.user)
  }
  if (acct === undefined || acct.availableMicro < cmd.amountMicro) {
    return void e.reject("debit", "insufficient_balance", cmd.user)
  }
  acct.lastWithdrawNonce = cmd.withdrawNonce
  acct.availableMicro -= cmd.amountMicro
  e.netDepositsMicro -= cmd.amountMicro
  e.out.push({
    type: "debited",
    user: cmd.user,
    amountMicro: cmd.amountMicro,
    withdrawNonce: cmd.withdrawNonce,
    ref: cmd.ref
  })
  e.touch(acct)
}
