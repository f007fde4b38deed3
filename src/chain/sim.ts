// The in-memory chain for the deterministic simulator (issue 4): blocks, logs, balances and
// receipts, plus the controls the simulator's fault injection and the tests drive — mint,
// transfer, mine, reorg, RPC failures, delayed transactions and missed logs. Everything follows
// from the seed and the calls made: no clock, no unseeded randomness, no I/O.
//
// Transactions (test transfers and mints included) wait in a pending pool and execute when
// `mine` builds their block; a transfer the sender cannot cover is mined as reverted. Reads
// (`balanceOf`, `transfersTo`, `receipt`) see mined blocks only.
import { getContractAddress, keccak256, pad, stringToHex } from "viem"
import {
  type Address,
  type Chain,
  type ChainInfo,
  DEPOSIT_CHAIN_ID,
  type Hash,
  normalizeAddress,
  type TransferLog,
  type TxReceipt
} from "./chain.ts"
import { ChainReverted, ChainUnavailable } from "./errors.ts"
import {
  buildBlock,
  genesisBlock,
  Ledger,
  type SimBlock,
  type SimTx,
  type SimTxKind,
  seededRandom,
  sha256Hex,
  unwindBlock,
  ZERO_ADDRESS
} from "./sim-blocks.ts"

export { type MinedTx, type SimBlock, type SimTx, type SimTxKind, ZERO_ADDRESS } from "./sim-blocks.ts"

export const SIM_CHAIN_INFO: ChainInfo = {
  chainId: DEPOSIT_CHAIN_ID,
  token: "0x0000000000000000000000000000000000001001",
  vault: "0x0000000000000000000000000000000000001002",
  factory: "0x0000000000000000000000000000000000001003"
}

/** The init-code hash the simulated factory deploys forwarders with. */
const FORWARDER_CODE_HASH = keccak256(stringToHex("twinbook-sim-forwarder"))

/** The async Chain methods a fault can fail. */
export type SimMethod = "head" | "blockHash" | "transfersTo" | "sweep" | "payout" | "receipt" | "balanceOf"

/** A JSON-RPC-style failure (code -32000 is a generic server error): the chain was unavailable, as a live RPC failure is. */
export class SimRpcError extends ChainUnavailable {
  override readonly name = "SimRpcError"
  declare readonly code: number
  constructor(message: string, code = -32000) {
    super({ message, code })
  }
}

export interface SimChainOptions {
  /** Salts genesis, block and tx hashes and seeds `faultRate` draws. Default 0. */
  readonly seed?: string | number
  /** Overrides of SIM_CHAIN_INFO. */
  readonly info?: Partial<ChainInfo>
  /** Genesis timestamp (unix seconds). Default 1_700_000_000. */
  readonly genesisTimeSec?: number
  /** Seconds between consecutive blocks when `now` is absent. Default 2. */
  readonly blockTimeSec?: number
  /** Timestamp hook (unix seconds, e.g. the simulator's TestClock): stamps each new block. */
  readonly now?: () => number
  /** When set, `transfersTo` rejects ranges spanning more blocks, like a public RPC's log limit. */
  readonly maxLogRange?: number
  /**
   * Estimate before sending, like a live chain's wallet: a payout the vault cannot cover now (or
   * an id already paid) is refused with ChainReverted and nothing is sent. Off by default: the
   * payout is submitted and reverts when mined.
   */
  readonly estimateGas?: boolean
}

export interface ReorgOptions {
  /** Transactions to leave out of the replacement blocks; by default every one is re-included. */
  readonly dropTx?: (tx: SimTx) => boolean
  /** The order each replacement block holds its kept txs in (default: as before); log indexes follow it. */
  readonly reorder?: (txs: SimTx[]) => SimTx[]
}

export interface FailOptions {
  /** Fail after the call took effect (a sweep or payout is submitted; the reply is lost). */
  readonly afterSubmit?: boolean
}

interface PendingTx {
  readonly tx: SimTx
  /** The first block that may include it; null while held until `release`. */
  readyAt: bigint | null
}

interface Fault {
  readonly error: Error
  remaining: number
  readonly afterSubmit: boolean
}

const toError = (error: Error | string): Error => (typeof error === "string" ? new SimRpcError(error) : error)

const address = (value: string): Address => {
  const normalized = normalizeAddress(value)
  if (normalized === null) throw new TypeError(`invalid address: ${value}`)
  return normalized
}

const nonNegative = (amount: bigint): bigint => {
  if (amount < 0n) throw new RangeError(`negative amount: ${amount}`)
  return amount
}

const count = (n: number, what: string): number => {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative integer, got ${n}`)
  return n
}

export class SimChain implements Chain {
  readonly info: ChainInfo
  private readonly seed: string
  private readonly random: () => number
  private readonly blockTimeSec: number
  private readonly now: (() => number) | undefined
  private readonly maxLogRange: number | undefined
  private readonly estimateGas: boolean
  private readonly ledger = new Ledger()
  private readonly blocks: SimBlock[]
  private pool: PendingTx[] = []
  private readonly receipts = new Map<Hash, TxReceipt>()
  /** The successful payout tx of each payout id on the chain (the ledger lets one succeed): kept with the blocks, not searched. */
  private readonly payoutTxs = new Map<Hash, Hash>()
  private readonly faults = new Map<SimMethod, Fault[]>()
  private readonly rates = new Map<SimMethod, { readonly probability: number; readonly error: Error }>()
  private readonly delays = new Map<SimTxKind, { readonly blocks: number; remaining: number }>()
  private readonly droppedLogs = new Map<Hash, number>()
  /** Each address given to `transfersTo`, checked and lowercased once (a watch list is asked for again every pass). */
  private readonly checkedAddresses = new Map<string, Address>()
  private nonce = 0
  private fork = 0

  constructor(options: SimChainOptions = {}) {
    const info = { ...SIM_CHAIN_INFO, ...options.info }
    this.info = { chainId: info.chainId, token: address(info.token), vault: address(info.vault), factory: address(info.factory) }
    this.seed = String(options.seed ?? 0)
    this.random = seededRandom(this.seed)
    this.blockTimeSec = options.blockTimeSec ?? 2
    this.now = options.now
    this.maxLogRange = options.maxLogRange
    this.estimateGas = options.estimateGas ?? false
    this.blocks = [genesisBlock(this.seed, this.info.chainId, options.genesisTimeSec ?? 1_700_000_000)]
  }

  // ---- Chain -------------------------------------------------------------------------------

  depositAddress(wallet: Address): Address {
    const salt = pad(address(wallet), { size: 32 })
    const from = this.info.factory
    return getContractAddress({ opcode: "CREATE2", from, salt, bytecodeHash: FORWARDER_CODE_HASH }).toLowerCase() as Address
  }

  head(): Promise<bigint> {
    return this.call("head", () => this.tip.number)
  }

  blockHash(n: bigint): Promise<Hash | null> {
    return this.call("blockHash", () => (n < 0n ? null : (this.blocks[Number(n)]?.hash ?? null)))
  }

  transfersTo(to: ReadonlyArray<Address>, fromBlock: bigint, toBlock: bigint): Promise<TransferLog[]> {
    return this.call("transfersTo", () => {
      if (this.maxLogRange !== undefined && toBlock - fromBlock + 1n > BigInt(this.maxLogRange)) {
        throw new SimRpcError(`query exceeds max block range ${this.maxLogRange}`, -32005)
      }
      // Built on the first log only: most polled ranges hold none, and normalising a long
      // watch list on every poll dominated long simulations (so each address is checked once).
      let wanted: Set<string> | null = null
      const last = toBlock < this.tip.number ? toBlock : this.tip.number
      const out: TransferLog[] = []
      for (let n = fromBlock < 0n ? 0n : fromBlock; n <= last; n++) {
        for (const { log } of this.blocks[Number(n)]!.txs) {
          if (log === null) continue
          wanted ??= new Set(to.map((a) => this.checkedAddress(a)))
          if (!wanted.has(log.to)) continue
          const omit = this.droppedLogs.get(log.txHash)
          if (omit === undefined) out.push(log)
          else if (omit > 1) this.droppedLogs.set(log.txHash, omit - 1)
          else this.droppedLogs.delete(log.txHash)
        }
      }
      return out
    })
  }

  private checkedAddress(value: string): Address {
    let checked = this.checkedAddresses.get(value)
    if (checked === undefined) this.checkedAddresses.set(value, (checked = address(value)))
    return checked
  }

  sweep(wallet: Address, token: Address): Promise<Hash> {
    return this.call("sweep", () => this.submit("sweep", address(token), this.depositAddress(wallet), this.info.vault, null))
  }

  /** The vault pays each withdrawal id at most once (a repeat reverts). */
  payout(recipient: Address, amount: bigint, withdrawalId: Hash): Promise<Hash> {
    return this.call("payout", () => {
      if (this.estimateGas && (this.ledger.get(this.info.token, this.info.vault) < amount || this.ledger.paidIds.has(withdrawalId))) {
        throw new ChainReverted({ message: `payout ${withdrawalId} would revert: the vault cannot pay it` })
      }
      return this.submit("payout", this.info.token, this.info.vault, address(recipient), nonNegative(amount), withdrawalId)
    })
  }

  receipt(tx: Hash): Promise<TxReceipt | null> {
    return this.call("receipt", () => this.receipts.get(tx.toLowerCase() as Hash) ?? null)
  }

  balanceOf(token: Address, owner: Address): Promise<bigint> {
    return this.call("balanceOf", () => this.balance(token, owner))
  }

  // ---- Controls ----------------------------------------------------------------------------

  /** Creates `amount` of `token` for `to` in the next block (a Transfer log from the zero address). */
  mint(token: Address, to: Address, amount: bigint): Hash {
    return this.submit("mint", address(token), ZERO_ADDRESS, address(to), nonNegative(amount))
  }

  /** Moves `amount` of `token` in the next block; reverted (no log) if `from` cannot cover it then. */
  transfer(token: Address, from: Address, to: Address, amount: bigint): Hash {
    return this.submit("transfer", address(token), address(from), address(to), nonNegative(amount))
  }

  /** Mines `n` blocks, each holding every pending tx that is ready, in submission order. Returns the head. */
  mine(n = 1): bigint {
    count(n, "mine count")
    for (let i = 0; i < n; i++) {
      const number = this.tip.number + 1n
      const ready = this.pool.filter((p) => p.readyAt !== null && p.readyAt <= number)
      this.pool = this.pool.filter((p) => !ready.includes(p))
      const parentTime = this.tip.timestampSec
      const time = this.now === undefined ? parentTime + this.blockTimeSec : Math.max(parentTime, Math.floor(this.now()))
      this.append(ready.map((p) => p.tx), time)
    }
    return this.tip.number
  }

  /**
   * Replaces the last `depth` blocks with blocks at the same heights and timestamps but new hashes.
   * Their txs are re-executed in the same order (outcomes may change: a sweep after a dropped
   * deposit moves less); those matching `dropTx` vanish (receipt null, log gone, balances rolled
   * back). Returns the dropped txs.
   */
  reorg(depth: number, { dropTx, reorder }: ReorgOptions = {}): SimTx[] {
    if (count(depth, "reorg depth") < 1 || depth >= this.blocks.length) {
      throw new RangeError(`reorg depth must be in 1..${this.blocks.length - 1}, got ${depth}`)
    }
    const replaced = this.blocks.splice(this.blocks.length - depth)
    for (const block of [...replaced].reverse()) this.unwind(block)
    this.fork++
    const dropped: SimTx[] = []
    for (const block of replaced) {
      const kept: SimTx[] = []
      for (const { tx } of block.txs) (dropTx?.(tx) ? dropped : kept).push(tx)
      this.append(reorder === undefined ? kept : reorder(kept), block.timestampSec)
    }
    return dropped
  }

  /**
   * Takes the chain back to block `n`, as an embedded chain restarted from an old state file
   * does: later blocks vanish with their transactions (receipts gone, balances rolled back) and
   * so does the pending pool. Blocks mined afterwards hash differently from those lost. Returns
   * the lost transactions, mined and pending. A reorg deeper than the confirmation depth is
   * `reorg(depth)`; this is the chain going back in time.
   */
  rollback(n: bigint): SimTx[] {
    if (n < 0n || n > this.tip.number) throw new RangeError(`rollback target must be in 0..${this.tip.number}, got ${n}`)
    const lost = this.blocks.splice(Number(n) + 1)
    const dropped: SimTx[] = []
    for (const block of [...lost].reverse()) this.unwind(block)
    for (const block of lost) for (const { tx } of block.txs) dropped.push(tx)
    for (const p of this.pool.splice(0)) dropped.push(p.tx)
    this.fork++
    return dropped
  }

  /** The next `times` calls of `method` reject with `error` (a string becomes a SimRpcError). Queues after earlier faults. */
  failNext(method: SimMethod, error: Error | string = "simulated RPC failure", times = 1, options: FailOptions = {}): void {
    if (count(times, "times") === 0) return
    const queue = this.faults.get(method) ?? []
    queue.push({ error: toError(error), remaining: times, afterSubmit: options.afterSubmit ?? false })
    this.faults.set(method, queue)
  }

  /** Each later call of `method` rejects with `probability`, drawn from the seeded PRNG (0 turns it off). */
  faultRate(method: SimMethod, probability: number, error: Error | string = "simulated RPC failure"): void {
    if (probability <= 0) this.rates.delete(method)
    else this.rates.set(method, { probability, error: toError(error) })
  }

  /** Keeps pending tx `txHash` out of the next `blocks` blocks (Infinity: until `release`). */
  delay(txHash: Hash, blocks: number): void {
    const pending = this.pool.find((p) => p.tx.hash === txHash.toLowerCase())
    if (pending === undefined) throw new Error(`not pending: ${txHash}`)
    pending.readyAt = this.readyAt(blocks)
  }

  /** Delays the next `times` submitted txs of `kind` (e.g. "payout") as `delay` would. */
  delayNext(kind: SimTxKind, blocks: number, times = 1): void {
    this.readyAt(blocks) // validates `blocks`
    if (count(times, "times") === 0) this.delays.delete(kind)
    else this.delays.set(kind, { blocks, remaining: times })
  }

  /** Makes a delayed or held pending tx eligible for the next block. */
  release(txHash: Hash): void {
    for (const p of this.pool) if (p.tx.hash === txHash.toLowerCase()) p.readyAt = 0n
  }

  /** Omits `txHash`'s log from the next `times` `transfersTo` results that would contain it. */
  dropLog(txHash: Hash, times = 1): void {
    this.droppedLogs.set(txHash.toLowerCase() as Hash, count(times, "times"))
  }

  // ---- Inspection (synchronous, never faulted) ---------------------------------------------

  get tip(): SimBlock {
    return this.blocks[this.blocks.length - 1]!
  }

  block(n: bigint): SimBlock | null {
    return n < 0n ? null : (this.blocks[Number(n)] ?? null)
  }

  balance(token: Address, owner: Address): bigint {
    return this.ledger.get(address(token), address(owner))
  }

  pending(): SimTx[] {
    return this.pool.map((p) => p.tx)
  }

  // ---- Internals ---------------------------------------------------------------------------

  private async call<T>(method: SimMethod, body: () => T): Promise<T> {
    const fault = this.takeFault(method)
    if (fault !== undefined && !fault.afterSubmit) throw fault.error
    const rate = this.rates.get(method)
    if (fault === undefined && rate !== undefined && this.random() < rate.probability) throw rate.error
    const result = body()
    if (fault !== undefined) throw fault.error
    return result
  }

  private takeFault(method: SimMethod): Fault | undefined {
    const queue = this.faults.get(method)
    const fault = queue?.[0]
    if (fault !== undefined && --fault.remaining === 0) queue!.shift()
    return fault
  }

  private readyAt(blocks: number): bigint | null {
    if (blocks === Infinity) return null
    return this.tip.number + 1n + BigInt(count(blocks, "delay blocks"))
  }

  /** The mined, successful payout of a withdrawal id on the canonical chain, or null. */
  paidOut(withdrawalId: Hash): Promise<Hash | null> {
    return this.call("payout", () => this.payoutTxs.get(withdrawalId) ?? null)
  }

  private submit(kind: SimTxKind, token: Address, from: Address, to: Address, amount: bigint | null, payoutId?: Hash): Hash {
    const hash = sha256Hex("tx", this.seed, this.nonce++, kind, token, from, to, amount ?? "all", payoutId ?? "")
    const delay = this.delays.get(kind)
    let readyAt: bigint | null = 0n
    if (delay !== undefined) {
      readyAt = this.readyAt(delay.blocks)
      if (--delay.remaining <= 0) this.delays.delete(kind)
    }
    this.pool.push({ tx: { hash, kind, token, from, to, amount, ...(payoutId === undefined ? {} : { payoutId }) }, readyAt })
    return hash
  }

  private append(txs: ReadonlyArray<SimTx>, timestampSec: number): void {
    const block = buildBlock(this.tip, timestampSec, this.fork, txs, this.ledger)
    this.blocks.push(block)
    for (const { tx, status } of block.txs) {
      this.receipts.set(tx.hash, { status, blockNumber: block.number })
      if (status === "success" && tx.payoutId !== undefined) this.payoutTxs.set(tx.payoutId, tx.hash)
    }
  }

  /** Takes a block's effects back (the last block first): balances, receipts, payouts. */
  private unwind(block: SimBlock): void {
    unwindBlock(block, this.ledger)
    for (const { tx, status } of block.txs) {
      this.receipts.delete(tx.hash)
      if (status === "success" && tx.payoutId !== undefined) this.payoutTxs.delete(tx.payoutId)
    }
  }
}
