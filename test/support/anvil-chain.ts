// A real Anvil for tests: started on a free loopback port, contracts deployed, the live Chain
// connected, and viem clients for the development accounts (key 0 is the operator). `stop()`
// kills Anvil by PID; `anvilProcessesOn(port)` lets afterAll prove nothing is left behind.
import { readdirSync, readFileSync } from "node:fs"
import { type Chain as ViemChain, createPublicClient, createTestClient, createWalletClient, http, type Hex, type HttpTransport, type PrivateKeyAccount, type WalletClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../src/chain/anvil.ts"
import type { Address, ChainInfo } from "../../src/chain/chain.ts"
import { usdgAbi, usdgBytecode } from "../../src/chain/contracts.ts"
import { deployContracts, depositChain } from "../../src/chain/deploy.ts"
import { type LiveChain, liveChain } from "../../src/chain/live.ts"

export const lower = (a: string): Address => a.toLowerCase() as Address

/** PIDs of running anvil processes listening on `port` (from /proc; Linux). */
export const anvilProcessesOn = (port: number): number[] => {
  const pids: number[] = []
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    let cmdline: string[]
    let state = ""
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0")
      state = readFileSync(`/proc/${name}/stat`, "utf8").replace(/^.*\) /, "").charAt(0)
    } catch {
      continue // exited meanwhile
    }
    if (state === "Z") continue
    const bin = cmdline[0] ?? ""
    const i = cmdline.indexOf("--port")
    if (/anvil$/.test(bin) && i >= 0 && cmdline[i + 1] === String(port)) pids.push(Number(name))
  }
  return pids
}

/** Anvil processes whose parent is `pid` (Linux /proc). */
export const anvilChildrenOf = (pid: number): number[] =>
  readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
        return stat[0] !== "Z" && Number(stat[1]) === pid && /anvil$/.test(readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0")[0] ?? "")
      } catch {
        return false
      }
    })

export interface AnvilChain {
  readonly anvil: Anvil
  readonly info: ChainInfo
  readonly chain: LiveChain
  readonly public: ReturnType<typeof createPublicClient>
  readonly test: ReturnType<typeof createTestClient>
  /** Address of development account i (0 = operator). */
  account(i: number): Address
  wallet(i: number): WalletClient<HttpTransport, ViemChain, PrivateKeyAccount>
  /** Operator-minted `token` (default: the deposit token) for `to`; waits for the receipt. */
  mint(to: Address, amount: bigint, token?: Address): Promise<void>
  /** Account i sends `amount` of `token` to `to`; waits for the receipt and returns it. */
  transfer(i: number, token: Address, to: Address, amount: bigint): Promise<{ hash: Hex; blockNumber: bigint; blockHash: Hex }>
  /** Deploys another USDG instance (operator = key 0), e.g. a "wrong token". */
  deployToken(): Promise<Address>
  stop(): Promise<void>
}

export const startAnvilChain = async (): Promise<AnvilChain> => {
  const anvil = await startAnvil()
  try {
    const operatorKey = ANVIL_KEYS[0]
    const info = await deployContracts({ rpcUrl: anvil.rpcUrl, operatorKey })
    const chain = liveChain({ rpcUrl: anvil.rpcUrl, operatorKey, info, pollingIntervalMs: 50 })
    const viemChain = depositChain(anvil.rpcUrl, info.chainId)
    const transport = http(anvil.rpcUrl)
    const pub = createPublicClient({ chain: viemChain, transport, cacheTime: 0, pollingInterval: 50 })
    const test = createTestClient({ chain: viemChain, transport, mode: "anvil" })
    const key = (i: number): Hex => {
      const k = ANVIL_KEYS[i]
      if (k === undefined) throw new Error(`no development key ${i}`)
      return k
    }
    const wallet = (i: number): WalletClient<HttpTransport, ViemChain, PrivateKeyAccount> => createWalletClient({ chain: viemChain, transport, account: privateKeyToAccount(key(i)), cacheTime: 0 })
    const confirm = async (hash: Hex) => {
      const r = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
      if (r.status !== "success") throw new Error(`tx ${hash} reverted`)
      return { hash, blockNumber: r.blockNumber, blockHash: r.blockHash }
    }
    return {
      anvil,
      info,
      chain,
      public: pub,
      test,
      account: (i) => lower(privateKeyToAccount(key(i)).address),
      wallet,
      mint: async (to, amount, token = info.token) => {
        await confirm(await wallet(0).writeContract({ address: token, abi: usdgAbi, functionName: "mint", args: [to, amount], chain: viemChain }))
      },
      transfer: async (i, token, to, amount) =>
        confirm(await wallet(i).writeContract({ address: token, abi: usdgAbi, functionName: "transfer", args: [to, amount], chain: viemChain })),
      deployToken: async () => {
        const hash = await wallet(0).deployContract({ abi: usdgAbi, bytecode: usdgBytecode, args: [privateKeyToAccount(key(0)).address], chain: viemChain })
        const r = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
        if (r.contractAddress == null) throw new Error("token deployment failed")
        return lower(r.contractAddress)
      },
      stop: () => anvil.stop()
    }
  } catch (err) {
    await anvil.stop()
    throw err
  }
}
