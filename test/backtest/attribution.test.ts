// The trading PnL split (sim/backtest/attribution.ts) on hand-computed fills: edge against the mid
// before each fill, the first 60 s after it, and the inventory as the rest of the PnL. The same
// split on a live bot and its exact replay is held equal in test/sim/replay-bot.test.ts.
import { describe, expect, it } from "vitest"
import { type AttributedFill, attribute, attributionText, poolAttribution } from "../../sim/backtest/attribution.ts"

const T0 = 1_000_000_000
// Market 0's mid: 4100 from T0, 3900 from T0 + 30 s; market 1's: 6000 throughout.
const midAt = (market: number, tMs: number): number | null => (market === 1 ? 6000 : tMs < T0 ? null : tMs < T0 + 30_000 ? 4100 : 3900)
const fill = (over: Partial<AttributedFill>): AttributedFill => ({
  tMs: T0, market: 0, side: "buy", outcome: "yes", yesPriceBps: 4000, size: 10, cause: "trade", midBeforeBps: 4100, ...over
})

describe("the trading PnL split", () => {
  it("takes the edge against the mid before each fill, the move in the next 60 s (or to the end), and leaves the rest to inventory", () => {
    const fills = [
      // Bought 10 YES at 40¢ with the mid at 41¢: +0.10 USDC of edge; 60 s later the mid is 39¢: −0.20.
      fill({}),
      // Bought 5 NO at 58¢ (sold YES at 42¢) against 41¢: +0.05 of edge; the end comes 10 s later at 39¢: the mid fell, our way: +0.10.
      fill({ tMs: T0 + 50_000, side: "buy", outcome: "no", yesPriceBps: 4200, size: 5, midBeforeBps: 4100, cause: "response" }),
      // Sold 2 YES at 59¢ against 60¢: −0.02 of edge (it paid the spread); no move.
      fill({ market: 1, side: "sell", yesPriceBps: 5900, size: 2, midBeforeBps: 6000, cause: "book" }),
      // No mid before it: counted, never split.
      fill({ tMs: T0 - 1, size: 7, midBeforeBps: null })
    ]
    const a = attribute(fills, midAt, T0 + 60_000, -3_000_000)
    expect(a.fills).toBe(4)
    expect(a.contracts).toBe(24)
    expect(a.unmarked_fills).toBe(1)
    expect(a.edge_micro).toBe(100_000 + 50_000 - 20_000)
    expect(a.markout_60s_micro).toBe(-200_000 + 100_000 + 0)
    expect(a.inventory_micro).toBe(-3_000_000 - 130_000)
    expect(a.by_cause).toEqual({
      trade: { fills: 2, contracts: 17, edge_micro: 100_000, markout_60s_micro: -200_000 },
      response: { fills: 1, contracts: 5, edge_micro: 50_000, markout_60s_micro: 100_000 },
      book: { fills: 1, contracts: 2, edge_micro: -20_000, markout_60s_micro: 0 }
    })
    expect(attributionText(a)).toBe("edge +0.13, inventory -3.13 (first 60 s -0.10); response takers' fills 1: edge +0.05, first 60 s +0.10")
  })

  it("pools runs field by field, and gives a run without fills all of its PnL as inventory", () => {
    const one = attribute([fill({})], midAt, T0 + 120_000, 500_000)
    const none = attribute([], midAt, T0, -250_000)
    expect(none).toMatchObject({ fills: 0, edge_micro: 0, markout_60s_micro: 0, inventory_micro: -250_000 })
    const pooled = poolAttribution([one, none, one])
    expect(pooled).toMatchObject({ fills: 2, contracts: 20, edge_micro: 200_000, markout_60s_micro: -400_000, inventory_micro: 2 * (500_000 - 100_000) - 250_000 })
    expect(pooled.by_cause.trade).toEqual({ fills: 2, contracts: 20, edge_micro: 200_000, markout_60s_micro: -400_000 })
  })
})
