// The chain benches' shared set-up (bench/chain.ts, bench/deposit-latency.ts): the real service on
// a temp data dir with its chain side, and users linked over HTTP with both signatures.
import { keccak256, stringToHex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { walletLinkMessage } from "../src/auth/messages.ts"
import type { Address, Chain } from "../src/chain/chain.ts"
import { keyFromLabel } from "../src/client/keys.ts"
import { startService } from "../src/runtime/boot.ts"

export const MIN_MICRO = 1_000_000
export const MAX_MICRO = 100_000_000

export type BenchService = Awaited<ReturnType<typeof startService>>

export interface ChainWorkerOptions {
  readonly confirmations: number
  /** 0: no timer (the bench runs the passes itself). */
  readonly pollMs: number
  readonly headPollMs?: number
}

/** The real service (durable journal in `dataDir`, no history store) with `chain` as its deposit chain. */
export const startChainService = (dataDir: string, chain: Chain, worker: ChainWorkerOptions, log: (message: string) => void): Promise<BenchService> =>
  startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(5),
    historyFlushMs: 0,
    config: {
      adminToken: "bench",
      corsOrigins: new Set(),
      secureCookies: false,
      devCredit: false,
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
    },
    onError: (err) => log(`service error: ${String(err)}`),
    chain: { host: "127.0.0.1", depositPort: 0, ...worker, minUsdgMicro: MIN_MICRO, maxPerTxMicro: MAX_MICRO, corsOrigins: new Set() }
  }, {
    nowMs: () => Date.now(),
    dataDir,
    chain
  })

/**
 * `users` users (an Ed25519 key and an EVM wallet each, from `label`) linked over HTTP with both
 * signatures; each deposit address watched, journaled directly (the deposit service's 30-per-minute
 * per-IP limit would pace set-up). Returns the wallets.
 */
export const linkUsers = async (svc: BenchService, chain: Chain, users: number, label: string, log: (message: string) => void): Promise<Address[]> => {
  log(`linking ${users} wallets`)
  const wallets: Address[] = []
  for (let i = 0; i < users; i++) {
    const key = keyFromLabel(`${label}-${i}`)
    const evm = privateKeyToAccount(keccak256(stringToHex(`${label}-wallet-${i}`)))
    const wallet = evm.address.toLowerCase() as Address
    const ts = Math.floor(Date.now() / 1000)
    const message = walletLinkMessage(key.user, wallet, ts)
    const res = await fetch(`${svc.http.url}/v1/wallet/link`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: key.user, wallet, timestamp: ts, signature: key.sign(Buffer.from(message, "utf8")), evm_signature: await evm.signMessage({ message }) })
    })
    if (res.status !== 200) throw new Error(`wallet link ${i}: ${res.status} ${await res.text()}`)
    await svc.exchange.submit({ type: "watch_address", wallet, address: chain.depositAddress(wallet) }).durable
    wallets.push(wallet)
  }
  return wallets
}
