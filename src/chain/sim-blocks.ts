// Building blocks of the in-memory chain (src/chain/sim.ts): hashing, the balance ledger,
// a seeded PRNG and block execution. Pure and deterministic: no clock, no I/O.
import { createHash } from "node:crypto"
import type { Address, Hash, TransferLog } from "./chain.ts"

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000" as Address

/** `mint` and `transfer` are test controls; `sweep` and `payout` come through the Chain interface. */
export type SimTxKind = "mint" | "transfer" | "sweep" | "payout"

/** A submitted transaction: one token movement, executed when its block is mined. */
export interface SimTx {
  readonly hash: Hash
  readonly kind: SimTxKind
  readonly token: Address
  /** The zero address for a mint; the forwarder (deposit address) for a sweep. */
  readonly from: Address
  readonly to: Address
  /** null for a sweep: the forwarder's whole balance, fixed when the tx executes. */
  readonly amount: bigint | null
  /** A payout's withdrawal id: the vault pays each id at most once. */
  readonly payoutId?: Hash
}

export interface BalanceDelta {
  readonly token: Address
  readonly owner: Address
  readonly delta: bigint
}

/** A transaction as executed in a block: a reverted one has no log and no deltas. */
export interface MinedTx {
  readonly tx: SimTx
  readonly status: "success" | "reverted"
  readonly log: TransferLog | null
  readonly deltas: ReadonlyArray<BalanceDelta>
}

export interface SimBlock {
  readonly number: bigint
  readonly hash: Hash
  readonly parentHash: Hash
  readonly timestampSec: number
  /** How many reorgs had happened when this block was built: a replacement block hashes differently. */
  readonly fork: number
  readonly txs: ReadonlyArray<MinedTx>
}

export const sha256Hex = (...parts: ReadonlyArray<string | number | bigint>): Hash =>
  `0x${createHash("sha256").update(parts.map(String).join("|")).digest("hex")}`

/** Token balances per (token, owner). Absent entries are zero. */
export class Ledger {
  private readonly balances = new Map<string, bigint>()
  /** Withdrawal ids the vault has paid on the canonical chain. */
  readonly paidIds = new Set<Hash>()

  get(token: Address, owner: Address): bigint {
    return this.balances.get(`${token}/${owner}`) ?? 0n
  }

  apply(deltas: ReadonlyArray<BalanceDelta>, sign: 1n | -1n): void {
    for (const { token, owner, delta } of sign === 1n ? deltas : [...deltas].reverse()) {
      const key = `${token}/${owner}`
      const next = (this.balances.get(key) ?? 0n) + sign * delta
      if (next === 0n) this.balances.delete(key)
      else this.balances.set(key, next)
    }
  }
}

/** mulberry32 seeded from sha256(seed): a uniform float in [0, 1) per call. */
export const seededRandom = (seed: string): (() => number) => {
  let state = Number.parseInt(sha256Hex("prng", seed).slice(2, 10), 16) >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Outcome {
  readonly status: "success" | "reverted"
  readonly amount: bigint
  readonly deltas: ReadonlyArray<BalanceDelta>
}

const execute = (tx: SimTx, ledger: Ledger): Outcome => {
  if (tx.kind === "mint") {
    const amount = tx.amount ?? 0n
    return { status: "success", amount, deltas: [{ token: tx.token, owner: tx.to, delta: amount }] }
  }
  const held = ledger.get(tx.token, tx.from)
  const amount = tx.amount ?? held
  if (amount > held) return { status: "reverted", amount, deltas: [] }
  if (tx.payoutId !== undefined && ledger.paidIds.has(tx.payoutId)) return { status: "reverted", amount, deltas: [] }
  return {
    status: "success",
    amount,
    deltas: [
      { token: tx.token, owner: tx.from, delta: -amount },
      { token: tx.token, owner: tx.to, delta: amount }
    ]
  }
}

export const genesisBlock = (seed: string, chainId: number, timestampSec: number): SimBlock => ({
  number: 0n,
  hash: sha256Hex("genesis", seed, chainId, timestampSec),
  parentHash: `0x${"0".repeat(64)}`,
  timestampSec,
  fork: 0,
  txs: []
})

/** Builds the child of `parent` holding `txs` in order, executing them against `ledger`. */
export const buildBlock = (
  parent: SimBlock,
  timestampSec: number,
  fork: number,
  txs: ReadonlyArray<SimTx>,
  ledger: Ledger
): SimBlock => {
  const number = parent.number + 1n
  const hash = sha256Hex("block", parent.hash, number, timestampSec, fork, ...txs.map((tx) => tx.hash))
  let logIndex = 0
  const mined = txs.map((tx): MinedTx => {
    const { status, amount, deltas } = execute(tx, ledger)
    ledger.apply(deltas, 1n)
    if (status === "success" && tx.payoutId !== undefined) ledger.paidIds.add(tx.payoutId)
    // A forwarder with nothing to sweep returns without calling the token: no log.
    const emits = status === "success" && !(tx.kind === "sweep" && amount === 0n)
    const log: TransferLog | null = emits
      ? { token: tx.token, from: tx.from, to: tx.to, amount, txHash: tx.hash, logIndex: logIndex++, blockNumber: number, blockHash: hash }
      : null
    return { tx, status, log, deltas }
  })
  return { number, hash, parentHash: parent.hash, timestampSec, fork, txs: mined }
}

/** Reverts the balance effects of `block` (the inverse of buildBlock's execution). */
export const unwindBlock = (block: SimBlock, ledger: Ledger): void => {
  for (const mined of [...block.txs].reverse()) {
    ledger.apply(mined.deltas, -1n)
    if (mined.status === "success" && mined.tx.payoutId !== undefined) ledger.paidIds.delete(mined.tx.payoutId)
  }
}
