// Model-based test of the HTTP API in the simulated world (fast-check `fc.commands`):
// random sequences of orders, cancels and reads go through the in-process network to
// the real app; a simple model (the naive reference engine) predicts every answer,
// balance and position. A failure shrinks to a minimal command sequence.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { adminCall } from "../../sim/scenario/operator.ts"
import { dropOneFill } from "../../sim/testing/drop-fill.ts"
import { API, World } from "../../sim/world/world.ts"
import { ApiClient, type ApiResult } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import type { Command, EngineEvent } from "../../src/engine/types.ts"
import type { Exchange } from "../../src/service/exchange.ts"
import { ReferenceEngine } from "../reference/reference-engine.ts"

const USERS = 3
const MARKETS = 2
const FUNDING_MICRO = 200_000_000

interface Real {
  world: World
  clients: ApiClient[]
  markets: string[]
}

class Model {
  readonly ref = new ReferenceEngine()
  private seq = 0
  apply(cmd: Record<string, unknown>, tsSec: number): EngineEvent[] {
    return this.ref.apply({ ...cmd, seq: ++this.seq, tsSec } as unknown as Command)
  }
}

/** Sends through the simulated network and runs virtual time until the answer arrives. */
const roundTrip = async <T>(world: World, send: () => Promise<ApiResult<T>>): Promise<ApiResult<T>> => {
  const pending = send()
  await world.scheduler.run(world.scheduler.nowMs() + 50)
  return pending
}

const setup = async (tamper?: (x: Exchange) => void): Promise<{ model: Model; real: Real }> => {
  const world = new World({ seed: "model", startSec: 1_767_225_600, devCredit: true, network: { latencyMinMs: 1, latencyMaxMs: 5, dropPct: 0, responseDropPct: 0, timeoutMs: 5_000 }, ...(tamper === undefined ? {} : { tamper }) })
  const model = new Model()
  const now = () => world.scheduler.nowSec()
  const markets: string[] = []
  for (let i = 0; i < MARKETS; i++) {
    const res = await adminCall(world, "/v1/events", { question: `Model market ${i}?`, category: "Culture", slug: `model-${i}`, expiry: now() + 86_400 * 30 })
    const id = JSON.parse(res.body).outcomes[0].market_id as string
    markets.push(id)
    model.apply({ type: "create_market", marketId: id, takerFeeBps: world.exchange.engine.markets.get(id)!.takerFeeBps }, now())
  }
  const clients: ApiClient[] = []
  for (let u = 0; u < USERS; u++) {
    const c = new ApiClient(API, keyFromLabel(`model-user-${u}`), world.network.fetchFor(`10.0.0.${u}`), now)
    expect((await roundTrip(world, () => c.register())).status).toBe(200)
    await adminCall(world, "/v1/admin/credit", { user: c.user, amount_micro: FUNDING_MICRO })
    model.apply({ type: "credit", user: c.user, amountMicro: FUNDING_MICRO, ref: "fund" }, now())
    clients.push(c)
  }
  return { model, real: { world, clients, markets } }
}

/** Engine reasons the route passes through as the error code unchanged. */
const PASSED_THROUGH = new Set(["insufficient_balance", "insufficient_shares", "would_cross", "fok_unfilled", "dust_order", "nonce_stale"])

class Place implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly u: number,
    readonly m: number,
    readonly side: "buy" | "sell",
    readonly outcome: "yes" | "no",
    readonly price: number,
    readonly size: number,
    readonly orderType: "gtc" | "ioc" | "fok" | "post_only"
  ) {}
  check = () => true
  async run(model: Model, real: Real): Promise<void> {
    const c = real.clients[this.u]!
    const marketId = real.markets[this.m]!
    const res = await roundTrip(real.world, () => c.placeOrder({ market_id: marketId, side: this.side, outcome: this.outcome, price: this.price, size: this.size, order_type: this.orderType }))
    const events = model.apply(
      { type: "place_order", user: c.user, marketId, side: this.side, outcome: this.outcome, priceBps: this.price, size: this.size, orderType: this.orderType, nonce: res.status === 200 || res.status >= 400 ? lastNonce(c) : 0 },
      real.world.scheduler.nowSec()
    )
    const first = events[0]!
    if (first.type === "rejected") {
      expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400)
      if (PASSED_THROUGH.has(first.reason)) expect(res.body.error).toBe(first.reason)
      return
    }
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    if (first.type !== "order_accepted") throw new Error(`model answered ${first.type}`)
    const fills = events.filter((e) => e.type === "fill")
    expect(res.body.order_id).toBe(first.orderId)
    expect(res.body.fills.length).toBe(fills.length)
    expect(res.body.remaining).toBe(this.size - fills.reduce((n, f) => n + (f.type === "fill" ? f.size : 0), 0))
  }
  toString = () => `Place(u${this.u} m${this.m} ${this.side} ${this.outcome} ${this.price}x${this.size} ${this.orderType})`
}

/** The client numbers its orders; the model must see the nonce the client signed. */
const lastNonce = (c: ApiClient): number => (c as unknown as { nonce: number }).nonce

class Cancel implements fc.AsyncCommand<Model, Real> {
  constructor(readonly u: number, readonly pick: number) {}
  check = () => true
  async run(model: Model, real: Real): Promise<void> {
    const c = real.clients[this.u]!
    const mine = model.ref.resting.filter((o) => o.user === c.user)
    const orderId = mine.length === 0 ? 999_999 : mine[this.pick % mine.length]!.id
    const res = await roundTrip(real.world, () => c.cancel(orderId))
    const events = model.apply({ type: "cancel_order", user: c.user, orderId }, real.world.scheduler.nowSec())
    expect(res.status === 200).toBe(events[0]!.type === "order_cancelled")
  }
  toString = () => `Cancel(u${this.u} #${this.pick})`
}

class CancelAll implements fc.AsyncCommand<Model, Real> {
  constructor(readonly u: number) {}
  check = () => true
  async run(model: Model, real: Real): Promise<void> {
    const c = real.clients[this.u]!
    const res = await roundTrip(real.world, () => c.cancelAll())
    const events = model.apply({ type: "cancel_all", user: c.user }, real.world.scheduler.nowSec())
    expect(res.status).toBe(200)
    expect(res.body.cancelled).toBe(events.filter((e) => e.type === "order_cancelled").length)
  }
  toString = () => `CancelAll(u${this.u})`
}

class CheckAccount implements fc.AsyncCommand<Model, Real> {
  constructor(readonly u: number, readonly m: number) {}
  check = () => true
  async run(model: Model, real: Real): Promise<void> {
    const c = real.clients[this.u]!
    const bal = await roundTrip(real.world, () => c.balance())
    const a = model.ref.acct(c.user)
    expect([bal.body.available, bal.body.locked]).toEqual([a.available, a.locked])
    const marketId = real.markets[this.m]!
    const pos = await roundTrip(real.world, () => c.request("GET", `/v1/position/${marketId}/${c.user}`))
    const p = model.ref.pos(c.user, marketId)
    expect([pos.body.yes, pos.body.no, pos.body.yes_locked, pos.body.no_locked]).toEqual([p.yes, p.no, p.yesLocked, p.noLocked])
  }
  toString = () => `CheckAccount(u${this.u} m${this.m})`
}

const commands = fc.commands(
  [
    fc
      .record({
        u: fc.nat(USERS - 1),
        m: fc.nat(MARKETS - 1),
        side: fc.constantFrom("buy" as const, "buy" as const, "buy" as const, "sell" as const),
        outcome: fc.constantFrom("yes" as const, "no" as const),
        price: fc.integer({ min: 30, max: 70 }).map((p) => p * 100),
        size: fc.integer({ min: 1, max: 30 }),
        orderType: fc.constantFrom("gtc" as const, "gtc" as const, "ioc" as const, "fok" as const, "post_only" as const)
      })
      .map((o) => new Place(o.u, o.m, o.side, o.outcome, o.price, o.size, o.orderType)),
    fc.tuple(fc.nat(USERS - 1), fc.nat(20)).map(([u, pick]) => new Cancel(u, pick)),
    fc.nat(USERS - 1).map((u) => new CancelAll(u)),
    fc.tuple(fc.nat(USERS - 1), fc.nat(MARKETS - 1)).map(([u, m]) => new CheckAccount(u, m))
  ],
  { maxCommands: 60, size: "large" }
)

describe("HTTP API against a model, in the simulated world", () => {
  it("every answer, balance and position matches the model", async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const { model, real } = await setup()
        await fc.asyncModelRun(() => ({ model, real }), cmds)
      }),
      { numRuns: 40, seed: 20261122 }
    )
  }, 120_000)

  it("a planted bug (one dropped fill) is found and shrunk to a short sequence", async () => {
    const result = await fc.check(
      fc.asyncProperty(commands, async (cmds) => {
        const { model, real } = await setup(dropOneFill(1))
        await fc.asyncModelRun(() => ({ model, real }), [...cmds, new CheckAccount(0, 0), new CheckAccount(1, 0), new CheckAccount(2, 0), new CheckAccount(0, 1), new CheckAccount(1, 1), new CheckAccount(2, 1)])
      }),
      { numRuns: 200, seed: 7 }
    )
    expect(result.failed).toBe(true)
    const shrunk = [...(result.counterexample![0] as Iterable<unknown>)].map(String)
    // Minimal: a resting order and the order that takes it.
    expect(shrunk.length).toBeLessThanOrEqual(3)
    expect(shrunk.filter((c) => c.startsWith("Place")).length).toBeGreaterThanOrEqual(1)
  }, 120_000)
})
