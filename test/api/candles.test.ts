// GET /v1/markets/{id}/candles over real HTTP: intervals, bucket alignment of
// `from` and `to`, the default span, the 1,500-bucket cap, NO-side fills in the
// YES series, and the empty series. Trades happen at chosen test-clock times.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { cross, expectError, get, ok } from "../support/reads.ts"
import { startTestServer, T0_MS, type TestServer } from "../support/server.ts"

/** 2026-11-22T00:00:00Z: a whole day, so every interval's buckets start here. */
const T0 = T0_MS / 1000
const DAY = 86_400

let t: TestServer
let maker: ApiClient
let taker: ApiClient
let market: string
/** Moves the test clock forward to T0 + `sec`. */
const at = (sec: number): void => {
  const target = T0_MS + sec * 1000
  if (target < t.nowMs) throw new Error("the test clock only moves forward")
  t.nowMs = target
}
const candles = (query: string): Promise<any> => ok(t, `/v1/markets/${market}/candles?${query}`)
const times = (body: any): number[] => body.candles.map((c: any) => c.t - T0)

beforeAll(async () => {
  t = await startTestServer()
  expect(T0 % DAY).toBe(0)
  maker = await t.funded("candle-maker")
  taker = await t.funded("candle-taker")
  market = t.market("g7-2027-prediction-markets")
  // Minute 0: YES 0.50 × 2, a NO-side fill at NO 3000 (= YES 0.70) × 3, YES 0.40 × 1.
  at(5)
  await cross(maker, taker, market, 5_000, 2, "yes")
  at(20)
  await cross(maker, taker, market, 7_000, 3, "no")
  at(40)
  await cross(maker, taker, market, 4_000, 1, "yes")
  // Minute 2: a NO-side fill at NO 4500 (= YES 0.55) × 4.
  at(130)
  await cross(maker, taker, market, 5_500, 4, "no")
  // Hour 1, minute 61: YES 0.62 × 2.
  at(3_700)
  await cross(maker, taker, market, 6_200, 2, "yes")
  // Day 1: NO 7000 (= YES 0.30) × 1.
  at(DAY + 10)
  await cross(maker, taker, market, 3_000, 1, "no")
})
afterAll(() => t.close())

describe("GET /v1/markets/{id}/candles", () => {
  it("1m, 5m, 1h and 1d series: o/h/l/c are YES probabilities in 0..1, v contracts, n trades", async () => {
    const window = `from=${T0}&to=${T0 + DAY + 59}`
    expect(await candles(`interval=1m&${window}`)).toEqual({
      market_id: market,
      interval: "1m",
      candles: [
        { t: T0, o: 0.5, h: 0.7, l: 0.4, c: 0.4, v: 6, n: 3 },
        { t: T0 + 120, o: 0.55, h: 0.55, l: 0.55, c: 0.55, v: 4, n: 1 },
        { t: T0 + 3_660, o: 0.62, h: 0.62, l: 0.62, c: 0.62, v: 2, n: 1 },
        { t: T0 + DAY, o: 0.3, h: 0.3, l: 0.3, c: 0.3, v: 1, n: 1 }
      ]
    })
    expect((await candles(`interval=5m&${window}`)).candles).toEqual([
      { t: T0, o: 0.5, h: 0.7, l: 0.4, c: 0.55, v: 10, n: 4 },
      { t: T0 + 3_600, o: 0.62, h: 0.62, l: 0.62, c: 0.62, v: 2, n: 1 },
      { t: T0 + DAY, o: 0.3, h: 0.3, l: 0.3, c: 0.3, v: 1, n: 1 }
    ])
    expect((await candles(`interval=1h&${window}`)).candles).toEqual([
      { t: T0, o: 0.5, h: 0.7, l: 0.4, c: 0.55, v: 10, n: 4 },
      { t: T0 + 3_600, o: 0.62, h: 0.62, l: 0.62, c: 0.62, v: 2, n: 1 },
      { t: T0 + DAY, o: 0.3, h: 0.3, l: 0.3, c: 0.3, v: 1, n: 1 }
    ])
    expect(await candles(`interval=1d&${window}`)).toEqual({
      market_id: market,
      interval: "1d",
      candles: [
        { t: T0, o: 0.5, h: 0.7, l: 0.4, c: 0.62, v: 12, n: 5 },
        { t: T0 + DAY, o: 0.3, h: 0.3, l: 0.3, c: 0.3, v: 1, n: 1 }
      ]
    })
  })

  it("a NO-side fill at price p counts as 10000 − p: the trade list shows the NO price, the candle the YES probability", async () => {
    const trades = await ok(t, `/v1/markets/${market}/trades?limit=200`)
    const noFills = trades.trades.filter((x: any) => x.time === T0 + 20 || x.time === T0 + DAY + 10)
    expect(noFills.map((x: any) => [x.price, x.size])).toEqual([
      [7_000, 1],
      [3_000, 3]
    ])
    const day1 = await candles(`interval=1m&from=${T0 + DAY}&to=${T0 + DAY}`)
    expect(day1.candles).toEqual([{ t: T0 + DAY, o: 0.3, h: 0.3, l: 0.3, c: 0.3, v: 1, n: 1 }])
  })

  it("from is aligned down to its bucket, to up (the bucket holding `to` is included)", async () => {
    expect(times(await candles(`interval=1m&from=${T0 + 59}&to=${T0 + 200}`))).toEqual([0, 120])
    expect(times(await candles(`interval=1m&from=${T0 + 60}&to=${T0 + 200}`))).toEqual([120])
    expect(times(await candles(`interval=1m&from=${T0}&to=${T0 + 119}`))).toEqual([0])
    expect(times(await candles(`interval=1m&from=${T0}&to=${T0 + 120}`))).toEqual([0, 120])
    expect(times(await candles(`interval=1m&from=${T0 + 120}&to=${T0 + 120}`))).toEqual([120])
    expect(times(await candles(`interval=1h&from=${T0 + 3_599}&to=${T0 + 3_600}`))).toEqual([0, 3_600])
    expect(times(await candles(`interval=1h&from=${T0 + 3_600}&to=${T0 + DAY - 1}`))).toEqual([3_600])
    expect(times(await candles(`interval=1d&from=${T0 + DAY - 1}&to=${T0 + DAY}`))).toEqual([0, DAY])
    // An empty or inverted window is an empty series.
    expect((await candles(`interval=1m&from=${T0 + 180}&to=${T0 + 3_599}`)).candles).toEqual([])
    expect((await candles(`interval=1m&from=${T0 + 200}&to=${T0 + 100}`)).candles).toEqual([])
  })

  it("from defaults to `to` minus 500 buckets; to defaults to now, its open bucket included", async () => {
    const B = T0 + 120
    expect(times(await candles(`interval=1m&to=${B + 500 * 60}`))).toEqual([120, 3_660])
    expect(times(await candles(`interval=1m&to=${B + 500 * 60 + 59}`))).toEqual([120, 3_660])
    expect(times(await candles(`interval=1m&to=${B + 501 * 60}`))).toEqual([3_660])
    expect(times(await candles(`interval=1h&to=${T0 + 500 * 3_600}`))).toEqual([0, 3_600, DAY])
    expect(times(await candles(`interval=1h&to=${T0 + 501 * 3_600}`))).toEqual([3_600, DAY])
    // now = T0 + 1 day + 10 s: the current minute is included; 500 minutes back excludes day 0.
    expect(t.nowSec()).toBe(T0 + DAY + 10)
    expect(times(await candles("interval=1m"))).toEqual([DAY])
    expect(times(await candles(`interval=1m&from=${T0}`))).toEqual([0, 120, 3_660, DAY])
    expect(times(await candles("interval=1d"))).toEqual([0, DAY])
    // The interval defaults to 1h.
    const dflt = await candles("")
    expect(dflt.interval).toBe("1h")
    expect(times(dflt)).toEqual([0, 3_600, DAY])
  })

  it("the span is capped at 1,500 buckets by trimming the oldest end", async () => {
    const B = T0 + 120
    // [B, B + 1500 min) is exactly 1,500 buckets (25 h, so day 1 is inside): B is kept, minute 0 is not.
    expect(times(await candles(`interval=1m&from=0&to=${B + 1_499 * 60}`))).toEqual([120, 3_660, DAY])
    // One bucket more and B is trimmed too; the newest end stays.
    expect(times(await candles(`interval=1m&from=0&to=${B + 1_500 * 60}`))).toEqual([3_660, DAY])
    expect(times(await candles(`interval=1m&from=${T0}&to=${T0 + 1_499 * 60}`))).toEqual([0, 120, 3_660, DAY])
    expect(times(await candles(`interval=1m&from=${T0}&to=${T0 + 1_500 * 60}`))).toEqual([120, 3_660, DAY])
    expect(times(await candles(`interval=5m&from=${T0}&to=${T0 + 1_499 * 300}`))).toEqual([0, 3_600, DAY])
    expect(times(await candles(`interval=5m&from=${T0}&to=${T0 + 1_500 * 300}`))).toEqual([3_600, DAY])
    expect(times(await candles(`interval=1d&from=0&to=${T0 + DAY}`))).toEqual([0, DAY])
    expect(times(await candles(`interval=1d&from=0&to=${T0 + 1_500 * DAY}`))).toEqual([DAY])
  })

  it("every o/h/l/c is within 0..1 and l ≤ o, c ≤ h", async () => {
    for (const iv of ["1m", "5m", "1h", "1d"]) {
      for (const c of (await candles(`interval=${iv}&from=0&to=${T0 + 2 * DAY}`)).candles) {
        for (const k of ["o", "h", "l", "c"]) {
          expect(c[k]).toBeGreaterThanOrEqual(0)
          expect(c[k]).toBeLessThanOrEqual(1)
        }
        expect(c.l).toBeLessThanOrEqual(Math.min(c.o, c.c))
        expect(c.h).toBeGreaterThanOrEqual(Math.max(c.o, c.c))
        expect(Number.isInteger(c.v) && Number.isInteger(c.n) && c.n >= 1).toBe(true)
      }
    }
  })

  it("an unsupported interval is 400 invalid_interval; malformed from/to are 400 invalid_query", async () => {
    for (const iv of ["2h", "1M", "60", "1w", "", "1H", "1m ", "constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expectError(await get(t, `/v1/markets/${market}/candles?interval=${encodeURIComponent(iv)}`), 400, "invalid_interval")
    }
    for (const q of ["from=yesterday", "to=1.5", "from=-1", `to=${T0}x`]) {
      expectError(await get(t, `/v1/markets/${market}/candles?interval=1m&${q}`), 400, "invalid_query")
    }
  })

  it("no trades gives candles: []; slugs resolve; unknown markets are 404", async () => {
    const quiet = t.market("doge-1-dollar-2027")
    for (const iv of ["1m", "5m", "1h", "1d"]) {
      expect(await ok(t, `/v1/markets/${quiet}/candles?interval=${iv}`)).toEqual({ market_id: quiet, interval: iv, candles: [] })
    }
    expect(await ok(t, "/v1/markets/doge-1-dollar-2027/candles?interval=1d&from=0")).toEqual({ market_id: quiet, interval: "1d", candles: [] })
    const bySlug = await ok(t, `/v1/markets/g7-2027-prediction-markets/candles?interval=1d&from=0&to=${T0 + DAY}`)
    expect(bySlug.market_id).toBe(market)
    expect(bySlug.candles).toHaveLength(2)
    expectError(await get(t, "/v1/markets/nope/candles"), 404, "not_found")
  })

  it("each outcome of a multi-outcome event has its own series", async () => {
    const ucl = await ok(t, "/v1/markets/ucl-final-2027-winner")
    const [real, city] = ucl.outcomes.map((o: any) => o.market_id)
    at(DAY + 100)
    await cross(maker, taker, real, 2_500, 8, "no")
    const series = await ok(t, `/v1/markets/${real}/candles?interval=1m`)
    expect(series.candles).toEqual([{ t: T0 + DAY + 60, o: 0.25, h: 0.25, l: 0.25, c: 0.25, v: 8, n: 1 }])
    expect((await ok(t, `/v1/markets/${city}/candles?interval=1m`)).candles).toEqual([])
    // The bare event id is not a market.
    expectError(await get(t, `/v1/markets/${ucl.event_id}/candles`), 404, "not_found")
  })
})
