// Chain failures as tagged values, the same from either Chain: the live one (viem) maps its
// exceptions to them (src/chain/live.ts), the simulated one raises them itself (src/chain/sim.ts).
// Callers branch on `_tag` only, never on a library's exception classes.
import { Data } from "effect"

/**
 * The transaction would revert (or did, in its simulation or gas estimate) and was never
 * broadcast: nothing is on chain, and sending it again unchanged reverts again.
 */
export class ChainReverted extends Data.TaggedError("ChainReverted")<{ readonly message: string; readonly cause?: unknown }> {}

/** The chain could not be asked (RPC down, timed out, refused): the call may be retried later. */
export class ChainUnavailable extends Data.TaggedError("ChainUnavailable")<{ readonly message: string; readonly code?: number; readonly cause?: unknown }> {}

export type ChainError = ChainReverted | ChainUnavailable

/** `err` is the chain error with this tag (by tag, so any copy of the class matches). */
export const isChainError = <T extends ChainError["_tag"]>(err: unknown, tag: T): err is Extract<ChainError, { _tag: T }> =>
  typeof err === "object" && err !== null && (err as { _tag?: unknown })._tag === tag
