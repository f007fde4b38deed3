// PortfolioJson (src/service/views.ts): the feed's portfolio text reuses each position's
// JSON while what it reads is unchanged, and must equal JSON.stringify(portfolioState)
// byte for byte after every kind of change — fills at new prices, rests and cancels that
// move a mid, a halt, a resolution and its payout. Seeded random trading on a real
// Exchange; the text is compared after a random third of the commands (a flush sees
// several at once), with one mark memo shared by all users as the hub shares it in a flush.
import { describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { type MarkMemo, PortfolioJson, portfolioState } from "../../src/service/views.ts"
import { randomTradingCommand, tradingExchange, xorshift } from "../support/trading.ts"

describe("PortfolioJson", () => {
  it("equals JSON.stringify(portfolioState) after every command of a random trading run", () => {
    const { clock, x, submit, markets, users } = tradingExchange(["pj-a", "pj-b", "pj-c", "pj-d", "pj-e"])
    const json = new PortfolioJson(x)
    const next = xorshift(20_261_125)
    let nonce = 0
    let reused = 0
    let mostPositions = 0
    let compared = 0
    const checkAll = (): void => {
      const marks: MarkMemo = new Map()
      for (const user of users) {
        const want = JSON.stringify(portfolioState(x, user))
        expect(json.state(user, marks)).toBe(want)
        compared++
      }
    }
    for (let step = 0; step < 4_000; step++) {
      clock.ms += 1_000
      const cmd = randomTradingCommand(next, step, users, markets, { spread: 5, resolveAfter: 3_000, nonce: () => ++nonce })
      if (cmd !== null) submit(cmd)
      else {
        // A step with no change at all: every piece must be reused as it was.
        const before = users.map((u) => json.state(u))
        checkAll()
        expect(users.map((u) => json.state(u))).toEqual(before)
        reused++
        continue
      }
      // Compared after some commands only: a flush sees several commands' changes at once.
      if (next(3) === 0) checkAll()
      for (const u of users) mostPositions = Math.max(mostPositions, x.engine.accounts.get(u)?.positions.size ?? 0)
    }
    // The run exercised what it claims: positions in several markets, and a resolution.
    expect(mostPositions).toBeGreaterThanOrEqual(3)
    expect(markets.some((m) => x.catalog.market(m)?.market.status === "resolved")).toBe(true)
    expect(reused).toBeGreaterThan(10)
    expect(compared).toBeGreaterThan(4_000)
  })

  it("rebuilds a position whose cost moved while its counts and mark came back the same", () => {
    const x = new Exchange(() => 1_767_225_600_000, memoryJournal())
    x.submit({ type: "create_event", event: demoCatalog()[0]! })
    const marketId = x.catalog.events[0]!.outcomes[0]!.market_id
    const [a, mm, b] = ["pj-cost-a", "pj-cost-mm", "pj-cost-b"].map((l) => keyFromLabel(l).user) as [string, string, string]
    for (const user of [a, mm, b]) x.submit({ type: "credit", user, amountMicro: 10_000_000_000, ref: `seed:${user}` })
    let nonce = 0
    const order = (user: string, outcome: "yes" | "no", side: "buy" | "sell", priceBps: number, size: number, orderType: "gtc" | "ioc") =>
      x.submit({ type: "place_order", order: { user, marketId, side, outcome, priceBps, size, orderType, nonce: ++nonce } })
    // A market maker's deep book: YES bid 3000, YES ask 7000 (a NO bid at 3000); the mid stays 0.5.
    order(mm, "yes", "buy", 3_000, 100, "gtc")
    order(mm, "no", "buy", 3_000, 100, "gtc")
    order(a, "yes", "buy", 7_000, 10, "ioc")
    const json = new PortfolioJson(x)
    const first = json.state(a)
    expect(first).toBe(JSON.stringify(portfolioState(x, a)))
    // Sold at 3000, then bought back inside the spread at 5000: 10 YES again at the same mid, cost 5 USDC not 7.
    order(a, "yes", "sell", 3_000, 10, "ioc")
    order(b, "no", "buy", 5_000, 10, "gtc")
    order(a, "yes", "buy", 5_000, 10, "ioc")
    expect(x.engine.accounts.get(a)?.positions.get(marketId)?.yes).toBe(10)
    const second = json.state(a)
    expect(second).not.toBe(first)
    expect(second).toBe(JSON.stringify(portfolioState(x, a)))
  })

  it("forgets a user's kept text and rebuilds it equal", () => {
    const x = new Exchange(() => 1_767_225_600_000, memoryJournal())
    for (const event of demoCatalog().slice(0, 1)) x.submit({ type: "create_event", event })
    const user = keyFromLabel("pj-forget").user
    x.submit({ type: "credit", user, amountMicro: 1_000_000_000, ref: "seed" })
    const json = new PortfolioJson(x)
    const first = json.state(user)
    json.forget(user)
    expect(json.state(user)).toBe(first)
    expect(first).toBe(JSON.stringify(portfolioState(x, user)))
  })
})
