// The payout worker: pays debited withdrawals from the vault and follows them to
// confirmation. Each payout carries its withdrawal id, which the vault pays at
// most once, so re-sending after a crash or a lost reply can never pay twice;
// before sending, the worker asks whether the id was already paid. A payout that
// keeps reverting (e.g. an underfunded vault) is refunded after `maxAttempts`.
import type { Exchange } from "../service/exchange.ts"
import type { Address, Chain, Hash } from "./chain.ts"

/** The chain operations payouts need. */
export type PayoutChain = Pick<Chain, "payout" | "paidOut" | "receipt">

export interface PayoutOptions {
  readonly chain: PayoutChain
  readonly exchange: Exchange
  /** Reverted attempts before the amount is refunded to the user. */
  readonly maxAttempts?: number
  /** Polls a sent payout may stay unknown to the chain (dropped) before it is re-sent. */
  readonly maxPendingPolls?: number
}

export interface PayoutReport {
  readonly sent: number
  readonly confirmed: number
  readonly refunded: number
}

export class PayoutWorker {
  private readonly reverts = new Map<string, number>()
  private readonly unseen = new Map<string, number>()
  private running: Promise<PayoutReport> | null = null

  constructor(private readonly o: PayoutOptions) {}

  poll(): Promise<PayoutReport> {
    this.running ??= this.pass().finally(() => {
      this.running = null
    })
    return this.running
  }

  private async pass(): Promise<PayoutReport> {
    const { chain, exchange } = this.o
    let sent = 0
    let confirmed = 0
    let refunded = 0
    for (const w of exchange.withdrawals.open()) {
      const id = w.id as Hash
      if (w.status === "pending") {
        const already = await chain.paidOut(id)
        const tx = already ?? (await chain.payout(w.recipient as Address, BigInt(w.amountMicro), id))
        await exchange.submit({ type: "withdrawal_sent", id, txHash: tx }).durable
        sent++
        continue
      }
      const receipt = await chain.receipt(w.txHash as Hash)
      if (receipt === null) {
        // Unknown to the chain for too long (dropped): send again; the vault will not pay twice.
        const polls = (this.unseen.get(id) ?? 0) + 1
        this.unseen.set(id, polls)
        if (polls >= (this.o.maxPendingPolls ?? 20)) {
          this.unseen.delete(id)
          const tx = (await chain.paidOut(id)) ?? (await chain.payout(w.recipient as Address, BigInt(w.amountMicro), id))
          await exchange.submit({ type: "withdrawal_sent", id, txHash: tx }).durable
        }
        continue
      }
      this.unseen.delete(id)
      if (receipt.status === "success") {
        await exchange.submit({ type: "withdrawal_confirmed", id }).durable
        confirmed++
        continue
      }
      // Reverted: either an earlier send already paid this id, or the vault could not pay.
      const paid = await chain.paidOut(id)
      if (paid !== null) {
        await exchange.submit({ type: "withdrawal_sent", id, txHash: paid }).durable
        continue
      }
      const attempts = (this.reverts.get(id) ?? 0) + 1
      this.reverts.set(id, attempts)
      if (attempts >= (this.o.maxAttempts ?? 5)) {
        this.reverts.delete(id)
        await exchange.submit({ type: "withdrawal_refunded", id, reason: `payout reverted ${attempts} times` }).durable
        refunded++
      } else {
        const tx = await chain.payout(w.recipient as Address, BigInt(w.amountMicro), id)
        await exchange.submit({ type: "withdrawal_sent", id, txHash: tx }).durable
      }
    }
    return { sent, confirmed, refunded }
  }
}
