// The deposit watcher: follows the chain through the Chain layer and turns what it
// sees into journaled deposit commands. It holds no state of its own that matters:
// the exchange's deposit book (journaled) decides what is new, so restarts and
// re-scans never double-credit. Each poll:
//   1. scans Transfer logs into watched addresses from where it stopped, re-scanning
//      the last `rescanBlocks` every time to catch logs an RPC missed;
//   2. for open deposits: un-detects those whose block left the chain (reorg),
//      marks them confirming, and once `confirmations` deep sweeps the forwarder
//      into the vault and confirms them (the exchange credits linked wallets).
// An RPC error ends the poll early; the next poll retries. Nothing is lost.
// With a chain guard (src/chain/guard.ts) every pass first checks that the chain still holds the
// blocks the ledger relies on; while it does not, the watcher does nothing at all.
import type { Exchange } from "../service/exchange.ts"
import type { DepositRecord, DepositRules } from "../service/deposits.ts"
import type { Address, Chain, Hash, TxReceipt } from "./chain.ts"
import type { ChainGuard } from "./guard.ts"

export interface WatcherOptions {
  readonly chain: Chain
  readonly exchange: Exchange
  /** Blocks on top of the deposit's block, counting it: 0 credits at once (embedded dev chain). */
  readonly confirmations: number
  readonly rules: DepositRules
  /** How far back every poll looks again. */
  readonly rescanBlocks?: number
  /** First block worth scanning (the deployment block of the factory). */
  readonly startBlock?: bigint
  /** Polls a sent sweep may stay unknown to the chain (dropped, e.g. by a reorg) before it is re-sent. Default 20. */
  readonly maxPendingPolls?: number
  readonly onError?: (err: unknown) => void
  /** Halts crediting when the chain loses a block the ledger relies on; saves the embedded chain. */
  readonly guard?: ChainGuard
}

export interface PollReport {
  readonly head: bigint
  readonly detected: number
  readonly reorged: number
  readonly confirmed: number
  /** The guard stopped this pass (the chain no longer holds what the ledger relies on). */
  readonly halted?: boolean
}

export class DepositWatcher {
  private scannedThrough: bigint
  /** The latest sweep of each forwarder and token (`wallet:token`). */
  private readonly sweeps = new Map<string, Sweep>()

  constructor(private readonly o: WatcherOptions) {
    this.scannedThrough = (o.startBlock ?? 0n) - 1n
  }

  /** The last block a pass scanned (start block − 1 before the first): the head minus this is the watcher's lag. */
  get scannedThroughBlock(): bigint {
    return this.scannedThrough
  }

  /** One pass. The caller runs one at a time (live: the chain worker's fiber, src/runtime/workers.ts; sim: sim/world.ts). */
  async poll(): Promise<PollReport> {
    const { chain, exchange } = this.o
    let detected = 0
    let reorged = 0
    let confirmed = 0
    const head = await chain.head()
    const guard = this.o.guard
    if (guard !== undefined && !(await guard.begin(head))) return { head, detected, reorged, confirmed, halted: guard.isHalted }
    const addresses = [...exchange.watched.keys()] as Address[]
    if (addresses.length > 0) {
      const floor = this.o.startBlock ?? 0n
      let from = this.scannedThrough + 1n - BigInt(this.o.rescanBlocks ?? 12)
      if (from < floor) from = floor
      for (const log of await chain.transfersTo(addresses, from, head)) {
        if (exchange.deposits.byKey.has(`${log.txHash}:${log.logIndex}`)) continue
        // The same transaction confirmed in another block: re-included after a deep reorg the
        // operator resumed from, perhaps at another log index. Its tokens were credited already.
        if (exchange.deposits.ofTx(log.txHash).some((d) => d.confirmed && d.blockHash !== log.blockHash)) continue
        await this.submit({
          type: "deposit_detected",
          txHash: log.txHash,
          logIndex: log.logIndex,
          address: log.to.toLowerCase(),
          token: log.token.toLowerCase(),
          amountMicro: Number(log.amount),
          blockNumber: Number(log.blockNumber),
          blockHash: log.blockHash,
          rules: this.o.rules
        })
        detected++
      }
    }
    this.scannedThrough = head

    // Receipts asked for in this pass: deposits sharing a sweep ask once.
    const receipts = new Map<Hash, TxReceipt | null>()
    const used = new Set<string>()
    for (const d of exchange.deposits.open()) {
      if (d.confirmed) continue
      if ((await chain.blockHash(BigInt(d.blockNumber))) !== d.blockHash) {
        await this.submit({ type: "deposit_reorged", key: d.key })
        reorged++
        continue
      }
      if (d.stage === "detected") await this.submit({ type: "deposit_confirming", key: d.key })
      const depth = head - BigInt(d.blockNumber) + 1n
      if (depth < BigInt(this.o.confirmations)) continue
      // Credit only beneath the checkpoint, so a later pass can tell if the chain loses the block.
      if (guard !== undefined && !guard.covers(BigInt(d.blockNumber))) continue
      const sweepKey = `${d.wallet}:${d.token}`
      used.add(sweepKey)
      const sweptIn = await this.swept(d, sweepKey, head, receipts)
      // The embedded chain saves its state through the sweep before the ledger relies on it.
      if (sweptIn !== null && (guard === undefined || (await guard.secure(sweptIn)))) {
        await this.submit({ type: "deposit_confirmed", key: d.key })
        confirmed++
      }
    }
    for (const key of this.sweeps.keys()) if (!used.has(key)) this.sweeps.delete(key)
    return { head, detected, reorged, confirmed }
  }

  /**
   * The block of a mined sweep that moved `d`'s funds into the vault, or null while there is none. A sweep moves the forwarder's
   * whole balance, so one sweep serves every deposit mined before it was sent (`head`): deposits
   * to one address share it, and only a deposit mined later needs another. A sweep that reverts,
   * or stays unknown to the chain for `maxPendingPolls` passes (a reorg dropped it), is replaced.
   */
  private async swept(d: DepositRecord, key: string, head: bigint, receipts: Map<Hash, TxReceipt | null>): Promise<bigint | null> {
    let sweep = this.sweeps.get(key)
    if (sweep === undefined || sweep.head < BigInt(d.blockNumber)) {
      sweep = { tx: await this.o.chain.sweep(d.wallet as Address, d.token as Address), head, unseen: 0 }
      this.sweeps.set(key, sweep)
    }
    let receipt = receipts.get(sweep.tx)
    if (receipt === undefined || receipt === null) {
      // Asked again while missing (it may be mined by now), but counted once per pass.
      const first = receipt === undefined
      receipt = await this.o.chain.receipt(sweep.tx)
      receipts.set(sweep.tx, receipt)
      // A second sweep is harmless: it moves whatever is left.
      if (receipt === null && first && ++sweep.unseen >= (this.o.maxPendingPolls ?? 20)) this.sweeps.delete(key)
    }
    if (receipt === null) return null
    if (receipt.status === "reverted" || receipt.blockNumber <= BigInt(d.blockNumber)) {
      if (this.sweeps.get(key) === sweep) this.sweeps.delete(key)
      return null
    }
    return receipt.blockNumber
  }

  private async submit(cmd: Parameters<Exchange["submit"]>[0]): Promise<void> {
    await this.o.exchange.submit(cmd).durable
  }
}

interface Sweep {
  readonly tx: Hash
  /** The head when it was sent: it moves every deposit mined up to there. */
  readonly head: bigint
  /** Passes it has had no receipt. */
  unseen: number
}
