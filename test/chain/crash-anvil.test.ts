// The embedded chain and a SIGKILL, on the real process (`src/main.ts` as a child, CHAIN=embedded,
// a temp DATA_DIR, real HTTP, real Ed25519 and EIP-191 signatures):
//  1. a deposit credited on the embedded chain is still on that chain after the service is
//     SIGKILLed and restarted — the transfer, and the vault's balance once its sweep is (re)done —
//     and the ledger and the chain agree (the chain guard saved the chain's state before crediting);
//  2. the embedded Anvil never outlives the service: after `kill -9` of the service its Anvil is
//     gone (the watchdog), and an Anvil left behind anyway (its watchdog killed too) is stopped by
//     the next start, which says so, instead of running a second Anvil on the same state file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createPublicClient, createWalletClient, http } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, describe, expect, it } from "vitest"
import { walletLinkMessage } from "../../src/auth/messages.ts"
import { ANVIL_KEYS } from "../../src/chain/anvil.ts"
import type { Address } from "../../src/chain/chain.ts"
import { usdgAbi } from "../../src/chain/contracts.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { type ChildServer, startChildServer } from "../support/child-server.ts"
import { json, until } from "../support/poll.ts"

const ADMIN = "crash-anvil-admin-token"
const dirs: string[] = []
const children: ChildServer[] = []

/** Live processes whose command line holds `needle` (from /proc; Linux), zombies excluded. */
const processesWith = (needle: string): Array<{ pid: number; cmd: string[] }> => {
  const out: Array<{ pid: number; cmd: string[] }> = []
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      const state = readFileSync(`/proc/${name}/stat`, "utf8").replace(/^.*\) /, "").charAt(0)
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0")
      if (state !== "Z" && cmd.some((a) => a.includes(needle))) out.push({ pid: Number(name), cmd })
    } catch {
      // exited meanwhile
    }
  }
  return out
}
/** Every Anvil seen for a data directory: a service's children while it runs, remembered after. */
const seen = new Map<string, Set<number>>()
const isAnvil = (pid: number): boolean => {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").charAt(0)
    return state !== "Z" && /anvil$/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "")
  } catch {
    return false
  }
}
const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[1])
/** Records the Anvil children of `servicePid` under `dataDir`. */
const noteAnvils = (dataDir: string, servicePid: number): number[] => {
  const pids = processesWith("--chain-id").filter((p) => isAnvil(p.pid) && parentOf(p.pid) === servicePid).map((p) => p.pid)
  const set = seen.get(dataDir) ?? new Set<number>()
  for (const pid of pids) set.add(pid)
  seen.set(dataDir, set)
  return pids
}
/** The Anvils of `dataDir` still running, whoever their parent is now. */
const anvilsOf = (dataDir: string): number[] => [...(seen.get(dataDir) ?? [])].filter(isAnvil)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL")
  for (const dir of dirs) {
    // Whatever the outcome, no Anvil of these tests stays behind (the code before the fix left them).
    for (const pid of anvilsOf(dir)) process.kill(pid, "SIGKILL")
    rmSync(dir, { force: true, recursive: true })
  }
})

const boot = async (dataDir: string, detached = false) => {
  const child = await startChildServer({
    dataDir,
    detached,
    startTimeoutMs: 120_000,
    env: { CHAIN: "embedded", DEPOSIT_PORT: "0", CHAIN_POLL_MS: "50", ADMIN_TOKEN: ADMIN, VERIFY_WORKERS: "0", SNAPSHOT_INTERVAL_SEC: "0" }
  })
  children.push(child)
  noteAnvils(dataDir, child.pid)
  // The chain lines follow the API line.
  const line = await until("the deposit chain line", () => child.lines.find((l) => l.startsWith("deposit chain")) ?? null)
  const deposit = await until("the deposit service line", () => child.lines.find((l) => l.startsWith("deposit service")) ?? null)
  const m = /^deposit chain\s+(http:\/\/\S+) \(chain \d+; USDG (0x[0-9a-f]{40}); vault (0x[0-9a-f]{40})\)/.exec(line)
  if (m === null) throw new Error(`unexpected line: ${line}`)
  return { child, rpcUrl: m[1]!, token: m[2] as Address, vault: m[3] as Address, depositUrl: /^deposit service\s+(http:\/\/[^/\s]+)/.exec(deposit)![1]! }
}


describe("the embedded chain across a SIGKILL of the service (real process)", () => {
  it("keeps a credited deposit on the chain: after SIGKILL and restart the chain and the ledger agree", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "twinbook-crash-anvil-"))
    dirs.push(dataDir)
    const first = await boot(dataDir)
    const operator = privateKeyToAccount(ANVIL_KEYS[0])
    const depositor = privateKeyToAccount(ANVIL_KEYS[1])
    const wallet = depositor.address.toLowerCase() as Address
    const key = keyFromLabel("crash-anvil-alice")
    const pub = (rpcUrl: string) => createPublicClient({ transport: http(rpcUrl), cacheTime: 0 })
    const balanceOf = (rpcUrl: string, token: Address, owner: Address) => pub(rpcUrl).readContract({ address: token, abi: usdgAbi, functionName: "balanceOf", args: [owner] })

    // Test USDG for the depositor, minted while the service's operator account is idle.
    const mintTx = await createWalletClient({ transport: http(first.rpcUrl), account: operator }).writeContract({
      chain: null,
      address: first.token,
      abi: usdgAbi,
      functionName: "mint",
      args: [depositor.address, 50_000_000n]
    })
    await pub(first.rpcUrl).waitForTransactionReceipt({ hash: mintTx, pollingInterval: 50 })

    const address = (await json(`${first.depositUrl}/v1/deposit/native-address/${depositor.address}`)).body.address as Address
    const ts = Math.floor(Date.now() / 1000) // live-only: the child checks link timestamps against the system clock
    const message = walletLinkMessage(key.user, wallet, ts)
    const linked = await json(`${first.child.url}/v1/wallet/link`, {
      method: "POST",
      body: { user: key.user, wallet: depositor.address, timestamp: ts, signature: key.sign(Buffer.from(message, "utf8")), evm_signature: await depositor.signMessage({ message }) }
    })
    expect(linked.status).toBe(200)
    const sent = await createWalletClient({ transport: http(first.rpcUrl), account: depositor }).writeContract({
      chain: null,
      address: first.token,
      abi: usdgAbi,
      functionName: "transfer",
      args: [address, 5_000_000n]
    })
    const available = async (url: string) => (await json(`${url}/v1/balance/${key.user}`)).body.available as number
    await until("the deposit to credit", async () => ((await available(first.child.url)) === 5_000_000 ? true : null))
    // A deposit credits at its confirmation and its sweep into the vault follows (docs/decisions.md).
    const vaultHolds = (rpcUrl: string, token: Address, vault: Address) => async () => ((await balanceOf(rpcUrl, token, vault)) === 5_000_000n ? true : null)
    await until("the sweep into the vault", vaultHolds(first.rpcUrl, first.token, first.vault))
    const before = { head: await pub(first.rpcUrl).getBlockNumber() }

    first.child.kill("SIGKILL")
    await first.child.exited
    const second = await boot(dataDir)
    // The chain came back with the deposit (saved before the credit). Its sweep may have been mined
    // after the last save and lost with the kill; the restarted watcher then finds the tokens still
    // at the forwarder and sweeps again, so the vault ends holding what the ledger credited.
    const receipt = await pub(second.rpcUrl).getTransactionReceipt({ hash: sent })
    expect(receipt.status).toBe("success")
    await until("the vault to hold the credited deposit", vaultHolds(second.rpcUrl, second.token, second.vault))
    expect(await balanceOf(second.rpcUrl, second.token, address)).toBe(0n)
    expect(await balanceOf(second.rpcUrl, second.token, wallet)).toBe(45_000_000n)
    expect(await pub(second.rpcUrl).getBlockNumber()).toBeGreaterThanOrEqual(before.head)
    expect(await available(second.child.url)).toBe(5_000_000)
    // The guard checks its checkpoint against the restored chain and finds it there.
    const status = await until("a guard pass", async () => {
      const s = await json(`${second.child.url}/v1/admin/chain`, { headers: { authorization: `Bearer ${ADMIN}` } })
      return s.body.checkpoint !== null && s.body.saved_through_block !== null ? s.body : null
    })
    expect(status).toMatchObject({ state: "ok", halt: null })
    second.child.kill("SIGTERM")
    expect((await second.child.exited).code).toBe(0)
    expect(anvilsOf(dataDir)).toEqual([])
  }, 300_000)

  it("leaves no Anvil behind after kill -9 of the service, and clears one a dead service left on the state file", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "twinbook-orphan-anvil-"))
    dirs.push(dataDir)
    const first = await boot(dataDir)
    expect(anvilsOf(dataDir)).toHaveLength(1)
    first.child.kill("SIGKILL")
    await first.child.exited
    await until("the orphaned Anvil to exit", () => (anvilsOf(dataDir).length === 0 ? true : null), 10_000)

    // Now the worst case: the watchdog dies with the service (kill -9 of both), so Anvil stays.
    const second = await boot(dataDir)
    const [stale] = noteAnvils(dataDir, second.child.pid)
    const watchdogs = processesWith("twinbook-anvil-watchdog").filter((p) => p.cmd.includes(String(stale)))
    expect(watchdogs).toHaveLength(1)
    process.kill(watchdogs[0]!.pid, "SIGKILL")
    second.child.kill("SIGKILL")
    await second.child.exited
    await sleep(300)
    expect(anvilsOf(dataDir)).toEqual([stale]) // orphaned, as before the fix
    const third = await boot(dataDir)
    expect(anvilsOf(dataDir)).toHaveLength(1)
    expect(anvilsOf(dataDir)).not.toContain(stale)
    expect(third.child.stderr()).toContain(`stopping Anvil pid ${stale} left running by a service that is gone`)
    third.child.kill("SIGTERM")
    expect((await third.child.exited).code).toBe(0)
    expect(anvilsOf(dataDir)).toEqual([])
  }, 300_000)

  it("stops cleanly on a Ctrl-C to its process group: the chain's state is saved at the stop and no Anvil is left", async () => {
    // A terminal's Ctrl-C signals the whole foreground group; Anvil must not die before the
    // service has saved its state (it used to: "the state could not be saved at stop").
    const dataDir = mkdtempSync(join(tmpdir(), "twinbook-ctrlc-anvil-"))
    dirs.push(dataDir)
    const { child } = await boot(dataDir, true)
    process.kill(-child.pid, "SIGINT")
    const { code } = await child.exited
    expect(code).toBe(0)
    expect(child.stderr()).not.toMatch(/could not be saved/)
    expect(child.lines).toContain("twinbook stopped")
    await until("its Anvil to be gone", () => (anvilsOf(dataDir).length === 0 ? true : null))
  }, 180_000)
})
