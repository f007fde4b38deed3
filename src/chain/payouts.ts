// The payout worker: pays debited withdrawals from the vault and follows them to
// confirmation. Each payout carries its withdrawal id, which the vault pays at
// most once, so re-sending after a crash or a lost reply can never pay twice;
// before sending, the worker asks whether the id was already paid. A payout that
// keeps reverting (e.g. an underfunded vault) is refunded after `maxAttempts`
// (attempts while credited deposits are still being swept in do not count),
// whether it reverts on chain or is refused before it is sent (a live chain
// estimates gas first, so a payout that would revert never leaves). One failing
// withdrawal never holds up the others: each is handled on its own, and the first
// error is rethrown once the pass has been through them all. While the chain guard has halted
// (the chain lost blocks the ledger relies on) nothing is sent, confirmed or refunded.
import type { Exchange } from "../service/exchange.ts"
import type { WithdrawalRecord } from "../service/withdrawals.ts"
import type { Address, Chain, Hash } from "./chain.ts"
import { isChainError } from "./errors.ts"
import type { ChainGuard } from "./guard.ts"

/** The chain operations payouts need. */
export type PayoutChain = Pick<Chain, "payout" | "paidOut" | "receipt">

export interface PayoutOptions {
  readonly chain: PayoutChain
  readonly exchange: Exchange
  /** Reverted attempts before the amount is refunded to the user. */
  readonly maxAttempts?: number
  /** Polls a sent payout may stay unknown to the chain (dropped) before it is re-sent. */
  readonly maxPendingPolls?: number
  /** Stops payouts while halted; saves the embedded chain before a payout is confirmed. */
  readonly guard?: ChainGuard
  /**
   * True while credited deposits are still on their way into the vault (the watcher's
   * `vaultFilling`): a payout the vault cannot cover then is retried, not counted as a failed attempt.
   */
  readonly vaultFilling?: () => boolean
}

export interface PayoutReport {
  readonly sent: number
  readonly confirmed: number
  readonly refunded: number
}

export class PayoutWorker {
  private readonly reverts = new Map<string, number>()
  private readonly unseen = new Map<string, number>()

  constructor(private readonly o: PayoutOptions) {}

  /** One pass. The caller runs one at a time (live: the chain worker's fiber, src/runtime/workers.ts; sim: sim/world/world.ts). */
  async poll(): Promise<PayoutReport> {
    const report = { sent: 0, confirmed: 0, refunded: 0 }
    let failure: { error: unknown } | null = null
    for (const w of this.o.exchange.withdrawals.open()) {
      if (this.halted()) break
      try {
        const outcome = await this.step(w)
        if (outcome !== null) report[outcome]++
      } catch (error) {
        failure ??= { error }
      }
    }
    if (failure !== null) throw failure.error
    return report
  }

  private halted(): boolean {
    return this.o.guard?.isHalted ?? false
  }

  /** One withdrawal's turn: what happened to it, if anything worth counting. */
  private async step(w: WithdrawalRecord): Promise<keyof PayoutReport | null> {
    const { chain, exchange } = this.o
    const id = w.id as Hash
    if (w.status === "pending") {
      // The debit that made this withdrawal must be on disk before money leaves the vault.
      await exchange.durableSoFar()
      const tx = (await chain.paidOut(id)) ?? (await this.send(w))
      if (tx === null) return this.failedAttempt(w, false)
      await exchange.submit({ type: "withdrawal_sent", id, txHash: tx }).durable
      return "sent"
    }
    const receipt = await chain.receipt(w.txHash as Hash)
    if (receipt === null) {
      // Unknown to the chain for too long (dropped): send again; the vault will not pay twice.
      const polls = (this.unseen.get(id) ?? 0) + 1
      this.unseen.set(id, polls)
      if (polls >= (this.o.maxPendingPolls ?? 20)) {
        this.unseen.delete(id)
        const tx = (await chain.paidOut(id)) ?? (await this.send(w))
        if (tx === null) return this.failedAttempt(w, false)
        await exchange.submit({ type: "withdrawal_sent", id, txHash: tx }).durable
      }
      return null
    }
    this.unseen.delete(id)
    if (receipt.status === "success") {
      if (this.o.guard !== undefined && !(await this.o.guard.secure(receipt.blockNumber))) return null
      await exchange.submit({ type: "withdrawal_confirmed", id }).durable
      return "confirmed"
    }
    // Reverted: either an earlier send already paid this id, or the vault could not pay.
    const paid = await chain.paidOut(id)
    if (paid !== null) {
      await exchange.submit({ type: "withdrawal_sent", id, txHash: paid }).durable
      return null
    }
    return this.failedAttempt(w, true)
  }

  /**
   * A payout that reverted on chain (`resend`: try again now) or was refused before sending:
   * refunded once it has failed `maxAttempts` times. The caller has just seen the id unpaid.
   */
  private async failedAttempt(w: WithdrawalRecord, resend: boolean): Promise<keyof PayoutReport | null> {
    const id = w.id as Hash
    // Deposits are credited before their sweep is mined (src/chain/watcher.ts): the vault may be short for a block.
    if (this.o.vaultFilling?.() === true) return null
    const attempts = (this.reverts.get(id) ?? 0) + 1
    this.reverts.set(id, attempts)
    if (attempts >= (this.o.maxAttempts ?? 5)) {
      this.reverts.delete(id)
      await this.o.exchange.submit({ type: "withdrawal_refunded", id, reason: `payout reverted ${attempts} times` }).durable
      return "refunded"
    }
    if (!resend) return null
    const tx = await this.send(w)
    if (tx !== null) await this.o.exchange.submit({ type: "withdrawal_sent", id, txHash: tx }).durable
    return null
  }

  /** Sends the payout; null when the chain refuses it because it would revert (nothing was sent). */
  private async send(w: WithdrawalRecord): Promise<Hash | null> {
    try {
      return await this.o.chain.payout(w.recipient as Address, BigInt(w.amountMicro), w.id as Hash)
    } catch (err) {
      // Live: the gas estimate reverted; sim: the same, when the SimChain estimates (src/chain/errors.ts).
      if (isChainError(err, "ChainReverted")) return null
      throw err
    }
  }
}
