// The web app's test stand: a real Anvil with the contracts, the real service (API, WebSocket,
// deposit service, watcher, payouts, LP runner, the development faucet) on loopback, the built
// app served by web/server.ts, and a real Chromium driven by playwright-core. Used by the
// browser journeys (test/web/e2e.test.ts) and the web bench (bench/web.ts).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { ANVIL_KEYS } from "../../src/chain/anvil.ts"
import { makeDevFaucet } from "../../src/chain/faucet.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { ensureBuilt } from "../../web/build.ts"
import { startWebServer, type WebServer } from "../../web/server.ts"
import { type AnvilChain, startAnvilChain } from "../support/anvil-chain.ts"

export const ADMIN = "web-e2e-admin"

/** Chromium's flags that work on this machine (no sandbox as root, no GPU, no network chatter). */
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

/**
 * A Chromium binary: CHROMIUM_PATH, a system chromium, or the one @sparticuz/chromium ships
 * (decompressed to /tmp on first use). None is an error with the reason, never a skip.
 */
export const chromiumPath = async (): Promise<string> => {
  const fromEnv = process.env["CHROMIUM_PATH"]
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  for (const p of ["/usr/bin/chromium", "/usr/bin/chromium-browser"]) if (existsSync(p)) return p
  try {
    const mod = (await import("@sparticuz/chromium")) as unknown as { default: { executablePath(): Promise<string> } }
    return await mod.default.executablePath()
  } catch (err) {
    throw new Error(
      `no Chromium for the browser tests: set CHROMIUM_PATH, install /usr/bin/chromium, or run npm install (brings @sparticuz/chromium). Cause: ${err instanceof Error ? err.message : String(err)}`
    )
  }
}

export const launchChromium = async (): Promise<Browser> => {
  const executablePath = await chromiumPath()
  // playwright gives every launch a fresh profile directory of its own (and removes it).
  return chromium.launch({ executablePath, args: FLAGS, timeout: 60_000 })
}

export interface Stand {
  readonly chain: AnvilChain
  readonly service: Service
  readonly web: WebServer
  readonly browser: Browser
  readonly apiUrl: string
  close(): Promise<void>
}

export const startStand = async (opts: { lpTickMs?: number } = {}): Promise<Stand> => {
  await ensureBuilt()
  const chain = await startAnvilChain()
  const dataDir = mkdtempSync(join(tmpdir(), "twinbook-web-"))
  let service: Service | null = null
  let web: WebServer | null = null
  let browser: Browser | null = null
  try {
    // The web server binds port 0 once the service runs, and its origin joins this allow-list then
    // (the service reads the set on each request): a port chosen beforehand could be taken meanwhile.
    const cors = new Set<string>()
    service = await startService({
      host: "127.0.0.1",
      port: 0,
      secret: new Uint8Array(32).fill(7),
      catalog: demoCatalog(),
      historyFlushMs: 0,
      lpTickMs: opts.lpTickMs ?? 1000,
      config: {
        adminToken: ADMIN,
        corsOrigins: cors,
        secureCookies: false,
        devCredit: true,
        rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40, minSizeContracts: 10 },
        limits: { registrationsPerMinute: 1000, wsConnectionsPerAddress: 200, wsSubscriptionsPerConnection: 500 }
      },
      chain: { host: "127.0.0.1", depositPort: 0, confirmations: 0, pollMs: 250, minUsdgMicro: 1_000_000, maxPerTxMicro: 100_000_000, corsOrigins: cors },
      // As src/main.ts builds it on the embedded chain: the deposit page mints through the API's POST /v1/dev/faucet.
      faucet: { faucet: makeDevFaucet({ rpcUrl: chain.anvil.rpcUrl, chainId: chain.info.chainId, operatorKey: ANVIL_KEYS[0], token: chain.info.token }) }
    }, {
      nowMs: () => Date.now(), // live-only: a real browser on the wall clock talks to this service
      dataDir,
      chain: chain.chain
    })
    web = await startWebServer({
      host: "127.0.0.1",
      port: 0,
      config: {
        api_url: service.http.url,
        ws_url: service.http.wsUrl,
        deposit_url: service.chainServices!.deposit.url,
        chain_rpc_url: chain.anvil.rpcUrl,
        chain_id: chain.info.chainId,
        token_address: chain.info.token,
        faucet: true
      }
    })
    cors.add(web.url)
    browser = await launchChromium()
  } catch (err) {
    await browser?.close()
    await web?.close()
    await service?.close()
    await chain.stop()
    rmSync(dataDir, { recursive: true, force: true })
    throw err
  }
  const s = service
  const w = web
  const b = browser
  return {
    chain,
    service: s,
    web: w,
    browser: b,
    apiUrl: s.http.url,
    close: async () => {
      await b.close().catch(() => {})
      await w.close()
      await s.close()
      await chain.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

export const admin = async (stand: Stand, path: string, body: unknown): Promise<any> => {
  const res = await fetch(`${stand.apiUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` }, body: JSON.stringify(body) })
  const json = (await res.json()) as unknown
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

export const getJson = async (stand: Stand, path: string): Promise<any> => (await fetch(`${stand.apiUrl}${path}`)).json()

/** Another participant, trading from Node with the same typed client. */
export const nodeTrader = async (stand: Stand, label: string, creditMicro: number): Promise<ApiClient> => {
  const c = new ApiClient(stand.apiUrl, keyFromLabel(label))
  const r = await c.register(label)
  if (r.status !== 200) throw new Error(`register ${label}: ${r.status}`)
  await admin(stand, "/v1/admin/credit", { user: c.user, amount_micro: creditMicro })
  return c
}

/** Polls `f` until it returns a non-undefined value (or throws after `timeoutMs` with the last value seen). */
export const waitFor = async <T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 250): Promise<T> => {
  const until = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await f()
      if (v !== undefined) return v
    } catch (err) {
      last = err
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last === undefined ? "" : ` (last error: ${String(last)})`}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

export const OUT_DIR = join(process.cwd(), "out", "web")

/** Desktop (1280×900) and phone (390×844) screenshots of the page as it is: out/web/<name>-{desktop,phone}.png. */
export const screenshots = async (page: Page, name: string): Promise<void> => {
  mkdirSync(OUT_DIR, { recursive: true })
  const size = page.viewportSize() ?? { width: 1280, height: 900 }
  await page.setViewportSize({ width: 1280, height: 900 })
  await page.screenshot({ path: join(OUT_DIR, `${name}-desktop.png`), fullPage: true })
  await page.setViewportSize({ width: 390, height: 844 })
  await page.waitForTimeout(150)
  await page.screenshot({ path: join(OUT_DIR, `${name}-phone.png`), fullPage: true })
  await page.setViewportSize(size)
}
