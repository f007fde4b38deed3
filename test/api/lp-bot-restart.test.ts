// A server-managed bot survives a restart (durable mode): its session, delegation,
// strategy, markets and the ids of its resting orders come back from snapshot + journal,
// the session key is re-derived from the server secret, and the next re-quote replaces
// exactly the orders placed before the restart.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { botStatus, delegatedSession, startBot } from "../support/lp.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const G7 = "g7-2027-prediction-markets"
const dirs: string[] = []
const servers: TestServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close().catch(() => {})
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const start = async (dataDir: string, startMs?: number): Promise<TestServer> => {
  const t = await startTestServer({ dataDir, ...(startMs === undefined ? {} : { startMs }) })
  servers.push(t)
  return t
}

describe("LP bot across a restart", () => {
  it("keeps running, re-derives its key and re-quotes over the orders it placed before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "twinbook-lp-restart-"))
    dirs.push(dir)
    const a = await start(dir)
    const alice = await a.funded("lpr-alice", 500_000_000)
    const mm = await a.funded("lpr-mm", 100_000_000)
    await mm.placeOrder({ market_id: G7, side: "buy", outcome: "yes", price: 4700, size: 10 })
    await mm.placeOrder({ market_id: G7, side: "buy", outcome: "no", price: 4700, size: 10 })
    const s = await delegatedSession(alice, 86_400)
    expect((await startBot(alice, s.session_pub, [G7])).status).toBe(200)
    expect(await a.tick()).toMatchObject({ placed: 4 })
    const before = (await alice.request("GET", `/v1/orders/all/${alice.user}`)).body.orders
    const statusBefore = (await botStatus(alice)).body
    const clock = a.nowMs
    await a.close()
    servers.splice(servers.indexOf(a), 1)
    const hashAfterClose = exchangeHash(a.service.exchange)

    const b = await start(dir, clock)
    expect(exchangeHash(b.service.exchange)).toBe(hashAfterClose)
    const alice2 = b.client("lpr-alice")
    expect((await alice2.register("lpr-alice")).status).toBe(200)
    expect((await botStatus(alice2)).body).toEqual(statusBefore)
    expect((await alice2.request("GET", `/v1/orders/all/${alice.user}`)).body.orders).toEqual(before)

    // Not due yet: the journaled strategy state remembers the last quote.
    b.advance(5_000)
    expect(await b.tick()).toMatchObject({ steps: 0, placed: 0 })
    b.advance(10_000)
    expect(await b.tick()).toMatchObject({ steps: 1, placed: 4, rejected: 0 })
    const after = (await alice2.request("GET", `/v1/orders/all/${alice.user}`)).body.orders
    expect(after.map((o: any) => [o.side, o.outcome, o.price])).toEqual(before.map((o: any) => [o.side, o.outcome, o.price]))
    expect(after.some((o: any) => before.some((p: any) => p.id === o.id))).toBe(false)

    // A stop after the restart cancels the re-quoted orders.
    expect((await alice2.request("POST", "/v1/lp-bot/stop", { user: alice.user, revoke_session: true })).body).toMatchObject({ cancelled_orders: 4, revoked_sessions: [s.session_pub] })
    await b.close()
    servers.splice(servers.indexOf(b), 1)
    const c = await start(dir, b.nowMs)
    expect((await botStatus(c.client("lpr-alice"))).body).toMatchObject({ status: "stopped", stop_reason: "user", open_orders: 0 })
    expect(await c.tick()).toMatchObject({ placed: 0 })
  })
})
