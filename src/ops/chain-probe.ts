// One look at the deposit chain for /v1/ready and the chain metrics: is its RPC answering
// (within a bound), how far the deposit watcher is behind its head, and whether the chain
// guard has halted crediting. Never throws: an unreachable chain is a result.
import type { Chain } from "../chain/chain.ts"
import { within } from "./within.ts"

export interface ChainProbeResult {
  /** The head block, or null when the RPC did not answer in time. */
  readonly head: bigint | null
  /** head − the last block the watcher scanned; null when the head is unknown. */
  readonly lagBlocks: number | null
  readonly halted: boolean
  /**
   * Whether the chain guard has checked the chain since the start: the deposit watcher finished a
   * pass, and the guard is not waiting on a second pass to tell a missing anchor block from a halt.
   */
  readonly checked: boolean
  /** The guard found its anchor block missing on the last pass and waits on the next to tell a lagging node from a halt. */
  readonly deciding: boolean
  /** Why the head is unknown. */
  readonly error: string | null
}

export interface ChainProbe {
  probe(): Promise<ChainProbeResult>
}

export interface ChainProbeOptions {
  readonly chain: Pick<Chain, "head">
  readonly watcher: { readonly scannedThroughBlock: bigint; readonly passed: boolean }
  readonly guard: { readonly isHalted: boolean; readonly deciding: boolean }
  /** How long the head may take to answer. */
  readonly timeoutMs: number
}


export const chainProbe = (o: ChainProbeOptions): ChainProbe => ({
  probe: async () => {
    const halted = o.guard.isHalted
    // A pass that found the anchor missing once checked nothing yet: ready now could be a halt a pass later.
    const deciding = o.guard.deciding
    const checked = o.watcher.passed && !deciding
    try {
      const head = await within(() => o.chain.head(), o.timeoutMs, () => new Error(`no answer within ${o.timeoutMs} ms`))
      const lag = head - o.watcher.scannedThroughBlock
      return { head, lagBlocks: Number(lag < 0n ? 0n : lag), halted, checked, deciding, error: null }
    } catch (err) {
      const message = err instanceof Error ? err.message.split("\n")[0]! : String(err)
      return { head: null, lagBlocks: null, halted, checked, deciding, error: message.slice(0, 160) }
    }
  }
})
