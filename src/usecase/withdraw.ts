// Withdraw (SPEC §4 "Withdraw", §5.8): the engine debits first, exactly once per withdraw
// nonce; the payout worker then pays the linked wallet. The route has checked the pause,
// the rate limit, the session and the body's shape; this checks amount, signature, wallet
// and binding, in that order (each failure's code is SPEC's), then journals the debit.
import { parseSignatureHex, verifyUser } from "../auth/ed25519.ts"
import { withdrawMessage } from "../auth/messages.ts"
import { ApiError } from "../domain/errors.ts"
import { withdrawalId } from "../service/withdrawals.ts"
import type { UseCaseCtx } from "./context.ts"

export interface WithdrawRequestBody {
  readonly user: string
  readonly amount_micro: unknown
  readonly nonce: number
  readonly signature: string
  /** Present when the client tried to sign with an LP session key (always refused). */
  readonly session_pub?: unknown
}

/** A positive safe integer from a JSON number or a string of digits, else null. */
const parseAmount = (value: unknown): number | null => {
  const n = typeof value === "number" ? value : typeof value === "string" && /^\d+$/.test(value) ? Number(value) : Number.NaN
  return Number.isSafeInteger(n) && n > 0 ? n : null
}

/** The withdrawal's response body (SPEC §4) once the debit is durable, or an ApiError. */
export const withdraw = async (ctx: Pick<UseCaseCtx, "exchange" | "commands" | "binding">, body: WithdrawRequestBody): Promise<Record<string, unknown>> => {
  const amountMicro = parseAmount(body.amount_micro)
  if (amountMicro === null) throw new ApiError("invalid_amount", "amount_micro: a positive integer of micro-USDC")
  const signature = parseSignatureHex(body.signature)
  if (signature === null) throw new ApiError("invalid_signature_format", "signature must be 64 bytes, hex-encoded without 0x")
  // SPEC §5.10: a delegated LP session key can only place orders, never withdraw.
  if (body.session_pub !== undefined) throw new ApiError("invalid_signature", "LP session keys are scoped to orders; withdraw must be signed by the user key")
  const wallet = ctx.exchange.walletOfUser.get(body.user)
  if (wallet === undefined) throw new ApiError("engine_rejected", "no wallet linked to this user: POST /v1/wallet/link first")
  if (!verifyUser(body.user, Buffer.from(withdrawMessage(body.user, wallet, amountMicro, body.nonce), "utf8"), signature)) {
    throw new ApiError("invalid_signature", "signature does not verify over the withdraw message")
  }
  if (ctx.binding.withdraw === "unreachable") throw new ApiError("engine_unreachable", "the matching service cannot be reached")
  if (ctx.binding.withdraw === "disabled") throw new ApiError("engine_binding_disabled", "the matching service binding is disabled")
  const { result } = await ctx.commands.submit({
    type: "withdraw",
    user: body.user,
    amountMicro,
    withdrawNonce: body.nonce,
    recipient: wallet
  })
  const first = result.events[0]
  if (first?.type === "rejected") throw new ApiError("engine_rejected", first.reason)
  const w = ctx.exchange.withdrawals.byId.get(withdrawalId(body.user, body.nonce))!
  return {
    withdrawal_id: w.id,
    status: w.status,
    recipient: w.recipient,
    chain: "native",
    amount_micro: w.amountMicro,
    created_at: w.createdAtSec
  }
}
