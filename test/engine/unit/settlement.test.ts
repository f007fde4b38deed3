// Settlement kinds (normal YES, normal NO, mint, merge), price improvement, sweeps, FIFO and cost basis.
// Market M has a 0 taker fee and `$fees` stays empty, so maker rebates are capped to 0.
import { describe, expect, it } from "vitest"
import { M, mint, setup, USDC100 } from "./harness.ts"

describe("mint: buy YES vs buy NO", () => {
  it("both pay, a pair is created and the market's backing grows by m · 1,000,000", () => {
    const h = setup()
    const maker = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 10 })
    expect(p.fills).toHaveLength(1)
    expect(p.fills[0]).toMatchObject({
      kind: "mint",
      yesPriceBps: 6000,
      size: 10,
      takerOrderId: p.orderId,
      takerUser: "bob",
      takerSide: "buy",
      takerOutcome: "no",
      takerPriceBps: 4000,
      makerOrderId: maker.orderId,
      makerUser: "alice",
      makerSide: "buy",
      makerOutcome: "yes",
      makerPriceBps: 6000,
      makerRemaining: 0,
      takerFeeMicro: 0,
      makerRebateMicro: 0
    })
    // alice pays 10 · 600,000 = 6,000,000; bob pays 10 · 400,000 = 4,000,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000, locked: 0 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000, locked: 0 })
    expect(h.pos("alice")).toEqual({ yes: 10, no: 0, yesLocked: 0, noLocked: 0, costYes: 6_000_000, costNo: 0 })
    expect(h.pos("bob")).toEqual({ yes: 0, no: 10, yesLocked: 0, noLocked: 0, costYes: 0, costNo: 4_000_000 })
    expect(h.market()).toMatchObject({ yesSupply: 10, noSupply: 10, backingMicro: 10_000_000 })
    expect(h.resting()).toEqual([])
  })

  it("a NO taker gets the maker's price: excess lock returns to available", () => {
    const h = setup()
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    // bob bids 4500 for NO (YES 5500) but executes at the maker's YES 6000 → NO 4000.
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4500, size: 10 })
    expect(p.fills.map((f) => [f.yesPriceBps, f.takerPriceBps, f.makerPriceBps])).toEqual([[6000, 4000, 6000]])
    // locked 10 · 450,000 = 4,500,000, charged 4,000,000, 500,000 released
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000, locked: 0 })
    expect(h.pos("bob").costNo).toBe(4_000_000)
  })

  it("a YES taker gets the maker's price", () => {
    const h = setup()
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4500, size: 10 }) // ask @ YES 5500
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    expect(p.fills.map((f) => [f.yesPriceBps, f.takerPriceBps, f.makerPriceBps])).toEqual([[5500, 5500, 4500]])
    // alice locked 6,000,000, pays 10 · 550,000 = 5,500,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 5_500_000, locked: 0 })
    expect(h.pos("alice").costYes).toBe(5_500_000)
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_500_000, locked: 0 })
    expect(h.market()).toMatchObject({ yesSupply: 10, noSupply: 10, backingMicro: 10_000_000 })
  })
})

describe("normal YES: buy YES vs sell YES", () => {
  it("YES moves, cash moves buyer → seller at the maker's price; supply unchanged", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000) // alice 10 YES (cost 6,000,000), bob 10 NO (cost 4,000,000)
    const maker = h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 7000, size: 4 })
    // alice asks 6500 but the bid is 7000: she receives 4 · 700,000 = 2,800,000
    const p = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 6500, size: 4 })
    expect(p.fills).toHaveLength(1)
    expect(p.fills[0]).toMatchObject({
      kind: "normal",
      yesPriceBps: 7000,
      size: 4,
      takerSide: "sell",
      takerOutcome: "yes",
      takerPriceBps: 7000,
      makerOrderId: maker.orderId,
      makerPriceBps: 7000
    })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000 + 2_800_000, locked: 0 })
    // cost 6,000,000 − floor(6,000,000 · 4 / 10) = 3,600,000
    expect(h.pos("alice")).toEqual({ yes: 6, no: 0, yesLocked: 0, noLocked: 0, costYes: 3_600_000, costNo: 0 })
    expect(h.bal("carol")).toEqual({ available: USDC100 - 2_800_000, locked: 0 })
    expect(h.pos("carol")).toEqual({ yes: 4, no: 0, yesLocked: 0, noLocked: 0, costYes: 2_800_000, costNo: 0 })
    expect(h.market()).toMatchObject({ yesSupply: 10, noSupply: 10, backingMicro: 10_000_000 })
  })

  it("a resting sell YES filled by a buy YES taker", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000)
    h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 6200, size: 10 })
    expect(h.pos("alice").yesLocked).toBe(10)
    const p = h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 6300, size: 10 })
    expect(p.fills.map((f) => [f.kind, f.yesPriceBps, f.size])).toEqual([["normal", 6200, 10]])
    // carol locked 6,300,000, pays 10 · 620,000 = 6,200,000
    expect(h.bal("carol")).toEqual({ available: USDC100 - 6_200_000, locked: 0 })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000 + 6_200_000, locked: 0 })
    // alice sold everything: the position is gone from state
    expect(h.hasPosition("alice")).toBe(false)
    expect(h.market()).toMatchObject({ yesSupply: 10, noSupply: 10, backingMicro: 10_000_000 })
  })
})

describe("normal NO: sell NO vs buy NO", () => {
  it("NO moves at NO price 10000 − q", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000) // bob: 10 NO, cost 4,000,000
    const maker = h.place({ user: "dave", side: "buy", outcome: "no", priceBps: 3500, size: 3 }) // ask @ YES 6500
    const p = h.place({ user: "bob", side: "sell", outcome: "no", priceBps: 3000, size: 3 }) // bid @ YES 7000
    expect(p.fills[0]).toMatchObject({
      kind: "normal",
      yesPriceBps: 6500,
      size: 3,
      takerPriceBps: 3500,
      makerOrderId: maker.orderId,
      makerPriceBps: 3500
    })
    // bob receives 3 · 350,000 = 1,050,000; cost 4,000,000 − floor(4,000,000 · 3 / 10) = 2,800,000
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000 + 1_050_000, locked: 0 })
    expect(h.pos("bob")).toEqual({ yes: 0, no: 7, yesLocked: 0, noLocked: 0, costYes: 0, costNo: 2_800_000 })
    expect(h.bal("dave")).toEqual({ available: USDC100 - 1_050_000, locked: 0 })
    expect(h.pos("dave")).toEqual({ yes: 0, no: 3, yesLocked: 0, noLocked: 0, costYes: 0, costNo: 1_050_000 })
    expect(h.market()).toMatchObject({ yesSupply: 10, noSupply: 10, backingMicro: 10_000_000 })
  })

  it("a resting sell NO filled by a buy NO taker with price improvement", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000)
    h.place({ user: "bob", side: "sell", outcome: "no", priceBps: 3800, size: 5 }) // bid @ YES 6200
    const p = h.place({ user: "dave", side: "buy", outcome: "no", priceBps: 4000, size: 5 }) // ask @ YES 6000
    expect(p.fills.map((f) => [f.kind, f.yesPriceBps, f.takerPriceBps])).toEqual([["normal", 6200, 3800]])
    // dave locked 5 · 400,000 = 2,000,000, pays 5 · 380,000 = 1,900,000
    expect(h.bal("dave")).toEqual({ available: USDC100 - 1_900_000, locked: 0 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000 + 1_900_000, locked: 0 })
    // bob: 4,000,000 − floor(4,000,000 · 5 / 10) = 2,000,000
    expect(h.pos("bob")).toMatchObject({ no: 5, noLocked: 0, costNo: 2_000_000 })
  })
})

describe("merge: sell YES vs sell NO", () => {
  it("both deliver, both are paid, the pair is burned and backing shrinks by m · 1,000,000", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000) // alice 10 YES, bob 10 NO; backing 10,000,000
    const maker = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 5800, size: 10 }) // ask @ 5800
    const p = h.place({ user: "bob", side: "sell", outcome: "no", priceBps: 4000, size: 10 }) // bid @ YES 6000
    expect(p.fills[0]).toMatchObject({
      kind: "merge",
      yesPriceBps: 5800,
      size: 10,
      takerPriceBps: 4200,
      makerOrderId: maker.orderId,
      makerPriceBps: 5800
    })
    // alice receives 10 · 580,000 = 5,800,000; bob 10 · 420,000 = 4,200,000; together 10,000,000 = the burned backing
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000 + 5_800_000, locked: 0 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000 + 4_200_000, locked: 0 })
    expect(h.market()).toMatchObject({ yesSupply: 0, noSupply: 0, backingMicro: 0 })
    expect(h.hasPosition("alice")).toBe(false)
    expect(h.hasPosition("bob")).toBe(false)
    // the emptied positions still get their final position event
    const positions = p.events.filter((ev) => ev.type === "position")
    expect(positions).toEqual([
      { type: "position", user: "bob", marketId: M, yes: 0, no: 0, yesLocked: 0, noLocked: 0, costYesMicro: 0, costNoMicro: 0 },
      { type: "position", user: "alice", marketId: M, yes: 0, no: 0, yesLocked: 0, noLocked: 0, costYesMicro: 0, costNoMicro: 0 }
    ])
  })

  it("a partial merge burns only the matched pairs", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000)
    h.place({ user: "bob", side: "sell", outcome: "no", priceBps: 4000, size: 4 }) // bid @ YES 6000
    const p = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 5500, size: 6, orderType: "ioc" })
    expect(p.fills.map((f) => [f.kind, f.size, f.yesPriceBps, f.takerPriceBps])).toEqual([["merge", 4, 6000, 6000]])
    expect(p.cancelled[0]).toMatchObject({ remaining: 2, reason: "ioc" })
    // alice: +4 · 600,000 = 2,400,000, cost 6,000,000 − 2,400,000; bob: +4 · 400,000 = 1,600,000, cost 4,000,000 − 1,600,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000 + 2_400_000, locked: 0 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000 + 1_600_000, locked: 0 })
    expect(h.pos("alice")).toEqual({ yes: 6, no: 0, yesLocked: 0, noLocked: 0, costYes: 3_600_000, costNo: 0 })
    expect(h.pos("bob")).toEqual({ yes: 0, no: 6, yesLocked: 0, noLocked: 0, costYes: 0, costNo: 2_400_000 })
    expect(h.market()).toMatchObject({ yesSupply: 6, noSupply: 6, backingMicro: 6_000_000 })
  })
})

describe("sweeps and FIFO", () => {
  it("a buy sweeps levels best-first, FIFO within a level, and stops at its limit", () => {
    const h = setup(["alice", "bob", "carol", "dave"])
    const b1 = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4100, size: 3 }) // ask 5900
    const c2 = h.place({ user: "carol", side: "buy", outcome: "no", priceBps: 4000, size: 3 }) // ask 6000, first
    const d3 = h.place({ user: "dave", side: "buy", outcome: "no", priceBps: 4000, size: 3 }) // ask 6000, second
    const b4 = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 3900, size: 5 }) // ask 6100, beyond limit
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 8 })
    expect(p.fills.map((f) => [f.makerOrderId, f.size, f.yesPriceBps, f.makerRemaining])).toEqual([
      [b1.orderId, 3, 5900, 0],
      [c2.orderId, 3, 6000, 0],
      [d3.orderId, 2, 6000, 1]
    ])
    expect(p.fills.map((f) => f.tradeId)).toEqual([1, 2, 3])
    expect(p.rested).toBeNull()
    // alice: 3 · 590,000 + 5 · 600,000 = 4,770,000 (locked 4,800,000; 30,000 improvement released)
    expect(h.bal("alice")).toEqual({ available: USDC100 - 4_770_000, locked: 0 })
    expect(h.pos("alice")).toMatchObject({ yes: 8, costYes: 4_770_000 })
    // dave still rests 1 · 400,000
    expect(h.bal("dave")).toEqual({ available: USDC100 - 1_200_000, locked: 400_000 })
    expect(h.pos("dave")).toMatchObject({ no: 2, costNo: 800_000 })
    // bob: NO 3 for 1,230,000 and b4 still locks 5 · 390,000 = 1,950,000
    expect(h.bal("bob")).toEqual({ available: USDC100 - 1_230_000 - 1_950_000, locked: 1_950_000 })
    expect(h.bal("carol")).toEqual({ available: USDC100 - 1_200_000, locked: 0 })
    expect(h.resting()).toEqual([d3.orderId, b4.orderId])
    expect(h.top()).toEqual({ bid: -1, ask: 6000 })
    expect(h.market()).toMatchObject({ yesSupply: 8, noSupply: 8, backingMicro: 8_000_000 })
  })

  it("a later order at the same price queues behind an earlier one even after the earlier one partially fills", () => {
    const h = setup()
    const first = h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 5000, size: 5 })
    h.place({ user: "alice", side: "buy", outcome: "no", priceBps: 5000, size: 2, orderType: "ioc" })
    const second = h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 5000, size: 5 })
    const p = h.place({ user: "dave", side: "buy", outcome: "no", priceBps: 5000, size: 4, orderType: "ioc" })
    expect(p.fills.map((f) => [f.makerOrderId, f.size])).toEqual([
      [first.orderId, 3],
      [second.orderId, 1]
    ])
    expect(h.remaining(second.orderId)).toBe(4)
  })

  it("a sell sweeps bids from the highest down, each at its own price", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 5000) // alice 10 YES, cost 5,000,000
    h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 6000, size: 2 })
    h.place({ user: "dave", side: "buy", outcome: "yes", priceBps: 6200, size: 3 })
    const p = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 5500, size: 10 })
    expect(p.fills.map((f) => [f.makerUser, f.yesPriceBps, f.size])).toEqual([
      ["dave", 6200, 3],
      ["carol", 6000, 2]
    ])
    expect(p.rested).toBe(5)
    // proceeds 3 · 620,000 + 2 · 600,000 = 3,060,000
    // cost per fill: 5,000,000 − floor(5,000,000 · 3/10) = 3,500,000; − floor(3,500,000 · 2/7) = 2,500,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 5_000_000 + 3_060_000, locked: 0 })
    expect(h.pos("alice")).toEqual({ yes: 5, no: 0, yesLocked: 5, noLocked: 0, costYes: 2_500_000, costNo: 0 })
    expect(h.top()).toEqual({ bid: -1, ask: 5500 })
  })
})

describe("cost basis", () => {
  it("buys add notional; sells remove floor(cost · m / held); selling everything zeroes it", () => {
    const h = setup()
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 5000, size: 1 }) // ask 5000
    h.place({ user: "carol", side: "buy", outcome: "no", priceBps: 4999, size: 2 }) // ask 5001
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 5001, size: 3 })
    // 1 · 500,000 + 2 · 500,100 = 1,500,200
    expect(h.pos("alice")).toMatchObject({ yes: 3, costYes: 1_500_200 })
    h.place({ user: "dave", side: "buy", outcome: "yes", priceBps: 5000, size: 2 })
    h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 5000, size: 2, orderType: "ioc" })
    // 1,500,200 − floor(1,500,200 · 2 / 3) = 1,500,200 − 1,000,133 = 500,067
    expect(h.pos("alice")).toMatchObject({ yes: 1, costYes: 500_067 })
    h.place({ user: "dave", side: "buy", outcome: "yes", priceBps: 4000, size: 1 })
    h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 4000, size: 1, orderType: "ioc" })
    expect(h.hasPosition("alice")).toBe(false)
    // cash: −1,500,200 + 1,000,000 + 400,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 100_200, locked: 0 })
  })

  it("a user can hold both outcomes; each has its own cost", () => {
    const h = setup()
    mint(h, "alice", "bob", 2, 7000) // alice YES 2 @ 7000 → 1,400,000
    mint(h, "carol", "alice", 3, 6000) // alice NO 3 @ 4000 → 1,200,000
    expect(h.pos("alice")).toEqual({ yes: 2, no: 3, yesLocked: 0, noLocked: 0, costYes: 1_400_000, costNo: 1_200_000 })
    expect(h.market()).toMatchObject({ yesSupply: 5, noSupply: 5, backingMicro: 5_000_000 })
  })
})
