// docs/operations.md § Backup and restore, "Running service, file by file", performed as written
// on the real service (`src/main.ts` as a child, the embedded chain, real HTTP, real Ed25519 and
// EIP-191 signatures): a deposit credited on the chain and resting orders, then the documented
// copy while a trader keeps placing orders, then the copy started in another directory. It comes
// up with the chain guard ok, the deposit on its chain and in its ledger, and every order
// acknowledged before the copy began; /v1/ready says 503 until the guard has checked the chain
// and 200 after, never 200 first. And the copy the doc used to describe (without the chain's two
// files): the restored service halts crediting and payouts, is never ready, and the documented
// recovery (`POST /v1/admin/chain/resume`) brings it back.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createPublicClient, createWalletClient, http } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { walletLinkMessage } from "../../src/auth/messages.ts"
import { ANVIL_KEYS } from "../../src/chain/anvil.ts"
import type { Address } from "../../src/chain/chain.ts"
import { usdgAbi } from "../../src/chain/contracts.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { idFromSlug } from "../../src/service/catalog.ts"
import { anvilChildrenOf } from "../support/anvil-chain.ts"
import { type ChildServer, startChildServer } from "../support/child-server.ts"
import { json, until } from "../support/poll.ts"

const ADMIN = "backup-test-admin-token"
const ROOT = join(import.meta.dirname, "..", "..")
const dirs: string[] = []
const children: ChildServer[] = []
const anvils = new Set<number>()
const market = idFromSlug("market", demoCatalog().find((e) => e.outcomes === undefined || e.outcomes.length === 0)!.slug)

/** The documented copy, in the documented order (docs/operations.md, read below so the two cannot drift). */
const RECIPE = ["snapshots/", "journal/", "session-secret", "admin-token", "chain-checkpoint.json", "anvil-state.json"]
/** What the recipe said before: no chain files. */
const OLD_RECIPE = ["snapshots/", "journal/", "session-secret", "admin-token"]

afterAll(() => {
  for (const c of children) c.kill("SIGKILL")
  for (const pid of anvils) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone already
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const admin = { authorization: `Bearer ${ADMIN}` }

interface Booted {
  readonly child: ChildServer
  readonly rpcUrl: string
  readonly token: Address
  readonly depositUrl: string
}

const boot = async (dataDir: string): Promise<Booted> => {
  const child = await startChildServer({
    dataDir,
    startTimeoutMs: 120_000,
    // SNAPSHOT_INTERVAL_SEC=1: snapshots are written while the copy runs, as in production.
    env: { CHAIN: "embedded", DEPOSIT_PORT: "0", CHAIN_POLL_MS: "100", ADMIN_TOKEN: ADMIN, VERIFY_WORKERS: "0", SNAPSHOT_INTERVAL_SEC: "1" }
  })
  children.push(child)
  for (const pid of anvilChildrenOf(child.pid)) anvils.add(pid)
  const line = await until("the deposit chain line", () => child.lines.find((l) => l.startsWith("deposit chain")) ?? null)
  const deposit = await until("the deposit service line", () => child.lines.find((l) => l.startsWith("deposit service")) ?? null)
  const m = /^deposit chain\s+(http:\/\/\S+) \(chain \d+; USDG (0x[0-9a-f]{40});/.exec(line)
  if (m === null) throw new Error(`unexpected line: ${line}`)
  return { child, rpcUrl: m[1]!, token: m[2] as Address, depositUrl: /^deposit service\s+(http:\/\/[^/\s]+)/.exec(deposit)![1]! }
}

/** Every /v1/ready answer until `done` says stop (status and the chain check's detail). */
const watchReady = (url: string) => {
  const seen: Array<{ status: number; chain: string }> = []
  let stop = false
  const running = (async () => {
    while (!stop) {
      try {
        const r = await json(`${url}/v1/ready`)
        seen.push({ status: r.status, chain: r.body.checks?.chain?.detail ?? "" })
      } catch {
        // not listening yet
      }
      await sleep(25)
    }
  })()
  return { seen, done: async () => ((stop = true), await running) }
}

const copy = (from: string, to: string, items: ReadonlyArray<string>): void => {
  mkdirSync(to, { recursive: true })
  for (const item of items) {
    const name = item.replace(/\/$/, "")
    if (existsSync(join(from, name))) cpSync(join(from, name), join(to, name), { recursive: true })
  }
}

let source: Booted
let sourceDir: string
let trader: ApiClient
const ackedBeforeCopy: number[] = []
const depositor = privateKeyToAccount(ANVIL_KEYS[1])
const alice = keyFromLabel("backup-alice")
/** The running copy's directories, made while the source runs. */
let restoredDir: string
let oldRecipeDir: string

beforeAll(async () => {
  sourceDir = mkdtempSync(join(tmpdir(), "twinbook-backup-src-"))
  dirs.push(sourceDir)
  source = await boot(sourceDir)
  const pub = createPublicClient({ transport: http(source.rpcUrl), cacheTime: 0 })
  // A deposit on the chain, credited: test USDG for the depositor, their wallet linked to alice, a transfer to their deposit address.
  const operator = privateKeyToAccount(ANVIL_KEYS[0])
  const mint = await createWalletClient({ transport: http(source.rpcUrl), account: operator }).writeContract({
    chain: null, address: source.token, abi: usdgAbi, functionName: "mint", args: [depositor.address, 50_000_000n]
  })
  await pub.waitForTransactionReceipt({ hash: mint, pollingInterval: 50 })
  const address = (await json(`${source.depositUrl}/v1/deposit/native-address/${depositor.address}`)).body.address as Address
  const ts = Math.floor(Date.now() / 1000) // live-only: the child checks link timestamps against the system clock
  const message = walletLinkMessage(alice.user, depositor.address.toLowerCase(), ts)
  const linked = await json(`${source.child.url}/v1/wallet/link`, {
    method: "POST",
    body: { user: alice.user, wallet: depositor.address, timestamp: ts, signature: alice.sign(Buffer.from(message, "utf8")), evm_signature: await depositor.signMessage({ message }) }
  })
  expect(linked.status).toBe(200)
  await createWalletClient({ transport: http(source.rpcUrl), account: depositor }).writeContract({
    chain: null, address: source.token, abi: usdgAbi, functionName: "transfer", args: [address, 5_000_000n]
  })
  await until("the deposit to credit", async () => ((await json(`${source.child.url}/v1/balance/${alice.user}`)).body.available === 5_000_000 ? true : null))

  // A trader with resting orders, and more arriving while the copy runs.
  trader = new ApiClient(source.child.url, keyFromLabel("backup-trader"), undefined, () => Math.floor(Date.now() / 1000)) // live-only: signed timestamps are checked against the system clock
  expect((await trader.register("backup")).status).toBe(200)
  expect((await trader.request("POST", "/v1/admin/credit", { user: trader.user, amount_micro: 1_000_000_000 }, admin)).status).toBe(200)
  let nonce = 1
  const place = async (): Promise<number> => {
    const res = await trader.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 1_000 + 10 * (nonce % 50), size: 1, nonce: nonce++ })
    if (res.status !== 200) throw new Error(`order refused: ${res.status} ${JSON.stringify(res.body)}`)
    return (res.body as { order_id: number }).order_id
  }
  for (let i = 0; i < 10; i++) ackedBeforeCopy.push(await place())

  // The documented copy (and the old one), file by file, while orders keep coming.
  let copying = true
  const during = (async () => {
    while (copying && nonce < 45) await place()
  })()
  restoredDir = join(mkdtempSync(join(tmpdir(), "twinbook-backup-copy-")), "data")
  oldRecipeDir = join(mkdtempSync(join(tmpdir(), "twinbook-backup-old-")), "data")
  dirs.push(restoredDir, oldRecipeDir)
  copy(sourceDir, restoredDir, RECIPE)
  copy(sourceDir, oldRecipeDir, OLD_RECIPE)
  copying = false
  await during
  source.child.kill("SIGTERM")
  expect((await source.child.exited).code).toBe(0)
}, 300_000)

describe("a running service's backup, file by file, as docs/operations.md says", () => {
  it("is the recipe the doc gives, in its order", () => {
    const doc = readFileSync(join(ROOT, "docs", "operations.md"), "utf8")
    const section = doc.slice(doc.indexOf("**Running service, file by file"), doc.indexOf("## Snapshots and rebuild-history"))
    const named = RECIPE.map((item) => section.indexOf(`\`${item}\``))
    expect(named.every((i) => i >= 0), `each of ${RECIPE.join(", ")} is named`).toBe(true)
    expect(named).toEqual([...named].sort((a, b) => a - b))
  })

  it("restores: the guard finds its checkpoint on the copied chain, ready only after it checked, the deposit and every earlier order there", async () => {
    const restored = await boot(restoredDir)
    const watch = watchReady(restored.child.url)
    const status = await until("a guard pass", async () => {
      const s = await json(`${restored.child.url}/v1/admin/chain`, { headers: admin })
      return s.body.checkpoint !== null && s.body.saved_through_block !== null ? s.body : null
    })
    expect(status).toMatchObject({ state: "ok", halt: null })
    await until("ready", () => (watch.seen.some((r) => r.status === 200) ? true : null))
    await watch.done()
    // 503 while the first pass had not finished (if the probe came that early), then 200, never back.
    const first200 = watch.seen.findIndex((r) => r.status === 200)
    expect(watch.seen.slice(0, first200).every((r) => r.status === 503 && /first pass/.test(r.chain))).toBe(true)
    expect(watch.seen.slice(first200).every((r) => r.status === 200)).toBe(true)
    // The ledger: alice's deposit, and the trader's orders acknowledged before the copy began.
    expect((await json(`${restored.child.url}/v1/balance/${alice.user}`)).body.available).toBe(5_000_000)
    const open = (await json(`${restored.child.url}/v1/orders/all/${trader.user}`)).body.orders as Array<{ id: number }>
    const ids = new Set(open.map((o) => o.id))
    expect(ackedBeforeCopy.filter((id) => !ids.has(id))).toEqual([])
    // The chain: the deposit's tokens are there (held by the forwarder or swept into the vault).
    const pub = createPublicClient({ transport: http(restored.rpcUrl), cacheTime: 0 })
    expect(await pub.readContract({ address: restored.token, abi: usdgAbi, functionName: "balanceOf", args: [depositor.address] })).toBe(45_000_000n)
    restored.child.kill("SIGTERM")
    expect((await restored.child.exited).code).toBe(0)
  }, 300_000)

  it("without the chain's files (the old recipe) halts, is never ready, and POST /v1/admin/chain/resume recovers as the doc says", async () => {
    const restored = await boot(oldRecipeDir)
    const watch = watchReady(restored.child.url)
    const halted = await until("the guard to halt", async () => {
      const s = await json(`${restored.child.url}/v1/admin/chain`, { headers: admin })
      return s.body.state === "halted" ? s.body : null
    })
    expect(halted.halt).not.toBeNull()
    const r = await json(`${restored.child.url}/v1/ready`)
    expect(r.status).toBe(503)
    expect(r.body.checks.chain.detail).toContain("chain guard halted")
    const resumed = await json(`${restored.child.url}/v1/admin/chain/resume`, { method: "POST", headers: admin, body: {} })
    expect(resumed.status).toBe(200)
    await until("ready after the resume", async () => ((await json(`${restored.child.url}/v1/ready`)).status === 200 ? true : null))
    await watch.done()
    // Before the resume: never ready (the first pass halted; nothing said ready before it).
    const firstOk = watch.seen.findIndex((x) => x.status === 200)
    expect(watch.seen.slice(0, firstOk === -1 ? undefined : firstOk).every((x) => x.status === 503)).toBe(true)
    expect((await json(`${restored.child.url}/v1/admin/chain`, { headers: admin })).body.state).toBe("ok")
    restored.child.kill("SIGTERM")
    expect((await restored.child.exited).code).toBe(0)
  }, 300_000)
})
