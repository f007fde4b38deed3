// End to end on a real Anvil (chain id 4663) with the real service: startService on a temp
// dataDir, loopback HTTP for the API and the deposit service, the live viem Chain, real
// Ed25519 user keys and Anvil development accounts as the users' EVM wallets. The timers are
// off (pollMs 0): each test drives watcher + payout passes itself through
// `service.chainServices.poll()` and mines blocks with anvil_mine. Tests run in order and share
// the chain, the data directory and the service (tests 3, 5 and 7 restart it on the same
// dataDir with the same LiveChain). Anvil is stopped by PID; afterAll proves none is left.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { walletLinkMessage, withdrawMessage } from "../../src/auth/messages.ts"
import { ANVIL_KEYS, processAlive } from "../../src/chain/anvil.ts"
import { type Address, type Chain, DEPOSIT_CHAIN_ID } from "../../src/chain/chain.ts"
import { forwarderFactoryAbi, vaultAbi } from "../../src/chain/contracts.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel, type UserKey } from "../../src/client/keys.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { type AnvilChain, anvilProcessesOn, startAnvilChain } from "../support/anvil-chain.ts"

const T0_MS = 1_795_305_600_000
const MIN_MICRO = 1_000_000
const MAX_MICRO = 100_000_000
/** Blocks deep, counting the deposit's own block, before a deposit is swept and credited. */
const CONFIRMATIONS = 3

let t: AnvilChain
let dataDir: string
let service: Service
const clock = { ms: T0_MS }
const errors: unknown[] = []

/**
 * The service's view of the chain: the test's LiveChain, except that `gate` can hold the watcher
 * once between its log scan and its confirmation checks (the first `blockHash` call of a pass
 * after its `transfersTo`: the chain guard reads a block hash before the scan), so the test can
 * read `detected` over HTTP before the same pass moves it to `confirming`.
 */
const gate: { armed: { reached: () => void; release: Promise<void> } | null } = { armed: null }
const gatedChain = (): Chain => {
  const live = t.chain
  let scanned = false
  return {
    ...live,
    head: () => {
      scanned = false
      return live.head()
    },
    transfersTo: async (to, from, toBlock) => {
      const logs = await live.transfersTo(to, from, toBlock)
      scanned = true
      return logs
    },
    blockHash: async (n) => {
      const held = scanned ? gate.armed : null
      if (held !== null) {
        gate.armed = null
        held.reached()
        await held.release
      }
      return live.blockHash(n)
    }
  }
}

const start = (chain: Chain): Promise<Service> =>
  startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(9),
    historyFlushMs: 0,
    config: {
      adminToken: "e2e-admin-token",
      corsOrigins: new Set(),
      secureCookies: false,
      devCredit: true, // the faucet gives test 6 a balance the vault cannot cover
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
    },
    onError: (err) => void errors.push(err),
    onFatal: (err) => void errors.push(err),
    chain: { host: "127.0.0.1", depositPort: 0, confirmations: CONFIRMATIONS, pollMs: 0, minUsdgMicro: MIN_MICRO, maxPerTxMicro: MAX_MICRO, corsOrigins: new Set() }
  }, {
    nowMs: () => clock.ms,
    // The test clock is time passing, never a step: the monotonic clock too, so business time is the test clock (docs/time.md).
    monoMs: () => clock.ms,
    dataDir,
    chain
  })

beforeAll(async () => {
  t = await startAnvilChain()
  dataDir = mkdtempSync(join(tmpdir(), "twinbook-e2e-anvil-"))
  service = await start(gatedChain())
})

afterAll(async () => {
  try {
    await service?.close()
  } finally {
    rmSync(dataDir, { force: true, recursive: true })
    if (t !== undefined) {
      const { pid, port } = t.anvil
      await t.stop()
      expect(processAlive(pid)).toBe(false)
      expect(anvilProcessesOn(port)).toEqual([])
    }
  }
})

afterEach(() => {
  // poll() reports RPC or journal failures through onError and carries on: none may have happened.
  expect(errors).toEqual([])
})

// --- helpers --------------------------------------------------------------------------------

const api = () => service.http.url
const depositApi = () => service.chainServices!.deposit.url
const getJson = async (url: string): Promise<{ status: number; body: any }> => {
  const res = await fetch(url)
  return { status: res.status, body: await res.json() }
}
const postJson = async (url: string, body: unknown, cookie?: string): Promise<{ status: number; body: any }> => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(cookie === undefined ? {} : { cookie }) },
    body: JSON.stringify(body)
  })
  return { status: res.status, body: await res.json() }
}

/** One watcher pass and one payout pass, a second later on the service clock. */
const pass = async (): Promise<void> => {
  clock.ms += 1_000
  await service.chainServices!.poll()
}
const mine = (blocks: number): Promise<void> => t.test.mine({ blocks })
const onChain = (owner: Address, token: Address = t.info.token): Promise<bigint> => t.chain.balanceOf(token, owner)
const code = (address: Address) => t.public.getCode({ address })

/** A pass held after its scan: `atHold` runs while the watcher waits, then the pass completes. */
const passHeldAfterScan = async (atHold: () => Promise<void>): Promise<void> => {
  let release!: () => void
  const reached = new Promise<void>((resolve) => {
    gate.armed = { reached: resolve, release: new Promise<void>((r) => (release = r)) }
  })
  clock.ms += 1_000
  const polling = service.chainServices!.poll()
  try {
    // A pass that never reaches its confirmation checks fails here instead of hanging.
    const held = await Promise.race([reached.then(() => true), polling.then(() => false)])
    if (!held) throw new Error("the pass ended without checking any open deposit")
    await atHold()
  } finally {
    gate.armed = null
    release()
    await polling
  }
}

interface Party {
  readonly index: number
  readonly key: UserKey
  readonly wallet: Address
  readonly checksummed: `0x${string}`
  deposit: Address
}

const party = (index: number, label: string): Party => {
  const account = privateKeyToAccount(ANVIL_KEYS[index]!)
  return { index, key: keyFromLabel(label), wallet: account.address.toLowerCase() as Address, checksummed: account.address, deposit: "0x" }
}

/** POST /v1/wallet/link: both keys sign the link message (Ed25519 and EIP-191). */
const link = async (p: Party) => {
  const ts = Math.floor(clock.ms / 1000)
  const message = walletLinkMessage(p.key.user, p.wallet, ts)
  return postJson(`${api()}/v1/wallet/link`, {
    user: p.key.user,
    wallet: p.checksummed,
    timestamp: ts,
    signature: p.key.sign(Buffer.from(message, "utf8")),
    evm_signature: await privateKeyToAccount(ANVIL_KEYS[p.index]!).signMessage({ message })
  })
}

const derive = async (p: Party) => {
  const res = await getJson(`${depositApi()}/v1/deposit/native-address/${p.checksummed}`)
  expect(res.status).toBe(200)
  p.deposit = res.body.address
  return res.body
}
const progress = async (p: Party) => {
  const res = await getJson(`${depositApi()}/v1/deposit/progress/${p.checksummed}`)
  expect(res.status).toBe(200)
  return res.body.data
}
const available = async (p: Party): Promise<number> => {
  const res = await getJson(`${api()}/v1/balance/${p.key.user}`)
  expect(res.status).toBe(200)
  return res.body.available
}
const signedWithdraw = async (p: Party, c: ApiClient, amount: number, nonce: number) =>
  postJson(
    `${api()}/v1/withdraw-signed`,
    { user: p.key.user, amount_micro: amount, nonce, signature: p.key.sign(Buffer.from(withdrawMessage(p.key.user, p.wallet, amount, nonce), "utf8")) },
    c.cookie!
  )
const session = async (p: Party): Promise<ApiClient> => {
  const c = new ApiClient(api(), p.key, fetch as never, () => Math.floor(clock.ms / 1000))
  expect((await c.register(p.key.user.slice(0, 8))).status).toBe(200)
  expect(c.cookie).not.toBeNull()
  return c
}
const depositRows = async (p: Party) => (await getJson(`${api()}/v1/deposits/all/${p.key.user}`)).body
const withdrawalRows = async (p: Party) => (await getJson(`${api()}/v1/withdrawals/all/${p.key.user}`)).body

// --- the users --------------------------------------------------------------------------------

/** The main user: Anvil account 1 is its wallet. */
const alice = party(1, "e2e-alice")
/** Test 5's users (wallets: Anvil accounts 2, 3 and 4). */
const wrong = party(2, "e2e-wrong-token")
const small = party(3, "e2e-below-min")
const large = party(4, "e2e-above-max")
const DEPOSIT_1 = 25_000_000n
const WITHDRAW_1 = 10_000_000n
let firstTx: Hex

describe("deposits and withdrawals end to end on Anvil", () => {
  it("1. derives an address, links the wallet, and credits a transfer sent before any contract exists there", async () => {
    const record = await derive(alice)
    expect(record).toMatchObject({
      address: t.chain.depositAddress(alice.wallet),
      chain: "native",
      chain_id: DEPOSIT_CHAIN_ID,
      token: "USDG",
      token_address: t.info.token,
      min_usdg_micro: MIN_MICRO,
      max_usdc_per_tx_micro: MAX_MICRO
    })
    // The lowercase form derives the same address (and journals nothing new).
    expect((await getJson(`${depositApi()}/v1/deposit/native-address/${alice.wallet}`)).body.address).toBe(alice.deposit)
    expect(await link(alice)).toEqual({ status: 200, body: { user: alice.key.user, wallet: alice.wallet } })
    expect(await progress(alice)).toEqual({ stage: "idle" })

    await t.mint(alice.wallet, 100_000_000n)
    expect(await code(alice.deposit)).toBeUndefined()
    const vaultBefore = await onChain(t.info.vault)
    const sent = await t.transfer(alice.index, t.info.token, alice.deposit, DEPOSIT_1)
    firstTx = sent.hash
    expect(await code(alice.deposit)).toBeUndefined() // accepted with no contract at the address
    expect(await onChain(alice.deposit)).toBe(DEPOSIT_1)

    // Pass 1: the scan journals `detected` (seen over HTTP while the pass is held), then the
    // same pass finds it 1 block deep of 3 and moves it to `confirming`.
    await passHeldAfterScan(async () => {
      expect(await progress(alice)).toMatchObject({ stage: "detected", amount_micro: Number(DEPOSIT_1), tx_signature: sent.hash, error: null })
    })
    expect(await progress(alice)).toMatchObject({ stage: "confirming", amount_micro: Number(DEPOSIT_1), tx_signature: sent.hash })
    expect(await available(alice)).toBe(0)
    await mine(1) // 2 deep
    await pass()
    expect((await progress(alice)).stage).toBe("confirming")
    expect(await available(alice)).toBe(0)
    expect(await onChain(alice.deposit)).toBe(DEPOSIT_1)

    await mine(1) // 3 deep: swept into the vault (forwarder deployed), then credited
    for (let i = 0; i < 3 && (await progress(alice)).stage !== "credited"; i++) await pass()
    const done = await progress(alice)
    expect(done).toMatchObject({ stage: "credited", amount_micro: Number(DEPOSIT_1), tx_signature: sent.hash, error: null })
    expect(await available(alice)).toBe(Number(DEPOSIT_1))
    expect((await getJson(`${api()}/v1/balance/${alice.key.user}`)).body).toEqual({
      user: alice.key.user,
      available: Number(DEPOSIT_1),
      locked: 0,
      total: Number(DEPOSIT_1)
    })
    const rows = await depositRows(alice)
    expect(rows).toMatchObject({ total: 1, deposits: [{ tx_signature: sent.hash, amount_micro: Number(DEPOSIT_1), status: "credited", log_index: 0 }] })
    expect(rows.deposits[0].credited_at).toBe(Math.floor(clock.ms / 1000))
    expect(await onChain(t.info.vault)).toBe(vaultBefore + DEPOSIT_1)
    expect(await onChain(alice.deposit)).toBe(0n)
    expect((await code(alice.deposit))?.length).toBeGreaterThan(2)
  })

  it("2. withdraws to the linked wallet: debited at once, paid by the vault, confirmed with its transaction", async () => {
    const c = await session(alice)
    const walletBefore = await onChain(alice.wallet)
    const vaultBefore = await onChain(t.info.vault)
    const amount = Number(WITHDRAW_1)
    const nonce = 1
    const res = await signedWithdraw(alice, c, amount, nonce)
    expect(res).toMatchObject({ status: 200, body: { status: "pending", recipient: alice.wallet, amount_micro: amount, chain: "native" } })
    const id = res.body.withdrawal_id as Hex
    expect(id).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await available(alice)).toBe(Number(DEPOSIT_1 - WITHDRAW_1))

    await pass() // the payout is sent (Anvil mines it at once)
    const sent = (await withdrawalRows(alice)).withdrawals[0]
    expect(sent).toMatchObject({ id, status: "sent", tx_signature: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    await mine(1)
    await pass() // its receipt: confirmed
    const rows = await withdrawalRows(alice)
    expect(rows).toMatchObject({
      total: 1,
      withdrawals: [{ id, recipient: alice.wallet, chain: "native", amount_micro: amount, status: "confirmed", tx_signature: sent.tx_signature, error: null }]
    })
    expect(rows.withdrawals[0].confirmed_at).toEqual(expect.any(Number))
    // The row's transaction is the vault's payment of this withdrawal id, to this wallet.
    const receipt = await t.public.getTransactionReceipt({ hash: sent.tx_signature })
    expect(receipt.status).toBe("success")
    expect(await t.chain.paidOut(id)).toBe(sent.tx_signature)
    expect(await t.public.readContract({ address: t.info.vault, abi: vaultAbi, functionName: "paid", args: [id] })).toBe(true)

    expect(await onChain(alice.wallet)).toBe(walletBefore + WITHDRAW_1)
    expect(await onChain(t.info.vault)).toBe(vaultBefore - WITHDRAW_1)
    expect(await available(alice)).toBe(Number(DEPOSIT_1 - WITHDRAW_1))
    // Further passes pay nothing more.
    await mine(2)
    await pass()
    await pass()
    expect(await onChain(alice.wallet)).toBe(walletBefore + WITHDRAW_1)
    expect((await withdrawalRows(alice)).withdrawals[0].status).toBe("confirmed")
  })

  it("3. re-scans and a restart on the same dataDir and Anvil credit nothing twice", async () => {
    const expected = Number(DEPOSIT_1 - WITHDRAW_1)
    const vault = await onChain(t.info.vault)
    const wallet = await onChain(alice.wallet)
    for (let i = 0; i < 3; i++) {
      await mine(1)
      await pass()
    }
    expect(await available(alice)).toBe(expected)

    await service.close()
    service = await start(t.chain) // the same LiveChain; a fresh watcher re-scans from block 0
    const report = await service.chainServices!.watcher.poll()
    expect(report).toMatchObject({ detected: 0, reorged: 0, confirmed: 0 })
    await mine(1)
    await pass()
    await pass()

    expect(await available(alice)).toBe(expected)
    expect(await progress(alice)).toMatchObject({ stage: "credited", tx_signature: firstTx })
    expect(await depositRows(alice)).toMatchObject({ total: 1, deposits: [{ tx_signature: firstTx, status: "credited" }] })
    expect(await withdrawalRows(alice)).toMatchObject({ total: 1, withdrawals: [{ status: "confirmed" }] })
    expect(await onChain(t.info.vault)).toBe(vault)
    expect(await onChain(alice.wallet)).toBe(wallet)
  })

  it("4. a deposit reorged away before it is confirmed is un-detected and never credits", async () => {
    const balanceBefore = await available(alice)
    const vault = await onChain(t.info.vault)
    const walletBefore = await onChain(alice.wallet)
    const snapshot = await t.test.snapshot()
    const doomed = await t.transfer(alice.index, t.info.token, alice.deposit, 2_000_000n)
    await pass()
    expect(await progress(alice)).toMatchObject({ stage: "confirming", tx_signature: doomed.hash, amount_micro: 2_000_000 })
    await mine(1) // 2 deep of 3: still not swept
    await pass()
    expect(await progress(alice)).toMatchObject({ stage: "confirming", tx_signature: doomed.hash })
    expect(await onChain(alice.deposit)).toBe(2_000_000n)

    // The reorg: back to before the transfer, then a longer chain without it (a second later,
    // so the blocks at the same heights differ).
    await t.test.revert({ id: snapshot })
    await t.test.increaseTime({ seconds: 1 })
    await mine(4)
    expect(await t.chain.blockHash(doomed.blockNumber)).not.toBe(doomed.blockHash)
    expect(await onChain(alice.deposit)).toBe(0n)
    expect(await onChain(alice.wallet)).toBe(walletBefore)
    await pass()
    // Un-detected: the progress shows the earlier, credited deposit again.
    expect(await progress(alice)).toMatchObject({ stage: "credited", tx_signature: firstTx })
    expect(await depositRows(alice)).toMatchObject({ total: 1, deposits: [{ tx_signature: firstTx }] })
    for (let i = 0; i < 3; i++) {
      await mine(1)
      await pass()
    }
    expect(await available(alice)).toBe(balanceBefore)
    expect(await onChain(t.info.vault)).toBe(vault)
    expect(service.exchange.deposits.byKey.has(`${doomed.hash}:0`)).toBe(false)
  })

  it("5. a wrong token and amounts below the minimum or above the maximum end in error and stay at the deposit address", async () => {
    const wrongToken = await t.deployToken()
    const vault = await onChain(t.info.vault)
    const cases: Array<{ p: Party; token: Address; amount: bigint; reason: RegExp }> = [
      { p: wrong, token: wrongToken, amount: 5_000_000n, reason: /^wrong token/ },
      { p: small, token: t.info.token, amount: BigInt(MIN_MICRO - 1), reason: /below the minimum/ },
      { p: large, token: t.info.token, amount: BigInt(MAX_MICRO + 1), reason: /above the per-transfer maximum/ }
    ]
    for (const { p, token, amount } of cases) {
      await derive(p)
      expect((await link(p)).status).toBe(200)
      await t.mint(p.wallet, amount, token)
      await t.transfer(p.index, token, p.deposit, amount)
    }
    await pass()
    for (let i = 0; i < CONFIRMATIONS + 2; i++) {
      await mine(1)
      await pass()
    }
    for (const { p, token, amount, reason } of cases) {
      const prog = await progress(p)
      expect(prog).toMatchObject({ stage: "error", amount_micro: Number(amount) })
      expect(prog.error).toMatch(reason)
      expect(prog.error).toMatch(/not credited/)
      expect(await depositRows(p)).toMatchObject({ total: 1, deposits: [{ status: "error", stage: "error", credited_at: null }] })
      expect(await available(p)).toBe(0)
      // Never swept: the funds are where they were sent, and no forwarder was deployed.
      expect(await onChain(p.deposit, token)).toBe(amount)
      expect(await code(p.deposit)).toBeUndefined()
    }
    expect(await onChain(t.info.vault)).toBe(vault)
    expect(await onChain(t.info.vault, wrongToken)).toBe(0n)

    // A restart re-scans everything from block 0: errors stay errors, the reorged transfer stays gone.
    await service.close()
    service = await start(t.chain)
    await pass()
    await mine(1)
    await pass()
    for (const { p, token, amount } of cases) {
      expect((await progress(p)).stage).toBe("error")
      expect(await onChain(p.deposit, token)).toBe(amount)
    }
    expect(await available(alice)).toBe(Number(DEPOSIT_1 - WITHDRAW_1))
    expect(await depositRows(alice)).toMatchObject({ total: 1 })
    expect(await onChain(t.info.vault)).toBe(vault)
  })
  it("6. a payout the vault cannot cover is refunded after its attempts and holds up no other withdrawal", async () => {
    // The faucet credits 50 USDG the vault never received; the vault holds alice's 15.
    const vault = await onChain(t.info.vault)
    expect(vault).toBe(DEPOSIT_1 - WITHDRAW_1)
    const credit = await fetch(`${api()}/v1/admin/credit`, {
      method: "POST",
      headers: { authorization: "Bearer e2e-admin-token", "content-type": "application/json" },
      body: JSON.stringify({ user: wrong.key.user, amount_micro: 50_000_000 })
    })
    expect(credit.status).toBe(200)
    const big = await signedWithdraw(wrong, await session(wrong), 50_000_000, 1)
    expect(big).toMatchObject({ status: 200, body: { status: "pending" } })
    const aliceWallet = await onChain(alice.wallet)
    const ok = await signedWithdraw(alice, await session(alice), 1_000_000, 2)
    expect(ok).toMatchObject({ status: 200, body: { status: "pending" } })
    expect(await available(wrong)).toBe(0)

    // The big payout would revert (the vault is short), so it is never sent; alice's goes through.
    await pass()
    expect((await withdrawalRows(alice)).withdrawals[0]).toMatchObject({ status: "sent" })
    expect((await withdrawalRows(wrong)).withdrawals[0]).toMatchObject({ status: "pending", tx_signature: null })
    await pass()
    expect((await withdrawalRows(alice)).withdrawals[0]).toMatchObject({ status: "confirmed" })
    expect(await onChain(alice.wallet)).toBe(aliceWallet + 1_000_000n)
    for (let i = 0; i < 3; i++) await pass() // five refused attempts in all: refunded
    expect((await withdrawalRows(wrong)).withdrawals[0]).toMatchObject({ status: "refunded", tx_signature: null, error: expect.stringMatching(/5 times/) })
    expect(await available(wrong)).toBe(50_000_000)
    expect(await onChain(wrong.wallet)).toBe(0n)
    expect(await onChain(t.info.vault)).toBe(vault - 1_000_000n)
    expect(await t.chain.paidOut(big.body.withdrawal_id)).toBeNull()
    await pass()
    expect(await available(wrong)).toBe(50_000_000)
  })
  it("7. closing the service in the middle of a pass waits for it; a restart then credits every transfer once", async () => {
    const before = await available(alice)
    const vault = await onChain(t.info.vault)
    const N = 20
    const from = (await t.chain.head()) + 1n
    for (let i = 0; i < N; i++) await t.transfer(alice.index, t.info.token, alice.deposit, 1_000_000n)
    let settled = false
    const polling = service.chainServices!.poll().finally(() => (settled = true))
    // Detections are journaled as the pass goes (made durable together at its end): close once the first is in.
    while (service.exchange.deposits.ofWallet(alice.wallet).length < 2) await new Promise((resolve) => setImmediate(resolve))
    expect(settled).toBe(false)
    await service.close()
    expect(settled).toBe(true)
    await polling
    expect(errors).toEqual([]) // no journal write after the journal closed

    service = await start(t.chain)
    await pass()
    await mine(CONFIRMATIONS)
    for (let i = 0; i < 3; i++) await pass()
    // A sweep moves the forwarder's whole balance, so deposits credited together share one: the
    // interrupted pass swept all 20 transfers (crediting those 3 deep); the restarted watcher,
    // crediting the last two, found the forwarder empty and sent none: 1 sweep, not 20.
    const sweeps = await t.public.getContractEvents({ address: t.info.factory, abi: forwarderFactoryAbi, eventName: "Swept", fromBlock: from })
    expect(sweeps.map((e) => [e.args.wallet?.toLowerCase(), e.args.amount])).toEqual([[alice.wallet, BigInt(N) * 1_000_000n]])
    const rows = await depositRows(alice)
    expect(rows.total).toBe(1 + N)
    expect(rows.deposits.filter((d: { status: string }) => d.status === "credited")).toHaveLength(1 + N)
    expect(await available(alice)).toBe(before + N * 1_000_000)
    expect(await onChain(t.info.vault)).toBe(vault + BigInt(N) * 1_000_000n)
    expect(await onChain(alice.deposit)).toBe(0n)
  })
})
