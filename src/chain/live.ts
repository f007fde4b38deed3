// The live Chain: viem against an RPC endpoint (an embedded Anvil by default, or CHAIN_RPC_URL).
// Every address it returns is lowercase, like `normalizeAddress`, so callers compare strings.
import { Data, Effect, Layer, type Scope } from "effect"
import {
  BaseError,
  BlockNotFoundError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  ExecutionRevertedError,
  getContractAddress,
  http,
  HttpRequestError,
  parseAbiItem,
  SocketClosedError,
  TimeoutError,
  TransactionReceiptNotFoundError,
  type Hex,
  type PublicClient
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { existsSync } from "node:fs"
import { gunzipSync } from "node:zlib"
import { ANVIL_KEYS, type AnvilOptions, startAnvil } from "./anvil.ts"
import { writeDurably } from "./guard.ts"
import { type Address, type Chain, type ChainInfo, ChainService, DEPOSIT_CHAIN_ID, type TransferLog, type TxReceipt } from "./chain.ts"
import { ChainReverted, ChainUnavailable } from "./errors.ts"
import { depositAddressOf, forwarderFactoryAbi, forwarderInitCodeHash, usdgAbi, vaultAbi } from "./contracts.ts"
import { deployContracts, depositChain, verifyDeployment } from "./deploy.ts"

const transferEvent = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")

const lower = (a: string): Address => a.toLowerCase() as Address

/**
 * viem's exceptions as the chain's tagged errors (src/chain/errors.ts), message kept: a transaction
 * whose simulation or gas estimate reverts was never broadcast (ChainReverted); a transport failure
 * is ChainUnavailable; anything else passes on as it is.
 */
export const tagChainError = (err: unknown): unknown => {
  if (!(err instanceof BaseError)) return err
  if (err.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ExecutionRevertedError) !== null) return new ChainReverted({ message: err.message, cause: err })
  if (err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof SocketClosedError) !== null) return new ChainUnavailable({ message: err.message, cause: err })
  return err
}

/** A Chain method whose failure goes through `tagChainError`. */
const tagged = <Args extends unknown[], A>(f: (...args: Args) => Promise<A>): ((...args: Args) => Promise<A>) =>
  (...args) =>
    f(...args).catch((err: unknown) => {
      throw tagChainError(err)
    })

export interface LiveChainOptions {
  readonly rpcUrl: string
  /** Pays gas for sweeps and payouts; must be the vault's operator for payouts. */
  readonly operatorKey: Hex
  readonly info: ChainInfo
  /** Blocks per eth_getLogs call (providers cap the range). Default 2,000. */
  readonly logBlockRange?: bigint
  /** Recipient addresses per eth_getLogs call (one topic list). Default 500. */
  readonly logAddressBatch?: number
  /** viem's polling interval for receipts. Default 1,000 ms. */
  readonly pollingIntervalMs?: number
}

/** The live Chain plus what the operator tooling wants to show. */
export interface LiveChain extends Chain {
  readonly rpcUrl: string
  /** The operator account's address (lowercase). */
  readonly operator: Address
  readonly publicClient: PublicClient
}

// One piece: a factory: the Chain interface's methods over one viem client pair, each a few lines.
export const liveChain = (options: LiveChainOptions): LiveChain => {
  const info: ChainInfo = {
    chainId: options.info.chainId,
    token: lower(options.info.token),
    vault: lower(options.info.vault),
    factory: lower(options.info.factory)
  }
  const blockRange = options.logBlockRange ?? 2_000n
  const addressBatch = options.logAddressBatch ?? 500
  if (blockRange < 1n || addressBatch < 1) throw new Error("liveChain: logBlockRange and logAddressBatch must be positive")
  const pollingInterval = options.pollingIntervalMs ?? 1_000
  const chain = depositChain(options.rpcUrl, info.chainId)
  const transport = http(options.rpcUrl)
  // cacheTime 0: viem otherwise caches the block number for a polling interval, and head() must be fresh.
  const publicClient = createPublicClient({ chain, transport, pollingInterval, cacheTime: 0 })
  const account = privateKeyToAccount(options.operatorKey)
  const wallet = createWalletClient({ chain, transport, account, pollingInterval, cacheTime: 0 })
  const initCodeHash = forwarderInitCodeHash(info.vault)

  // Operator transactions go out one at a time: each takes the next pending nonce, and a send that
  // fails (say, its gas estimate reverts) consumes no nonce, so no gap can stall the later ones.
  let queue: Promise<unknown> = Promise.resolve()
  const serially = <A>(send: () => Promise<A>): Promise<A> => {
    const run = queue.then(send, send)
    queue = run.catch(() => undefined)
    return run
  }

  return {
    info,
    rpcUrl: options.rpcUrl,
    operator: lower(account.address),
    publicClient: publicClient as PublicClient,

    depositAddress: (wallet) => depositAddressOf(info.factory, initCodeHash, lower(wallet)),

    head: tagged(() => publicClient.getBlockNumber({ cacheTime: 0 })),

    blockHash: tagged(async (n) => {
      if (n < 0n) return null
      try {
        const block = await publicClient.getBlock({ blockNumber: n })
        return block.hash
      } catch (err) {
        if (err instanceof BlockNotFoundError) return null
        throw err
      }
    }),

    transfersTo: tagged(async (to, fromBlock, toBlock) => {
      const recipients = [...new Set(to.map(lower))]
      if (recipients.length === 0 || fromBlock > toBlock) return []
      const out: TransferLog[] = []
      for (let start = fromBlock; start <= toBlock; start += blockRange) {
        const end = start + blockRange - 1n < toBlock ? start + blockRange - 1n : toBlock
        for (let i = 0; i < recipients.length; i += addressBatch) {
          // No `address` filter: transfers of every token are reported, each with its contract, so
          // the caller can tell the deposit token from the rest. `strict` drops logs that are not
          // ERC-20 shaped (an ERC-721 Transfer has the same topic but a third indexed argument).
          const logs = await publicClient.getLogs({
            event: transferEvent,
            args: { to: recipients.slice(i, i + addressBatch) },
            fromBlock: start,
            toBlock: end,
            strict: true
          })
          for (const log of logs) {
            if (log.blockHash === null || log.blockNumber === null || log.transactionHash === null || log.logIndex === null) continue
            out.push({
              token: lower(log.address),
              from: lower(log.args.from),
              to: lower(log.args.to),
              amount: log.args.value,
              txHash: log.transactionHash,
              logIndex: log.logIndex,
              blockNumber: log.blockNumber,
              blockHash: log.blockHash
            })
          }
        }
      }
      return out.sort((a, b) => (a.blockNumber !== b.blockNumber ? (a.blockNumber < b.blockNumber ? -1 : 1) : a.logIndex - b.logIndex))
    }),

    sweep: tagged((walletAddress, token) =>
      serially(() =>
        wallet.writeContract({ address: info.factory, abi: forwarderFactoryAbi, functionName: "sweep", args: [lower(walletAddress), lower(token)] })
      )),

    payout: tagged((recipient, amount, withdrawalId) =>
      serially(() =>
        wallet.writeContract({ address: info.vault, abi: vaultAbi, functionName: "withdraw", args: [withdrawalId, info.token, lower(recipient), amount] })
      )),

    paidOut: tagged(async (withdrawalId) => {
      const paid = await publicClient.readContract({ address: info.vault, abi: vaultAbi, functionName: "paid", args: [withdrawalId] })
      if (!paid) return null
      const logs = await publicClient.getContractEvents({ address: info.vault, abi: vaultAbi, eventName: "Withdrawn", args: { id: withdrawalId }, fromBlock: 0n })
      return logs[0]?.transactionHash ?? null
    }),

    receipt: tagged(async (tx): Promise<TxReceipt | null> => {
      try {
        const r = await publicClient.getTransactionReceipt({ hash: tx })
        return { status: r.status, blockNumber: r.blockNumber }
      } catch (err) {
        if (err instanceof TransactionReceiptNotFoundError) return null
        throw err
      }
    }),

    balanceOf: tagged((token, owner) => publicClient.readContract({ address: lower(token), abi: usdgAbi, functionName: "balanceOf", args: [lower(owner)] }))
  }
}

// ---------------------------------------------------------------------------------------------
// Effect layer

export class ChainStartError extends Data.TaggedError("ChainStartError")<{ readonly message: string; readonly cause?: unknown }> {}

export interface LiveChainConfig {
  /** JSON-RPC endpoint. Absent: an embedded Anvil runs for the layer's lifetime. */
  readonly rpcUrl?: string
  /** The operator key. Default on the embedded chain: Anvil's first development key. Required with rpcUrl. */
  readonly operatorKey?: Hex
  /** Deployed contracts. Absent: deployed at start-up (reused when the embedded chain's state already holds them). */
  readonly info?: ChainInfo
  /** Embedded Anvil options (port, extra args). */
  readonly anvil?: AnvilOptions
  /** Embedded Anvil state file (`--state`): the chain, and so the deposit addresses, survive restarts. */
  readonly anvilStatePath?: string
  readonly logBlockRange?: bigint
  readonly logAddressBatch?: number
  readonly pollingIntervalMs?: number
}

/**
 * A previous deployment by `operatorKey` on a persisted development chain: the contracts its
 * first three transactions created (deployContracts' order), when they check out.
 */
export const findDevDeployment = async (rpcUrl: string, operatorKey: Hex): Promise<ChainInfo | null> => {
  const operator = privateKeyToAccount(operatorKey).address
  const client = createPublicClient({ transport: http(rpcUrl), cacheTime: 0 })
  if ((await client.getTransactionCount({ address: operator })) < 3) return null
  const [token, vault, factory] = [0n, 1n, 2n].map((nonce) => lower(getContractAddress({ from: operator, nonce }))) as [Address, Address, Address]
  const info: ChainInfo = { chainId: await client.getChainId(), token, vault, factory }
  try {
    await verifyDeployment(rpcUrl, info)
    return info
  } catch {
    return null
  }
}

/** Gives `address` gas money on an Anvil chain when it has none (a custom operator key on the embedded chain). */
const fundOnAnvil = async (rpcUrl: string, address: Address): Promise<void> => {
  const client = createPublicClient({ transport: http(rpcUrl), cacheTime: 0 })
  if ((await client.getBalance({ address })) > 0n) return
  await client.request({ method: "anvil_setBalance" as never, params: [address, "0x21e19e0c9bab2400000"] as never })
}

const attempt = <A>(message: string, f: () => Promise<A>): Effect.Effect<A, ChainStartError> =>
  Effect.tryPromise({ try: f, catch: (cause) => new ChainStartError({ message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}`, cause }) })

// One piece: a scoped factory: acquisition of the clients and the chain in order.
/** Connects (or starts Anvil, deploys and connects); an embedded Anvil is stopped when the scope closes. */
export const makeLiveChain = (config: LiveChainConfig): Effect.Effect<LiveChain, ChainStartError, Scope.Scope> =>
  Effect.gen(function* () {
    let url: string
    let key: Hex
    let persist: (() => Promise<bigint>) | undefined
    if (config.rpcUrl !== undefined) {
      if (config.operatorKey === undefined) {
        return yield* Effect.fail(new ChainStartError({ message: "an operator key is required with a chain RPC URL (CHAIN_OPERATOR_KEY)" }))
      }
      url = config.rpcUrl
      key = config.operatorKey
    } else {
      // The state file is loaded at start and written only by `persist` (atomically, on the chain
      // guard's demand and at a clean stop), never by Anvil itself: its own dump is neither atomic
      // nor synced, and happens only on a clean exit.
      const statePath = config.anvilStatePath
      const anvilOptions: AnvilOptions = {
        ...config.anvil,
        ...(statePath !== undefined ? { pidFile: `${statePath}.pid` } : {}),
        args: [...(config.anvil?.args ?? []), ...(statePath !== undefined && existsSync(statePath) ? ["--load-state", statePath] : [])]
      }
      const pinned = config.anvil?.port
      const anvil = yield* Effect.acquireRelease(
        attempt(pinned === undefined ? "embedded anvil" : `embedded anvil on CHAIN_PORT ${pinned}`, () => startAnvil(anvilOptions)),
        (a) =>
          Effect.promise(async () => {
            try {
              if (statePath !== undefined) await saveAnvilState(a.rpcUrl, statePath)
            } catch (err) {
              console.error(`embedded chain: the state could not be saved at stop (${String(err)}); the last saved state stands`)
            } finally {
              await a.stop()
            }
          })
      )
      if (statePath !== undefined) {
        const rpcUrl = anvil.rpcUrl
        // One save at a time; each writes a state at least as new as the one before.
        let queue: Promise<unknown> = Promise.resolve()
        persist = () => {
          const run = queue.then(() => saveAnvilState(rpcUrl, statePath))
          queue = run.catch(() => undefined)
          return run
        }
      }
      url = anvil.rpcUrl
      key = config.operatorKey ?? ANVIL_KEYS[0]
      const operator = lower(privateKeyToAccount(key).address)
      yield* attempt("funding the operator", () => fundOnAnvil(anvil.rpcUrl, operator))
    }
    // Only the deposit chain credits: refuse any other network outright.
    const chainId = yield* attempt(`reading the chain id at ${url}`, () => createPublicClient({ transport: http(url), cacheTime: 0 }).getChainId())
    if (chainId !== DEPOSIT_CHAIN_ID) {
      return yield* Effect.fail(new ChainStartError({ message: `the chain at ${url} has chain id ${chainId}; twinbook's deposit chain is ${DEPOSIT_CHAIN_ID}` }))
    }
    let info = config.info
    if (info === undefined) {
      const existing = config.rpcUrl === undefined ? yield* attempt("looking for a deployment", () => findDevDeployment(url, key)) : null
      info = existing ?? (yield* attempt("deploying the contracts", () => deployContracts({ rpcUrl: url, operatorKey: key })))
    } else {
      const given = info
      yield* attempt(`checking the contracts at ${url}`, () => verifyDeployment(url, given))
    }
    const chain = liveChain({
      rpcUrl: url,
      operatorKey: key,
      info,
      ...(config.logBlockRange !== undefined ? { logBlockRange: config.logBlockRange } : {}),
      ...(config.logAddressBatch !== undefined ? { logAddressBatch: config.logAddressBatch } : {}),
      ...(config.pollingIntervalMs !== undefined ? { pollingIntervalMs: config.pollingIntervalMs } : {})
    })
    if (persist === undefined) return chain
    // The deployment is saved before anything else happens on the chain.
    yield* attempt("saving the embedded chain's state", persist)
    return { ...chain, persist }
  })

/**
 * Writes the embedded Anvil's whole state (`anvil_dumpState`: accounts, blocks with their hashes,
 * transactions) to `path` atomically and durably, in the JSON `--load-state` reads. Resolves with
 * a block number the saved state holds at least (the head read before the dump).
 */
export const saveAnvilState = async (rpcUrl: string, path: string): Promise<bigint> => {
  const call = async (method: string): Promise<unknown> => {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] })
    })
    const body = (await res.json()) as { result?: unknown; error?: { message?: string } }
    if (body.error !== undefined || body.result === undefined) throw new Error(`${method}: ${body.error?.message ?? `HTTP ${res.status}`}`)
    return body.result
  }
  const head = BigInt(String(await call("eth_blockNumber")))
  const dump = String(await call("anvil_dumpState"))
  // Anvil answers with gzip-compressed JSON in hex; --load-state reads the JSON.
  const state = gunzipSync(Buffer.from(dump.replace(/^0x/, ""), "hex"))
  writeDurably(path, state)
  return head
}

export const liveChainLayer = (config: LiveChainConfig): Layer.Layer<ChainService, ChainStartError> => Layer.scoped(ChainService, makeLiveChain(config))
