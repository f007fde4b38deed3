// The chain guard on a real Anvil with the real service (startService on a temp dataDir, loopback
// HTTP, the live viem Chain, real Ed25519 and EIP-191 signatures): a deposit is credited, then the
// chain is taken back below it (evm_snapshot before the deposit, evm_revert after, new blocks
// mined on top: a reorg deeper than the 2 confirmations). The next watcher pass halts crediting
// and payouts, the operator status route says why, the depositor's re-sent transfer is not
// credited, a withdrawal is not paid out, and a restart on the same dataDir stays halted (the
// checkpoint is durable in DATA_DIR/chain-checkpoint.json). Timers are off: the test drives passes.
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { walletLinkMessage, withdrawMessage } from "../../src/auth/messages.ts"
import { ANVIL_KEYS, processAlive } from "../../src/chain/anvil.ts"
import type { Address, Chain } from "../../src/chain/chain.ts"
import { vaultAbi } from "../../src/chain/contracts.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { withdrawalId } from "../../src/service/withdrawals.ts"
import { type AnvilChain, anvilProcessesOn, startAnvilChain } from "../support/anvil-chain.ts"

const T0_MS = 1_795_305_600_000
const ADMIN = "guard-admin-token"
const clock = { ms: T0_MS }
let t: AnvilChain
let dataDir: string
let service: Service
const errors: unknown[] = []
const guardLines: string[] = []

const start = (chain: Chain): Promise<Service> =>
  startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(5),
    historyFlushMs: 0,
    config: { adminToken: ADMIN, corsOrigins: new Set(), secureCookies: false, devCredit: false, rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 } },
    onError: (err) => void errors.push(err),
    onFatal: (err) => void errors.push(err),
    chain: {
      host: "127.0.0.1",
      depositPort: 0,
      confirmations: 2,
      pollMs: 0,
      minUsdgMicro: 1_000_000,
      maxPerTxMicro: 100_000_000,
      corsOrigins: new Set(),
      log: (line) => void guardLines.push(line)
    }
  }, {
    nowMs: () => clock.ms,
    // The test clock is time passing, never a step: the monotonic clock too, so business time is the test clock (docs/time.md).
    monoMs: () => clock.ms,
    dataDir,
    chain
  })

beforeAll(async () => {
  t = await startAnvilChain()
  dataDir = mkdtempSync(join(tmpdir(), "twinbook-guard-anvil-"))
  service = await start(t.chain)
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

const api = () => service.http.url
const getJson = async (url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> => {
  const res = await fetch(url, { headers })
  return { status: res.status, body: await res.json() }
}
const postJson = async (url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
  return { status: res.status, body: await res.json() }
}
const pass = async (): Promise<void> => {
  clock.ms += 1_000
  await service.chainServices!.poll()
}
const chainStatus = async () => {
  const res = await getJson(`${api()}/v1/admin/chain`, { authorization: `Bearer ${ADMIN}` })
  expect(res.status).toBe(200)
  return res.body
}

const account = privateKeyToAccount(ANVIL_KEYS[1])
const wallet = account.address.toLowerCase() as Address
const key = keyFromLabel("guard-anvil-alice")
const available = async (): Promise<number> => (await getJson(`${api()}/v1/balance/${key.user}`)).body.available
const DEPOSIT = 20_000_000n

describe("chain guard on a real Anvil", () => {
  it("halts crediting and payouts after a reorg deeper than the confirmation depth, says why, and credits nothing twice", async () => {
    const derived = await getJson(`${service.chainServices!.deposit.url}/v1/deposit/native-address/${account.address}`)
    expect(derived.status).toBe(200)
    const depositAddress = derived.body.address as Address
    const ts = Math.floor(clock.ms / 1000)
    const message = walletLinkMessage(key.user, wallet, ts)
    const linked = await postJson(`${api()}/v1/wallet/link`, {
      user: key.user,
      wallet: account.address,
      timestamp: ts,
      signature: key.sign(Buffer.from(message, "utf8")),
      evm_signature: await account.signMessage({ message })
    })
    expect(linked.status).toBe(200)
    await t.mint(wallet, 100_000_000n)

    // The chain as it is before the deposit: where the "other fork" will grow from.
    const fork = await t.test.snapshot()
    const sent = await t.transfer(1, t.info.token, depositAddress, DEPOSIT)
    for (let i = 0; i < 6 && (await available()) === 0; i++) {
      await t.test.mine({ blocks: 1 })
      await pass()
    }
    expect(await available()).toBe(Number(DEPOSIT))
    const ok = await chainStatus()
    expect(ok).toMatchObject({ state: "ok", halt: null, saved_through_block: null })
    expect(ok.checkpoint.block_number).toBeGreaterThanOrEqual(Number(sent.blockNumber))
    expect(existsSync(join(dataDir, "chain-checkpoint.json"))).toBe(true)

    // The deep reorg: back to before the deposit, then a longer chain without it.
    await t.test.revert({ id: fork })
    expect(await t.chain.balanceOf(t.info.token, wallet)).toBe(100_000_000n) // the tokens are the depositor's again
    await t.test.mine({ blocks: 8 })
    await pass()
    const halted = await chainStatus()
    expect(halted.state).toBe("halted")
    expect(halted.halt).toMatchObject({ block_number: ok.checkpoint.block_number, expected_hash: ok.checkpoint.hash })
    expect(halted.halt.found_hash).not.toBe(ok.checkpoint.hash)
    expect(halted.halt.reason).toMatch(/reorg deeper than the confirmation depth \(2\)/)
    expect(guardLines).toHaveLength(1)
    expect(guardLines[0]).toMatch(/^chain guard: HALTED/)

    // The depositor sends the same tokens again: nothing is detected or credited.
    const depositsBefore = (await getJson(`${api()}/v1/deposits/all/${key.user}`)).body
    await t.transfer(1, t.info.token, depositAddress, DEPOSIT)
    for (let i = 0; i < 5; i++) {
      await t.test.mine({ blocks: 1 })
      await pass()
    }
    expect(await available()).toBe(Number(DEPOSIT))
    expect((await getJson(`${api()}/v1/deposits/all/${key.user}`)).body).toEqual(depositsBefore)

    // A withdrawal is debited (the ledger is the user's) but never paid out while halted.
    const client = new ApiClient(api(), key, fetch as never, () => Math.floor(clock.ms / 1000))
    expect((await client.register("alice")).status).toBe(200)
    const amount = 5_000_000
    const withdrawn = await postJson(
      `${api()}/v1/withdraw-signed`,
      { user: key.user, amount_micro: amount, nonce: 1, signature: key.sign(Buffer.from(withdrawMessage(key.user, wallet, amount, 1), "utf8")) },
      { cookie: client.cookie! }
    )
    expect(withdrawn.status).toBe(200)
    for (let i = 0; i < 3; i++) await pass()
    const id = withdrawalId(key.user, 1) as `0x${string}`
    expect(service.exchange.withdrawals.byId.get(id)!.status).toBe("pending")
    expect(await t.public.readContract({ address: t.info.vault, abi: vaultAbi, functionName: "paid", args: [id] })).toBe(false)

    // A restart on the same dataDir: the durable checkpoint halts the first pass again.
    await service.close()
    service = await start(t.chain)
    expect((await chainStatus()).state).toBe("ok") // no pass yet
    await pass()
    expect((await chainStatus()).halt).toMatchObject({ block_number: ok.checkpoint.block_number })
    expect(await available()).toBe(Number(DEPOSIT) - amount)
    expect(errors).toEqual([])
  })
})
