// Black-box harness: the real service on a free loopback port with a test
// clock, a known operator token, and clients with real Ed25519 keys.
import type { AbuseLimits } from "../../src/api/context.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { type Service, type ServiceConfig, type ServiceParts, startService } from "../../src/runtime/boot.ts"
import type { FaucetAccess } from "../../src/usecase/faucet.ts"
import { declaredApi } from "../../src/api/declaration/api.ts"
import { conformingFetch } from "./conformance.ts"

export const ADMIN_TOKEN = "test-admin-token"
export const ALLOWED_ORIGIN = "http://app.twinbook.test"
/** 2026-11-22T00:00:00Z: before every demo event's expiry. */
export const T0_MS = 1_795_305_600_000

export interface TestServer {
  readonly service: Service
  readonly url: string
  readonly wsUrl: string
  /** `fetch` that fails the test on any response that breaks the API declaration (test/support/conformance.ts). */
  readonly fetch: typeof fetch
  /** The test wall clock: it stamps commands and checks signed timestamps (docs/time.md). */
  nowMs: number
  /** The test monotonic clock: limits, TTLs and the LP worker's schedule. */
  readonly monoMs: number
  /** Moves both clocks, as time passing does. */
  advance(ms: number): void
  /** Steps the wall clock only (an NTP step): the monotonic clock stays. */
  stepWall(ms: number): void
  nowSec(): number
  client(label: string): ApiClient
  /** A registered client credited with `amountMicro` through the operator API. */
  funded(label: string, amountMicro?: number): Promise<ApiClient>
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>
  /** One LP-bot runner pass (bots, rewards config, samples and payouts) at the test clocks' time. */
  tick(): ReturnType<Service["lpBots"]["tick"]>
  /** Market ids of the demo catalogue by slug. */
  market(slug: string): string
  close(): Promise<void>
}

export const startTestServer = async (
  opts: {
    catalog?: boolean
    dataDir?: string
    startMs?: number
    limits?: Partial<AbuseLimits>
    log?: (event: Readonly<Record<string, unknown>>) => void
    /** The listening address; `::` listens dual-stack (IPv4 peers arrive as `::ffff:a.b.c.d`). */
    host?: string
    /** `POST /v1/dev/faucet`'s faucet (none: the route answers 404). */
    faucet?: FaucetAccess
    /** Further configuration (worker periods, hooks), over the harness's. */
    service?: Partial<ServiceConfig>
    /** Further context (a disk, a logger, the live monotonic clock), over the harness's test clocks and memory store. */
    parts?: Partial<ServiceParts>
  } = {}
): Promise<TestServer> => {
  const clock = { nowMs: opts.startMs ?? T0_MS, monoMs: 0 }
  const service = await startService(
    {
      host: opts.host ?? "127.0.0.1",
      port: 0,
      secret: new Uint8Array(32).fill(7),
      ...(opts.catalog === false ? {} : { catalog: demoCatalog() }),
      // Tests tick the LP-bot runner themselves (`t.tick()`), on the test clock.
      lpTickMs: 0,
      config: {
        adminToken: ADMIN_TOKEN,
        corsOrigins: new Set([ALLOWED_ORIGIN]),
        secureCookies: false,
        devCredit: true,
        rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 },
        ...(opts.limits === undefined ? {} : { limits: opts.limits })
      },
      ...(opts.log === undefined ? {} : { log: opts.log }),
      ...(opts.faucet === undefined ? {} : { faucet: opts.faucet }),
      onError: (err) => console.error(err),
      ...opts.service
    },
    {
      nowMs: () => clock.nowMs,
      monoMs: () => clock.monoMs,
      ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }),
      ...opts.parts
    }
  )
  const url = service.http.url
  const checkedFetch = conformingFetch(declaredApi(), url)
  const t: TestServer = {
    service,
    url,
    wsUrl: service.http.wsUrl,
    fetch: checkedFetch,
    get nowMs() {
      return clock.nowMs
    },
    // Setting the wall clock forward is time passing (the monotonic clock follows); back, a step.
    set nowMs(v: number) {
      clock.monoMs += Math.max(0, v - clock.nowMs)
      clock.nowMs = v
    },
    get monoMs() {
      return clock.monoMs
    },
    advance: (ms) => {
      clock.nowMs += ms
      clock.monoMs += ms
    },
    stepWall: (ms) => void (clock.nowMs += ms),
    nowSec: () => Math.floor(clock.nowMs / 1000),
    client: (label) => new ApiClient(url, keyFromLabel(label), checkedFetch as never, () => Math.floor(clock.nowMs / 1000)),
    funded: async (label, amountMicro = 1_000_000_000) => {
      const c = t.client(label)
      const reg = await c.register(label)
      if (reg.status !== 200) throw new Error(`register ${label}: ${reg.status} ${JSON.stringify(reg.body)}`)
      const credit = await t.admin("POST", "/v1/admin/credit", { user: c.user, amount_micro: amountMicro })
      if (credit.status !== 200) throw new Error(`credit ${label}: ${credit.status} ${JSON.stringify(credit.body)}`)
      return c
    },
    admin: async (method, path, body) => {
      const res = await checkedFetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? null : JSON.parse(text) }
    },
    tick: () => service.lpBots.tick(clock.monoMs),
    market: (slug) => {
      const found = service.exchange.catalog.market(slug)
      if (found === undefined) throw new Error(`no demo market ${slug}`)
      return found.market.market_id
    },
    close: () => service.close()
  }
  return t
}
