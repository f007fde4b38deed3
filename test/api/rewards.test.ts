// The daily LP pool over real HTTP (SPEC §1 second income stream, §4 "Fees and rewards",
// §8): two makers quote, minutes pass, the day closes at 00:00 UTC, the payout is
// credited exactly once with the 40% cap applied, and /me, /wallet and /leaderboard
// report it. Shares 25 : 8 (alice 100 @ 50 bps from mid, bob 50 @ 100 bps; band 300).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { T0_MS, startTestServer, type TestServer } from "../support/server.ts"

const G7 = "g7-2027-prediction-markets"
const DAY0 = T0_MS / 1000 / 86_400 // 2026-11-22
let t: TestServer
let alice: ApiClient
let bob: ApiClient

const me = async (c: ApiClient) => {
  const r = await c.request("GET", `/v1/rewards/me?user=${c.user}`)
  expect(r.status).toBe(200)
  return r.body
}
const total = async (c: ApiClient) => (await c.balance()).body.total as number

beforeAll(async () => {
  t = await startTestServer()
  alice = await t.funded("rw-alice", 100_000_000)
  bob = await t.funded("rw-bob", 100_000_000)
  // The first tick journals the rewards configuration and the first sample (an empty book).
  await t.tick()
  for (const [c, price, size] of [[alice, 4950, 100], [bob, 4900, 50]] as const) {
    expect((await c.placeOrder({ market_id: G7, side: "buy", outcome: "yes", price, size })).status).toBe(200)
    expect((await c.placeOrder({ market_id: G7, side: "buy", outcome: "no", price, size })).status).toBe(200)
  }
})
afterAll(() => t.close())

describe("daily LP rewards", () => {
  it("estimates today's share from the sampled minutes, capped at 40% of the pool", async () => {
    expect((await me(alice)).today).toEqual({ day: "2026-11-22", day_start: DAY0 * 86_400, estimate_micro_usdc: 0, score: 0, minutes_sampled: 1 })
    t.advance(60_000)
    // Reads and other records do not accrue: the worker's once-a-minute sample does.
    expect((await me(alice)).today.minutes_sampled).toBe(1)
    await t.admin("POST", "/v1/admin/credit", { user: t.client("rw-nobody").user, amount_micro: 1 })
    expect((await me(alice)).today.minutes_sampled).toBe(1)
    await t.tick()
    for (let i = 1; i < 10; i++) {
      t.advance(60_000)
      await t.tick()
    }
    const a = await me(alice)
    expect(a).toEqual({
      user: alice.user,
      wallet: null,
      today: { day: "2026-11-22", day_start: DAY0 * 86_400, estimate_micro_usdc: 400_000_000, score: 7.575757, minutes_sampled: 11 },
      pending: [],
      history: [],
      totals: { paid_micro_usdc: 0, score: 0, days_paid: 0 }
    })
    expect((await me(bob)).today).toMatchObject({ estimate_micro_usdc: 400_000_000, score: 2.424242 })
    // The wallet route serves the identical payload.
    const byWallet = await alice.request("GET", `/v1/rewards/wallet/${alice.user}`)
    expect(byWallet.body).toEqual(a)
  })

  it("pays the closed day at 00:00 UTC exactly once, straight to the balance", async () => {
    const [aliceBefore, bobBefore] = [await total(alice), await total(bob)]
    t.nowMs = T0_MS + 86_400_000 + 1_000
    // Past midnight but before the payout: the day shows as pending with its estimate.
    expect((await me(alice)).pending).toEqual([{ day: "2026-11-22", day_start: DAY0 * 86_400, estimate_micro_usdc: 400_000_000, score: 7.575757 }])
    const tick = await t.tick()
    expect(tick.paidDays).toEqual([DAY0])
    expect(await total(alice)).toBe(aliceBefore + 400_000_000)
    expect(await total(bob)).toBe(bobBefore + 400_000_000)
    // Later ticks, and a replayed payout command, change nothing.
    expect((await t.tick()).paidDays).toEqual([])
    t.advance(60_000)
    expect((await t.tick()).paidDays).toEqual([])
    expect(t.service.exchange.submit({ type: "pay_rewards", day: DAY0 }).result.refused).toBe("not_payable")
    expect(await total(alice)).toBe(aliceBefore + 400_000_000)
    const a = await me(alice)
    // Only sampled minutes count: the 10 quoted samples of day 0 (the jump to midnight was one tick).
    expect(a.pending).toEqual([])
    expect(a.history).toEqual([{ day: "2026-11-22", day_start: DAY0 * 86_400, micro_usdc: 400_000_000, score: 7.575757, capped: true, paid_at: T0_MS / 1000 + 86_401 }])
    expect(a.totals).toEqual({ paid_micro_usdc: 400_000_000, score: 7.575757, days_paid: 1 })
    expect(a.today).toMatchObject({ day: "2026-11-23", minutes_sampled: 2, estimate_micro_usdc: 400_000_000 })
    const trades = await alice.request("GET", `/v1/trades/all/${alice.user}`)
    expect(trades.body.total).toBe(0) // a credit, not a trade
  })

  it("ranks makers on the leaderboard and validates its parameters", async () => {
    const board = await alice.request("GET", "/v1/rewards/leaderboard?days=1&limit=200")
    expect(board.status).toBe(200)
    expect(board.body).toEqual({
      days: 1,
      rows: [
        { rank: 1, maker: alice.user, micro_usdc: 400_000_000, score: 7.575757, days_active: 1 },
        { rank: 2, maker: bob.user, micro_usdc: 400_000_000, score: 2.424242, days_active: 1 }
      ]
    })
    expect(board.headers.get("cache-control")).toBe("public, s-maxage=30")
    expect((await alice.request("GET", "/v1/rewards/leaderboard?limit=1")).body).toEqual({ days: 7, rows: [board.body.rows[0]] })
    for (const q of ["days=0", "days=91", "limit=0", "limit=201", "days=abc", "limit=1.5"]) {
      const r = await alice.request("GET", `/v1/rewards/leaderboard?${q}`)
      expect(r.status, q).toBe(400)
      expect(r.body.error).toBe("invalid_query")
    }
    expect((await alice.request("GET", "/v1/rewards/me?user=nope")).body.error).toBe("invalid_pubkey")
    expect((await alice.request("GET", "/v1/rewards/wallet/0x0000000000000000000000000000000000000001")).status).toBe(404)
    expect((await alice.request("GET", "/v1/rewards/wallet/xyz")).body.error).toBe("invalid_pubkey")
  })

  it("shows the configuration with the maker rebate", async () => {
    const cfg = await alice.request("GET", "/v1/rewards/config")
    expect(cfg.body).toEqual({ daily_budget_micro_usdc: 1_000_000_000, maker_rebate_bps: 5, rewards_band_spread_bps_max: 300, per_wallet_cap_pct: 40 })
  })
})
