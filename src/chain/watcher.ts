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
import type { Exchange } from "../service/exchange.ts"
import type { DepositRules } from "../service/deposits.ts"
import type { Address, Chain, Hash } from "./chain.ts"

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
  readonly onError?: (err: unknown) => void
}

export interface PollReport {
  readonly head: bigint
  readonly detected: number
  readonly reorged: number
  readonly confirmed: number
}

export class DepositWatcher {
  private scannedThrough: bigint
  private readonly sweeps = new Map<string, Hash>()
  private polling: Promise<PollReport> | null = null

  constructor(private readonly o: WatcherOptions) {
    this.scannedThrough = (o.startBlock ?? 0n) - 1n
  }

  /** One pass; concurrent calls share the pass in flight. */
  poll(): Promise<PollReport> {
    this.polling ??= this.pass().finally(() => {
      this.polling = null
    })
    return this.polling
  }

  private async pass(): Promise<PollReport> {
    const { chain, exchange } = this.o
    let detected = 0
    let reorged = 0
    let confirmed = 0
    const head = await chain.head()
    const addresses = [...exchange.watched.keys()] as Address[]
    if (addresses.length > 0) {
      const floor = this.o.startBlock ?? 0n
      let from = this.scannedThrough + 1n - BigInt(this.o.rescanBlocks ?? 12)
      if (from < floor) from = floor
      for (const log of await chain.transfersTo(addresses, from, head)) {
        if (exchange.deposits.byKey.has(`${log.txHash}:${log.logIndex}`)) continue
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
      if (await this.swept(d.wallet as Address, d.token as Address, d.key)) {
        await this.submit({ type: "deposit_confirmed", key: d.key })
        confirmed++
      }
    }
    return { head, detected, reorged, confirmed }
  }

  /**
   * Sweeps the forwarder into the vault once per deposit; true once the sweep is mined.
   * A sweep moves the whole balance, so several deposits to one address share one sweep.
   */
  private async swept(wallet: Address, token: Address, key: string): Promise<boolean> {
    let tx = this.sweeps.get(key)
    if (tx === undefined) {
      tx = await this.o.chain.sweep(wallet, token)
      this.sweeps.set(key, tx)
    }
    const receipt = await this.o.chain.receipt(tx)
    if (receipt === null) return false
    if (receipt.status === "reverted") {
      this.sweeps.delete(key)
      return false
    }
    return true
  }

  private async submit(cmd: Parameters<Exchange["submit"]>[0]): Promise<void> {
    await this.o.exchange.submit(cmd).durable
  }
}
