// The sequencer role of the real service (src/runtime/cluster.ts) on the in-memory ports, two in
// one process on loopback HTTP: the leader serves the API; the standby answers health 200, ready
// 503 and every other route 503 not_leader with retry advice while its exchange follows hot; when
// the leader's lease lapses on the server (a partition: it is alive but deposed), it answers 503
// not_leader at once and acknowledges nothing more, the standby takes over on its own port and the
// same clients carry on there with every acknowledged order in place.
import { Effect, Exit, Layer, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import type { LeadershipLost } from "../../src/cluster/log-journal.ts"
import { MemoryLease, MemoryLog } from "../../src/cluster/memory.ts"
import { makeLogger } from "../../src/ops/log.ts"
import type { RunningService } from "../../src/runtime/boot.ts"
import { sequencerRole } from "../../src/runtime/cluster.ts"
import { inlineVerifierLayer, liveMonoClockLayer, loggerLayer, nodeTransportLayer, wallClockLayer } from "../../src/runtime/services.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { liveMonoClock } from "../../src/time/clock.ts"
import { demoCatalog } from "../../fixtures/catalog.ts"

const T0_MS = 1_795_305_600_000
const ADMIN = "role-admin-token"
const scopes: Scope.CloseableScope[] = []
afterEach(async () => {
  for (const s of scopes.splice(0).reverse()) await Effect.runPromise(Scope.close(s, Exit.void))
})

const start = (holder: string, log: MemoryLog, lease: MemoryLease, lines: Array<Record<string, unknown>>, lost: LeadershipLost[]): Promise<RunningService> => {
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const logger = makeLogger({ level: "info", format: "json", nowMs: () => T0_MS, write: (l) => void lines.push({ holder, ...(JSON.parse(l) as Record<string, unknown>) }) })
  // The real wall clock: the clients sign their own real time.
  const layers = Layer.mergeAll(wallClockLayer(() => Date.now()), liveMonoClockLayer, inlineVerifierLayer, nodeTransportLayer, loggerLayer(logger))
  const role = sequencerRole({
    log,
    lease,
    holder,
    onLost: (err) => void lost.push(err),
    config: {
      host: "127.0.0.1",
      port: 0,
      secret: new Uint8Array(32).fill(9),
      catalog: demoCatalog().slice(0, 3),
      lpTickMs: 0,
      config: { adminToken: ADMIN, corsOrigins: new Set(), secureCookies: false, devCredit: true, rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 } }
    }
  })
  return Effect.runPromise(Scope.extend(role.pipe(Effect.provide(layers)), scope))
}

const until = async <A>(what: string, probe: () => A | null | Promise<A | null>): Promise<A> => {
  for (let i = 0; i < 2_000; i++) {
    const v = await probe()
    if (v !== null) return v
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe("the sequencer role on in-memory ports", () => {
  it("standby answers 503 with retry advice and follows hot; a deposed leader answers 503 at once; the standby takes over with every acknowledged order", async () => {
    const log = new MemoryLog()
    const lease = new MemoryLease(liveMonoClock.monoMs, 1_500)
    const lines: Array<Record<string, unknown>> = []
    const lost: LeadershipLost[] = []
    const a = await start("a", log, lease, lines, lost)
    const bStarted = start("b", log, lease, lines, lost)
    const standbyUrl = await until("the standby's line", () => (lines.find((l) => l.holder === "b" && l.msg === "standby")?.url as string | undefined) ?? null)

    const alice = new ApiClient(a.http.url, keyFromLabel("role-alice"))
    const bob = new ApiClient(a.http.url, keyFromLabel("role-bob"))
    for (const c of [alice, bob]) {
      expect((await c.register("role")).status).toBe(200)
      const credit = await fetch(`${a.http.url}/v1/admin/credit`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ user: c.user, amount_micro: 50_000_000 }) })
      expect(credit.status).toBe(200)
    }
    const market = demoCatalog()[0]!.slug
    const acked: number[] = []
    for (let i = 0; i < 5; i++) {
      const res = await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4000 + i * 10, size: 1 })
      expect(res.status).toBe(200)
      acked.push((res.body as { order_id: number }).order_id)
    }

    // The leader is ready, and says it keeps no history store (the log is the journal).
    const ready = await fetch(`${a.http.url}/v1/ready`)
    expect(ready.status).toBe(200)
    expect(((await ready.json()) as { checks: { history: { detail: string } } }).checks.history.detail).toContain("cluster mode")
    // The standby: alive, not ready, and not the leader, with advice; its exchange is the leader's, hot.
    expect((await fetch(`${standbyUrl}/v1/health`)).status).toBe(200)
    expect((await fetch(`${standbyUrl}/v1/ready`)).status).toBe(503)
    const refused = await new ApiClient(standbyUrl, keyFromLabel("role-alice")).placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4100, size: 1, nonce: 999_999 })
    expect(refused.status).toBe(503)
    expect(refused.body).toMatchObject({ error: "not_leader", retry_after: 2 })
    const seqOf = async (url: string) => ((await (await fetch(`${url}/v1/health`)).json()) as { seq: number }).seq
    await until("the standby to catch up", async () => ((await seqOf(standbyUrl)) === a.exchange.lastSeq ? true : null))

    // The leader is cut off from the lease (a partition): it learns at its next renewal.
    lease.lapse()
    await until("the leader to learn it lost", () => (lost.length > 0 ? true : null))
    expect(lost[0]).toMatchObject({ term: 1, reason: "lease_lapsed" })
    const late = await alice.placeOrder({ market_id: market, side: "buy", outcome: "yes", price: 4500, size: 1 })
    expect(late.status).toBe(503)
    expect(late.body).toMatchObject({ error: "not_leader", retry_after: 2 })
    expect((await fetch(`${a.http.url}/v1/health`)).status).toBe(200)
    expect(lines).toContainEqual(expect.objectContaining({ holder: "a", msg: "leadership lost", level: "error", term: 1, reason: "lease_lapsed" }))

    // The standby leads, with every acknowledged order, and takes new ones.
    const b = await bStarted
    expect(lines).toContainEqual(expect.objectContaining({ holder: "b", msg: "leading", term: 2 }))
    const openIds = ((await (await fetch(`${b.http.url}/v1/orders/all/${alice.user}`)).json()) as { orders: Array<{ id: number }> }).orders.map((o) => o.id)
    for (const id of acked) expect(openIds).toContain(id)
    const onB = new ApiClient(b.http.url, keyFromLabel("role-bob"))
    expect((await onB.register("role")).status).toBe(200)
    expect((await onB.placeOrder({ market_id: market, side: "buy", outcome: "no", price: 6000, size: 1 })).status).toBe(200)
    // No two holders in one term; the leader's state is a replay of the log.
    const terms = new Map<number, Set<string>>()
    for (const batch of log.batches) terms.set(batch.term, (terms.get(batch.term) ?? new Set()).add(batch.holder))
    expect([...terms].map(([t, h]) => [t, [...h]])).toEqual([
      [1, ["a"]],
      [2, ["b"]]
    ])
    expect(exchangeHash(b.exchange)).toBe(exchangeHash(replayLog(log)))
  }, 60_000)
})

import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
const replayLog = (log: MemoryLog): Exchange => {
  const x = new Exchange(() => T0_MS, memoryJournal())
  for (const b of log.batches) for (const r of b.records) x.apply(r)
  return x
}
