// Withdrawal records: the engine debits first (exactly once, per-user withdraw
// nonce), then the payout worker pays the linked wallet from the vault. Each
// withdrawal has an id the vault refuses to pay twice, so a payout re-sent after
// a crash can never pay again; a payout that fails for good is refunded.
import { createHash } from "node:crypto"

export type WithdrawalStatus = "pending" | "sent" | "confirmed" | "refunded"

export interface WithdrawalRecord {
  /** 0x + 64 hex: the vault's idempotency key. */
  readonly id: string
  readonly user: string
  readonly recipient: string
  readonly amountMicro: number
  readonly nonce: number
  status: WithdrawalStatus
  txHash: string | null
  readonly createdAtSec: number
  confirmedAtSec: number | null
  error: string | null
}

/** Deterministic id of a user's withdrawal: one per (user, withdraw nonce). */
export const withdrawalId = (user: string, nonce: number): string =>
  `0x${createHash("sha256").update(`twinbook-withdrawal:${user}:${nonce}`).digest("hex")}`

export class WithdrawalBook {
  readonly byId = new Map<string, WithdrawalRecord>()
  private readonly byUser = new Map<string, WithdrawalRecord[]>()

  add(w: WithdrawalRecord): void {
    this.byId.set(w.id, w)
    const list = this.byUser.get(w.user)
    if (list === undefined) this.byUser.set(w.user, [w])
    else list.push(w)
  }

  ofUser(user: string): ReadonlyArray<WithdrawalRecord> {
    return this.byUser.get(user) ?? []
  }

  /** Not yet final: the payout worker's list. */
  open(): WithdrawalRecord[] {
    return [...this.byId.values()].filter((w) => w.status === "pending" || w.status === "sent")
  }
}
