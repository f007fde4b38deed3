// The feed hub's portfolio updates (src/feed/hub.ts): after every flush, the users sent a
// portfolio_update are exactly those the rule names — a balance or position event of their own,
// or a changed book in a market they hold — in that order, and each frame's state is
// JSON.stringify(portfolioState) of that moment, byte for byte. A holder whose markets' marks
// did not move is sent its last text again without a rebuild; the test checks that this
// happened, and that the text was still right each time. Seeded random trading on a real
// Exchange, with halts, resumptions and resolutions.
import { describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { FeedHub, type FeedSocket } from "../../src/feed/hub.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { PortfolioJson, portfolioState } from "../../src/service/views.ts"

const rng = (seed: number) => {
  let s = seed >>> 0 || 1
  return (n: number): number => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s % n
  }
}

describe("portfolio_update frames", () => {
  it("go to exactly the users the rule names, each with the state of that moment", () => {
    const clock = { ms: 1_767_225_600_000 }
    const x = new Exchange(() => clock.ms, memoryJournal())
    const submit = (cmd: ServiceCommand) => x.submit(cmd).result
    for (const event of demoCatalog().slice(0, 6)) submit({ type: "create_event", event })
    const markets = x.catalog.events.flatMap((e) => e.outcomes.map((o) => o.market_id)).slice(0, 5)
    const users = ["pf-a", "pf-b", "pf-c", "pf-d", "pf-e", "pf-f"].map((l) => keyFromLabel(l).user)
    for (const user of users) submit({ type: "credit", user, amountMicro: 50_000_000_000, ref: `seed:${user}` })

    const hub = new FeedHub(x, () => clock.ms)
    const received: Array<{ user: string; state: string }> = []
    // Five users follow their portfolio; the sixth trades unwatched.
    const watched = users.slice(0, 5)
    for (const user of watched) {
      const socket: FeedSocket = {
        cookieUser: user,
        send: (f) => {
          if (f.startsWith('{"type":"portfolio_update"')) received.push({ user: JSON.parse(f).user, state: f.slice(f.indexOf(',"state":') + 9, -1) })
        },
        bufferedBytes: () => 0,
        close: () => {}
      }
      hub.connect(socket)
      hub.onMessage(socket, JSON.stringify({ type: "subscribe", channel: `user:${user}` }))
    }
    // The rule, kept by the test from the engine's events.
    const evUsers = new Set<string>()
    const bookMarkets = new Set<string>()
    x.onApply((_r, result) => {
      for (const ev of result.events) {
        if (ev.type === "balance" || ev.type === "position") evUsers.add(ev.user)
        else if (ev.type === "fill" || ev.type === "order_cancelled") bookMarkets.add(ev.marketId)
        else if (ev.type === "order_rested") bookMarkets.add(x.engine.orders.get(ev.orderId)?.market.id ?? "")
      }
    })
    let built = 0
    const state = PortfolioJson.prototype.state
    PortfolioJson.prototype.state = function (this: PortfolioJson, ...args: Parameters<typeof state>) {
      built++
      return state.apply(this, args)
    }
    const next = rng(20_261_126)
    let nonce = 0
    let frames = 0
    let flushes = 0
    try {
      const flush = (): void => {
        const want = [...evUsers]
        for (const user of watched) {
          if (evUsers.has(user)) continue
          const positions = x.engine.accounts.get(user)?.positions
          if (positions !== undefined && [...bookMarkets].some((m) => positions.has(m))) want.push(user)
        }
        evUsers.clear()
        bookMarkets.clear()
        received.length = 0
        hub.flush()
        flushes++
        expect(received.map((r) => r.user)).toEqual(want.filter((u) => watched.includes(u)))
        for (const r of received) expect(r.state).toBe(JSON.stringify(portfolioState(x, r.user)))
        frames += received.length
      }
      for (let step = 0; step < 3_000; step++) {
        clock.ms += 1_000
        const user = users[next(users.length)]!
        const marketId = markets[next(markets.length)]!
        const roll = next(100)
        if (roll < 80) {
          const yesCentre = 3_000 + 100 * ((step >> 6) % 40)
          const outcome = next(2) === 0 ? "yes" : "no"
          const centre = outcome === "yes" ? yesCentre : 10_000 - yesCentre
          submit({
            type: "place_order",
            order: {
              user, marketId, side: next(3) === 0 ? "sell" : "buy", outcome,
              // Often far from the touch, so many book changes leave the mid where it was.
              priceBps: Math.min(9_900, Math.max(100, centre + 100 * (next(31) - 15))),
              size: 1 + next(30), orderType: next(4) === 0 ? "ioc" : "gtc", nonce: ++nonce
            }
          })
        } else if (roll < 92) submit({ type: "cancel_all", user, marketId })
        else if (roll < 96) submit({ type: "set_market_status", marketId, status: next(2) === 0 ? "halted" : "active" })
        else if (roll < 97 && step > 2_000 && marketId !== markets[0]) {
          submit({ type: "set_market_status", marketId, status: "resolved", winningOutcome: next(2) === 0 ? "yes" : "no" })
        }
        if (next(3) === 0) flush()
      }
    } finally {
      PortfolioJson.prototype.state = state
    }
    expect(flushes).toBeGreaterThan(900)
    expect(frames).toBeGreaterThan(1_000)
    // Reused texts were sent: fewer rebuilds than frames.
    expect(built).toBeLessThan(frames)
    expect(built).toBeGreaterThan(frames / 10)
  })
})
