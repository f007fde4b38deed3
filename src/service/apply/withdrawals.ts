// Money out: a withdrawal debits once per nonce, is sent and confirmed on chain by the
// payout worker, or refunded (credited back) when it cannot be paid.
import { withdrawalId } from "../withdrawals.ts"
import type { Handler } from "./handler.ts"

export const applyWithdraw: Handler<"withdraw"> = (x, cmd, events) => {
  const id = withdrawalId(cmd.user, cmd.withdrawNonce)
  const applied = x.engineApply({ type: "debit", user: cmd.user, amountMicro: cmd.amountMicro, withdrawNonce: cmd.withdrawNonce, ref: `withdrawal:${id}` }, events)
  if (applied[0]?.type === "debited") {
    x.withdrawals.add({
      id,
      user: cmd.user,
      recipient: cmd.recipient,
      amountMicro: cmd.amountMicro,
      nonce: cmd.withdrawNonce,
      status: "pending",
      txHash: null,
      createdAtSec: x.tsSec,
      confirmedAtSec: null,
      error: null
    })
  }
  return { events }
}

export const applyWithdrawalSent: Handler<"withdrawal_sent"> = (x, cmd, events) => {
  const w = x.withdrawals.byId.get(cmd.id)
  if (w !== undefined && (w.status === "pending" || w.status === "sent")) {
    w.status = "sent"
    w.txHash = cmd.txHash
  }
  return { events }
}

export const applyWithdrawalConfirmed: Handler<"withdrawal_confirmed"> = (x, cmd, events) => {
  const w = x.withdrawals.byId.get(cmd.id)
  if (w !== undefined && w.status === "sent") {
    w.status = "confirmed"
    w.confirmedAtSec = x.tsSec
  }
  return { events }
}

export const applyWithdrawalRefunded: Handler<"withdrawal_refunded"> = (x, cmd, events) => {
  const w = x.withdrawals.byId.get(cmd.id)
  if (w === undefined || w.status === "confirmed" || w.status === "refunded") return { events }
  x.engineApply({ type: "credit", user: w.user, amountMicro: w.amountMicro, ref: `refund:${w.id}` }, events)
  w.status = "refunded"
  w.error = cmd.reason
  return { events }
}
