// WebSocket connects and disconnects in the service's log (src/api/node-server.ts, where the upgrade
// is handled), on the real service in process (startService, loopback HTTP, real `ws` clients)
// with a logger writing into an array: a connect, an upgrade over the per-address limit refused,
// a close by the server (over the subscription limit, 1008) named as the server's, and a client's
// own close with its code and reason.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { makeLogger } from "../../src/ops/log.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { demoCatalog } from "../../fixtures/catalog.ts"

const T0_MS = 1_795_305_600_000
const lines: Record<string, unknown>[] = []
let service: Service

beforeAll(async () => {
  service = await startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(9),
    lpTickMs: 0,
    catalog: demoCatalog(),
    config: {
      adminToken: "ws-logs-admin",
      corsOrigins: new Set<string>(),
      secureCookies: false,
      devCredit: true,
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 },
      limits: { wsConnectionsPerAddress: 1, wsSubscriptionsPerConnection: 1 }
    }
  }, {
    nowMs: () => T0_MS,
    logger: makeLogger({ level: "info", format: "json", nowMs: () => T0_MS, write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) })
  })
})
afterAll(() => service?.close())

const open = async (): Promise<{ ws: WebSocket; closed: Promise<{ code: number; reason: string }> }> => {
  const ws = new WebSocket(service.http.wsUrl)
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })))
  await new Promise<void>((resolve, reject) => ws.once("open", () => resolve()).once("error", reject))
  return { ws, closed }
}
const logged = async (msg: string, n: number): Promise<Record<string, unknown>[]> => {
  // Until the lines are there (the test's own timeout bounds it): the event, never a time.
  while (lines.filter((l) => l.msg === msg).length < n) await new Promise((r) => setTimeout(r, 10))
  return lines.filter((l) => l.msg === msg)
}

describe("WebSocket lines", () => {
  it("log a connect, a refusal over the address limit, a server's close and a client's close", async () => {
    const first = await open()
    expect((await logged("ws connected", 1))[0]).toMatchObject({ level: "info", address: "127.0.0.1", connections: 1 })

    // One connection per address here: the second upgrade is closed at once with 1008.
    const second = await open()
    expect((await second.closed).code).toBe(1008)
    expect((await logged("ws refused", 1))[0]).toMatchObject({ level: "info", address: "127.0.0.1", code: 1008, reason: expect.stringContaining("too many connections") })

    // One subscription per connection: a second channel gets the connection closed by the server.
    first.ws.send(JSON.stringify({ type: "subscribe", channel: "book:g7-2027-prediction-markets" }))
    first.ws.send(JSON.stringify({ type: "subscribe", channel: "book:btc-above-120k-2027-03-31" }))
    expect((await first.closed).code).toBe(1008)
    expect((await logged("ws disconnected", 1))[0]).toMatchObject({ level: "info", address: "127.0.0.1", closed_by: "server", code: 1008, reason: expect.stringContaining("too many subscriptions"), connections: 0 })

    // The address is free again; this client leaves on its own.
    const third = await open()
    third.ws.close(1000, "bye")
    await third.closed
    expect((await logged("ws disconnected", 2))[1]).toMatchObject({ closed_by: "client", code: 1000, reason: "bye", connections: 0 })
    expect(await logged("ws connected", 2)).toHaveLength(2) // the refused upgrade is not counted as connected
  })
})
