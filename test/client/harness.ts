// The real service on loopback for the client's tests: HTTP, WebSocket and the deposit
// service on free ports, a test clock, and the in-memory deposit chain (SimChain) so
// deposits, wallet links and withdrawals run without Anvil (test/chain/e2e-anvil.test.ts
// covers the real chain). Clients are the real ApiClient over Node's fetch.
import type { Address } from "../../src/chain/chain.ts"
import { SimChain } from "../../src/chain/sim.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { demoCatalog } from "../../fixtures/catalog.ts"

export const ADMIN_TOKEN = "client-test-admin"
/** 2026-11-22T00:00:00Z, before every demo event's expiry. */
export const T0_MS = 1_795_305_600_000

export interface ClientHarness {
  readonly service: Service
  readonly chain: SimChain
  readonly url: string
  readonly wsUrl: string
  readonly depositUrl: string
  nowMs: number
  nowSec(): number
  advance(ms: number): void
  client(label: string): ApiClient
  funded(label: string, amountMicro?: number): Promise<ApiClient>
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>
  market(slug: string): string
  /** Mines `blocks` blocks, then runs the deposit watcher and the payout worker once each. */
  settle(blocks?: number): Promise<void>
  close(): Promise<void>
}

/** `corsOrigins`: the origins of pages that call the service from a browser (test/client/package.test.ts). */
export const startClientHarness = async (opts: { startMs?: number; corsOrigins?: ReadonlyArray<string> } = {}): Promise<ClientHarness> => {
  const corsOrigins = new Set(opts.corsOrigins ?? [])
  const clock = { ms: opts.startMs ?? T0_MS }
  const chain = new SimChain({ seed: 11, now: () => Math.floor(clock.ms / 1000) })
  const service = await startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(5),
    catalog: demoCatalog(),
    lpTickMs: 0,
    config: {
      adminToken: ADMIN_TOKEN,
      corsOrigins,
      secureCookies: false,
      devCredit: true,
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
    },
    onError: (err) => console.error(err),
    chain: { host: "127.0.0.1", depositPort: 0, confirmations: 0, pollMs: 0, minUsdgMicro: 1_000_000, maxPerTxMicro: 100_000_000, corsOrigins }
  }, {
    nowMs: () => clock.ms,
    // Limits and edge caches run on the same test clock: advancing it is waiting.
    monoMs: () => clock.ms,
    chain
  })
  const url = service.http.url
  const depositUrl = service.chainServices!.deposit.url
  const h: ClientHarness = {
    service,
    chain,
    url,
    wsUrl: service.http.wsUrl,
    depositUrl,
    get nowMs() {
      return clock.ms
    },
    set nowMs(v: number) {
      clock.ms = v
    },
    nowSec: () => Math.floor(clock.ms / 1000),
    advance: (ms) => void (clock.ms += ms),
    client: (label) => new ApiClient(url, keyFromLabel(label), fetch, () => Math.floor(clock.ms / 1000), { depositUrl, nowMs: () => clock.ms }),
    funded: async (label, amountMicro = 1_000_000_000) => {
      const c = h.client(label)
      const reg = await c.register(label)
      if (reg.status !== 200) throw new Error(`register ${label}: ${reg.status} ${JSON.stringify(reg.body)}`)
      const credit = await h.admin("POST", "/v1/admin/credit", { user: c.user, amount_micro: amountMicro })
      if (credit.status !== 200) throw new Error(`credit ${label}: ${credit.status}`)
      return c
    },
    admin: async (method, path, body) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? null : JSON.parse(text) }
    },
    market: (slug) => {
      const found = service.exchange.catalog.market(slug)
      if (found === undefined) throw new Error(`no demo market ${slug}`)
      return found.market.market_id
    },
    settle: async (blocks = 1) => {
      for (let i = 0; i < blocks; i++) {
        clock.ms += 2_000
        chain.mine()
        await service.chainServices!.watcher.poll()
        await service.chainServices!.payouts.poll()
      }
    },
    close: () => service.close()
  }
  return h
}

export type { Address }
