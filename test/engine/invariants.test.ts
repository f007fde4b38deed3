// The ledger invariants' book checks (src/engine/invariants.ts checkSide) find each kind of
// corruption of a book side: a wrong best price, stale level totals, a wrong order count, a
// level listed twice or missing, and a queue holding an order of another price.
import { describe, expect, it } from "vitest"
import { Engine, findViolations } from "../../src/engine/index.ts"

const engine = (): Engine => {
  const e = new Engine()
  let seq = 0
  const run = (cmd: Record<string, unknown>) => e.apply({ ...cmd, seq: ++seq, tsSec: 1_700_000_000 } as never)
  run({ type: "create_market", marketId: "m" })
  for (const user of ["a", "b"]) run({ type: "credit", user, amountMicro: 1_000_000_000, ref: `seed:${user}` })
  let nonce = 0
  // Bids at 4000, 4100 (two orders), 4200; asks (NO bids) at 6000 and 6100.
  for (const [user, outcome, priceBps] of [["a", "yes", 4000], ["a", "yes", 4100], ["b", "yes", 4100], ["b", "yes", 4200], ["a", "no", 4000], ["b", "no", 3900]] as const) {
    const out = run({ type: "place_order", user, marketId: "m", side: "buy", outcome, priceBps, size: 10, orderType: "gtc", nonce: ++nonce })
    expect(out[0]?.type).toBe("order_accepted")
  }
  return e
}

describe("book side invariants", () => {
  it("hold on a clean book and name each corruption", () => {
    const cases: Array<[string, (e: Engine) => void, RegExp]> = [
      ["best bid wrong", (e) => void (e.markets.get("m")!.bids.best = 4100), /bids: best 4100, actual 4200/],
      ["best ask wrong", (e) => void (e.markets.get("m")!.asks.best = 6100), /asks: best 6100, actual 6000/],
      ["level total stale", (e) => void (e.markets.get("m")!.bids.levels[4100]!.size += 1), /bids @4100: level totals stale/],
      ["order count wrong", (e) => void e.markets.get("m")!.asks.orderCount++, /asks: orderCount 3, actual 2/],
      ["level listed twice", (e) => void e.markets.get("m")!.bids.levelPrices.push(4000), /bids: a level listed twice/],
      ["listed level missing", (e) => void (e.markets.get("m")!.asks.levels[6100] = undefined), /asks @6100: listed level missing/],
      [
        "queue holds another price's order",
        (e) => {
          const bids = e.markets.get("m")!.bids
          bids.levels[4000]!.head = bids.levels[4200]!.head
        },
        /bids @4000: queue corrupt/
      ]
    ]
    expect(findViolations(engine())).toEqual([])
    for (const [name, corrupt, want] of cases) {
      const e = engine()
      corrupt(e)
      expect(findViolations(e).join("\n"), name).toMatch(want)
    }
  })
})
