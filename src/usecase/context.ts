// What a use case is handed: the exchange and the parts of the service a use case acts
// through (signature verifier, rate limiter, server secret, the withdraw binding). The
// routes' AppCtx (src/api/context.ts) extends it, so a route passes its own context on;
// the LP bot runner is handed the same object by the composition root.
import { userKeyProblem } from "../auth/ed25519.ts"
import type { Verifier } from "../auth/verifier.ts"
import { ApiError, type ErrorCode } from "../domain/errors.ts"
import type { RewardsParams } from "../service/commands.ts"
import type { Exchange } from "../service/exchange.ts"
import type { CommandPort } from "./commands.ts"
import type { RateLimiter } from "./rate-limit.ts"

export interface UseCaseCtx {
  /** What the use case reads (on a cluster gateway, the read replica). */
  readonly exchange: Exchange
  /** Where its commands go (./commands.ts): the exchange's own journal, or the cluster's leader. */
  readonly commands: CommandPort
  /** Order signatures: inline in tests and simulation, worker threads live. */
  readonly verifier: Verifier
  readonly limiter: RateLimiter
  /** Derives LP session keys (and, in the API, session cookies and api keys). */
  readonly secret: Uint8Array
  /**
   * The withdraw path's binding to the matching engine (SPEC's API/engine split): `up`, or
   * made `unreachable` (502) / `disabled` (503) by the operator or by simulated faults.
   */
  readonly binding: { withdraw: "up" | "unreachable" | "disabled" }
}

/** Business time now: the journal's (never earlier than the last record), in seconds. */
export const nowSec = (ctx: Pick<UseCaseCtx, "exchange">): number => ctx.exchange.journalSec()

/** A user key from a request field, or the 400 saying why it is refused (one definition: src/auth/ed25519.ts). */
export const requireUserKey = (field: string, value: unknown, code: ErrorCode): string => {
  const problem = userKeyProblem(field, value)
  if (problem !== null) throw new ApiError(code, problem)
  return value as string
}

export interface RewardsConfig {
  readonly dailyBudgetMicro: number
  readonly bandSpreadBpsMax: number
  readonly perWalletCapPct: number
  /** Orders smaller than this score nothing (docs/rewards.md §1-2); default 10 contracts. */
  readonly minSizeContracts?: number
}

export const DEFAULT_REWARDS_MIN_SIZE_CONTRACTS = 10

/** The rewards configuration as the exchange journals it (every field explicit). */
export const rewardsParams = (c: RewardsConfig): RewardsParams => ({
  dailyBudgetMicro: c.dailyBudgetMicro,
  bandSpreadBpsMax: c.bandSpreadBpsMax,
  perWalletCapPct: c.perWalletCapPct,
  minSizeContracts: c.minSizeContracts ?? DEFAULT_REWARDS_MIN_SIZE_CONTRACTS
})
