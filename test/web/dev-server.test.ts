// `npm run web:dev` against a running service: the Vite dev server starts, serves the page and
// its modules transformed from source (web/src and the client in src/client), proxies /v1 to
// the service, and stops with nothing left running (its whole process group is gone).
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { processAlive } from "../../src/chain/anvil.ts"
import { freePort } from "../support/free-port.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { waitFor } from "./harness.ts"

let service: Service
let dataDir: string
let dev: ChildProcess | null = null
let devUrl: string
let output = ""

/** Is any process of the group `pgid` still there? */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

const stopDev = async (): Promise<void> => {
  const d = dev
  if (d === null || d.pid === undefined) return
  dev = null
  if (groupAlive(d.pid)) process.kill(-d.pid, "SIGTERM")
  await waitFor("the dev server's process group gone", async () => (groupAlive(d.pid!) ? undefined : true), 15_000, 100).catch(() => {
    if (groupAlive(d.pid!)) process.kill(-d.pid!, "SIGKILL")
  })
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "twinbook-web-dev-"))
  service = await startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(9),
    catalog: demoCatalog(),
    historyFlushMs: 0,
    lpTickMs: 0,
    config: { adminToken: "web-dev-admin", corsOrigins: new Set(["http://127.0.0.1:3000"]), secureCookies: false, devCredit: false, rewards: { dailyBudgetMicro: 0, bandSpreadBpsMax: 300, perWalletCapPct: 40, minSizeContracts: 10 } }
  }, {
    nowMs: () => Date.now(), // live-only: a real dev server and service on the wall clock
    dataDir
  })
  const port = await freePort()
  devUrl = `http://127.0.0.1:${port}`
  // Its own process group (npm → sh → vite), so the test can end all of it and check none is left.
  dev = spawn("npm", ["run", "--silent", "web:dev", "--", "--port", String(port), "--strictPort"], {
    cwd: process.cwd(),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WEB_DEV_API: service.http.url, WEB_DEV_DEPOSIT: service.http.url }
  })
  dev.stdout!.on("data", (c: Buffer) => (output += c.toString("utf8")))
  dev.stderr!.on("data", (c: Buffer) => (output += c.toString("utf8")))
}, 60_000)

afterAll(async () => {
  await stopDev()
  await service?.close()
  rmSync(dataDir, { recursive: true, force: true })
}, 30_000)

describe("npm run web:dev", () => {
  it("serves the page and its source modules with hot reload, proxies /v1 to the running service, and stops leaving no process", async () => {
    const index = await waitFor("the dev server answering", async () => {
      const res = await fetch(`${devUrl}/`).catch(() => null)
      return res?.ok === true ? res.text() : undefined
    }, 60_000, 250).catch((err: Error) => {
      throw new Error(`${err.message}; dev server output:\n${output}`)
    })
    expect(index).toContain('<div id="app">')
    expect(index).toContain('src="/src/main.tsx"')
    expect(index).toContain("/@vite/client") // the hot-reload client is injected

    // A module, transformed from TypeScript + JSX on request.
    const main = await fetch(`${devUrl}/src/main.tsx`)
    expect(main.status).toBe(200)
    expect(main.headers.get("content-type")).toMatch(/javascript/)
    const mainJs = await main.text()
    expect(mainJs).toContain("/src/session.ts")
    expect(mainJs).not.toContain("const App = () => (\n  <>") // JSX compiled away

    // The typed client from outside web/ (src/client) is served too.
    const clientPath = /from\s+"([^"]*src\/client\/index\.ts[^"]*)"/.exec(await (await fetch(`${devUrl}/src/session.ts`)).text())?.[1]
    expect(clientPath).toBeDefined()
    const client = await fetch(new URL(clientPath!, devUrl))
    expect(client.status).toBe(200)
    expect(await client.text()).toContain("api-client.ts")

    // /v1 goes to the service through the proxy.
    const markets = await fetch(`${devUrl}/v1/markets?status=active&limit=2`)
    expect(markets.status).toBe(200)
    expect(((await markets.json()) as { markets: unknown[] }).markets.length).toBeGreaterThan(0)

    const pid = dev!.pid!
    await stopDev()
    expect(groupAlive(pid)).toBe(false)
    expect(processAlive(pid)).toBe(false)
    expect(await fetch(`${devUrl}/`).then(() => "answered", () => "refused")).toBe("refused")
  }, 120_000)
})
