// The simulator's kernel: the scheduler's ordering and virtual time, seeded streams,
// and the in-process network's losses.
import { describe, expect, it } from "vitest"
import type { App } from "../../src/api/app.ts"
import { Clock, Effect, Fiber } from "effect"
import { schedulerClock } from "../../sim/world/clock.ts"
import { SimNetwork, SimTimeout } from "../../sim/world/network.ts"
import { Rng } from "../../sim/world/random.ts"
import { Scheduler } from "../../sim/world/scheduler.ts"

describe("Scheduler", () => {
  it("runs events in time order, same-time events in scheduling order, and moves only virtual time", async () => {
    const s = new Scheduler(1_000)
    const seen: string[] = []
    s.at(3_000, () => seen.push(`c@${s.nowMs()}`))
    s.at(2_000, () => seen.push(`a@${s.nowMs()}`))
    s.at(2_000, () => seen.push(`b@${s.nowMs()}`))
    const cancelled = s.at(2_500, () => seen.push("never"))
    cancelled.cancel()
    await s.run(10_000)
    expect(seen).toEqual(["a@2000", "b@2000", "c@3000"])
    expect(s.nowMs()).toBe(10_000)
  })

  it("lets async work started by an event finish at that event's virtual time", async () => {
    const s = new Scheduler(0)
    const times: number[] = []
    s.at(100, () => {
      void (async () => {
        await Promise.resolve()
        await Promise.resolve()
        times.push(s.nowMs())
        await s.sleep(50)
        times.push(s.nowMs())
      })()
    })
    s.at(101, () => times.push(-s.nowMs()))
    await s.run(1_000)
    expect(times).toEqual([100, -101, 150])
  })

  it("every() repeats until cancelled; the step callback can stop the run", async () => {
    const s = new Scheduler(0)
    let n = 0
    const h = s.every(10, () => n++)
    await s.run(55)
    expect(n).toBe(5)
    h.cancel()
    await s.run(200)
    expect(n).toBe(5)
    s.every(1, () => {})
    await s.run(10_000, (now) => now < 300)
    expect(s.nowMs()).toBe(300)
  })
})

describe("Rng", () => {
  it("is a pure function of its seed, and forks are independent of draw order", () => {
    const a = new Rng("x")
    const b = new Rng("x")
    expect(Array.from({ length: 5 }, () => a.nextU32())).toEqual(Array.from({ length: 5 }, () => b.nextU32()))
    const c = new Rng("x")
    c.next()
    expect(c.fork("agents").next()).toBe(new Rng("x").fork("agents").next())
    expect(new Rng("y").next()).not.toBe(new Rng("x").next())
  })

  it("stays in range", () => {
    const r = new Rng("range")
    for (let i = 0; i < 10_000; i++) {
      const v = r.int(3, 7)
      expect(v >= 3 && v <= 7 && Number.isInteger(v)).toBe(true)
      const f = r.next()
      expect(f >= 0 && f < 1).toBe(true)
    }
  })
})

describe("SimNetwork", () => {
  const echo: App = async (req) => ({ status: 200, headers: { "x-path": req.path }, body: JSON.stringify({ ip: req.ip, q: req.query.get("q") }) })

  it("delivers after latency, with headers and body", async () => {
    const s = new Scheduler(0)
    const net = new SimNetwork(s, new Rng("n"), { latencyMinMs: 10, latencyMaxMs: 10, dropPct: 0, responseDropPct: 0, timeoutMs: 1_000 })
    net.route("api", echo)
    let got: unknown = null
    let at = 0
    void net.fetchFor("1.2.3.4")("http://api/v1/x?q=7").then(async (r) => {
      at = s.nowMs()
      got = { status: r.status, path: r.headers.get("X-Path"), body: await r.json() }
    })
    await s.run(5_000)
    expect(got).toEqual({ status: 200, path: "/v1/x", body: { ip: "1.2.3.4", q: "7" } })
    expect(at).toBe(20)
  })

  it("a dropped request or response becomes a timeout; a cut loses everything in flight", async () => {
    const s = new Scheduler(0)
    let served = 0
    const net = new SimNetwork(s, new Rng("d"), { latencyMinMs: 10, latencyMaxMs: 10, dropPct: 0, responseDropPct: 100, timeoutMs: 500 })
    net.route("api", async (req) => {
      served++
      return echo(req)
    })
    const outcomes: string[] = []
    const send = () => void net.fetchFor("ip")("http://api/").then(() => outcomes.push("ok"), (e) => outcomes.push(e instanceof SimTimeout ? `timeout@${s.nowMs()}` : "other"))
    send()
    await s.run(1_000)
    expect(outcomes).toEqual(["timeout@500"])
    expect(served).toBe(1) // the server acted; the client cannot know

    net.params = { ...net.params, responseDropPct: 0 }
    send()
    s.after(5, () => net.cut())
    await s.run(3_000)
    expect(outcomes[1]).toMatch(/^timeout@/)
    expect(served).toBe(1)
  })
})

describe("schedulerClock", () => {
  it("is an Effect Clock on virtual time: reads it, and sleeps until the scheduler gets there", async () => {
    const s = new Scheduler(5_000)
    const clock = schedulerClock(s)
    const program = Effect.gen(function* () {
      const before = yield* Clock.currentTimeMillis
      yield* Effect.sleep("10 seconds")
      return [before, yield* Clock.currentTimeMillis] as const
    }).pipe(Effect.withClock(clock))
    const fiber = Effect.runFork(program)
    await s.run(14_000)
    expect(fiber.unsafePoll()).toBeNull() // 9 s of virtual time passed: still asleep
    await s.run(15_000)
    expect(await Effect.runPromise(Fiber.join(fiber))).toEqual([5_000, 15_000])
  })
})
