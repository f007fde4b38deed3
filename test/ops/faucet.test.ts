// The development faucet (issue 13, the first hour), on the real service as a process
// (`src/main.ts`, temp DATA_DIR, WEB=false): `POST /v1/dev/faucet` (a registered user's session
// cookie) and `npm run faucet` (which registers a key of its own) mint test USDG that the chain
// then holds; bad addresses and amounts are refused with a clear message (non-zero exit for the
// CLI); and the faucet is refused with DEV_CREDIT=false, without a chain, and on an external chain
// (CHAIN_RPC_URL), where nothing is minted. Its abuse cases: test/hostile/web-server.test.ts.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createPublicClient, http } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../src/chain/anvil.ts"
import type { Address } from "../../src/chain/chain.ts"
import { usdgAbi } from "../../src/chain/contracts.ts"
import { ApiClient, generateKey } from "../../src/client/index.ts"
import { type ChildServer, startChildServer } from "../support/child-server.ts"
import { runProcess } from "../support/run-process.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const dirs: string[] = []
const children: ChildServer[] = []
const anvils: Anvil[] = []

const WALLET_A = "0x00000000000000000000000000000000000a11ce" as Address
const WALLET_B = "0x000000000000000000000000000000000000b0b0" as Address

const boot = async (env: Record<string, string>): Promise<ChildServer> => {
  const dataDir = mkdtempSync(join(tmpdir(), "twinbook-faucet-"))
  dirs.push(dataDir)
  const child = await startChildServer({
    dataDir,
    startTimeoutMs: 120_000,
    env: { DEPOSIT_PORT: "0", VERIFY_WORKERS: "0", SNAPSHOT_INTERVAL_SEC: "0", ADMIN_TOKEN: "faucet-test-admin", ...env }
  })
  children.push(child)
  return child
}

/** Stops a service the clean way (its Scope stops the embedded Anvil) and waits for it. */
const stop = async (child: ChildServer): Promise<void> => {
  child.kill("SIGTERM")
  await child.exited
}

/** A registered user's session cookie on `url`. */
const sessionOn = async (url: string): Promise<string> => {
  const client = new ApiClient(url, generateKey())
  const reg = await client.register("faucet-test")
  if (reg.status !== 200) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`)
  return client.cookie!
}

/** `POST /v1/dev/faucet` with `cookie` (none: as a stranger). */
const faucet = async (url: string, body: unknown, cookie?: string) => {
  const headers: Record<string, string> = { "content-type": "application/json", ...(cookie === undefined ? {} : { cookie }) }
  const res = await fetch(`${url}/v1/dev/faucet`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as any }
}

/** `npm run faucet -- …args` against `apiUrl`. */
const cli = (apiUrl: string, ...args: string[]) =>
  runProcess("npm", ["run", "--silent", "faucet", "--", ...args], { cwd: ROOT, env: { ...process.env, API_URL: apiUrl }, timeoutMs: 60_000 })

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL")
  await Promise.all(children.map((c) => c.exited))
  for (const a of anvils) await a.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe("on the embedded chain with DEV_CREDIT on (the default)", () => {
  let service: ChildServer
  let balanceOf: (owner: Address) => Promise<bigint>
  let cookie: string

  beforeAll(async () => {
    service = await boot({ CHAIN: "embedded" })
    const until = async (prefix: string): Promise<string> => {
      for (;;) {
        const line = service.lines.find((l) => l.startsWith(prefix))
        if (line !== undefined) return line
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    const m = /^deposit chain\s+(http:\/\/\S+) \(chain \d+; USDG (0x[0-9a-f]{40});/.exec(await until("deposit chain"))!
    const pub = createPublicClient({ transport: http(m[1]!), cacheTime: 0 })
    balanceOf = (owner) => pub.readContract({ address: m[2] as Address, abi: usdgAbi, functionName: "balanceOf", args: [owner] })
    cookie = await sessionOn(service.url)
  }, 150_000)
  afterAll(() => stop(service))

  it("POST /v1/dev/faucet mints the amount to the wallet on the chain and answers with the transaction", async () => {
    // A stranger is refused; the registered user is served.
    expect(await faucet(service.url, { address: WALLET_A, amount_micro: 5_000_000 })).toEqual({ status: 401, body: { error: "unauthorized", detail: expect.any(String) } })
    const res = await faucet(service.url, { address: WALLET_A.toUpperCase().replace("0X", "0x"), amount_micro: 5_000_000 }, cookie)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ address: WALLET_A, tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), amount_micro: 5_000_000 })
    expect(await balanceOf(WALLET_A)).toBe(5_000_000n)
  })

  it("npm run faucet -- <wallet> <amount> converts USDG to micro exactly and mints it", async () => {
    const before = await balanceOf(WALLET_B)
    const r = await cli(service.url, WALLET_B, "2.5")
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toMatch(new RegExp(`^minted 2\\.5 USDG \\(2500000 micro\\) to ${WALLET_B}: tx 0x[0-9a-f]{64}$`))
    const again = await cli(service.url, WALLET_B, "0.000001")
    expect(again.status, again.stderr).toBe(0)
    expect(await balanceOf(WALLET_B)).toBe(before + 2_500_001n)
  })

  it("refuses a bad address or amount over the API (400, SPEC §7 envelope) and mints nothing", async () => {
    const before = await balanceOf(WALLET_A)
    for (const address of ["0x123", "", 42, null, `${WALLET_A}00`]) {
      // A user of its own each time: one user's refusals would reach its limit (5 per 60 s).
      const res = await faucet(service.url, { address, amount_micro: 1_000_000 }, await sessionOn(service.url))
      expect(res, JSON.stringify(address)).toEqual({ status: 400, body: { error: "invalid_address", detail: expect.stringContaining("0x followed by 40 hex") } })
    }
    for (const amount_micro of [0, -1, 1.5, "1000000", null, 1_000_000_000_001]) {
      const res = await faucet(service.url, { address: WALLET_A, amount_micro }, await sessionOn(service.url))
      expect(res, JSON.stringify(amount_micro)).toEqual({ status: 400, body: { error: "invalid_amount", detail: expect.stringContaining("amount_micro must be an integer") } })
    }
    expect((await faucet(service.url, "{not json", cookie)).body.error).toBe("invalid_json")
    expect(await balanceOf(WALLET_A)).toBe(before)
  })

  it("the CLI refuses bad input with a clear message and a non-zero exit, before calling the service", async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /usage: npm run faucet -- <0x wallet> <amount/],
      [[WALLET_A], /usage:/],
      [["0xnothex", "10"], /"0xnothex" is not a wallet address \(0x followed by 40 hex characters\)/],
      [[WALLET_A, "abc"], /"abc" is not an amount of USDG/],
      [[WALLET_A, "1.0000001"], /at most 6 decimals/],
      [[WALLET_A, "0"], /"0" is not an amount of USDG/],
      [[WALLET_A, "-5"], /"-5" is not an amount of USDG/]
    ]
    // An unreachable API_URL: only a call would fail differently, so these never call.
    const results = await Promise.all(cases.map(([args]) => cli("http://127.0.0.1:9", ...args)))
    results.forEach((r, i) => {
      expect(r.status, r.stdout).toBe(2)
      expect(r.stderr).toMatch(cases[i]![1])
      expect(r.stdout).toBe("")
    })
    const down = await cli("http://127.0.0.1:9", WALLET_A, "1")
    expect(down.status).toBe(1)
    expect(down.stderr).toMatch(/cannot reach the service at http:\/\/127\.0\.0\.1:9 .*set API_URL/)
  })
})

describe("refused where there must be no faucet", () => {
  it("with DEV_CREDIT=false: 404 naming DEV_CREDIT, over the API and the CLI (exit 1)", async () => {
    const service = await boot({ CHAIN: "off", DEV_CREDIT: "false" })
    try {
      const res = await faucet(service.url, { address: WALLET_A, amount_micro: 1_000_000 })
      expect(res).toEqual({ status: 404, body: { error: "not_found", detail: "the faucet is disabled (DEV_CREDIT=false)" } })
      const r = await cli(service.url, WALLET_A, "1")
      expect(r.status).toBe(1)
      expect(r.stderr.trim()).toBe("faucet: 404 not_found: the faucet is disabled (DEV_CREDIT=false)")
    } finally {
      await stop(service)
    }
  }, 60_000)

  it("without a chain (CHAIN=off): 404 saying so", async () => {
    const service = await boot({ CHAIN: "off" })
    try {
      const res = await faucet(service.url, { address: WALLET_A, amount_micro: 1_000_000 })
      expect(res).toEqual({ status: 404, body: { error: "not_found", detail: expect.stringContaining("CHAIN=off") } })
    } finally {
      await stop(service)
    }
  }, 60_000)

  it("on an external chain (CHAIN_RPC_URL): 404 naming it, and nothing is minted there", async () => {
    const anvil = await startAnvil()
    anvils.push(anvil)
    const service = await boot({ CHAIN: "embedded", CHAIN_RPC_URL: anvil.rpcUrl, CHAIN_OPERATOR_KEY: ANVIL_KEYS[0] })
    try {
      const line = service.lines.find((l) => l.startsWith("deposit chain")) ?? (await new Promise<string>((resolve) => {
        const poll = setInterval(() => {
          const found = service.lines.find((l) => l.startsWith("deposit chain"))
          if (found !== undefined) resolve(found), clearInterval(poll)
        }, 20)
      }))
      const token = /USDG (0x[0-9a-f]{40})/.exec(line)![1] as Address
      const res = await faucet(service.url, { address: WALLET_A, amount_micro: 1_000_000 })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ error: "not_found", detail: expect.stringContaining("external chain (CHAIN_RPC_URL)") })
      const r = await cli(service.url, WALLET_A, "1")
      expect(r.status).toBe(1)
      expect(r.stderr).toContain("external chain (CHAIN_RPC_URL)")
      const pub = createPublicClient({ transport: http(anvil.rpcUrl), cacheTime: 0 })
      expect(await pub.readContract({ address: token, abi: usdgAbi, functionName: "balanceOf", args: [WALLET_A] })).toBe(0n)
    } finally {
      await stop(service)
      await anvil.stop()
    }
  }, 120_000)
})
