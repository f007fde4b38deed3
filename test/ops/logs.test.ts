// Structured logs of the real process (`src/main.ts` as a child with LOG_LEVEL=debug, LOG_FORMAT=json,
// the embedded Anvil, real HTTP, real Ed25519 and EIP-191 signatures): a full scripted session —
// registration, an operator call, orders with a fill and a refusal, a wallet link, a deposit
// credited on chain, a withdrawal paid out, a WebSocket client, a snapshot, a SIGTERM — then every
// stderr line parses as JSON with ts, level and msg; request lines (the API's and the deposit
// service's) carry method, route template, status, duration_ms, the user and the error code; the
// notable events are there (the WebSocket connect and disconnect, the stop's snapshot); and no secret the session used (session cookie,
// operator token, api key, private keys, any signature sent) appears anywhere in stdout or stderr.
// The logger's own rules (levels, the stack only at debug, redaction) are checked directly below.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createPublicClient, createWalletClient, http } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { ANVIL_KEYS, processAlive } from "../../src/chain/anvil.ts"
import type { Address } from "../../src/chain/chain.ts"
import { usdgAbi } from "../../src/chain/contracts.ts"
import { ApiClient, type FetchLike } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { makeLogger, REDACTED } from "../../src/ops/log.ts"
import { type ChildServer, startChildServer } from "../support/child-server.ts"

const ADMIN = "logs-admin-token-5f1e0c2b9a"
const dirs: string[] = []
const children: ChildServer[] = []

afterAll(() => {
  for (const c of children) if (processAlive(c.pid)) c.kill("SIGKILL")
  for (const dir of dirs) rmSync(dir, { force: true, recursive: true })
})

/** A line with these fields is among `lines`; a failure names the line that is missing. */
const hasLine = (lines: ReadonlyArray<Record<string, unknown>>, fields: Record<string, unknown>): void =>
  expect(lines, `no line with ${JSON.stringify(fields)} among ${lines.length}`).toContainEqual(expect.objectContaining(fields))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const until = async <A>(what: string, probe: () => Promise<A | null>, timeoutMs = 30_000): Promise<A> => {
  for (let waited = 0; ; waited += 50) {
    const value = await probe()
    if (value !== null) return value
    if (waited >= timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** Every secret the session handles: request bodies' signatures, the cookie, api keys in answers. */
const secrets = new Set<string>()
const recordingFetch: FetchLike = (async (url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => {
  if (init?.body !== undefined) {
    const body = JSON.parse(init.body) as Record<string, unknown>
    for (const k of ["signature", "evm_signature"]) if (typeof body[k] === "string" && body[k] !== "") secrets.add(body[k] as string)
  }
  const res = await fetch(url, init as RequestInit)
  const cookie = res.headers.get("set-cookie")
  if (cookie !== null) {
    const value = cookie.split(";")[0]!.split("=")[1]!
    secrets.add(value)
    secrets.add(value.split(".").at(-1)!) // the MAC alone
  }
  const text = await res.clone().text()
  const apiKey = /"api_key":"([^"]+)"/.exec(text)?.[1]
  if (apiKey !== undefined) secrets.add(apiKey)
  return res
}) as never

describe("logs of a full session (real process, LOG_LEVEL=debug)", () => {
  it("are JSON lines with the request fields and the notable events, and hold no secret", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "twinbook-logs-"))
    dirs.push(dataDir)
    const child = await startChildServer({
      dataDir,
      startTimeoutMs: 120_000,
      env: { CHAIN: "embedded", DEPOSIT_PORT: "0", CHAIN_POLL_MS: "50", ADMIN_TOKEN: ADMIN, VERIFY_WORKERS: "0", SNAPSHOT_INTERVAL_SEC: "1", LOG_LEVEL: "debug", LOG_FORMAT: "json" }
    })
    children.push(child)
    const lineOf = (prefix: string) => until(prefix, async () => child.lines.find((l) => l.startsWith(prefix)) ?? null)
    const chainLine = /^deposit chain\s+(http:\/\/\S+) \(chain \d+; USDG (0x[0-9a-f]{40});/.exec(await lineOf("deposit chain"))!
    const rpcUrl = chainLine[1]!
    const token = chainLine[2] as Address
    const depositUrl = /^deposit service\s+(http:\/\/[^/\s]+)/.exec(await lineOf("deposit service"))![1]!
    const market = "g7-2027-prediction-markets"
    const alice = new ApiClient(child.url, keyFromLabel("logs-alice"), recordingFetch)
    const bob = new ApiClient(child.url, keyFromLabel("logs-bob"), recordingFetch)
    for (const k of [alice.key, bob.key]) secrets.add(Buffer.from(k.secretKey).toString("hex"))
    for (const k of ANVIL_KEYS.slice(0, 2)) secrets.add(k.slice(2))
    secrets.add(ADMIN)

    for (const c of [alice, bob]) expect((await c.register("logs")).status).toBe(200)
    const credit = await fetch(`${child.url}/v1/admin/credit`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ user: bob.user, amount_micro: 50_000_000 })
    })
    expect(credit.status).toBe(200)
    // A refusal (alice has nothing yet), then a deposit for alice, then a fill between them.
    expect((await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4000, size: 10 })).status).toBe(422)

    const operator = privateKeyToAccount(ANVIL_KEYS[0])
    const depositor = privateKeyToAccount(ANVIL_KEYS[1])
    const pub = createPublicClient({ transport: http(rpcUrl), cacheTime: 0 })
    const mint = await createWalletClient({ transport: http(rpcUrl), account: operator }).writeContract({ chain: null, address: token, abi: usdgAbi, functionName: "mint", args: [depositor.address, 20_000_000n] })
    await pub.waitForTransactionReceipt({ hash: mint, pollingInterval: 50 })
    expect((await alice.linkWallet(depositor.address, (message) => depositor.signMessage({ message }))).status).toBe(200)
    const address = ((await (await fetch(`${depositUrl}/v1/deposit/native-address/${depositor.address}`)).json()) as { address: Address }).address
    await createWalletClient({ transport: http(rpcUrl), account: depositor }).writeContract({ chain: null, address: token, abi: usdgAbi, functionName: "transfer", args: [address, 10_000_000n] })
    await until("the deposit to credit", async () => ((await alice.balance()).body as { available?: number }).available === 10_000_000 ? true : null)

    expect((await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4000, size: 10 })).status).toBe(200)
    expect((await bob.placeOrder({ market_id: market, side: "buy", outcome: "no", price: 6000, size: 10 })).status).toBe(200)
    expect((await alice.withdraw(1_000_000)).status).toBe(200)
    // A feed client connects and leaves.
    const ws = new WebSocket(child.url.replace(/^http/, "ws") + "/v1/ws")
    await new Promise<void>((resolve, reject) => ws.once("open", () => resolve()).once("error", reject))
    const wsClosed = new Promise<void>((resolve) => ws.once("close", () => resolve()))
    ws.close(1000, "bye")
    await wsClosed
    // Whole lines only: a line still being written arrives in pieces.
    const events = () => child.stderr().split("\n").slice(0, -1).filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>)
    // The client's own 'close' says nothing of when the server logs its side: wait for that line.
    await until("the server's ws disconnected line", async () => events().find((e) => e.msg === "ws disconnected") ?? null)
    await until("the payout and a snapshot", async () => (events().some((e) => e.msg === "payout sent") && events().some((e) => e.msg === "snapshot") ? true : null))

    child.kill("SIGTERM")
    expect((await child.exited).code).toBe(0)
    const stdout = child.lines.join("\n")
    const stderr = child.stderr()

    // Every stderr line is one JSON object with ts, level and msg.
    const lines = stderr.split("\n").filter((l) => l !== "")
    expect(lines.length).toBeGreaterThan(10)
    const parsed = lines.map((l) => {
      expect(() => JSON.parse(l), l).not.toThrow()
      return JSON.parse(l) as Record<string, unknown>
    })
    for (const e of parsed) {
      expect(typeof e.ts === "string" && !Number.isNaN(Date.parse(e.ts)), JSON.stringify(e)).toBe(true)
      expect(["debug", "info", "warn", "error"]).toContain(e.level)
      expect(typeof e.msg).toBe("string")
    }
    const requests = parsed.filter((e) => e.msg === "request")
    for (const r of requests) {
      expect(typeof r.method).toBe("string")
      expect(r.route).toMatch(/^(\/|\(none\)|\(preflight\))/)
      expect(Number.isInteger(r.status)).toBe(true)
      expect(typeof r.duration_ms).toBe("number")
    }
    // Route templates, never raw paths with their values; the user when known; the error code of a refusal.
    hasLine(requests, { method: "GET", route: "/v1/balance/:user", status: 200, user: alice.user })
    hasLine(requests, { method: "POST", route: "/v1/orders", status: 200, user: bob.user })
    hasLine(requests, { method: "POST", route: "/v1/orders", status: 422, user: alice.user, error_code: "insufficient_balance" })
    hasLine(requests, { method: "POST", route: "/v1/admin/credit", status: 200, level: "info" })
    expect(requests.some((r) => String(r.route).includes(alice.user))).toBe(false)
    // The notable events.
    for (const msg of ["recovery", "deposit credited", "payout sent", "snapshot"]) expect(parsed.map((e) => e.msg), msg).toContain(msg)
    // The deposit service's own port logs its requests the same way, marked as its own.
    hasLine(requests, { service: "deposit", method: "GET", route: "/v1/deposit/native-address/:user_address", status: 200, level: "info" })
    expect(requests.some((r) => String(r.route).includes(depositor.address))).toBe(false)
    // WebSocket connects and disconnects, and who closed.
    hasLine(parsed, { msg: "ws connected", level: "info", address: "127.0.0.1" })
    hasLine(parsed, { msg: "ws disconnected", level: "info", closed_by: "client", code: 1000, reason: "bye" })
    // The clean stop's last snapshot is logged like the periodic ones, after the SIGTERM.
    const stopSnapshot = parsed.find((e) => e.msg === "snapshot" && e.reason === "stop")
    expect(stopSnapshot).toMatchObject({ level: "info", seq: expect.any(Number), path: expect.stringContaining(dataDir) })
    expect(parsed.find((e) => e.msg === "deposit credited")).toMatchObject({ level: "info", user: alice.user, amount_micro: 10_000_000 })

    // No secret anywhere in the process's output.
    expect(secrets.size).toBeGreaterThan(8)
    for (const secret of secrets) {
      expect(stdout.includes(secret), `secret ${secret.slice(0, 8)}… in stdout`).toBe(false)
      expect(stderr.includes(secret), `secret ${secret.slice(0, 8)}… in stderr`).toBe(false)
    }
  }, 240_000)
})

describe("the logger", () => {
  const capture = (level: "debug" | "info" | "warn" | "error", format: "json" | "pretty" = "json") => {
    const lines: string[] = []
    return { lines, log: makeLogger({ level, format, nowMs: () => 1_795_305_600_000, write: (l) => void lines.push(l) }) }
  }

  it("writes lines at or above LOG_LEVEL only", () => {
    const { lines, log } = capture("warn")
    log.debug("a")
    log.info("b")
    log.warn("c")
    log.error("d")
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["c", "d"])
    expect(JSON.parse(lines[0]!)).toEqual({ ts: "2026-11-22T00:00:00.000Z", level: "warn", msg: "c" })
  })

  it("logs an error with its code and message, and its stack only at debug", () => {
    const err = Object.assign(new Error("disk full"), { code: "ENOSPC" })
    const info = capture("info")
    info.log.error("internal error", { error: err })
    expect(JSON.parse(info.lines[0]!)).toEqual({ ts: "2026-11-22T00:00:00.000Z", level: "error", msg: "internal error", error_name: "Error", error_message: "disk full", error_code: "ENOSPC" })
    const debug = capture("debug")
    debug.log.error("internal error", { error: err })
    expect(JSON.parse(debug.lines[0]!).stack).toContain("disk full")
  })

  it("never writes a value under a secret's name, and keeps flags and counts", () => {
    const { lines, log } = capture("info")
    log.warn("oops", { cookie: "service_oracle_session=abc", admin_token: "t0k", authorization: "Bearer t0k", signature: "ff", api_key: "k", private_key: "0x1", had_token: true })
    expect(JSON.parse(lines[0]!)).toMatchObject({ cookie: REDACTED, admin_token: REDACTED, authorization: REDACTED, signature: REDACTED, api_key: REDACTED, private_key: REDACTED, had_token: true })
    expect(lines[0]).not.toMatch(/abc|t0k|"ff"|"k"|0x1/)
  })

  it("writes one readable line with LOG_FORMAT=pretty", () => {
    const { lines, log } = capture("info", "pretty")
    log.info("request", { method: "GET", route: "/v1/markets", status: 200, duration_ms: 1.5 })
    expect(lines).toEqual(["2026-11-22T00:00:00.000Z INFO  request method=GET route=/v1/markets status=200 duration_ms=1.5"])
  })
})
