// Wall-clock steps over real HTTP (issue 20, docs/time.md): the test server has two clocks,
// a wall clock (`stepWall` moves it alone, as an NTP step does) and a monotonic one
// (`advance` moves both). Durations follow the monotonic clock, business time the journal,
// so a step neither throttles a client, nor keeps a stale read, nor pays rewards for time
// nobody quoted; reads use the clock the data carries; the step is noticed once.
import { afterEach, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { LIMITS } from "../../src/usecase/rate-limit.ts"
import { cross, get, ok } from "../support/reads.ts"
import { startTestServer, T0_MS, type TestServer } from "../support/server.ts"

const G7 = "g7-2027-prediction-markets"
const DAY0 = T0_MS / 1000 / 86_400
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

let open: TestServer[] = []
const server = async (opts: { log?: (event: Readonly<Record<string, unknown>>) => void; startMs?: number } = {}): Promise<TestServer> => {
  const t = await startTestServer(opts)
  open.push(t)
  return t
}
afterEach(async () => {
  for (const t of open.splice(0)) await t.close()
})

const bid = (c: ApiClient, price: number, size = 10) => c.placeOrder({ market_id: G7, side: "buy", outcome: "yes", price, size })

describe("rate limits run on the monotonic clock", () => {
  it("a 120 s backward step leaves an address that traded un-throttled", async () => {
    const t = await server()
    const alice = await t.funded("cs-rl-alice")
    for (let i = 0; i < 10; i++) expect((await bid(alice, 1000 + i)).status).toBe(200)
    t.stepWall(-120_000)
    t.advance(1_000)
    // Before: the bucket lost 120 s × 50/60 s of tokens and every order was 429 for a minute.
    for (let i = 0; i < 10; i++) expect((await bid(alice, 1100 + i)).status).toBe(200)
  })

  it("one request during a +8-day excursion leaves no debt once the clock comes back", async () => {
    const t = await server()
    const alice = await t.funded("cs-rl-bob")
    expect((await bid(alice, 1000)).status).toBe(200)
    t.stepWall(8 * DAY_MS)
    // Charged to the bucket; the session cookie has expired on the wall clock meanwhile (401).
    expect((await bid(alice, 1001)).status).toBe(401)
    t.stepWall(-8 * DAY_MS)
    t.advance(1_000)
    const r = await bid(alice, 1002)
    expect({ status: r.status, retry_after: r.body.retry_after }).toEqual({ status: 200, retry_after: undefined })
  })

  it("a client at its own rate is never refused across steps both ways", async () => {
    const t = await server()
    const alice = await t.funded("cs-rl-carol")
    const perOrderMs = (LIMITS.walletOrders.windowSec * 1000) / LIMITS.walletOrders.limit
    for (let i = 0; i < 120; i++) {
      if (i === 30) t.stepWall(-HOUR_MS)
      if (i === 60) t.stepWall(2 * HOUR_MS)
      if (i === 90) t.stepWall(-120_000)
      expect((await bid(alice, 100 + (i % 50))).status, `order ${i}`).toBe(200)
      t.advance(perOrderMs)
    }
  })
})

describe("the edge cache's TTL runs on the monotonic clock", () => {
  it("a book cached while the clock was an hour ahead is fresh once the clock comes back", async () => {
    const t = await server()
    const alice = await t.funded("cs-cache-alice")
    t.stepWall(HOUR_MS)
    const before = await get(t, `/v1/markets/${G7}/book`)
    expect(before.headers.get("x-cache")).toBe("MISS")
    t.stepWall(-HOUR_MS)
    expect((await bid(alice, 4000, 7)).status).toBe(200)
    t.advance(1_001) // past the book's 1 s TTL
    const after = await get(t, `/v1/markets/${G7}/book`)
    expect(after.headers.get("x-cache")).toBe("MISS")
    expect(after.body.bids).toEqual([{ price: 4000, size: 7 }])
  })

  it("trades are not frozen for the length of a backward step", async () => {
    const t = await server()
    const [maker, taker] = [await t.funded("cs-cache-maker"), await t.funded("cs-cache-taker")]
    await cross(maker, taker, G7, 5_000, 1, "yes")
    expect((await ok(t, `/v1/markets/${G7}/trades`)).total).toBe(1)
    await cross(maker, taker, G7, 5_100, 1, "yes")
    t.stepWall(-120_000)
    t.advance(3_001) // past the trades' 3 s TTL; before, the entry lived 120 s more
    expect((await ok(t, `/v1/markets/${G7}/trades`)).total).toBe(2)
  })
})

describe("reads use the clock of the data (journal time)", () => {
  it("the default candle window ends at journal time, so a backward step hides no bucket", async () => {
    const t = await server()
    const [maker, taker] = [await t.funded("cs-candle-maker"), await t.funded("cs-candle-taker")]
    t.advance(2 * HOUR_MS)
    await cross(maker, taker, G7, 5_000, 2, "yes")
    const lastTradeSec = t.nowSec()
    t.stepWall(-2 * HOUR_MS)
    const body = await ok(t, `/v1/markets/${G7}/candles?interval=1m`)
    expect(body.candles.map((c: { t: number }) => c.t)).toEqual([lastTradeSec - (lastTradeSec % 60)])
  })
})

describe("rewards follow real sampling", () => {
  const quoteBoth = async (t: TestServer) => {
    const [alice, bob] = [await t.funded("cs-rw-alice", 100_000_000), await t.funded("cs-rw-bob", 100_000_000)]
    for (const [c, price, size] of [[alice, 4950, 100], [bob, 4900, 50]] as const) {
      expect((await c.placeOrder({ market_id: G7, side: "buy", outcome: "yes", price, size })).status).toBe(200)
      expect((await c.placeOrder({ market_id: G7, side: "buy", outcome: "no", price, size })).status).toBe(200)
    }
    return { alice, bob }
  }
  const today = async (t: TestServer, c: ApiClient) => (await ok(t, `/v1/rewards/me?user=${c.user}`)).today

  it("a jump forward credits one sampling interval, never the skipped minutes", async () => {
    const t = await server()
    await t.tick() // configuration
    const { alice } = await quoteBoth(t)
    t.advance(60_000)
    await t.tick()
    const sampled = (await today(t, alice)).minutes_sampled
    t.stepWall(HOUR_MS)
    t.advance(60_000)
    await t.tick()
    await t.admin("POST", "/v1/admin/credit", { user: t.client("cs-rw-nobody").user, amount_micro: 1 }) // any record
    // Before: the next record credited the hour's 60 minutes at once.
    expect((await today(t, alice)).minutes_sampled).toBe(sampled + 1)
  })

  it("a jump of days neither closes the day early nor skips a day, and stepping back never pays twice", async () => {
    // From 23:50 UTC: the day ends when business time passes midnight, which it does at most twice as fast as real time.
    const t = await server({ startMs: T0_MS + DAY_MS - 10 * 60_000 })
    await t.tick()
    const { alice, bob } = await quoteBoth(t)
    for (let i = 0; i < 5; i++) {
      t.advance(60_000)
      await t.tick()
    }
    const balance = async (c: ApiClient) => (await c.balance()).body.total as number
    const [aliceBefore, bobBefore] = [await balance(alice), await balance(bob)]
    t.stepWall(2 * DAY_MS)
    t.advance(1_000)
    await t.admin("POST", "/v1/admin/credit", { user: t.client("cs-rw-nobody").user, amount_micro: 1 }) // any record
    // Before: the record jumped two days and day 0, 5 minutes before its end, was paid at once.
    expect((await t.tick()).paidDays).toEqual([])
    const paid: number[] = []
    for (let i = 0; i < 4; i++) {
      t.advance(60_000)
      paid.push(...(await t.tick()).paidDays)
    }
    // 4 minutes of real time at twice the rate: business time passed midnight, into day 1 — not day 2.
    expect(paid).toEqual([DAY0])
    expect((await balance(alice)) + (await balance(bob)) - aliceBefore - bobBefore).toBe(800_000_000)
    expect((await today(t, alice)).day_start).toBe((DAY0 + 1) * 86_400)
    t.stepWall(-2 * DAY_MS)
    for (let i = 0; i < 3; i++) {
      t.advance(60_000)
      expect((await t.tick()).paidDays).toEqual([])
    }
    expect(t.service.exchange.rewards.paid.map((p) => p.day)).toEqual([DAY0])
    // "Today" is still the journal's day: the samples after midnight went to day 1, none to a paid day.
    const now = await today(t, alice)
    expect(now.day_start).toBe((DAY0 + 1) * 86_400)
    expect(now.minutes_sampled).toBeGreaterThanOrEqual(3)
  })
})

describe("business time runs on with elapsed time across a step (issue 31, item 12)", () => {
  /** Trade times (seconds) of the market, oldest first. */
  const tradeTimes = async (t: TestServer): Promise<number[]> =>
    ((await ok(t, `/v1/markets/${G7}/trades?limit=100`)).trades as Array<{ id: number; time: number }>).sort((a, b) => a.id - b.id).map((x) => x.time)
  /** Crosses a trade every 10 s of elapsed time, `n` times. */
  const tradeEvery10s = async (t: TestServer, maker: ApiClient, taker: ApiClient, n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      t.advance(10_000)
      await cross(maker, taker, G7, 5_000 + 10 * i, 1, "yes")
    }
  }
  const gaps = (times: number[]): number[] => times.slice(1).map((v, i) => v - times[i]!)

  it("after a forward excursion, trades carry the time that passed, not one frozen second", async () => {
    const t = await server()
    const [maker, taker] = [await t.funded("cs-bt-maker"), await t.funded("cs-bt-taker")]
    await cross(maker, taker, G7, 4_000, 1, "yes")
    t.stepWall(HOUR_MS)
    t.advance(1_000)
    await t.admin("POST", "/v1/admin/credit", { user: t.client("cs-bt-nobody").user, amount_micro: 1 }) // a record during it
    t.stepWall(-HOUR_MS)
    await tradeEvery10s(t, maker, taker, 4)
    const times = await tradeTimes(t)
    // Before: the record during the excursion took the hour, and every trade after it carried that one second.
    for (const g of gaps(times).slice(1)) expect(g, times.join(" ")).toBeGreaterThanOrEqual(5)
    // Never jumped: the excursion's second ran at most twice as fast, so business time is within 2 s of the wall clock.
    expect(times.at(-1)!).toBeLessThanOrEqual(t.nowSec() + 2)
  })

  it("after a backward step, trades run on at half speed or more and meet the wall clock again", async () => {
    const t = await server()
    const [maker, taker] = [await t.funded("cs-bt2-maker"), await t.funded("cs-bt2-taker")]
    await cross(maker, taker, G7, 4_000, 1, "yes")
    t.stepWall(-120_000)
    await tradeEvery10s(t, maker, taker, 4)
    // Before: each trade carried the last record's second until the wall clock caught up, 120 s later.
    for (const g of gaps(await tradeTimes(t))) expect(g).toBeGreaterThanOrEqual(5)
    // 120 s ahead, losing at least 5 s per 10 s: met within 240 s of elapsed time.
    t.advance(240_000)
    await cross(maker, taker, G7, 4_100, 1, "yes")
    expect((await tradeTimes(t)).at(-1)).toBe(t.nowSec())
    expect((await t.admin("GET", "/v1/admin/clock")).body.wall_minus_journal_ms).toBe(0)
  })
})

describe("steps are noticed", () => {
  it("logs a step once and shows it on the operator status", async () => {
    const events: Array<Readonly<Record<string, unknown>>> = []
    const t = await server({ log: (e) => void events.push(e) })
    await t.tick()
    t.advance(1_000)
    t.stepWall(30_000) // within the forward threshold: drift, not a step
    await t.tick()
    expect(events.filter((e) => e.event === "clock_step")).toEqual([])
    t.stepWall(-120_000)
    t.advance(1_000)
    await t.tick()
    await t.tick()
    t.advance(1_000)
    await t.tick()
    const steps = events.filter((e) => e.event === "clock_step")
    expect(steps).toMatchObject([{ direction: "back", step_ms: -120_000 }])
    const status = await t.admin("GET", "/v1/admin/clock")
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({
      wall_ms: t.nowMs,
      steps_detected: 1,
      last_step: { direction: "back", step_ms: -120_000 },
      thresholds: { back_ms: 1_000, forward_ms: 60_000 }
    })
    expect(status.body.wall_minus_journal_ms).toBeLessThan(0)
    t.stepWall(2 * 60_000)
    expect((await t.admin("GET", "/v1/admin/clock")).body).toMatchObject({ steps_detected: 2, last_step: { direction: "forward", step_ms: 120_000 } })
  })

  it("a server whose clock is wrong refuses a fresh registration, and logs why", async () => {
    const events: Array<Readonly<Record<string, unknown>>> = []
    const t = await server({ log: (e) => void events.push(e) })
    const trueSec = t.nowSec()
    t.stepWall(-120_000)
    const c = t.client("cs-reg-alice")
    const r = await c.register("alice", trueSec)
    expect({ status: r.status, error: (r.body as { error?: string }).error }).toEqual({ status: 400, error: "stale_timestamp" })
    expect(events.filter((e) => e.event === "stale_timestamp")).toMatchObject([{ path: "/v1/builders/register", skew_sec: -120, max_skew_sec: 60 }])
  })
})
