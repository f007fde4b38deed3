// The in-browser bot's loop (web/src/bot/loop.ts) on a fake timer and a fake exchange: the
// same strategy code as src/lp, its cadence, catching up once after a sleeping tab, waiting
// while trading is closed, pausing on one-sided inventory, and Stop cancelling everything.
import { describe, expect, it } from "vitest"
import { paramsFromPreset } from "../../src/lp/presets.ts"
import { type BotStatus, BrowserBot, midExcluding, type RestingOrderView, type Timers } from "../../web/src/bot/loop.ts"
import { FakeExchange } from "./fake-exchange.ts"
import { FakeTimers } from "./fake-timers.ts"

const setup = (opts: { pollMs?: number } = {}) => {
  const timers = new FakeTimers(1_795_305_600_000)
  const x = new FakeExchange(timers)
  const statuses: BotStatus[] = []
  const params = paramsFromPreset("balanced", 60_000_000, 5000)
  const bot = new BrowserBot({ marketId: "m", params, api: x, timers: timers as Timers, onStatus: (s) => statuses.push(s), ...(opts.pollMs === undefined ? {} : { pollMs: opts.pollMs }) })
  return { timers, x, bot, statuses, params }
}

describe("the in-browser bot's loop", () => {
  it("quotes both sides at once around the others' mid, then re-quotes every 15 s", async () => {
    const { timers, x, bot } = setup()
    bot.start()
    await timers.advance(0)
    expect(bot.current.state).toBe("quoting")
    expect(bot.current.midBps).toBe(5000)
    const first = [...x.orders.values()]
    expect(first.some((o) => o.side === "buy" && o.outcome === "yes")).toBe(true) // bids
    expect(first.some((o) => o.side === "buy" && o.outcome === "no")).toBe(true) // asks as buy NO
    expect(first.every((o) => (o.outcome === "yes" ? o.price < 5000 : 10_000 - o.price > 5000))).toBe(true)
    await timers.advance(60_000)
    const at = bot.current.requotesAtMs
    expect(at.length).toBe(5) // 0, 15, 30, 45, 60 s
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBe(15_000)
    expect(x.orders.size).toBe(first.length) // old quotes cancelled before new ones
  })

  it("the bot's own quotes never move the mid it quotes around", () => {
    const own: RestingOrderView[] = [{ id: 1, market_id: "m", side: "buy", outcome: "yes", price: 4900, remaining: 10 }, { id: 2, market_id: "m", side: "buy", outcome: "no", price: 4900, remaining: 10 }]
    const book = { bids: [{ price: 4900, size: 10 }, { price: 4500, size: 5 }], asks: [{ price: 5100, size: 10 }, { price: 5500, size: 5 }] }
    expect(midExcluding(book, own)).toBe(5000)
    expect(midExcluding(book, [])).toBe(5000)
    expect(midExcluding({ bids: [{ price: 4900, size: 15 }], asks: [{ price: 5100, size: 10 }] }, own)).toBe(null)
  })

  it("a timer that fires late (a sleeping tab) re-quotes once on the current book, not a burst", async () => {
    const { timers, x, bot } = setup()
    bot.start()
    await timers.advance(0)
    const placedBefore = x.placed.length
    const perQuote = x.orders.size
    // The tab sleeps for 10 minutes: no timer runs. On wake the page calls wake().
    await timers.sleep(600_000)
    bot.wake()
    await timers.advance(0)
    expect(bot.current.requotesAtMs.length).toBe(2)
    expect(x.placed.length - placedBefore).toBe(perQuote)
    expect(bot.current.lateByMs).toBe(0) // wake() ran it at once
  })

  it("says how late a throttled timer fired", async () => {
    const { timers, bot } = setup()
    bot.start()
    await timers.advance(0)
    timers.lateByMs = 45_000 // background intensive throttling: timers run up to a minute late
    await timers.advance(70_000)
    expect(bot.current.lateByMs).toBe(45_000)
    expect(bot.current.state).toBe("quoting")
  })

  it("pauses when another user's fills leave it too one-sided, quoting only the side that reduces it", async () => {
    const { timers, x, bot, params } = setup()
    bot.start()
    await timers.advance(0)
    let taken = x.takeAsks()
    await timers.advance(15_000)
    expect(bot.current.state).toBe("quoting")
    taken += x.takeAsks()
    expect(taken * 100).toBeGreaterThan(params.maxInventory * params.skewTolerancePct)
    await timers.advance(5_000) // the next check (pollMs) sees it; entering a pause acts at once
    expect(bot.current.state).toBe("paused")
    expect(bot.current.reason).toContain("too one-sided")
    const resting = [...x.orders.values()]
    expect(resting.length).toBeGreaterThan(0)
    // Long NO: only bids (sell NO) that reduce it.
    expect(resting.every((o) => (o.side === "buy") === (o.outcome === "yes") || (o.side === "sell" && o.outcome === "no"))).toBe(true)
  })

  it("waits while trading is closed and resumes at the next check once it reopens", async () => {
    const { timers, x, bot } = setup()
    bot.start()
    await timers.advance(0)
    x.trading = "closed"
    await timers.advance(15_000)
    expect(bot.current.state).toBe("waiting")
    expect(bot.current.reason).toContain("trading is closed")
    expect(x.orders.size).toBe(0)
    expect(bot.current.quotes).toEqual([]) // the panel shows no stale quotes
    await timers.advance(20_000)
    expect(bot.current.state).toBe("waiting")
    x.trading = "open"
    await timers.advance(5_000)
    expect(bot.current.state).toBe("quoting")
    expect(x.orders.size).toBeGreaterThan(0)
  })

  it("Stop cancels every quote and stops ticking", async () => {
    const { timers, x, bot } = setup()
    bot.start()
    await timers.advance(0)
    expect(x.orders.size).toBeGreaterThan(0)
    await bot.stop()
    expect(x.orders.size).toBe(0)
    expect(bot.current.state).toBe("stopped")
    const placed = x.placed.length
    await timers.advance(120_000)
    expect(x.placed.length).toBe(placed)
    expect(timers.pending()).toBe(0)
  })
})
