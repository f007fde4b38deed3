// Process hygiene on the real service (`src/main.ts` as a child, WEB=false, a temp DATA_DIR, real
// HTTP): one service per DATA_DIR (its own lock, refused with the directory and the holder's PID,
// a lock of a dead or recycled PID taken over), the operator token kept in DATA_DIR and printed
// once, and the embedded chain's port pinned by CHAIN_PORT (refused clearly when taken);
// `npm run rebuild-history` refused on a running service's directory by the same lock. Plus the
// lock module itself against real processes' PIDs and start times.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort } from "../support/free-port.ts"
import { acquireDataDirLock, DATA_DIR_IN_USE_EXIT, DataDirInUse, LOCK_FILE, processStart } from "../../src/store/data-dir-lock.ts"
import { type ChildServer, startChildServer } from "../support/child-server.ts"
import { runProcess } from "../support/run-process.ts"
import { anvilChildrenOf } from "../support/anvil-chain.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const dirs: string[] = []
const children: ChildServer[] = []
const anvils = new Set<number>()

const tempDir = (label: string): string => {
  const d = mkdtempSync(join(tmpdir(), `twinbook-proc-${label}-`))
  dirs.push(d)
  return d
}

const boot = async (dataDir: string, env: Record<string, string> = {}): Promise<ChildServer> => {
  const child = await startChildServer({ dataDir, env: { ADMIN_TOKEN: "proc-admin", VERIFY_WORKERS: "0", ...env }, startTimeoutMs: 120_000 })
  children.push(child)
  return child
}

/** This process's environment without vitest's own settings, for a child. */
const childEnv = (): Record<string, string> => {
  const base: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "NODE_OPTIONS" && !k.startsWith("VITEST")) base[k] = v
  return base
}

/** The service run to its end (a start that must be refused): spawn, not spawnSync. */
const runToExit = (dataDir: string, env: Record<string, string> = {}) => {
  const base = childEnv()
  return runProcess(process.execPath, ["scripts/run-ts.mjs", "src/main.ts"], {
    cwd: ROOT,
    env: { ...base, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, CHAIN: "off", WEB: "false", ADMIN_TOKEN: "proc-admin", VERIFY_WORKERS: "0", ...env },
    timeoutMs: 90_000
  })
}

const running = (pid: number): boolean => processStart(pid) !== null && !readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").startsWith("Z")

afterAll(() => {
  for (const c of children) c.kill("SIGKILL")
  for (const pid of anvils) if (existsSync(`/proc/${pid}`)) process.kill(pid, "SIGKILL")
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe("the DATA_DIR lock (src/store/data-dir-lock.ts)", () => {
  it("refuses a second service on the same DATA_DIR with the directory and the holder's PID; the first keeps serving", async () => {
    const dataDir = tempDir("lock")
    const first = await boot(dataDir)
    const second = await runToExit(dataDir)
    expect(second.status).toBe(DATA_DIR_IN_USE_EXIT)
    expect(second.stderr).toContain(`DATA_DIR ${realpathSync(dataDir)} is in use by another twinbook service (pid ${first.pid})`)
    // Refused before DuckDB or the journal opened: no raw DuckDB lock error, no start-up lines.
    expect(second.stderr).not.toMatch(/duckdb|Could not set lock/i)
    expect(second.stdout).not.toContain("twinbook API")
    expect((await fetch(`${first.url}/v1/markets?limit=1`)).status).toBe(200)
    // The docs page too: its Swagger UI is a chunk of the bundle the process imports at this first request (scripts/ts-bundle.mjs).
    const docs = await fetch(`${first.url}/v1/docs`)
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await docs.text()).toContain("SwaggerUIBundle")
    first.kill("SIGTERM")
    expect((await first.exited).code).toBe(0)
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false) // released at the stop
  }, 180_000)

  it("is taken by `npm run rebuild-history` too: refused on a running service's DATA_DIR with the same message, run once it stops", async () => {
    const dataDir = tempDir("rebuild")
    const first = await boot(dataDir)
    const rebuild = () => runProcess(process.execPath, ["scripts/run-ts.mjs", "scripts/rebuild-history.ts"], { cwd: ROOT, env: { ...childEnv(), DATA_DIR: dataDir }, timeoutMs: 90_000 })
    const refused = await rebuild()
    expect(refused.status).toBe(DATA_DIR_IN_USE_EXIT)
    expect(refused.stderr).toContain(`rebuild-history: DATA_DIR ${realpathSync(dataDir)} is in use by another twinbook service (pid ${first.pid}); stop it first`)
    expect(refused.stderr).not.toMatch(/duckdb|Could not set lock/i)
    expect(refused.stdout).toBe("")
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), "utf8")).pid).toBe(first.pid) // the holder's lock untouched
    expect((await fetch(`${first.url}/v1/markets?limit=1`)).status).toBe(200)
    first.kill("SIGTERM")
    expect((await first.exited).code).toBe(0)
    const ran = await rebuild()
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stdout).toMatch(/^rebuilt .*history\.duckdb: \d+ journal records through seq \d+/)
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false) // released at its end
  }, 180_000)

  it("does not block the next start after kill -9 of the holder", async () => {
    const dataDir = tempDir("stale")
    const first = await boot(dataDir)
    first.kill("SIGKILL")
    await first.exited
    // The dead holder's lock is still there…
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), "utf8")).pid).toBe(first.pid)
    // …and the next start takes it over.
    const second = await boot(dataDir)
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), "utf8")).pid).toBe(second.pid)
    expect((await fetch(`${second.url}/v1/markets?limit=1`)).status).toBe(200)
    second.kill("SIGTERM")
    expect((await second.exited).code).toBe(0)
  }, 180_000)

  it("tells a recycled PID from its holder by the process's start time, and a lock copied from another directory from this one's", () => {
    const dataDir = tempDir("reuse")
    const dir = realpathSync(dataDir)
    const path = join(dataDir, LOCK_FILE)
    const start = processStart(process.ppid)
    expect(start).not.toBeNull()
    // A live process (this test's parent) that started at another time than the recorded holder: stale.
    writeFileSync(path, JSON.stringify({ pid: process.ppid, start: String(Number(start) + 1), host: hostname(), dir }))
    const lock = acquireDataDirLock(dataDir)
    expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(process.pid)
    lock.release()
    expect(existsSync(path)).toBe(false)
    // The same PID with its real start time: the holder runs, so the directory is refused.
    writeFileSync(path, JSON.stringify({ pid: process.ppid, start, host: hostname(), dir }))
    let refused: unknown = null
    try {
      acquireDataDirLock(dataDir)
    } catch (err) {
      refused = err
    }
    expect(refused).toBeInstanceOf(DataDirInUse)
    expect((refused as DataDirInUse).message).toContain(`DATA_DIR ${dir} is in use by another twinbook service (pid ${process.ppid})`)
    // The same live holder, but of another directory (this lock file came with a copy): not a lock here.
    writeFileSync(path, JSON.stringify({ pid: process.ppid, start, host: hostname(), dir: `${dir}-original` }))
    acquireDataDirLock(dataDir).release()
    expect(existsSync(path)).toBe(false)
    // A PID that no longer exists: stale.
    writeFileSync(path, JSON.stringify({ pid: 2 ** 22 + 1, start: "1", host: hostname(), dir }))
    acquireDataDirLock(dataDir).release()
    expect(existsSync(path)).toBe(false)
  })
})

describe("the operator token when ADMIN_TOKEN is unset", () => {
  it("is generated once, kept in DATA_DIR, printed on the first start only, and still valid after a restart", async () => {
    expect(process.env["ADMIN_TOKEN"]).toBeUndefined()
    const dataDir = tempDir("token")
    const start = async () => {
      const child = await startChildServer({ dataDir, env: { VERIFY_WORKERS: "0" }, startTimeoutMs: 120_000 })
      children.push(child)
      // The token line comes after the URL line.
      for (let i = 0; i < 400 && !child.lines.some((l) => l.startsWith("operator token")); i++) await new Promise((r) => setTimeout(r, 25))
      return child
    }
    const first = await start()
    const kept = readFileSync(join(dataDir, "admin-token"), "utf8").trim()
    expect(kept).toMatch(/^[0-9a-f]{48}$/)
    expect(first.lines).toContain(`operator token    ${kept}  (generated and kept in ${join(dataDir, "admin-token")}; set ADMIN_TOKEN to choose one)`)
    const clock = (url: string, token: string) => fetch(`${url}/v1/admin/clock`, { headers: { authorization: `Bearer ${token}` } })
    expect((await clock(first.url, kept)).status).toBe(200)
    first.kill("SIGTERM")
    expect((await first.exited).code).toBe(0)

    const second = await start()
    expect(second.lines).toContain(`operator token    kept in ${join(dataDir, "admin-token")}  (set ADMIN_TOKEN to choose one)`)
    expect(second.lines.join("\n")).not.toContain(kept)
    expect(second.stderr()).not.toContain(kept)
    expect((await clock(second.url, kept)).status).toBe(200)
    expect((await clock(second.url, "wrong")).status).toBe(401)
    second.kill("SIGTERM")
    expect((await second.exited).code).toBe(0)
  }, 180_000)
})

describe("CHAIN_PORT", () => {
  it("pins the embedded chain's RPC port, and a taken port is refused naming it", async () => {
    const port = await freePort()
    const dataDir = tempDir("chainport")
    const child = await boot(dataDir, { CHAIN: "embedded", CHAIN_PORT: String(port), DEPOSIT_PORT: "0", SNAPSHOT_INTERVAL_SEC: "0" })
    for (const pid of anvilChildrenOf(child.pid)) anvils.add(pid)
    expect(anvils.size).toBe(1)
    for (let i = 0; i < 2000 && !child.lines.some((l) => l.startsWith("deposit chain")); i++) await new Promise((r) => setTimeout(r, 25))
    expect(child.lines.find((l) => l.startsWith("deposit chain"))).toMatch(new RegExp(`^deposit chain\\s+http://127\\.0\\.0\\.1:${port} `))
    const chainId = await fetch(`http://127.0.0.1:${port}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })
    })
    expect(((await chainId.json()) as { result: string }).result).toBe("0x1237")

    // The port is taken (here by a plain TCP listener): a clear refusal, not a retry elsewhere.
    const blocker: Server = createServer()
    const blocked = await freePort()
    await new Promise<void>((resolve) => blocker.listen(blocked, "127.0.0.1", resolve))
    try {
      const refused = await runToExit(tempDir("chainport-taken"), { CHAIN: "embedded", CHAIN_PORT: String(blocked), DEPOSIT_PORT: "0" })
      expect(refused.status).not.toBe(0)
      expect(refused.stdout + refused.stderr).toContain(`embedded anvil on CHAIN_PORT ${blocked}: anvil failed to start: port ${blocked} on 127.0.0.1 is already in use by another process`)
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }

    const pids = [...anvils]
    child.kill("SIGTERM")
    expect((await child.exited).code).toBe(0)
    expect(pids.filter(running)).toEqual([])
  }, 240_000)
})
