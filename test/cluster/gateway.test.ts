// Gateways on the in-memory ports (src/runtime/gateway.ts): two gateways and a sequencer pair in
// one process on loopback HTTP and WebSocket. Signed orders through either gateway are journaled by
// the leader; a client's next read through the OTHER gateway sees its write (the typed client sends
// back `x-twinbook-seq` as `x-twinbook-min-seq`); a WebSocket client on one gateway gets the book
// frames of orders placed through the other; when the leader is deposed the gateways answer 503
// not_leader with retry advice until the standby leads, then carry on; every replica ends with the
// leader's state.
import { Effect, Exit, Layer, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { MemoryCommandBus } from "../../src/cluster/command-bus.ts"
import { MemoryLease, MemoryLog } from "../../src/cluster/memory.ts"
import { makeLogger } from "../../src/ops/log.ts"
import type { ServiceConfig } from "../../src/runtime/boot.ts"
import { sequencerRole } from "../../src/runtime/cluster.ts"
import { gatewayRole } from "../../src/runtime/gateway.ts"
import { inlineVerifierLayer, liveMonoClockLayer, loggerLayer, nodeTransportLayer, wallClockLayer } from "../../src/runtime/services.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { liveMonoClock } from "../../src/time/clock.ts"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { WsClient } from "../support/ws-client.ts"

const ADMIN = "gateway-admin-token"
const scopes: Scope.CloseableScope[] = []
const sockets: WsClient[] = []
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.close()))
  for (const s of scopes.splice(0).reverse()) await Effect.runPromise(Scope.close(s, Exit.void))
})

const config: ServiceConfig = {
  host: "127.0.0.1",
  port: 0,
  secret: new Uint8Array(32).fill(3),
  catalog: demoCatalog().slice(0, 3),
  lpTickMs: 0,
  config: { adminToken: ADMIN, corsOrigins: new Set(), secureCookies: false, devCredit: true, rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 } }
}

const inScope = <A>(name: string, lines: Array<Record<string, unknown>>, effect: Effect.Effect<A, never, any>): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const logger = makeLogger({ level: "info", format: "json", nowMs: () => Date.now(), write: (l) => void lines.push({ name, ...(JSON.parse(l) as Record<string, unknown>) }) })
  const layers = Layer.mergeAll(wallClockLayer(() => Date.now()), liveMonoClockLayer, inlineVerifierLayer, nodeTransportLayer, loggerLayer(logger))
  return Effect.runPromise(Scope.extend(effect.pipe(Effect.provide(layers)), scope) as Effect.Effect<A>)
}

const until = async <A>(what: string, probe: () => A | null | Promise<A | null>): Promise<A> => {
  for (let i = 0; i < 3_000; i++) {
    const v = await probe()
    if (v !== null) return v
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe("gateways on the in-memory ports", () => {
  it("orders through either gateway, read-your-writes through the other, feed frames across gateways, 503 then carry on across a failover", async () => {
    const log = new MemoryLog()
    // A lease of 6 s renewed every 2 s: a leader loses it to an event loop stalled for seconds on a loaded
    // machine, not to one slow tick. The standby is held back from the start, so it can take over only
    // when the test lets it, never in a stall before the partition (a run beside heavy load once saw
    // b lead early and the "meanwhile" order accepted with 200).
    const lease = new MemoryLease(liveMonoClock.monoMs, 6_000)
    lease.heldBack.add("b")
    const bus = new MemoryCommandBus()
    const lines: Array<Record<string, unknown>> = []
    const a = await inScope("a", lines, sequencerRole({ log, lease, bus, holder: "a", config, onLost: () => {} }))
    const bLeads = inScope("b", lines, sequencerRole({ log, lease, bus, holder: "b", config, onLost: () => {} }))
    const g1 = await inScope("g1", lines, gatewayRole({ log, bus, config }))
    const g2 = await inScope("g2", lines, gatewayRole({ log, bus, config }))
    const market = demoCatalog()[0]!.slug

    const alice = new ApiClient(g1.http.url, keyFromLabel("gw-alice"))
    expect((await alice.register("gw")).status).toBe(200)
    const credit = await fetch(`${g1.http.url}/v1/admin/credit`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ user: alice.user, amount_micro: 50_000_000 }) })
    expect(credit.status).toBe(200)
    const ws = await WsClient.open(g2.http.wsUrl)
    sockets.push(ws)
    await ws.subscribe(`book:${a.exchange.catalog.market(market)!.market.market_id}`)

    const placed = await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4200, size: 3 })
    expect(placed.status).toBe(200)
    const orderId = (placed.body as { order_id: number }).order_id
    // The same client's next read through the other gateway sees it.
    const onG2 = new ApiClient(g2.http.url, alice.key)
    onG2.seenSeq = alice.seenSeq
    expect(alice.seenSeq).toBeGreaterThan(0)
    const open = (await onG2.request("GET", `/v1/orders/all/${alice.user}`)).body as { orders: Array<{ id: number }> }
    expect(open.orders.map((o) => o.id)).toContain(orderId)
    // The feed on g2 tells of a book change made through g1.
    await ws.nextOf("book_update", (f) => JSON.stringify(f.snapshot).includes("4200"))

    // Failover: the leader is cut off from the lease (a partition) while the standby is still held back, so
    // for a while nobody leads: the gateways say 503 with advice. Then the standby takes over.
    lease.partitioned.add("a")
    await until("the leader to give up", () => (lines.some((l) => l.name === "a" && l.msg === "leadership lost") ? true : null))
    const meanwhile = await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4300, size: 1 })
    expect(meanwhile.status).toBe(503)
    expect(meanwhile.body).toMatchObject({ error: "not_leader", retry_after: 2 })
    lease.heldBack.delete("b")
    await until("the standby to lead", () => (lines.some((l) => l.name === "b" && l.msg === "leading") ? true : null))
    expect(lines).toContainEqual(expect.objectContaining({ name: "b", msg: "leading", term: 2 }))
    // 503 until the gateway has read the new term (it reads the log at once: a try or two); every 250 ms, so the tries stay
    // inside the wallet's order limit (50 a minute) even if it took seconds.
    let after = await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4300, size: 1 })
    for (let i = 0; after.status === 503 && i < 240; i++) {
      await new Promise((r) => setTimeout(r, 250))
      after = await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4300, size: 1 })
    }
    expect(after.status).toBe(200)
    // Every replica holds the leader's state.
    const leader = await bLeads
    await until("g1 to catch up", () => (g1.exchange.lastSeq === leader.exchange.lastSeq ? true : null))
    await until("g2 to catch up", () => (g2.exchange.lastSeq === leader.exchange.lastSeq ? true : null))
    expect(exchangeHash(g1.exchange)).toBe(exchangeHash(leader.exchange))
    expect(exchangeHash(g2.exchange)).toBe(exchangeHash(leader.exchange))
  }, 60_000)
})
