// The chain guard: keeps the ledger and the deposit chain from disagreeing about money.
// It holds a checkpoint — the number and hash of the newest block the service has treated as
// final — durable outside the process (a file under DATA_DIR live, memory that survives simulated
// crashes in the simulator), written before anything credited in that block range is journaled.
// Every watcher pass first checks it: a chain whose block at the checkpoint is gone or different
// (a reorg deeper than the confirmation depth, or an embedded chain that went back in time) halts
// crediting and payouts until an operator resumes. Blocks are chained by their hashes, so the one
// checkpoint vouches for every credited deposit beneath it. With no checkpoint yet (a data
// directory from before the guard), the newest confirmed deposit's journaled block is the anchor.
//
// On the embedded chain the guard also makes the chain's state durable (`Chain.persist`) before a
// checkpoint moves and before a deposit or payout is confirmed, so a SIGKILL cannot take back what
// the ledger already holds.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import type { ChainGuardPort, ChainGuardStatus, ChainHalt, Checkpoint } from "../service/chain-guard-port.ts"
import type { Exchange } from "../service/exchange.ts"
import type { Chain, Hash } from "./chain.ts"

// The status shapes are the exchange's port's (src/service/chain-guard-port.ts), which this guard implements.
export type { ChainGuardStatus, ChainHalt, Checkpoint }

/** Where the checkpoint lives; `save` resolves once it is durable. */
export interface CheckpointStore {
  load(): Checkpoint | null
  save(checkpoint: Checkpoint): Promise<void>
}

/** In memory (tests, the simulator: kept by the world across simulated crashes). */
export const memoryCheckpointStore = (): CheckpointStore & { current: Checkpoint | null } => {
  const store = {
    current: null as Checkpoint | null,
    load: () => store.current,
    save: (c: Checkpoint) => {
      store.current = c
      return Promise.resolve()
    }
  }
  return store
}

/** A JSON file, replaced atomically (temp file, fsync, rename, directory fsync). */
export const fileCheckpointStore = (path: string): CheckpointStore => ({
  load: () => {
    if (!existsSync(path)) return null
    let raw: { block_number?: unknown; hash?: unknown } | null
    try {
      raw = JSON.parse(readFileSync(path, "utf8")) as typeof raw
    } catch {
      raw = null // unparseable: reported below as malformed, like a wrong shape
    }
    if (raw === null || typeof raw !== "object" || typeof raw.block_number !== "string" || typeof raw.hash !== "string" || !/^0x[0-9a-f]{64}$/.test(raw.hash)) {
      throw new Error(`chain checkpoint ${path} is malformed; restore it or remove it to re-anchor on the newest credited deposit`)
    }
    return { blockNumber: BigInt(raw.block_number), hash: raw.hash as Hash }
  },
  save: async (c) => {
    writeDurably(path, `${JSON.stringify({ block_number: c.blockNumber.toString(), hash: c.hash })}\n`)
  }
})

/** Writes `text` to `path` atomically and durably. */
export const writeDurably = (path: string, text: string | Uint8Array): void => {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true })
  const tmp = `${path}.tmp`
  writeFileSync(tmp, text)
  const fd = openSync(tmp, "r")
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, path)
  const dirFd = openSync(dir, "r")
  try {
    fsyncSync(dirFd)
  } finally {
    closeSync(dirFd)
  }
}

export interface ChainGuardOptions {
  readonly chain: Pick<Chain, "head" | "blockHash" | "persist">
  readonly exchange: Exchange
  readonly store: CheckpointStore
  /** The watcher's confirmation depth: blocks at least this deep (counting their own) are final. */
  readonly confirmations: number
  /** One line per halt (and per resume); the operator's log. */
  readonly log?: (line: string) => void
}

export class ChainGuard implements ChainGuardPort {
  private checkpoint: Checkpoint | null
  private halted: ChainHalt | null = null
  private savedThrough: bigint | null = null
  private saving: Promise<bigint> | null = null
  /** Consecutive passes that found no block at the anchor. */
  private missing = 0

  constructor(private readonly o: ChainGuardOptions) {
    this.checkpoint = o.store.load()
  }

  get isHalted(): boolean {
    return this.halted !== null
  }

  /**
   * True while the anchor's block was missing on the last pass and no halt followed yet: a lagging
   * node or a chain that lost it, which the next pass decides. Until then the chain is not checked.
   */
  get deciding(): boolean {
    return this.halted === null && this.missing > 0
  }

  status(): ChainGuardStatus {
    return { state: this.halted === null ? "ok" : "halted", checkpoint: this.checkpoint, savedThrough: this.savedThrough, halt: this.halted }
  }

  /**
   * Start of a pass at `head`: checks the anchor, then saves the embedded chain and moves the
   * checkpoint to the newest final block. False when the service must not credit or pay out.
   */
  async begin(head: bigint): Promise<boolean> {
    if (this.halted !== null) return false
    const saved = await this.persist(head)
    const depth = BigInt(Math.max(this.o.confirmations, 1))
    let final = head - depth + 1n
    if (saved !== null && saved < final) final = saved
    const advance = final >= 0n && (this.checkpoint === null || final > this.checkpoint.blockNumber)
    // Read before the anchor is checked: a reorg in between then shows at the anchor too.
    const finalHash = advance ? await this.o.chain.blockHash(final) : null
    const anchor = this.checkpoint ?? this.newestConfirmedDeposit()
    if (anchor !== null) {
      // Asked even above the head: an RPC node lagging behind may report an old head.
      const found = await this.o.chain.blockHash(anchor.blockNumber)
      // A block missing once may be a lagging node too: a second pass in a row must agree.
      if (found === null && ++this.missing < 2) return false
      if (found !== anchor.hash) {
        this.halt(anchor, found, head)
        return false
      }
      this.missing = 0
    }
    if (advance) {
      // The chain moved under us between the reads: the next pass tries again.
      if (finalHash === null) return false
      const next = { blockNumber: final, hash: finalHash }
      await this.o.store.save(next)
      this.checkpoint = next
    }
    return true
  }

  /** True when the checkpoint vouches for block `blockNumber`: a deposit there may credit. */
  covers(blockNumber: bigint): boolean {
    return this.halted === null && this.checkpoint !== null && this.checkpoint.blockNumber >= blockNumber
  }

  /**
   * Before journaling that something mined in block `blockNumber` happened (a sweep, a payout):
   * true once the chain's state through that block is durable (always, on a chain that keeps its own).
   */
  async secure(blockNumber: bigint): Promise<boolean> {
    if (this.halted !== null) return false
    if (this.o.chain.persist === undefined) return true
    if (this.savedThrough !== null && this.savedThrough >= blockNumber) return true
    return (await this.persist(blockNumber)) !== null && this.savedThrough! >= blockNumber
  }

  /**
   * The operator's decision after reconciling a halt: anchor again on the chain as it is now.
   * Deposits credited in blocks the chain lost stay credited; the operator has settled them.
   */
  async resume(): Promise<ChainGuardStatus> {
    const head = await this.o.chain.head()
    const saved = await this.persist(head)
    const depth = BigInt(Math.max(this.o.confirmations, 1))
    let final = head - depth + 1n
    if (saved !== null && saved < final) final = saved
    if (final < 0n) final = 0n
    const hash = await this.o.chain.blockHash(final)
    if (hash === null) throw new Error(`block ${final} is not on the chain; try again`)
    const next = { blockNumber: final, hash }
    await this.o.store.save(next)
    const was = this.halted
    this.checkpoint = next
    this.halted = null
    if (was !== null) this.o.log?.(`chain guard: resumed by the operator; new checkpoint block ${final} ${hash} (was halted: ${was.reason})`)
    return this.status()
  }

  /** Saves the embedded chain (calls in flight are shared); the block saved through, or null without `persist`. */
  private async persist(atLeast: bigint): Promise<bigint | null> {
    if (this.o.chain.persist === undefined) return null
    if (this.savedThrough !== null && this.savedThrough >= atLeast) return this.savedThrough
    // A save in flight may have started before `atLeast` was mined: wait for it, then save again.
    if (this.saving !== null) await this.saving.catch(() => undefined)
    if (this.savedThrough !== null && this.savedThrough >= atLeast) return this.savedThrough
    this.saving ??= this.o.chain.persist().finally(() => (this.saving = null))
    const saved = await this.saving
    if (this.savedThrough === null || saved > this.savedThrough) this.savedThrough = saved
    return this.savedThrough
  }

  private newestConfirmedDeposit(): Checkpoint | null {
    let best: Checkpoint | null = null
    for (const d of this.o.exchange.deposits.byKey.values()) {
      if (!d.confirmed) continue
      if (best === null || BigInt(d.blockNumber) > best.blockNumber) best = { blockNumber: BigInt(d.blockNumber), hash: d.blockHash as Hash }
    }
    return best
  }

  private halt(anchor: Checkpoint, found: Hash | null, head: bigint): void {
    const what =
      found === null
        ? `the chain went back: block ${anchor.blockNumber} is gone (head ${head})`
        : `a reorg deeper than the confirmation depth (${this.o.confirmations}) replaced block ${anchor.blockNumber}`
    this.halted = {
      reason: `${what}; crediting and payouts stopped until an operator reconciles and resumes`,
      blockNumber: anchor.blockNumber,
      expectedHash: anchor.hash,
      foundHash: found,
      head,
      atSec: this.o.exchange.nowSec()
    }
    this.o.log?.(`chain guard: HALTED — ${this.halted.reason} (expected ${anchor.hash}, found ${found ?? "nothing"})`)
  }
}
