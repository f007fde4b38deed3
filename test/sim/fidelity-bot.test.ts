// One bot-run of the fidelity benchmark end to end (sim/fidelity/fidelity.ts `backtestBot`, docs/backtesting.md
// "Fidelity"), on a small hand-written tape across midnight where the backtested bot fills and is paid
// rewards and rebates: the reward days compared are those both sides paid (a day the service paid but
// the bot earned nothing on is compared, at 0; a day only one side paid is flagged, not compared), the
// realised PnL is marked at the live market's marks (headline) and at the counterfactual's, and maker
// rebates are compared.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backtestBot, HEADLINE } from "../../sim/fidelity/fidelity.ts"
import type { Realised } from "../../sim/fidelity/realised.ts"
import { type Tape, type TapeOrderEvent, type TapeTrade, TAPE_FORMAT, writeTape } from "../../src/store/tape.ts"

const MIDNIGHT = 1_767_398_400 // 2026-01-03T00:00:00Z
const DAY_BEFORE = MIDNIGHT / 86_400 - 1
const FROM = MIDNIGHT - 600
const TO = MIDNIGHT + 120
const M = "m1"

/** A competitor resting 4800 / 5200, and a taker every 60 s alternately buying at 5200 and selling at 4800 (IOC, 5 contracts). */
const tape = (): Tape => {
  const orders: TapeOrderEvent[] = [
    { tsMs: FROM * 1000, marketId: M, orderId: 1, event: "add", side: "bid", priceBps: 4800, size: 500, orderType: "gtc", owner: "m1" },
    { tsMs: FROM * 1000 + 1, marketId: M, orderId: 2, event: "add", side: "ask", priceBps: 5200, size: 500, orderType: "gtc", owner: "m1" }
  ]
  const trades: TapeTrade[] = []
  let id = 3
  for (let t = FROM + 30, k = 0; t < TO; t += 60, k++) {
    const buy = k % 2 === 0
    orders.push({ tsMs: t * 1000, marketId: M, orderId: id, event: "new", side: buy ? "bid" : "ask", priceBps: buy ? 5200 : 4800, size: 5, orderType: "ioc", owner: "t1" })
    trades.push({ tsMs: t * 1000, marketId: M, priceBps: buy ? 5200 : 4800, size: 5, takerSide: buy ? "buy" : "sell", tradeId: id, makerOrderId: buy ? 2 : 1, takerOrderId: id })
    id++
  }
  const levels = [
    { tsMs: FROM * 1000 + 2, marketId: M, side: "bid" as const, priceBps: 4800, size: 500 },
    { tsMs: FROM * 1000 + 2, marketId: M, side: "ask" as const, priceBps: 5200, size: 500 }
  ]
  return {
    trades, levels, orders,
    meta: {
      format: TAPE_FORMAT, version: 2, source: "fidelity-bot test", from_sec: FROM, to_sec: TO, snapshot_interval_sec: 0, markets: [M],
      fees: { maker_rebate_bps: 5, default_taker_fee_bps: 50, taker_fee_bps: { [M]: 50 } },
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40, minSizeContracts: 10 },
      excluded_users: [], trades: trades.length, snapshots: 1, orders: orders.length
    }
  }
}

/** The live bot: 10 YES bought for 2 USDC, 7 micro of rebates, nothing earned on the day before midnight although the service paid it. */
const realised = (over: Partial<Realised> = {}): Realised => ({
  agent: "lp_bot-0-0", user: "u", startSec: FROM + 10, markets: [M], strategy: { mode: "simple", capital_micro_usdc: 1_000_000_000, preset: "balanced" },
  balanceMicro: 1_000_000_000, fills: 3, filledContracts: 15, rebatesMicro: 7, byMarket: { [M]: { cashMicro: -2_000_000, yes: 10, no: 0 } },
  rewardsByDay: {}, paidDays: [DAY_BEFORE], liveMarksBps: { [M]: 6000 }, botsAheadInPass: 0, attribution: { fills: [], midPaths: [{ tMs: [], midBps: [] }], endMs: TO * 1000 }, ...over
})

let dir = ""
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "fidelity-bot-"))
  await writeTape(dir, tape(), "csv")
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const headlineOf = (r: Awaited<ReturnType<typeof backtestBot>>) => r.backtests.find((b) => b.queue === HEADLINE.queue && b.latency === HEADLINE.latency)!

describe("one fidelity bot-run", () => {
  it("compares the reward days both sides paid, a day the bot earned nothing on included; compares rebates; marks the realised PnL at the live market's marks and at the counterfactual's", async () => {
    const run = await backtestBot(1, realised(), { dir, trades: 12, snapshots: 1 })
    const b = headlineOf(run)
    expect(b.fills).toBeGreaterThan(0)
    // The day before midnight: paid by the service (0 to the live bot) and by the backtest (> 0 to ours): compared.
    expect(run.rewardDays).toEqual([DAY_BEFORE])
    expect(run.rewardDaysOneSide).toEqual({ realisedOnly: [], backtestOnly: [] })
    expect(run.realised.rewardsMicro).toBe(0)
    expect(b.rewardsMicro).toBeGreaterThan(0)
    // Rebates: the backtest's are its fills' (taker fee 50 bps pays the 5 bps rebate), the realised the journal's.
    expect(run.realised.rebatesMicro).toBe(7)
    expect(b.rebatesMicro).toBeGreaterThan(0)
    expect(run.backtests.every((m) => typeof m.rebatesMicro === "number")).toBe(true)
    // PnL: −2 USDC + 10 YES at the live mark 6000 = +4 USDC (headline); at the counterfactual's final mark (the tape's 5000) +3 USDC.
    expect(run.marks.live).toEqual({ [M]: 6000 })
    expect(run.marks.counterfactual).toEqual({ [M]: 5000 })
    expect(run.realised.tradingPnlMicro).toBe(4_000_000)
    expect(run.realisedTradingPnlAtCounterfactualMarksMicro).toBe(3_000_000)
  }, 120_000)

  it("flags a day only one side paid and leaves it out of the rewards compared", async () => {
    // The service paid a later day the backtest never reached (and not the day before midnight): both are one-sided.
    const run = await backtestBot(1, realised({ paidDays: [DAY_BEFORE + 5], rewardsByDay: { [String(DAY_BEFORE + 5)]: 9_000_000 } }), { dir, trades: 12, snapshots: 1 })
    expect(run.rewardDays).toEqual([])
    expect(run.rewardDaysOneSide).toEqual({ realisedOnly: [DAY_BEFORE + 5], backtestOnly: [DAY_BEFORE] })
    expect(run.realised.rewardsMicro).toBe(0)
    expect(headlineOf(run).rewardsMicro).toBe(0)
  }, 120_000)
})
