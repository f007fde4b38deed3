// The deposit watcher: follows the chain through the Chain layer and turns what it
// sees into journaled deposit commands. It holds no state of its own that matters:
// the exchange's deposit book (journaled) decides what is new, so restarts and
// re-scans never double-credit. Each poll:
//   1. scans Transfer logs into watched addresses from where it stopped, re-scanning
//      the last `rescanBlocks` every time to catch logs an RPC missed;
//   2. for open deposits: un-detects those whose block left the chain (reorg),
//      marks them confirming, and once `confirmations` deep confirms them (the exchange
//      credits linked wallets) — the funds are then at the user's forwarder, which can
//      only send them to the vault (docs/decisions.md § Deposits);
//   3. sweeps every forwarder holding credited funds into the vault, and follows each sweep
//      until it is mined (re-sent when it reverts or a reorg drops it).
// The pass's journal writes are made durable together at its end, not one by one.
// An RPC error ends the poll early; the next poll retries. Nothing is lost.
// With a chain guard (src/chain/guard.ts) every pass first checks that the chain still holds the
// blocks the ledger relies on; while it does not, the watcher does nothing at all.
import type { Exchange } from "../service/exchange.ts"
import type { DepositRules } from "../service/deposits.ts"
import type { Address, Chain, Hash } from "./chain.ts"
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
  /** Forwarders whose sweep into the vault was seen mined in this pass. */
  readonly swept: number
  /** The guard stopped this pass (the chain no longer holds what the ledger relies on). */
  readonly halted?: boolean
}

export class DepositWatcher {
  private scannedThrough: bigint
  /** The latest sweep of each forwarder and token (`wallet:token`). */
  private readonly sweeps = new Map<string, Sweep>()
  /** Forwarders holding credited funds that no mined sweep has moved yet, by `wallet:token`. */
  private readonly owed = new Map<string, Owed>()
  /** The head when each forwarder's last mined sweep was sent: it moved every deposit mined up to there. */
  private readonly sweptThrough = new Map<string, bigint>()
  /** Passes run to their end since this watcher started. */
  private passes = 0
  /** Whether `owed` has been rebuilt from the chain since this watcher started (a restart forgets it). */
  private seeded = false
  /** Journal writes of the pass in flight, made durable together at its end. */
  private writes: Promise<void>[] = []

  constructor(private readonly o: WatcherOptions) {
    this.scannedThrough = (o.startBlock ?? 0n) - 1n
  }

  /** The last block a pass scanned (start block − 1 before the first): the head minus this is the watcher's lag. */
  get scannedThroughBlock(): bigint {
    return this.scannedThrough
  }

  /** True once a pass has run to its end, its guard check included (halted or not): until then, nothing is known of the chain. */
  get passed(): boolean {
    return this.passes > 0
  }

  /**
   * True while credited funds are still on their way into the vault (a sweep not yet mined, or a
   * restarted watcher that has not looked yet): a payout the vault cannot cover now may be covered
   * a block later (the payout worker does not count it as a failed attempt).
   */
  get vaultFilling(): boolean {
    return !this.seeded || this.owed.size > 0
  }

  /** One pass. The caller runs one at a time (live: the chain worker's fiber, src/runtime/workers.ts; sim: sim/world/world.ts). */
  async poll(): Promise<PollReport> {
    try {
      const report = await this.pass()
      this.passes++
      return report
    } finally {
      // Durable before the pass ends, even one cut short by an RPC error.
      const writes = this.writes
      this.writes = []
      await Promise.all(writes)
    }
  }

  private async pass(): Promise<PollReport> {
    const { chain, exchange } = this.o
    let detected = 0
    let reorged = 0
    let confirmed = 0
    const head = await chain.head()
    const guard = this.o.guard
    if (guard !== undefined && !(await guard.begin(head))) return { head, detected, reorged, confirmed, swept: 0, halted: guard.isHalted }
    if (!this.seeded) await this.seed()
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
        this.submit({
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

    // Block hashes asked once per block in a pass, however many deposits it holds.
    const hashes = new Map<number, Promise<Hash | null>>()
    const hashOf = (n: number): Promise<Hash | null> => {
      let hash = hashes.get(n)
      if (hash === undefined) hashes.set(n, (hash = chain.blockHash(BigInt(n))))
      return hash
    }
    for (const d of exchange.deposits.open()) {
      if (d.confirmed) continue
      if ((await hashOf(d.blockNumber)) !== d.blockHash) {
        this.submit({ type: "deposit_reorged", key: d.key })
        reorged++
        continue
      }
      if (d.stage === "detected") this.submit({ type: "deposit_confirming", key: d.key })
      const depth = head - BigInt(d.blockNumber) + 1n
      if (depth < BigInt(this.o.confirmations)) continue
      // Credit only beneath the checkpoint, so a later pass can tell if the chain loses the block;
      // the embedded chain saves its state through the deposit's block before the ledger relies on it.
      if (guard !== undefined && !(guard.covers(BigInt(d.blockNumber)) && (await guard.secure(BigInt(d.blockNumber))))) continue
      this.submit({ type: "deposit_confirmed", key: d.key })
      confirmed++
      this.owe(d.wallet as Address, d.token as Address, BigInt(d.blockNumber))
    }
    const swept = await this.sweepOwed(head)
    return { head, detected, reorged, confirmed, swept }
  }

  private owe(wallet: Address, token: Address, blockNumber: bigint): void {
    const key = `${wallet}:${token}`
    if ((this.sweptThrough.get(key) ?? -1n) >= blockNumber) return // already moved by a mined sweep
    const owed = this.owed.get(key)
    if (owed === undefined) this.owed.set(key, { wallet, token, throughBlock: blockNumber })
    else if (owed.throughBlock < blockNumber) owed.throughBlock = blockNumber
  }

  /**
   * After a (re)start: every forwarder of a credited deposit that still holds tokens is owed a
   * sweep (the process may have died between a credit and its sweep). Asked once per forwarder.
   */
  private async seed(): Promise<void> {
    const newest = new Map<string, { wallet: Address; token: Address; block: bigint }>()
    for (const d of this.o.exchange.deposits.byKey.values()) {
      if (!d.confirmed || d.stage === "error") continue
      const key = `${d.wallet}:${d.token}`
      const seen = newest.get(key)
      if (seen === undefined || seen.block < BigInt(d.blockNumber)) newest.set(key, { wallet: d.wallet as Address, token: d.token as Address, block: BigInt(d.blockNumber) })
    }
    for (const { wallet, token, block } of newest.values()) {
      if ((await this.o.chain.balanceOf(token, this.o.chain.depositAddress(wallet))) > 0n) this.owe(wallet, token, block)
    }
    this.seeded = true
  }

  /**
   * Sends (or re-sends) the sweep of every owed forwarder and follows it: a forwarder is settled once
   * a sweep sent after its newest credited deposit was mined is seen succeeded. A sweep moves the
   * forwarder's whole balance, so one serves every deposit mined before it was sent (`head`). A
   * sweep that reverts, or stays unknown to the chain for `maxPendingPolls` passes (a reorg dropped
   * it), is replaced. Returns the forwarders settled.
   */
  private async sweepOwed(head: bigint): Promise<number> {
    let settled = 0
    for (const [key, owed] of this.owed) {
      let sweep = this.sweeps.get(key)
      if (sweep === undefined || sweep.head < owed.throughBlock) {
        // Someone swept it already (anyone may; or this watcher before a restart): no transaction for nothing.
        if ((await this.o.chain.balanceOf(owed.token, this.o.chain.depositAddress(owed.wallet))) === 0n) {
          this.owed.delete(key)
          this.sweptThrough.set(key, head)
          settled++
          continue
        }
        sweep = { tx: await this.o.chain.sweep(owed.wallet, owed.token), head, unseen: 0 }
        this.sweeps.set(key, sweep)
      }
      // Asked at once too: a chain that mines on every transaction (the embedded one) has it already.
      const receipt = await this.o.chain.receipt(sweep.tx)
      if (receipt === null) {
        // A second sweep is harmless: it moves whatever is left.
        if (++sweep.unseen >= (this.o.maxPendingPolls ?? 20)) this.sweeps.delete(key)
        continue
      }
      this.sweeps.delete(key)
      if (receipt.status === "reverted" || receipt.blockNumber <= owed.throughBlock) continue // sent again next pass
      this.owed.delete(key)
      this.sweptThrough.set(key, sweep.head)
      settled++
    }
    return settled
  }

  private submit(cmd: Parameters<Exchange["submit"]>[0]): void {
    const durable = this.o.exchange.submit(cmd).durable
    durable.catch(() => undefined) // handled here so a failure waits for the pass's end, where it is rethrown
    this.writes.push(durable)
  }
}

interface Sweep {
  readonly tx: Hash
  /** The head when it was sent: it moves every deposit mined up to there. */
  readonly head: bigint
  /** Passes it has had no receipt. */
  unseen: number
}

interface Owed {
  readonly wallet: Address
  readonly token: Address
  /** The newest credited deposit's block: a sweep must be sent after it was mined to move it. */
  throughBlock: bigint
}
