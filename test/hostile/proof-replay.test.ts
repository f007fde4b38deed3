// Session-proof replay (issue 31, item 11). SPEC §5 signs one message for registration (a 7-day
// session cookie) and for the `user:` channel; a proof seen once — on the wire, in a log, on a
// socket — could be sent again within its window. Each accepted proof is single-use across both
// routes (src/auth/session-proofs.ts; docs/decisions.md "Session proofs are single-use"): a
// replay is refused (`403 invalid_signature` at registration, `portfolio_error unauthorized` on
// the channel) and changes nothing, while the owner's fresh proofs keep working.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel, signSession, type UserKey } from "../../src/client/keys.ts"
import { call, registerBody } from "../support/raw-http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"

const G7 = "g7-2027-prediction-markets"
const ATTACKER = "127.0.0.9"

let t: TestServer
const sockets: WsClient[] = []

beforeAll(async () => {
  t = await startTestServer()
})
afterAll(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.close()))
  await t.close()
})

const openWs = async (from?: string): Promise<WsClient> => {
  const ws = await WsClient.open(t.wsUrl, null, undefined, from)
  sockets.push(ws)
  return ws
}

/** Registration as anyone may send it: no cookie. */
const register = (body: unknown) => call(t, "POST", "/v1/builders/register", { body })

const restingOrders = async (user: string): Promise<number> => (await call(t, "GET", `/v1/orders/all/${user}`)).body.total

/** A proof as a client signs it: the session message at `timestamp`. */
const proofAt = (key: UserKey, timestamp: number) => ({ signature: signSession(key, timestamp), timestamp })

const refusedAsUsed = (res: { status: number; headers: Headers; body: any }): void => {
  expect(res.status).toBe(403)
  expect(res.body).toMatchObject({ error: "invalid_signature", detail: expect.stringContaining("already used") })
  expect(res.headers.get("set-cookie")).toBeNull()
}

describe("a proof sent on the user: channel", () => {
  it("cannot register in its owner's name: no cookie, no rename, the owner's orders stay", async () => {
    const victim: ApiClient = await t.funded("replay-victim", 50_000_000)
    const order = await victim.placeOrder({ market_id: t.market(G7), side: "buy", outcome: "yes", price: 4000, size: 10 })
    expect(order.status).toBe(200)
    expect(await restingOrders(victim.user)).toBe(1)

    // The victim follows its portfolio from a device without the cookie: a signed proof (the
    // next second: the one it registered with is used).
    const proof = proofAt(victim.key, t.nowSec() + 1)
    const device = await openWs()
    await device.subscribe(`user:${victim.user}`, proof)
    expect((await device.nextOf("portfolio_snapshot")).state.open_orders).toHaveLength(1)

    // Whoever saw that frame replays it at registration, within the 60 s window.
    t.advance(30_000)
    refusedAsUsed(await register({ user: victim.user, name: "mallory", ...proof }))
    expect(t.service.exchange.builders.get(victim.user)?.name).toBe("replay-victim")
    expect(await restingOrders(victim.user)).toBe(1)

    // The victim's own fresh proofs still register, and still open the channel.
    const again = await register({ user: victim.user, name: "replay-victim", ...proofAt(victim.key, t.nowSec()) })
    expect(again.status).toBe(200)
    const other = await openWs()
    await other.subscribe(`user:${victim.user}`, proofAt(victim.key, t.nowSec() + 1))
  })

  it("opens the channel once: the same proof on another connection is refused", async () => {
    const owner = keyFromLabel("replay-ws-owner")
    const proof = proofAt(owner, t.nowSec())
    const first = await openWs()
    await first.subscribe(`user:${owner.user}`, proof)
    const replay = await openWs(ATTACKER)
    const refused = await replay.request({ type: "subscribe", channel: `user:${owner.user}`, ...proof }, (f) => f.type === "portfolio_error" || f.type === "subscribed")
    expect(refused).toEqual({ type: "portfolio_error", channel: `user:${owner.user}`, error: "unauthorized" })
    await replay.barrier()
    expect(replay.frames.filter((f) => f.type === "portfolio_snapshot")).toEqual([])
    // The first connection keeps its subscription.
    expect(t.service.hub.subscriptions).toBeGreaterThanOrEqual(1)
    expect(await first.barrier()).toMatchObject({ type: "pong" })
  })
})

describe("a registration's proof", () => {
  it("cannot register again (a rename) nor open the user: channel", async () => {
    const owner = keyFromLabel("replay-registered")
    const ts = t.nowSec()
    const body = registerBody(owner, ts, "owner-builder")
    const first = await register(body)
    expect(first.status).toBe(200)
    expect(first.headers.get("set-cookie")).toMatch(/^service_oracle_session=/)

    refusedAsUsed(await register({ ...body, name: "mallory" }))
    expect(t.service.exchange.builders.get(owner.user)?.name).toBe("owner-builder")

    const ws = await openWs(ATTACKER)
    const refused = await ws.request({ type: "subscribe", channel: `user:${owner.user}`, signature: body.signature, timestamp: ts }, (f) => f.type === "portfolio_error" || f.type === "subscribed")
    expect(refused).toEqual({ type: "portfolio_error", channel: `user:${owner.user}`, error: "unauthorized" })

    // Past the longest window the pair is forgotten, and the timestamp is stale everywhere anyway.
    t.advance(301_000)
    const stale = await register(body)
    expect(stale.status).toBe(400)
    expect(stale.body.error).toBe("stale_timestamp")
  })
})
