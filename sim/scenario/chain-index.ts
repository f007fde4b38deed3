// The auditor's own view of the canonical chain, read straight from the simulated
// chain's blocks (not through its RPC surface, so injected RPC faults cannot blind
// it). Follows reorgs by rewinding to the last block whose hash still matches.
import type { SimChain } from "../../src/chain/sim.ts"

export class ChainIndex {
  /** tx hash → block number, canonical only. */
  readonly txBlock = new Map<string, bigint>()
  /** withdrawal id → payout tx hash (successful, canonical). */
  readonly payouts = new Map<string, string>()
  private readonly hashes: string[] = []

  constructor(private readonly chain: SimChain) {}

  update(): void {
    const tip = this.chain.tip.number
    // Rewind past any block that a reorg replaced.
    while (this.hashes.length > 0) {
      const n = this.hashes.length - 1
      if (this.chain.block(BigInt(n))?.hash === this.hashes[n]) break
      this.unindex(BigInt(n))
      this.hashes.pop()
    }
    for (let n = BigInt(this.hashes.length); n <= tip; n++) {
      const block = this.chain.block(n)!
      for (const m of block.txs) {
        if (m.status !== "success") continue
        this.txBlock.set(m.tx.hash, n)
        if (m.tx.payoutId !== undefined) this.payouts.set(m.tx.payoutId, m.tx.hash)
      }
      this.hashes.push(block.hash)
    }
  }

  private unindex(n: bigint): void {
    for (const [hash, at] of this.txBlock) if (at === n) this.txBlock.delete(hash)
    for (const [id, hash] of this.payouts) if (!this.txBlock.has(hash)) this.payouts.delete(id)
  }
}
