// The Chain layer: everything twinbook needs from the deposit chain, behind one
// interface with two implementations — live (viem against Anvil or CHAIN_RPC_URL,
// src/chain/live.ts) and simulated (in memory, with faults on demand, src/chain/sim.ts).
// Amounts are in token base units: USDG has 6 decimals, so one unit is one micro-USDC.
import { Context } from "effect"

export const DEPOSIT_CHAIN_ID = 4663
export const USDG_DECIMALS = 6

export type Address = `0x${string}`
export type Hash = `0x${string}`

/** An ERC-20 `Transfer` log, from any token contract. */
export interface TransferLog {
  /** The contract that emitted the log: only the deposit token credits. */
  readonly token: Address
  readonly from: Address
  readonly to: Address
  readonly amount: bigint
  readonly txHash: Hash
  readonly logIndex: number
  readonly blockNumber: bigint
  readonly blockHash: Hash
}

export interface ChainInfo {
  readonly chainId: number
  /** The deposit token (USDG). */
  readonly token: Address
  /** Holds deposited funds; pays withdrawals on the operator's order. */
  readonly vault: Address
  /** CREATE2 factory of per-user deposit forwarders. */
  readonly factory: Address
}

export interface TxReceipt {
  readonly status: "success" | "reverted"
  readonly blockNumber: bigint
}

export interface Chain {
  readonly info: ChainInfo
  /** The counterfactual CREATE2 address of `wallet`'s forwarder: pure, no RPC. `wallet` is lowercase. */
  depositAddress(wallet: Address): Address
  /** Latest block number. */
  head(): Promise<bigint>
  /** Hash of block `n` (null when the chain is shorter): compared across polls to notice reorgs. */
  blockHash(n: bigint): Promise<Hash | null>
  /** ERC-20 Transfer logs of any token whose recipient is in `to`, within [fromBlock, toBlock]. */
  transfersTo(to: ReadonlyArray<Address>, fromBlock: bigint, toBlock: bigint): Promise<TransferLog[]>
  /** Deploys `wallet`'s forwarder if needed and sweeps its whole `token` balance into the vault. */
  sweep(wallet: Address, token: Address): Promise<Hash>
  /** The vault pays `amount` of the deposit token to `recipient` for withdrawal `withdrawalId`, at most once (operator key). */
  payout(recipient: Address, amount: bigint, withdrawalId: Hash): Promise<Hash>
  /** The mined payout transaction of `withdrawalId`, or null while the vault has not paid it. */
  paidOut(withdrawalId: Hash): Promise<Hash | null>
  /** The receipt of a mined transaction, or null while it is pending (or unknown). */
  receipt(tx: Hash): Promise<TxReceipt | null>
  balanceOf(token: Address, owner: Address): Promise<bigint>
  /**
   * Only a chain that can lose its own state (the embedded Anvil): makes the chain's state durable
   * and resolves with the block it is saved through. The chain guard (src/chain/guard.ts) calls it
   * before the ledger relies on a block, so a SIGKILL cannot take back what was credited.
   */
  persist?(): Promise<bigint>
}

export class ChainService extends Context.Tag("twinbook/Chain")<ChainService, Chain>() {}

/** 0x + 40 hex, any case; returns the lowercase form or null. */
export const normalizeAddress = (value: unknown): Address | null =>
  typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value) ? (value.toLowerCase() as Address) : null
