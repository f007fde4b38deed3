// Chain suite: deposits through the watcher on a real Anvil (chain id 4663) and the real service
// (durable journal in a temp dir, chain services with the timer off). A batch of transfers across
// many users (wallets linked over HTTP with both signatures, deposit addresses watched, transfers
// mined ~100 to a block), then passes run — a block mined between passes — until every deposit is
// credited. Reports deposits credited per second (first pass start to the end of the pass that
// credited the last one) and the detection-to-credit latency of each deposit: from the moment the
// pass that detected it journaled `deposit_detected` to the moment the pass that credited it
// journaled the credit. The issue gives no numeric target: targets print as informational.
//
// Flags: --deposits=N (1000)  --users=N (100)  --confirmations=N (1)  --per-block=N (100)
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createPublicClient, createTestClient, createWalletClient, http, type Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { ANVIL_KEYS, startAnvil } from "../src/chain/anvil.ts"
import type { Chain } from "../src/chain/chain.ts"
import { usdgAbi } from "../src/chain/contracts.ts"
import { deployContracts, depositChain } from "../src/chain/deploy.ts"
import { liveChain } from "../src/chain/live.ts"
import { keyFromLabel } from "../src/client/keys.ts"
import { type BenchService, linkUsers, MIN_MICRO, startChainService } from "./chain-service.ts"
import { numberFlag, percentile, round, type Suite } from "./lib.ts"

const TARGET_NOTE = "none given in the issue (informational)"

export const chainSuite: Suite = async ({ args, report, log }) => {
  const deposits = numberFlag(args, "deposits", 1_000)
  const users = numberFlag(args, "users", 100)
  const confirmations = numberFlag(args, "confirmations", 1)
  const perBlock = numberFlag(args, "per-block", 100)
  if (!(deposits > 0 && users > 0 && confirmations >= 0 && perBlock > 0)) throw new Error("chain bench: flags must be positive")

  const anvil = await startAnvil()
  const dataDir = mkdtempSync(join(tmpdir(), "twinbook-chain-bench-"))
  let service: BenchService | null = null
  try {
    const operatorKey = ANVIL_KEYS[0]
    const info = await deployContracts({ rpcUrl: anvil.rpcUrl, operatorKey })
    const live = liveChain({ rpcUrl: anvil.rpcUrl, operatorKey, info, pollingIntervalMs: 50 })
    let sweeps = 0
    const chain: Chain = {
      ...live,
      sweep: (wallet, token) => {
        sweeps++
        return live.sweep(wallet, token)
      }
    }
    const viemChain = depositChain(anvil.rpcUrl, info.chainId)
    const transport = http(anvil.rpcUrl)
    const pub = createPublicClient({ chain: viemChain, transport, cacheTime: 0, pollingInterval: 50 })
    const test = createTestClient({ chain: viemChain, transport, mode: "anvil" })

    service = await startChainService(dataDir, chain, { confirmations, pollMs: 0 }, log)
    const svc = service
    const x = svc.exchange

    // Users: an Ed25519 key and an EVM wallet each, linked over HTTP; the deposit address watched.
    const wallets = await linkUsers(svc, chain, users, "chain-bench", log)

    // Transfers: from four funded development accounts, mined `perBlock` to a block.
    const senders = [1, 2, 3, 4].map((i) => createWalletClient({ chain: viemChain, transport, account: privateKeyToAccount(ANVIL_KEYS[i]!), cacheTime: 0 }))
    const amountOf = (i: number): bigint => BigInt(MIN_MICRO + (i % 1_000) * 1_000)
    let total = 0n
    for (let i = 0; i < deposits; i++) total += amountOf(i)
    const operator = createWalletClient({ chain: viemChain, transport, account: privateKeyToAccount(operatorKey), cacheTime: 0 })
    for (const s of senders) {
      const hash = await operator.writeContract({ address: info.token, abi: usdgAbi, functionName: "mint", args: [s.account.address, total] })
      await pub.waitForTransactionReceipt({ hash })
    }
    log(`sending ${deposits} transfers to ${users} deposit addresses`)
    const nonces = await Promise.all(senders.map((s) => pub.getTransactionCount({ address: s.account.address, blockTag: "pending" })))
    const fees = await pub.estimateFeesPerGas()
    await test.setAutomine(false)
    const hashes: Hex[] = []
    let blocks = 0
    for (let i = 0; i < deposits; i++) {
      const s = i % senders.length
      const to = chain.depositAddress(wallets[i % users]!)
      hashes.push(
        await senders[s]!.writeContract({
          address: info.token,
          abi: usdgAbi,
          functionName: "transfer",
          args: [to, amountOf(i)],
          nonce: nonces[s]!++,
          gas: 100_000n,
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas
        })
      )
      if ((i + 1) % perBlock === 0 || i === deposits - 1) {
        await test.mine({ blocks: 1 })
        blocks++
      }
    }
    await test.setAutomine(true)
    for (const hash of [hashes[0]!, hashes[hashes.length - 1]!]) {
      const r = await pub.getTransactionReceipt({ hash })
      if (r.status !== "success") throw new Error(`transfer ${hash} reverted`)
    }
    const atAddresses = (await Promise.all(wallets.map((w) => live.balanceOf(info.token, chain.depositAddress(w))))).reduce((a, b) => a + b, 0n)
    if (atAddresses !== total) throw new Error(`deposit addresses hold ${atAddresses}, expected ${total}`)
    log(`${deposits} transfers in ${blocks} blocks; passes until every deposit is credited`)

    // Per-deposit times, taken as the journal applies each record.
    let pass = 0
    const detectedAt = new Map<string, { ms: number; pass: number }>()
    const latencies: number[] = []
    const passSpans: number[] = []
    let credited = 0
    x.onApply((record) => {
      const cmd = record.cmd
      if (cmd.type === "deposit_detected") detectedAt.set(`${cmd.txHash}:${cmd.logIndex}`, { ms: performance.now(), pass })
      else if (cmd.type === "deposit_confirmed" && x.deposits.byKey.get(cmd.key)?.stage === "credited") {
        const d = detectedAt.get(cmd.key)
        if (d === undefined) return
        latencies.push(performance.now() - d.ms)
        passSpans.push(pass - d.pass)
        credited++
      }
    })
    const sweepsBefore = sweeps
    const maxPasses = 50 + confirmations * 2
    const t0 = performance.now()
    let tEnd = t0
    while (credited < deposits && pass < maxPasses) {
      pass++
      await svc.chainServices!.poll()
      tEnd = performance.now()
      if (credited < deposits) await test.mine({ blocks: 1 })
    }
    const seconds = (tEnd - t0) / 1000
    if (credited < deposits) log(`only ${credited} of ${deposits} credited after ${pass} passes`)

    // Cross-checks: balances credited exactly, the vault holds every deposit.
    let balances = 0
    for (let i = 0; i < users; i++) balances += x.engine.accounts.get(keyFromLabel(`chain-bench-${i}`).user)?.availableMicro ?? 0
    const vault = await live.balanceOf(info.token, info.vault)

    const sorted = Float64Array.from(latencies).sort()
    const spans = Float64Array.from(passSpans).sort()
    report({
      name: "chain.deposits_credited",
      deposits,
      users,
      confirmations,
      credited,
      passes: pass,
      seconds: round(seconds, 3),
      depositsPerSec: round(credited / seconds, 1),
      sweepTxs: sweeps - sweepsBefore,
      blocksOfTransfers: blocks,
      balancesExact: balances === Number(total),
      vaultExact: vault === total,
      target: TARGET_NOTE
    })
    report({
      name: "chain.detect_to_credit_latency",
      deposits: latencies.length,
      confirmations,
      p50Ms: round(percentile(sorted, 50), 1),
      p99Ms: round(percentile(sorted, 99), 1),
      maxMs: round(sorted[sorted.length - 1] ?? Number.NaN, 1),
      passesP50: percentile(spans, 50),
      passesMax: spans[spans.length - 1] ?? Number.NaN,
      target: TARGET_NOTE
    })
  } finally {
    try {
      await service?.close()
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
      await anvil.stop()
    }
  }
}
