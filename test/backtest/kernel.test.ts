// The backtester on the service's kernel (docs/backtesting.md "One kernel"): a run is a sequence
// of journal records applied to the service's own Exchange, our LP wallet is a server-managed bot
// (its orders session orders, its decisions `lp_bot_step`s), and rewards are the service's
// `rewards_sample` / `pay_rewards` records. So the run is a journal: a fresh Exchange fed its
// records ends in the same state, and the service's own reads of the bot agree with the report.
import { describe, expect, it } from "vitest"
import { DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import { syntheticDataset } from "../../sim/backtest/synthetic.ts"
import { createMarkets, LP } from "../../sim/backtest/venue.ts"
import { botMarketView } from "../../src/service/lp-bot-market.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { takeExchangeSnapshot } from "../../src/service/exchange-snapshot.ts"

const START_SEC = 1_736_899_200
// Two days with book snapshots, so the first day's rewards are paid inside the run.
const data = syntheticDataset({ seed: "kernel", trades: 12_000, startSec: START_SEC, durationSec: 2 * 86_400, snapshotEverySec: 60 })
const config = { ...DEFAULT_CONFIG, seed: "kernel", takerFeeBps: 20 }

describe("the backtester on the service's kernel", () => {
  const records: JournalRecord[] = []
  const run = runBacktest(data, config, { onRecord: (record) => records.push(record) })
  const x = run.exchange

  it("is a journal: its records replayed through a fresh Exchange give the same exchange, bot, rewards and engine", () => {
    // The run did what the comparison must cover: quotes, fills, rebates and a paid rewards day.
    expect(run.report.summary.fills).toBeGreaterThan(0)
    expect(run.report.summary.maker_rebates_micro).toBeGreaterThan(0)
    expect(run.report.rewardDays.length).toBeGreaterThan(0)
    expect(records.some((r) => r.cmd.type === "lp_bot_step")).toBe(true)
    expect(records.some((r) => r.cmd.type === "place_order" && r.cmd.viaSession !== undefined)).toBe(true)
    expect(records.some((r) => r.cmd.type === "pay_rewards")).toBe(true)

    const replayed = new Exchange(() => 0, memoryJournal())
    createMarkets(replayed, data.markets, config)
    for (const r of records) replayed.apply(r)
    expect(takeExchangeSnapshot(replayed)).toEqual(takeExchangeSnapshot(x))
  })

  it("runs our LP as the service's bot: the LP book's cash and the status read agree with the report, and rewards are the exchange's payouts", () => {
    const bot = x.lpBook.bots.get(LP)
    expect(bot?.status).toBe("running")
    for (const m of run.report.markets) {
      const botMarket = bot!.markets.find((b) => b.marketId === m.market_id)!
      expect(botMarket.lastDecision).not.toBeNull()
      // The report's PnL is cash from our fills plus holdings at its mark: take the mark out, and it is the LP book's cash.
      const markValue = m.mark_bps === null ? 0 : m.yes * m.mark_bps * 100 + m.no * (10_000 - m.mark_bps) * 100
      expect(botMarket.cashMicro).toBe(m.pnl_micro - markValue)
      expect(botMarketView(x, LP, botMarket).netYes).toBe(m.net_yes)
    }
    const paidToUs = x.rewards.paid.reduce((s, day) => s + (day.payouts.find((p) => p.maker === LP)?.amountMicro ?? 0), 0)
    expect(paidToUs).toBe(run.report.summary.lp_rewards_micro)
    expect(paidToUs).toBeGreaterThan(0)
  })
})
