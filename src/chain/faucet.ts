// The development faucet's chain side: mints test USDG (and tops up gas) to a wallet on the
// embedded Anvil with the operator key. Used by the API's `POST /v1/dev/faucet` (through
// src/usecase/faucet.ts), the only faucet (the web app calls it too); src/main.ts builds it only
// for the embedded chain, so no code path can mint on an external one.
import { createPublicClient, createWalletClient, http, type Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { Address, Hash } from "./chain.ts"
import { usdgAbi } from "./contracts.ts"
import { depositChain } from "./deploy.ts"

export interface FaucetOptions {
  readonly rpcUrl: string
  readonly chainId: number
  readonly operatorKey: Hex
  readonly token: Address
}

/** Mints `amountMicro` test USDG to `to` (gas topped up first); resolves once the mint is mined. */
export type DevFaucet = (to: Address, amountMicro: bigint) => Promise<{ readonly txHash: Hash }>

const GAS_WEI = 10n ** 18n // 1 ETH of test gas, so the wallet can send its deposit transfer itself

export const makeDevFaucet = (o: FaucetOptions): DevFaucet => {
  const chain = depositChain(o.rpcUrl, o.chainId)
  const transport = http(o.rpcUrl)
  const pub = createPublicClient({ chain, transport, cacheTime: 0 })
  const wallet = createWalletClient({ chain, transport, account: privateKeyToAccount(o.operatorKey), cacheTime: 0 })
  // One mint at a time from this faucet.
  let queue: Promise<unknown> = Promise.resolve()
  return (to, amountMicro) => {
    const run = queue.then(async () => {
      if ((await pub.getBalance({ address: to })) < GAS_WEI / 10n) {
        await pub.request({ method: "anvil_setBalance" as never, params: [to, `0x${GAS_WEI.toString(16)}`] as never })
      }
      // The operator also sends sweeps and payouts from the chain worker: a nonce taken meanwhile is retried.
      let lastErr: unknown
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          const txHash = await wallet.writeContract({ address: o.token, abi: usdgAbi, functionName: "mint", args: [to, amountMicro] })
          const r = await pub.waitForTransactionReceipt({ hash: txHash, pollingInterval: 100 })
          if (r.status !== "success") throw new Error(`faucet mint ${txHash} reverted`)
          return { txHash }
        } catch (err) {
          lastErr = err
        }
      }
      throw lastErr
    })
    queue = run.catch(() => undefined)
    return run
  }
}
