// Deploys the deposit contracts with viem: USDG (unless an existing token is given), the Vault
// (operator = the operator key) and the ForwarderFactory(vault). The three creations are sent
// back to back with consecutive nonces (their addresses follow from the nonces), then confirmed.
import { createPublicClient, createWalletClient, defineChain, getContractAddress, http, type Chain as ViemChain, type Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { type Address, type ChainInfo, DEPOSIT_CHAIN_ID } from "./chain.ts"
import {
  forwarderFactoryAbi,
  forwarderFactoryBytecode,
  forwarderInitCodeHash,
  usdgAbi,
  usdgBytecode,
  vaultAbi,
  vaultBytecode
} from "./contracts.ts"

/** A viem chain description for the deposit chain behind `rpcUrl`. */
export const depositChain = (rpcUrl: string, chainId: number = DEPOSIT_CHAIN_ID): ViemChain =>
  defineChain({
    id: chainId,
    name: "twinbook deposit chain",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } }
  })

export interface DeployOptions {
  readonly rpcUrl: string
  readonly operatorKey: Hex
  /** Use this deposit token instead of deploying a development USDG. */
  readonly token?: Address
  /** Receipt polling interval. Default 50 ms (Anvil mines at once). */
  readonly pollingIntervalMs?: number
}

const lower = (a: string): Address => a.toLowerCase() as Address

export const deployContracts = async (options: DeployOptions): Promise<ChainInfo> => {
  const pollingInterval = options.pollingIntervalMs ?? 50
  const transport = http(options.rpcUrl)
  const probe = createPublicClient({ transport })
  const chainId = await probe.getChainId()
  const chain = depositChain(options.rpcUrl, chainId)
  const publicClient = createPublicClient({ chain, transport, pollingInterval, cacheTime: 0 })
  const account = privateKeyToAccount(options.operatorKey)
  const wallet = createWalletClient({ chain, transport, account, pollingInterval, cacheTime: 0 })

  let nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: "pending" })
  const sent: Array<{ name: string; hash: Hex; address: Address }> = []
  const create = async (name: string, send: (nonce: number) => Promise<Hex>): Promise<Address> => {
    const address = lower(getContractAddress({ from: account.address, nonce: BigInt(nonce) }))
    sent.push({ name, hash: await send(nonce), address })
    nonce++
    return address
  }
  // Explicit gas limits: estimating a creation whose predecessor is not mined yet would be wrong
  // on chains that do not mine at once; these cover the contracts with ample room.
  const token =
    options.token !== undefined
      ? lower(options.token)
      : await create("USDG", (n) => wallet.deployContract({ abi: usdgAbi, bytecode: usdgBytecode, args: [account.address], nonce: n, gas: 1_500_000n }))
  const vault = await create("Vault", (n) => wallet.deployContract({ abi: vaultAbi, bytecode: vaultBytecode, args: [account.address], nonce: n, gas: 1_000_000n }))
  const factory = await create("ForwarderFactory", (n) =>
    wallet.deployContract({ abi: forwarderFactoryAbi, bytecode: forwarderFactoryBytecode, args: [vault], nonce: n, gas: 1_500_000n })
  )
  for (const s of sent) {
    const receipt = await publicClient.waitForTransactionReceipt({ hash: s.hash, pollingInterval })
    if (receipt.status !== "success") throw new Error(`deploy: ${s.name} creation reverted (tx ${s.hash})`)
    if (receipt.contractAddress == null || lower(receipt.contractAddress) !== s.address) {
      throw new Error(`deploy: ${s.name} landed at ${receipt.contractAddress}, expected ${s.address}`)
    }
  }
  const info: ChainInfo = { chainId, token, vault, factory }
  await verifyDeployment(options.rpcUrl, info)
  return info
}

/**
 * Checks that `info` describes a working deployment on the chain behind `rpcUrl`: the chain id,
 * the token's code, and a factory bound to the vault whose on-chain init-code hash equals the
 * committed forwarder artifact's (else off-chain deposit addresses would be wrong).
 */
export const verifyDeployment = async (rpcUrl: string, info: ChainInfo): Promise<void> => {
  const client = createPublicClient({ transport: http(rpcUrl), cacheTime: 0 })
  const chainId = await client.getChainId()
  if (chainId !== info.chainId) throw new Error(`chain id is ${chainId}, expected ${info.chainId}`)
  for (const [name, address] of [
    ["token", info.token],
    ["vault", info.vault],
    ["factory", info.factory]
  ] as const) {
    const code = await client.getCode({ address })
    if (code === undefined || code === "0x") throw new Error(`no contract at the ${name} address ${address}`)
  }
  const [vault, initCodeHash] = await Promise.all([
    client.readContract({ address: info.factory, abi: forwarderFactoryAbi, functionName: "vault" }),
    client.readContract({ address: info.factory, abi: forwarderFactoryAbi, functionName: "initCodeHash" })
  ])
  if (lower(vault) !== lower(info.vault)) throw new Error(`factory ${info.factory} forwards to ${vault}, not the vault ${info.vault}`)
  if (initCodeHash !== forwarderInitCodeHash(info.vault)) {
    throw new Error(`factory ${info.factory} has forwarder init-code hash ${initCodeHash}; the committed artifact gives ${forwarderInitCodeHash(info.vault)}`)
  }
}
