// GET /metrics on the real service (startService, loopback HTTP, a temp DATA_DIR, a real Anvil with
// the contracts deployed, real Ed25519 and EIP-191 signatures, a real WebSocket): every family is
// present, and a scripted session — registrations past the limit, orders (accepted and rejected),
// a fill, a WebSocket subscription, a deposit credited on chain, a snapshot — moves the ones it
// touches (values compared before and after); so do the deposit service's requests and rate limit,
// a server-managed LP bot started then paused on one-sided inventory, a withdrawal paid out on
// Anvil, and a WebSocket client that never reads (closed as a slow consumer). A second service in
// the same process has its own registry. Anvil is stopped by PID; afterAll proves none is left.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { ANVIL_KEYS, processAlive } from "../../src/chain/anvil.ts"
import type { Address } from "../../src/chain/chain.ts"
import { usdgAbi } from "../../src/chain/contracts.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { makeLogger } from "../../src/ops/log.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { type AnvilChain, anvilProcessesOn, startAnvilChain } from "../support/anvil-chain.ts"
import { lintExposition, promtool } from "../support/exposition-lint.ts"
import { delegatedSession, startBot, stopBot } from "../support/lp.ts"

/** Polls until `done` (the test's own timeout bounds it): waiting for the event, never for a time. */
const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((r) => setTimeout(r, 10))
}

const T0_MS = 1_795_305_600_000
const ADMIN = "metrics-admin-token"
const clock = { ms: T0_MS }
/** The monotonic clock runs with real time; `skipMs` jumps it (a minute passing for the rate limits). */
const mono = { skipMs: 0 }
const monoMs = () => performance.now() + mono.skipMs
let t: AnvilChain
let dataDir: string
let service: Service
const errors: unknown[] = []
/** The service's log lines (JSON, info and up), as it writes them. */
const logLines: Array<Record<string, unknown>> = []

const config = (registrationsPerMinute: number) => ({
  adminToken: ADMIN,
  corsOrigins: new Set<string>(),
  secureCookies: false,
  devCredit: true,
  rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 },
  limits: { registrationsPerMinute }
})

beforeAll(async () => {
  t = await startAnvilChain()
  dataDir = mkdtempSync(join(tmpdir(), "twinbook-metrics-"))
  service = await startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(3),
    catalog: demoCatalog(),
    historyFlushMs: 0,
    lpTickMs: 0,
    config: config(3),
    onError: (err) => void errors.push(err),
    onFatal: (err) => void errors.push(err),
    chain: { host: "127.0.0.1", depositPort: 0, confirmations: 0, pollMs: 0, minUsdgMicro: 1_000_000, maxPerTxMicro: 100_000_000, corsOrigins: new Set() }
  }, {
    nowMs: () => clock.ms,
    monoMs,
    dataDir,
    logger: makeLogger({ level: "info", format: "json", nowMs: () => clock.ms, write: (l) => void logLines.push(JSON.parse(l) as Record<string, unknown>) }),
    chain: t.chain
  })
}, 120_000)

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

type Samples = Map<string, number>

/** `name{a="x",b="y"} value` lines into a map keyed by the sample exactly as written. */
const parse = (text: string): Samples => {
  const out: Samples = new Map()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const cut = line.lastIndexOf(" ")
    const raw = line.slice(cut + 1)
    out.set(line.slice(0, cut), raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw))
  }
  return out
}
const scrape = async (url: string, token: string | null = ADMIN): Promise<{ status: number; type: string | null; samples: Samples; text: string }> => {
  const res = await fetch(`${url}/metrics`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } })
  const text = await res.text()
  return { status: res.status, type: res.headers.get("content-type"), samples: res.status === 200 ? parse(text) : new Map(), text }
}
/** A sample's value; 0 when absent (a labelled child not created yet). */
const v = (s: Samples, key: string): number => s.get(key) ?? 0

const admin = async (path: string, body: unknown) => {
  const res = await fetch(`${service.http.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as any }
}
const client = (label: string) => new ApiClient(service.http.url, keyFromLabel(label), fetch as never, () => Math.floor(clock.ms / 1000))

describe("GET /metrics", () => {
  it("is refused without the operator token (401 envelope) and served with it as Prometheus text", async () => {
    const anon = await scrape(service.http.url, null)
    expect(anon.status).toBe(401)
    expect(JSON.parse(anon.text)).toMatchObject({ error: "unauthorized" })
    expect((await scrape(service.http.url, "wrong")).status).toBe(401)
    const ok = await scrape(service.http.url)
    expect(ok.status).toBe(200)
    expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/)
    for (const family of [
      "twinbook_http_request_duration_seconds",
      "twinbook_orders_total",
      "twinbook_fills_total",
      "twinbook_fill_contracts_total",
      "twinbook_ws_connections",
      "twinbook_ws_subscriptions",
      "twinbook_ws_frames_sent_total",
      "twinbook_ws_slow_consumer_closes_total",
      "twinbook_ws_buffered_bytes",
      "twinbook_ws_limit_closes_total",
      "twinbook_journal_batch_records",
      "twinbook_journal_fsync_seconds",
      "twinbook_journal_last_seq",
      "twinbook_snapshot_age_seconds",
      "twinbook_chain_up",
      "twinbook_chain_head_block",
      "twinbook_chain_watcher_lag_blocks",
      "twinbook_chain_halted",
      "twinbook_deposits_in_flight",
      "twinbook_deposits_total",
      "twinbook_payouts_in_flight",
      "twinbook_payouts_total",
      "twinbook_lp_bots",
      "twinbook_rate_limit_hits_total",
      "twinbook_rate_limit_buckets",
      "twinbook_rate_limit_evictions_total",
      "twinbook_deposit_http_request_duration_seconds",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
      "nodejs_active_handles"
    ]) {
      expect(ok.text, family).toContain(`# TYPE ${family} `)
    }
  })

  it("moves with a scripted session: registrations, orders, a fill, a WebSocket subscriber, a deposit, a snapshot", async () => {
    const url = service.http.url
    const market = service.exchange.catalog.market("g7-2027-prediction-markets")!.market.market_id // no taker fee
    const before = (await scrape(url)).samples
    expect(v(before, "twinbook_snapshot_age_seconds")).toBe(Infinity)

    // Three registrations are allowed a minute from one address; the fourth is refused.
    const alice = client("metrics-alice")
    const bob = client("metrics-bob")
    const carol = client("metrics-carol")
    for (const c of [alice, bob, carol]) expect((await c.register()).status).toBe(200)
    expect((await client("metrics-dave").register()).status).toBe(429)
    for (const c of [alice, bob]) expect((await admin("/v1/admin/credit", { user: c.user, amount_micro: 100_000_000 })).status).toBe(200)

    // A WebSocket subscriber to the book: it receives `subscribed`, then the book's updates.
    const ws = new WebSocket(service.http.wsUrl)
    const frames: string[] = []
    ws.on("message", (d) => frames.push(d.toString()))
    await new Promise<void>((resolve, reject) => ws.once("open", () => resolve()).once("error", reject))
    ws.send(JSON.stringify({ type: "subscribe", channel: `book:${market}` }))
    await until(() => frames.length > 0) // the `subscribed` frame
    const subscribed = (await scrape(url)).samples
    expect(v(subscribed, "twinbook_ws_connections")).toBe(1)
    expect(v(subscribed, "twinbook_ws_subscriptions")).toBe(1)

    // Orders: a resting YES bid, a NO bid that crosses it (a mint fill), and one refused for want of funds.
    expect((await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4000, size: 10 })).status).toBe(200)
    const cross = await bob.placeOrder({ market_id: market, side: "buy", outcome: "no", price: 6000, size: 10 })
    expect(cross.status, JSON.stringify(cross.body)).toBe(200)
    expect((cross.body as { readonly fills: ReadonlyArray<unknown> }).fills).toHaveLength(1)
    const refused = await carol.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4000, size: 10 })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ error: "insufficient_balance" })

    // A deposit on the chain: alice links Anvil account 1, which sends USDG to its deposit address.
    const depositor = privateKeyToAccount(ANVIL_KEYS[1])
    expect((await alice.linkWallet(depositor.address, (message) => depositor.signMessage({ message }))).status).toBe(200)
    const addr = await fetch(`${service.chainServices!.deposit.url}/v1/deposit/native-address/${depositor.address}`)
    const deposit = ((await addr.json()) as { address: Address }).address
    await t.mint(t.account(1), 5_000_000n)
    await t.transfer(1, t.info.token, deposit, 5_000_000n)
    let credited = false
    for (let i = 0; i < 20 && !credited; i++) {
      clock.ms += 1_000
      await service.chainServices!.poll()
      credited = [...service.exchange.deposits.byKey.values()].some((d) => d.stage === "credited")
    }
    expect(credited).toBe(true)
    // The sweep is mined after its pass's scan, and under load after the next pass's too (run 54:
    // lag 1): passes run until one scans through the head, a bounded number of them.
    for (let pass = 0; pass < 10; pass++) {
      await service.chainServices!.poll()
      if (v((await scrape(url)).samples, "twinbook_chain_watcher_lag_blocks") === 0) break
    }
    await service.durable!.snapshot()

    const after = (await scrape(url)).samples
    const moved = (key: string): number => v(after, key) - v(before, key)
    expect(moved('twinbook_orders_total{result="accepted",reason="none"}')).toBe(2)
    expect(moved('twinbook_orders_total{result="rejected",reason="insufficient_balance"}')).toBe(1)
    expect(moved("twinbook_fills_total")).toBe(1)
    expect(moved("twinbook_fill_contracts_total")).toBe(10)
    expect(moved('twinbook_http_request_duration_seconds_count{method="POST",route="/v1/orders",status="200"}')).toBe(2)
    expect(moved('twinbook_http_request_duration_seconds_count{method="POST",route="/v1/builders/register",status="429"}')).toBe(1)
    expect(moved('twinbook_rate_limit_hits_total{bucket="ip_register"}')).toBe(1)
    expect(moved("twinbook_ws_frames_sent_total")).toBeGreaterThanOrEqual(2) // subscribed + book_update
    expect(frames.some((f) => f.includes('"book_update"'))).toBe(true)
    expect(moved('twinbook_deposits_total{stage="credited"}')).toBe(1)
    expect(v(after, 'twinbook_deposits_in_flight{stage="confirming"}')).toBe(0)
    // The deposit service's own port is metered too, in its own family (route template, status).
    expect(moved('twinbook_deposit_http_request_duration_seconds_count{method="GET",route="/v1/deposit/native-address/:user_address",status="200"}')).toBe(1)
    expect(moved("twinbook_journal_batch_records_count")).toBeGreaterThan(0)
    expect(moved("twinbook_journal_batch_records_sum")).toBeGreaterThanOrEqual(moved("twinbook_journal_batch_records_count"))
    expect(moved("twinbook_journal_fsync_seconds_count")).toBeGreaterThan(0)
    expect(moved("twinbook_journal_last_seq")).toBeGreaterThan(5)
    expect(v(after, "twinbook_snapshot_age_seconds")).toBeLessThan(Infinity)
    expect(v(after, "twinbook_chain_up")).toBe(1)
    expect(v(after, "twinbook_chain_head_block")).toBe(Number(await t.public.getBlockNumber()))
    expect(v(after, "twinbook_chain_watcher_lag_blocks")).toBe(0)
    expect(v(after, "twinbook_chain_halted")).toBe(0)
    expect(v(after, 'twinbook_payouts_in_flight{state="pending"}')).toBe(0)
    expect(v(after, 'twinbook_lp_bots{state="running"}')).toBe(0)

    ws.close()
    await until(() => service.hub.connections === 0)
    expect(v((await scrape(url)).samples, "twinbook_ws_connections")).toBe(0)
    expect(errors).toEqual([])
  }, 120_000)

  it("counts the deposit service's rate-limit refusals with the API's, and its 429s in its own family", async () => {
    const url = service.http.url
    const before = (await scrape(url)).samples
    const wallet = privateKeyToAccount(ANVIL_KEYS[1]).address // watched already: no journal write per request
    let refusedAt = 0
    // DEPOSIT_ADDRESS_LIMIT allows 30 a minute from one address; the next one is refused.
    for (let i = 1; i <= 60 && refusedAt === 0; i++) {
      const res = await fetch(`${service.chainServices!.deposit.url}/v1/deposit/native-address/${wallet}`)
      await res.arrayBuffer()
      if (res.status === 429) refusedAt = i
      else expect(res.status).toBe(200)
    }
    expect(refusedAt).toBeGreaterThan(1)
    const after = (await scrape(url)).samples
    const moved = (key: string): number => v(after, key) - v(before, key)
    expect(moved('twinbook_rate_limit_hits_total{bucket="ip_deposit_address"}')).toBe(1)
    expect(moved('twinbook_deposit_http_request_duration_seconds_count{method="GET",route="/v1/deposit/native-address/:user_address",status="429"}')).toBe(1)
    expect(moved('twinbook_deposit_http_request_duration_seconds_count{method="GET",route="/v1/deposit/native-address/:user_address",status="200"}')).toBe(refusedAt - 1)
    // The API's own family is not touched by the deposit service's requests.
    expect(after.has('twinbook_http_request_duration_seconds_count{method="GET",route="/v1/deposit/native-address/:user_address",status="200"}')).toBe(false)
  })

  it("moves the LP-bot gauges: a server-managed bot running, then one of its markets paused on one-sided inventory", async () => {
    const url = service.http.url
    const market = service.exchange.catalog.market("g7-2027-prediction-markets")!.market.market_id
    const tick = () => service.lpBots.tick(monoMs())
    mono.skipMs += 60_000 // the registration bucket (3 a minute) is full again
    const before = (await scrape(url)).samples
    expect(v(before, 'twinbook_lp_bots{state="running"}')).toBe(0)
    const funded = async (label: string) => {
      const c = client(label)
      expect((await c.register()).status).toBe(200)
      expect((await admin("/v1/admin/credit", { user: c.user, amount_micro: 1_000_000_000 })).status).toBe(200)
      return c
    }
    // A maker quoting around mid 5000 gives the bot a mid; LADDER then bids 4900 and 4800, 10 each.
    const mm = await funded("metrics-lp-mm")
    expect((await mm.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4700, size: 10 })).status).toBe(200)
    expect((await mm.placeOrder({ market_id: market, side: "buy", outcome: "no", price: 4700, size: 10 })).status).toBe(200)
    const lp = await funded("metrics-lp")
    const session = await delegatedSession(lp)
    expect((await startBot(lp, session.session_pub, [market])).status).toBe(200)
    await tick()
    const running = (await scrape(url)).samples
    expect(v(running, 'twinbook_lp_bots{state="running"}')).toBe(1)
    expect(v(running, 'twinbook_lp_bots{state="paused_markets"}')).toBe(0)

    // A taker sells 20 YES into both bids: the bot is long 20, over its skew tolerance (16), and pauses.
    const taker = await funded("metrics-lp-taker")
    const sold = await taker.placeOrder({ market_id: market, side: "buy", outcome: "no", price: 5200, size: 20, order_type: "ioc" })
    expect(sold.body).toMatchObject({ remaining: 0 })
    await tick()
    const paused = (await scrape(url)).samples
    expect(v(paused, 'twinbook_lp_bots{state="running"}')).toBe(1)
    expect(v(paused, 'twinbook_lp_bots{state="paused_markets"}')).toBe(1)

    expect((await stopBot(lp)).status).toBe(200)
    const stopped = (await scrape(url)).samples
    expect(v(stopped, 'twinbook_lp_bots{state="running"}')).toBe(0)
    expect(v(stopped, 'twinbook_lp_bots{state="paused_markets"}')).toBe(0)
  })

  it("moves the payouts gauge through a withdrawal paid on Anvil: pending, then confirmed", async () => {
    const url = service.http.url
    const before = (await scrape(url)).samples
    mono.skipMs += 60_000
    const payee = client("metrics-payee")
    expect((await payee.register()).status).toBe(200)
    expect((await admin("/v1/admin/credit", { user: payee.user, amount_micro: 10_000_000 })).status).toBe(200)
    const wallet = privateKeyToAccount(ANVIL_KEYS[2])
    expect((await payee.linkWallet(wallet.address, (message) => wallet.signMessage({ message }))).status).toBe(200)
    const requested = await payee.withdraw(1_000_000)
    expect(requested.status, JSON.stringify(requested.body)).toBe(200)
    const pending = (await scrape(url)).samples
    expect(v(pending, 'twinbook_payouts_in_flight{state="pending"}') - v(before, 'twinbook_payouts_in_flight{state="pending"}')).toBe(1)

    const confirmed = () => [...service.exchange.withdrawals.byId.values()].filter((w) => w.status === "confirmed").length
    const confirmedBefore = confirmed()
    for (let i = 0; i < 10 && confirmed() === confirmedBefore; i++) {
      clock.ms += 1_000
      await service.chainServices!.poll()
    }
    expect(confirmed()).toBe(confirmedBefore + 1)
    const after = (await scrape(url)).samples
    expect(v(after, 'twinbook_payouts_in_flight{state="pending"}')).toBe(v(before, 'twinbook_payouts_in_flight{state="pending"}'))
    expect(v(after, 'twinbook_payouts_in_flight{state="sent"}')).toBe(0)
    expect(v(after, 'twinbook_payouts_total{state="confirmed"}') - v(before, 'twinbook_payouts_total{state="confirmed"}')).toBe(1)
    const paid = await t.public.readContract({ address: t.info.token, abi: usdgAbi, functionName: "balanceOf", args: [wallet.address] })
    expect(paid).toBe(1_000_000n)
    // The payout's log lines name its transaction, the user and the amount (docs/metrics.md "Logs").
    const w = [...service.exchange.withdrawals.byId.values()].find((x) => x.user === payee.user)!
    expect(w.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const payout = { withdrawal: w.id, tx_hash: w.txHash, user: payee.user, amount_micro: 1_000_000 }
    expect(logLines.filter((l) => l.msg === "payout sent")).toContainEqual(expect.objectContaining({ level: "info", ...payout }))
    expect(logLines.filter((l) => l.msg === "payout confirmed")).toContainEqual(expect.objectContaining({ level: "info", ...payout }))
  }, 60_000)

  it("counts a slow consumer's close: a WebSocket client that never reads its frames", async () => {
    const url = service.http.url
    const before = (await scrape(url)).samples
    const ws = new WebSocket(service.http.wsUrl)
    await new Promise<void>((resolve, reject) => ws.once("open", () => resolve()).once("error", reject))
    ws.pause() // reads nothing from here on: the kernel's buffers fill, then the server's send buffer
    // Each frame names an unknown channel as long as the server echoes (128 characters): its error frame is ~260 bytes.
    const frame = JSON.stringify({ type: "subscribe", channel: "x".repeat(128) })
    const closesBefore = service.hub.slowConsumerCloses
    let sentFrames = 0
    // Bounded by frames, not time: far more answers than the loopback buffers and the 4 MiB limit hold together.
    while (service.hub.slowConsumerCloses === closesBefore && sentFrames < 400_000) {
      for (let i = 0; i < 256; i++) ws.send(frame)
      sentFrames += 256
      // The server reads one frame per connection per turn: wait while what was sent is not yet read.
      while (ws.bufferedAmount > 256 * 1024) await new Promise((r) => setTimeout(r, 5))
      await new Promise((r) => setImmediate(r))
    }
    expect(service.hub.slowConsumerCloses).toBe(closesBefore + 1)
    ws.terminate()
    const after = (await scrape(url)).samples
    expect(v(after, "twinbook_ws_slow_consumer_closes_total") - v(before, "twinbook_ws_slow_consumer_closes_total")).toBe(1)
    await until(() => service.hub.connections === 0)
    expect(v((await scrape(url)).samples, "twinbook_ws_connections")).toBe(0)
  }, 180_000) // bounded by frames; client and server share this process's CPU, and under load the loop took over 60 s (run 54)

  it("is lint-clean after the session: the built-in promtool checker, and promtool itself when on PATH", async () => {
    // Every family is present here (the chain's, the snapshot age, histograms with observations).
    const { text } = await scrape(service.http.url)
    expect(text).toContain("twinbook_chain_up ")
    expect(text).toContain('twinbook_payouts_total{state="confirmed"} ')
    expect(lintExposition(text)).toEqual([])
    const real = promtool(text)
    if (real === null) console.log("promtool is not on PATH: only the built-in checker (test/support/exposition-lint.ts) ran")
    else expect(real, real.output).toEqual({ code: 0, output: "" })
  })

  it("keeps one registry per service: a second service in this process counts only its own, and can be public", async () => {
    const fills = v((await scrape(service.http.url)).samples, "twinbook_fills_total")
    expect(fills).toBeGreaterThan(0)
    const other = await startService({
      host: "127.0.0.1",
      port: 0,
      secret: new Uint8Array(32).fill(4),
      lpTickMs: 0,
      config: config(30),
      ops: { metricsPublic: true }
    }, {
      nowMs: () => clock.ms
    })
    try {
      const own = await scrape(other.http.url, null)
      expect(own.status).toBe(200)
      expect(v(own.samples, "twinbook_fills_total")).toBe(0)
      expect(own.text).not.toContain('route="/v1/orders"')
      expect(own.text).not.toContain("twinbook_chain_up") // no chain configured: no chain families
      // The first service's counts are untouched by the second's scrape.
      expect(v((await scrape(service.http.url)).samples, "twinbook_fills_total")).toBe(fills)
    } finally {
      await other.close()
    }
  })
})
