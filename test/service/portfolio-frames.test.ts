// The feed hub's portfolio updates (src/feed/hub.ts): after every flush, the users sent a
// portfolio_update are exactly those the rule names — a balance or position event of their own,
// or a changed book in a market they hold — in that order, and each frame's state is
// JSON.stringify(portfolioState) of that moment, byte for byte. A holder whose markets' marks
// did not move is sent its last text again without a rebuild; the test checks that this
// happened, and that the text was still right each time. Seeded random trading on a real
// Exchange, with halts, resumptions and resolutions.
import { describe, expect, it } from "vitest"
import { FeedHub, type FeedSocket } from "../../src/feed/hub.ts"
import { PortfolioJson, portfolioState } from "../../src/service/views.ts"
import { randomTradingCommand, tradingExchange, xorshift } from "../support/trading.ts"

describe("portfolio_update frames", () => {
  it("go to exactly the users the rule names, each with the state of that moment", () => {
    const { clock, x, submit, markets, users } = tradingExchange(["pf-a", "pf-b", "pf-c", "pf-d", "pf-e", "pf-f"])

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
    const next = xorshift(20_261_126)
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
        // Prices often far from the touch (15 ticks either side), so many book changes leave the mid where it was.
        const cmd = randomTradingCommand(next, step, users, markets, { spread: 15, resolveAfter: 2_000, nonce: () => ++nonce })
        if (cmd !== null) submit(cmd)
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
