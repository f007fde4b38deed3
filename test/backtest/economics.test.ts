// One set of economics: the backtester builds the live bot's parameters from the same spec
// with the bot's own function, pays LP rewards with the service's own book (schedule, market
// split, cap, the unfinished day never paid), and pays maker rebates only out of taker fees.
import { describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { type BacktestConfig, DEFAULT_CONFIG, marketParams } from "../../sim/backtest/config.ts"
import { datasetFromRows } from "../../sim/backtest/dataset.ts"
import { RewardsLedger } from "../../sim/backtest/rewards.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import { LP, MarketState, Venue } from "../../sim/backtest/venue.ts"
import { paramsFromSpec, parseStrategySpec, specToJson } from "../../src/lp/strategy-spec.ts"
import { makeStrategy } from "../../src/lp/strategy.ts"
import type { RewardsParams, ServiceCommand } from "../../src/service/commands.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { DAY_SEC } from "../../src/service/rewards-book.ts"

const specConfig = (wire: unknown, capitalMicro: number): BacktestConfig => {
  const parsed = parseStrategySpec(wire)
  if (!parsed.ok) throw new Error(parsed.message)
  return { ...DEFAULT_CONFIG, capitalMicro, strategy: { kind: "spec", spec: parsed.spec, params: parsed.params } }
}

// Two markets far apart in price: sizing at each market's first price would tell them apart.
const data = datasetFromRows("two markets", [
  { tsMs: 1_000, marketId: "cheap", priceBps: 1_200, size: 5, takerSide: "buy" },
  { tsMs: 2_000, marketId: "dear", priceBps: 8_700, size: 5, takerSide: "sell" }
])

describe("strategy parameters", () => {
  it("are the live bot's: the same spec and market give identical parameters in both", () => {
    const wire = { mode: "simple", capital_micro_usdc: 2_000_000_000, preset: "balanced" }
    // What the bot runner steps with: the journaled canonical spec, parsed again (src/workers/lp-bot-runner.ts).
    const started = parseStrategySpec(wire)
    if (!started.ok) throw new Error(started.message)
    const bot = parseStrategySpec(specToJson(started.spec))
    if (!bot.ok) throw new Error(bot.message)
    // The backtester funded with the user's whole balance (3,000 USDC), as the fidelity benchmark does.
    const ours = marketParams(specConfig(wire, 3_000_000_000), data)
    expect(ours).toEqual([bot.params, bot.params])
    expect(bot.params).toMatchObject({ contractsPerLevel: 333, maxInventory: 1_200, stopLossMicro: 200_000_000 })
    // A preset run is the Simple-mode spec with the run's capital: no split across markets, no sizing at a first price.
    const preset = marketParams({ ...DEFAULT_CONFIG, capitalMicro: 2_000_000_000, strategy: { kind: "preset", preset: "balanced" } }, data)
    expect(preset).toEqual([bot.params, bot.params])
    const advanced = { mode: "advanced", capital_micro_usdc: 500_000_000, spread_bps: 300, levels_per_side: 2, contracts_per_level: 40, rebalance_interval_secs: 10, skew_tolerance_pct: 70, stop_loss_micro_usdc: 5_000_000, take_profit_micro_usdc: 0 }
    const adv = parseStrategySpec(advanced)
    if (!adv.ok) throw new Error(adv.message)
    expect(marketParams(specConfig(advanced, 500_000_000), data)).toEqual([paramsFromSpec(adv.spec), paramsFromSpec(adv.spec)])
  })
})

const CONFIG: RewardsParams = { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40, minSizeContracts: 10 }
const DAY = 20_454 // 2026-01-01
const START = (DAY + 1) * DAY_SEC - 2 * 3_600 // 22:00, as liquidity-midnight
const MAKERS = [LP, "bg0", "bg1"] as const
/** Every maker's balance in both (the backtest's background makers hold far more; enough here for every order). */
const FUNDS = 10_000_000_000

/** A scripted evening: who quotes what, where and when (YES bps; asks rest as buy NO). */
const SCRIPT: ReadonlyArray<{ atSec: number; maker: string; market: 0 | 1; bid: number; ask: number; size: number }> = [
  { atSec: START + 30, maker: LP, market: 0, bid: 4_900, ask: 5_100, size: 100 },
  { atSec: START + 45, maker: "bg0", market: 0, bid: 4_950, ask: 5_050, size: 50 },
  { atSec: START + 50, maker: "bg1", market: 1, bid: 3_000, ask: 3_200, size: 200 },
  { atSec: START + 3_600, maker: LP, market: 1, bid: 3_050, ask: 3_150, size: 20 },
  { atSec: START + 4_000, maker: "bg1", market: 0, bid: 4_800, ask: 5_200, size: 400 },
  { atSec: START + 6_000, maker: "bg0", market: 1, bid: 3_090, ask: 3_110, size: 15 }
]
/** Samples as the simulated service takes them: once a minute from its first tick, to 02:30 the next day. */
const SAMPLES = Array.from({ length: 270 }, (_, k) => START + 1 + 60 * k)

describe("LP rewards", () => {
  it("of a scripted day are the service's to the micro: the same schedule, market split and cap, the unfinished day unpaid", () => {
    // The service: journal records into a real Exchange.
    const clock = { ms: START * 1000 }
    const x = new Exchange(() => clock.ms, memoryJournal())
    const submit = (cmd: ServiceCommand) => x.submit(cmd).result
    for (const event of demoCatalog().slice(0, 2)) submit({ type: "create_event", event })
    const ids = [x.catalog.events[0]!.outcomes[0]!.market_id, x.catalog.events[1]!.outcomes[0]!.market_id] as const
    for (const user of MAKERS) submit({ type: "credit", user, amountMicro: FUNDS, ref: `seed:${user}` })
    submit({ type: "set_rewards_config", config: CONFIG })

    // The backtester: its engine, accounts and ledger.
    const v = new Venue([...ids], FUNDS, { makerRebateBps: 5, takerFeeBps: 0, takerFeeBpsByMarket: {} }, 2, false, () => {})
    // Our orders are a server-managed bot's session orders, refused unless that bot runs.
    v.startBot([...ids], { mode: "simple", preset: "balanced", capital_micro_usdc: FUNDS })
    const params = { ...marketParams(DEFAULT_CONFIG, data)[0]! }
    const markets = ids.map((id, i) => new MarketState(i, id, v.engine.markets.get(id)!, 10, true, 1, params, makeStrategy(params)))
    const ledger = new RewardsLedger(CONFIG, START, markets, v)

    let nonce = 0
    let paidByBacktest = 0
    const events = [...SCRIPT.map((s) => ({ t: s.atSec, s })), ...SAMPLES.map((t) => ({ t, s: null }))].sort((a, b) => a.t - b.t)
    for (const { t, s } of events) {
      clock.ms = t * 1000
      v.at(t * 1000)
      if (s !== null) {
        const marketId = ids[s.market]
        submit({ type: "place_order", order: { user: s.maker, marketId, side: "buy", outcome: "yes", priceBps: s.bid, size: s.size, orderType: "gtc", nonce: ++nonce } })
        submit({ type: "place_order", order: { user: s.maker, marketId, side: "buy", outcome: "no", priceBps: 10_000 - s.ask, size: s.size, orderType: "gtc", nonce: ++nonce } })
        const ms = markets[s.market]!
        if (s.maker === LP) {
          v.placeLp(ms, { side: "buy", outcome: "yes", priceBps: s.bid, size: s.size })
          v.placeLp(ms, { side: "buy", outcome: "no", priceBps: 10_000 - s.ask, size: s.size })
        } else {
          v.placeBg(ms, true, s.bid, s.size, s.maker)
          v.placeBg(ms, false, s.ask, s.size, s.maker)
        }
        continue
      }
      // A sample, then (as the LP worker does) any day that journal time has left is paid.
      submit({ type: "rewards_sample" })
      for (const day of [...x.rewards.days.keys()].filter((d) => d < Math.floor(t / DAY_SEC))) submit({ type: "pay_rewards", day })
      ledger.sample()
      paidByBacktest += ledger.payClosed()
    }

    expect(x.rewards.paid).toHaveLength(1)
    const service = x.rewards.paid[0]!
    expect(service.day).toBe(DAY)
    const backtest = ledger.book.paid
    expect(backtest).toHaveLength(1)
    expect(backtest[0]!.payouts).toEqual(service.payouts)
    expect(backtest[0]!.paidMicro).toBe(service.paidMicro)
    const lpPaid = service.payouts.find((p) => p.maker === LP)!.amountMicro
    expect(lpPaid).toBeGreaterThan(0)
    expect(paidByBacktest).toBe(lpPaid)
    expect(ledger.days).toMatchObject([{ day: DAY, lpMicro: lpPaid, paidMicro: service.paidMicro, poolMicro: CONFIG.dailyBudgetMicro }])
    // The bot earned in the engine exactly what the service credited.
    const credited = (user: string) => x.engine.accounts.get(user)!.availableMicro + x.engine.accounts.get(user)!.lockedMicro
    expect(v.lpAccount.availableMicro + v.lpAccount.lockedMicro).toBe(FUNDS + lpPaid)
    expect(credited(LP)).toBe(FUNDS + lpPaid)
    // The day after midnight has not ended: neither pays it; the backtester reports its estimate.
    expect(x.rewards.days.has(DAY + 1)).toBe(true)
    expect(ledger.unpaidEstimateMicro()).toBe(x.rewards.estimate(DAY + 1, LP).estimateMicro)
    expect(ledger.unpaidEstimateMicro()).toBeGreaterThan(0)
  })

  it("are sampled from the service's start (a tape's from_sec), not from the first trade", () => {
    // The service journaled from 22:00; the first trade came at 23:00:30. The service sampled
    // every minute from 22:00, so the day's pool is split over 120 samples; counting from the
    // first trade (23:01 on), the day would have 59, and each of ours would weigh twice as much.
    const midnightMs = 20_455 * DAY_SEC * 1000
    const rows = [
      { tsMs: midnightMs - 3_570_000, marketId: "m", priceBps: 5_100, size: 5, takerSide: "buy" as const },
      { tsMs: midnightMs + 60_000, marketId: "m", priceBps: 4_900, size: 5, takerSide: "sell" as const }
    ]
    const d = datasetFromRows("late first trade", rows)
    const minutes = (beginSec: number | null): number | undefined => runBacktest(d, { ...DEFAULT_CONFIG, beginSec }).report.rewardDays[0]?.minutes
    expect(minutes(midnightMs / 1000 - 7_200)).toBe(120)
    expect(minutes(null)).toBe(59)
  })
})

describe("fees", () => {
  it("pay maker rebates only out of the taker fees collected, as the engine does", () => {
    const rows = Array.from({ length: 400 }, (_, i) => ({ tsMs: 1_000 * i, marketId: "m", priceBps: i % 2 === 0 ? 5_100 : 4_900, size: 20, takerSide: (i % 2 === 0 ? "buy" : "sell") as "buy" | "sell" }))
    const d = datasetFromRows("bounce", rows)
    const base: BacktestConfig = { ...DEFAULT_CONFIG, overrides: { spreadBps: 100, levelsPerSide: 1, contractsPerLevel: 10, stopLossMicro: 0, takeProfitMicro: 0 } }
    const free = runBacktest(d, base).report.summary
    expect(free.fills).toBeGreaterThan(0)
    expect(free.maker_rebates_micro).toBe(0) // no taker fee: the fee account is empty, so nothing is rebated
    const paid = runBacktest(d, { ...base, takerFeeBps: 20 }).report.summary
    expect(paid.fills).toBeGreaterThan(0)
    expect(paid.maker_rebates_micro).toBeGreaterThan(0)
  })
})
