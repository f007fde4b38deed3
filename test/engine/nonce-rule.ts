// The nonce rule as the tests state it (docs/decisions.md "A refused order spends its nonce"):
// a place_order that gets past its field checks with a fresh nonce spends that nonce, whatever
// is refused after; the field checks and the nonce check itself spend nothing.
import type { EngineSnapshot, RejectReason } from "../../src/engine/index.ts"

/** The rejections decided before the nonce is spent. */
const BEFORE_NONCE: ReadonlySet<RejectReason> = new Set<RejectReason>([
  "invalid_user",
  "invalid_side",
  "invalid_outcome",
  "invalid_order_type",
  "invalid_stp",
  "invalid_price",
  "invalid_size",
  "invalid_nonce",
  "nonce_stale"
])

/** The state a rejection of `cmd` must leave, given the state before it (clock fields aside). */
export const stateAfterRejection = (
  before: EngineSnapshot,
  cmd: { readonly type: string; readonly user?: unknown; readonly nonce?: unknown },
  reason: RejectReason
): EngineSnapshot => {
  if (cmd.type !== "place_order" || BEFORE_NONCE.has(reason)) return before
  const user = cmd.user as string
  const nonce = cmd.nonce as number
  const has = before.accounts.some((a) => a.user === user)
  const accounts = has
    ? before.accounts.map((a) => (a.user === user ? { ...a, lastNonce: nonce } : a))
    : [...before.accounts, { user, availableMicro: 0, lockedMicro: 0, lastNonce: nonce, lastWithdrawNonce: 0, positions: [] }].sort((a, b) =>
        a.user < b.user ? -1 : a.user > b.user ? 1 : 0
      )
  return { ...before, accounts }
}
