// The port the exchange holds for the chain side's guard (operational, never journaled): the
// operator's status route reads it and may resume it. Declared here, in the domain, so the
// exchange knows no chain code; src/chain/guard.ts's ChainGuard implements it.

/** A block hash: 0x + 64 hex (the chain's `Hash`). */
type BlockHash = `0x${string}`

export interface Checkpoint {
  readonly blockNumber: bigint
  readonly hash: BlockHash
}

export interface ChainHalt {
  readonly reason: string
  /** The block that no longer matches, what was recorded for it, and what the chain has now (null: gone). */
  readonly blockNumber: bigint
  readonly expectedHash: BlockHash
  readonly foundHash: BlockHash | null
  readonly head: bigint
  readonly atSec: number
}

export interface ChainGuardStatus {
  readonly state: "ok" | "halted"
  readonly checkpoint: Checkpoint | null
  /** The embedded chain's state is saved through this block (null: the chain keeps its own state). */
  readonly savedThrough: bigint | null
  readonly halt: ChainHalt | null
}

export interface ChainGuardPort {
  status(): ChainGuardStatus
  /** The operator's decision after reconciling a halt: anchor again on the chain as it is now. */
  resume(): Promise<ChainGuardStatus>
}
