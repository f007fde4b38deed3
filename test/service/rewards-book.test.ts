// Rewards accrual inside the exchange (src/service/rewards-book.ts): a pure function of
// the journal. Each journaled `rewards_sample` credits one minute to the day of its journal
// time (other records credit nothing, however far apart), a day is paid once, a day nobody
// scored in is dropped, and snapshot/restore/replay keep it all.
import { describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import type { RewardsParams, ServiceCommand } from "../../src/service/commands.ts"
import { exchangeHash, restoreExchange, takeExchangeSnapshot } from "../../src/service/exchange-snapshot.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { DAY_SEC, dayLabel } from "../../src/service/rewards-book.ts"
import type { BookSide } from "../../src/engine/book.ts"
import { type MarketSample, marketSample, type RestingQuote } from "../../src/lp/rewards.ts"
import { xorshift } from "../support/trading.ts"

const DAY = 20_779 // 2026-11-22
const CONFIG: RewardsParams = { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40, minSizeContracts: 10 }
const [alice, bob, carol] = ["rb-alice", "rb-bob", "rb-carol"].map((l) => keyFromLabel(l).user) as [string, string, string]

const world = (startSec: number) => {
  const clock = { ms: startSec * 1000 }
  const journal = memoryJournal()
  const x = new Exchange(() => clock.ms, journal)
  const submit = (cmd: ServiceCommand) => x.submit(cmd).result
  for (const event of demoCatalog().slice(0, 2)) submit({ type: "create_event", event })
  const market = x.catalog.events[1]!.outcomes[0]!.market_id
  for (const user of [alice, bob, carol]) submit({ type: "credit", user, amountMicro: 100_000_000, ref: `seed:${user}` })
  let nonce = 0
  const quote = (user: string, priceBps: number, size: number) => {
    submit({ type: "place_order", order: { user, marketId: market, side: "buy", outcome: "yes", priceBps, size, orderType: "gtc", nonce: ++nonce } })
    submit({ type: "place_order", order: { user, marketId: market, side: "buy", outcome: "no", priceBps, size, orderType: "gtc", nonce: ++nonce } })
  }
  const at = (sec: number) => void (clock.ms = sec * 1000)
  /** Any record moves time forward: a 1-micro credit to carol. */
  const poke = (sec: number) => {
    at(sec)
    return submit({ type: "credit", user: carol, amountMicro: 1, ref: `poke:${sec}` })
  }
  /** One worker sample at `sec` (the LP worker journals one per minute of monotonic time). */
  const sample = (sec: number) => {
    at(sec)
    return submit({ type: "rewards_sample" })
  }
  return { x, journal, submit, quote, at, poke, sample, market }
}

describe("RewardsBook in the exchange", () => {
  it("accrues nothing until the configuration is journaled", () => {
    const w = world(DAY * DAY_SEC)
    w.quote(alice, 4950, 100)
    w.sample(DAY * DAY_SEC + 3_600)
    expect(w.x.rewards.days.size).toBe(0)
    expect(w.x.rewards.config).toBeNull()
  })

  it("credits one minute per sample to its journal day, splits at midnight and pays a closed day once", () => {
    const start = (DAY + 1) * DAY_SEC - 10 * 60 + 30 // 23:50:30
    const w = world(start)
    w.submit({ type: "set_rewards_config", config: CONFIG })
    w.quote(alice, 4950, 100)
    w.quote(bob, 4900, 50)
    // Samples at 23:50:30 .. 23:59:30 go to DAY, those at 00:00:30 .. 00:09:30 to DAY + 1.
    for (let i = 0; i < 20; i++) w.sample(start + 60 * i)
    w.poke((DAY + 1) * DAY_SEC + 615)
    expect(w.x.rewards.days.get(DAY)!.minutes).toBe(10)
    expect(w.x.rewards.days.get(DAY + 1)!.minutes).toBe(10)
    expect(w.x.rewards.closedUnpaidDays(w.x.tsSec)).toEqual([DAY])
    // Shares 25 : 8 (docs/rewards.md): alice's raw 757,575,757 and bob's 242,424,242 are both capped at 40%.
    expect(w.x.rewards.estimate(DAY, alice)).toEqual({ estimateMicro: 400_000_000, score: 7.575757, minutes: 10 })
    const paid = w.submit({ type: "pay_rewards", day: DAY })
    expect(paid.paid).toEqual({
      day: DAY,
      paidAtSec: (DAY + 1) * DAY_SEC + 615,
      paidMicro: 800_000_000,
      unpaidMicro: 200_000_000,
      payouts: [alice, bob].sort().map((maker) => ({ maker, amountMicro: 400_000_000, score: maker === alice ? 7.575757 : 2.424242, capped: true }))
    })
    expect(paid.events.filter((e) => e.type === "credited").map((e) => (e as { ref: string }).ref)).toEqual(["rewards:20779", "rewards:20779"])
    expect(w.x.engine.accounts.get(alice)!.availableMicro + w.x.engine.accounts.get(alice)!.lockedMicro).toBe(500_000_000)
    // Exactly once: again, and for the day still open, nothing happens.
    expect(w.submit({ type: "pay_rewards", day: DAY }).refused).toBe("not_payable")
    expect(w.submit({ type: "pay_rewards", day: DAY + 1 }).refused).toBe("not_payable")
    expect(w.x.rewards.totals.get(alice)).toEqual({ paidMicro: 400_000_000, score: 7.575757, daysPaid: 1 })
  })

  it("drops a day nobody scored in when it closes, and never lets one-sided dust score", () => {
    const w = world(DAY * DAY_SEC + 60)
    w.submit({ type: "set_rewards_config", config: CONFIG })
    w.quote(alice, 4950, 5) // below the 10-contract minimum
    w.sample(DAY * DAY_SEC + 3_600)
    expect(w.x.rewards.days.get(DAY)!.scored.size).toBe(0)
    w.sample((DAY + 1) * DAY_SEC + 5)
    expect(w.x.rewards.days.has(DAY)).toBe(false)
  })

  it("snapshot, restore and replay keep the accrual: equal exchange hashes", () => {
    const w = world(DAY * DAY_SEC + 100)
    w.submit({ type: "set_rewards_config", config: CONFIG })
    w.quote(alice, 4950, 100)
    w.sample(DAY * DAY_SEC + 1_000)
    const snap = JSON.parse(JSON.stringify(takeExchangeSnapshot(w.x)))
    const fromSeq = w.x.lastSeq
    w.quote(bob, 4900, 50)
    w.sample(DAY * DAY_SEC + 40_000)
    w.sample((DAY + 1) * DAY_SEC + 30)
    w.submit({ type: "pay_rewards", day: DAY })
    w.poke((DAY + 1) * DAY_SEC + 7_000)
    expect(w.x.rewards.paid.length).toBe(1)

    const restored = restoreExchange(snap, () => 0, memoryJournal())
    for (const r of w.journal.records.filter((r) => r.seq > fromSeq)) restored.apply(r)
    expect(exchangeHash(restored)).toBe(exchangeHash(w.x))
    const replayed = new Exchange(() => 0, memoryJournal())
    for (const r of w.journal.records) replayed.apply(r)
    expect(exchangeHash(replayed)).toBe(exchangeHash(w.x))
    expect(replayed.rewards.toJSON()).toEqual(w.x.rewards.toJSON())
  })

  it("scores an unchanged book from its last sample, and accrues exactly as scoring every sample afresh", () => {
    const start = DAY * DAY_SEC + 3_600
    const a = world(start)
    const b = world(start)
    // b scores every sample from the book, with no memory: the reference.
    const fresh = (_id: string, bids: BookSide, asks: BookSide, config: RewardsParams): MarketSample => {
      const quotes: RestingQuote[] = []
      for (const side of [bids, asks]) {
        for (let p = side.best; p !== -1; p = side.nextPrice(p)) {
          for (let o = side.levels[p]?.head ?? null; o !== null; o = o.next) quotes.push({ maker: o.account.user, isBid: side.isBid, yesPriceBps: p, size: o.remaining })
        }
      }
      return marketSample(quotes, { bandSpreadBpsMax: config.bandSpreadBpsMax, minSizeContracts: config.minSizeContracts })
    }
    ;(b.x.rewards as unknown as { scoreOf: typeof fresh }).scoreOf = fresh
    const next = xorshift(7)
    // Bids on both outcomes at 45-49%: a two-sided book around 50% that never crosses.
    let nonce = 0
    let sec = start
    for (const w of [a, b]) w.submit({ type: "set_rewards_config", config: CONFIG })
    for (let step = 0; step < 400; step++) {
      sec += 60
      const roll = next(10)
      const user = [alice, bob, carol][next(3)]!
      const cmd: ServiceCommand | null =
        roll < 3
          ? { type: "place_order", order: { user, marketId: a.market, side: "buy", outcome: next(2) === 0 ? "yes" : "no", priceBps: 4_500 + 50 * next(9), size: 5 + next(60), orderType: "gtc", nonce: ++nonce } }
          : roll < 4
            ? { type: "cancel_all", user, marketId: a.market }
            : roll < 5
              ? { type: "set_rewards_config", config: { ...CONFIG, bandSpreadBpsMax: 200 + 100 * next(3) } }
              : roll < 6
                ? // A small taker: trades a resting order down without removing it.
                  { type: "place_order", order: { user, marketId: a.market, side: "buy", outcome: next(2) === 0 ? "yes" : "no", priceBps: 5_600, size: 1 + next(3), orderType: "ioc", nonce: ++nonce } }
                : null // most minutes the book does not change
      for (const w of [a, b]) {
        w.at(sec)
        if (cmd !== null) w.submit(cmd)
        w.sample(sec + 30)
      }
      expect(a.x.rewards.days).toEqual(b.x.rewards.days)
    }
    expect([...a.x.rewards.days.values()].some((d) => d.accrual.markets.some((m) => m.makers.length >= 2))).toBe(true)
    // The same unchanged book twice: the second is the first's sample, not a new one.
    const m = a.x.engine.markets.get(a.market)!
    const scoreOf = (a.x.rewards as unknown as { scoreOf: typeof fresh }).scoreOf.bind(a.x.rewards)
    expect(scoreOf(a.market, m.bids, m.asks, a.x.rewards.config!)).toBe(scoreOf(a.market, m.bids, m.asks, a.x.rewards.config!))
  })

  it("labels days without a Date", () => {
    expect([0, 19_782, DAY, 11_016].map(dayLabel)).toEqual(["1970-01-01", "2024-02-29", "2026-11-22", "2000-02-29"])
  })
})
