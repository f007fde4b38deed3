// Money in: operator credits and debits, wallet links, and deposits seen on chain from
// detection to credit (a confirmed deposit of a linked wallet credits exactly once).
import type { EngineEvent } from "../../engine/types.ts"
import { type DepositRecord, depositProblem } from "../deposits.ts"
import type { Exchange } from "../exchange.ts"
import type { Handler } from "./handler.ts"

/** One engine credit per confirmed deposit of a linked wallet; the stage makes it exactly once. */
const creditDeposit = (x: Exchange, d: DepositRecord, events: EngineEvent[]): void => {
  const user = x.userOfWallet.get(d.wallet)
  if (!d.confirmed || d.stage === "credited" || d.stage === "error" || user === undefined) return
  const applied = x.engineApply({ type: "credit", user, amountMicro: d.amountMicro, ref: `deposit:${d.key}` }, events)
  if (applied[0]?.type !== "credited") {
    d.stage = "error"
    d.error = `credit refused by the engine: ${applied[0]?.type === "rejected" ? applied[0].reason : "unknown"}`
  } else {
    d.stage = "credited"
    d.user = user
    d.creditedAtSec = x.tsSec
  }
  d.updatedAtSec = x.tsSec
}

export const applyCredit: Handler<"credit"> = (x, cmd, events) => {
  x.engineApply({ type: "credit", user: cmd.user, amountMicro: cmd.amountMicro, ref: cmd.ref }, events)
  return { events }
}

export const applyDebit: Handler<"debit"> = (x, cmd, events) => {
  x.engineApply({ type: "debit", user: cmd.user, amountMicro: cmd.amountMicro, withdrawNonce: cmd.withdrawNonce, ref: cmd.ref }, events)
  return { events }
}

export const applyLinkWallet: Handler<"link_wallet"> = (x, cmd, events) => {
  const current = x.walletOfUser.get(cmd.user)
  if (current === cmd.wallet) return { events }
  if (current !== undefined) return { events, refused: "wallet_already_linked" }
  if (x.userOfWallet.has(cmd.wallet)) return { events, refused: "wallet_taken" }
  x.walletOfUser.set(cmd.user, cmd.wallet)
  x.userOfWallet.set(cmd.wallet, cmd.user)
  // Deposits that arrived before the link credit now, in the order they were seen.
  for (const d of x.deposits.ofWallet(cmd.wallet)) creditDeposit(x, d, events)
  return { events }
}

export const applyWatchAddress: Handler<"watch_address"> = (x, cmd, events) => {
  x.watched.set(cmd.address, cmd.wallet)
  return { events }
}

export const applyDepositDetected: Handler<"deposit_detected"> = (x, cmd, events) => {
  const key = `${cmd.txHash}:${cmd.logIndex}`
  const wallet = x.watched.get(cmd.address)
  if (x.deposits.byKey.has(key) || wallet === undefined) return { events }
  const problem = depositProblem(cmd, cmd.rules)
  x.deposits.add({
    key,
    wallet,
    address: cmd.address,
    token: cmd.token,
    amountMicro: cmd.amountMicro,
    txHash: cmd.txHash,
    blockNumber: cmd.blockNumber,
    blockHash: cmd.blockHash,
    stage: problem === null ? "detected" : "error",
    error: problem,
    seenAtSec: x.tsSec,
    updatedAtSec: x.tsSec,
    creditedAtSec: null,
    user: null,
    confirmed: false
  })
  return { events }
}

export const applyDepositConfirming: Handler<"deposit_confirming"> = (x, cmd, events) => {
  const d = x.deposits.byKey.get(cmd.key)
  if (d !== undefined && d.stage === "detected") {
    d.stage = "confirming"
    d.updatedAtSec = x.tsSec
  }
  return { events }
}

export const applyDepositReorged: Handler<"deposit_reorged"> = (x, cmd, events) => {
  const d = x.deposits.byKey.get(cmd.key)
  if (d !== undefined && !d.confirmed) x.deposits.remove(cmd.key)
  return { events }
}

export const applyDepositConfirmed: Handler<"deposit_confirmed"> = (x, cmd, events) => {
  const d = x.deposits.byKey.get(cmd.key)
  if (d === undefined || d.confirmed || d.stage === "error") return { events }
  d.confirmed = true
  d.stage = "confirming"
  d.updatedAtSec = x.tsSec
  creditDeposit(x, d, events)
  return { events }
}
