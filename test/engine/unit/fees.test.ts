// Taker fees (ceil), maker rebates (floor, capped by `$fees`), set_fees validation and defaults.
import { describe, expect, it } from "vitest"
import { FEE_ACCOUNT } from "../../../src/engine/index.ts"
import { Harness, M, setup, USDC100 } from "./harness.ts"

describe("taker fee", () => {
  it("is ceil(m · p · bps / 100), paid into $fees; a resting buy's lock drops its taker fee part", () => {
    const h = setup(["alice", "bob"], 7)
    h.setRebate(0)
    // bob buy NO 3 @ 6667 rests: the taker lock 3 · (666,700 + ceil(6667·7/100)=467) is replaced by 3 · 666,700 = 2,000,100
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 6667, size: 3 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 2_000_100, locked: 2_000_100 })
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 3333, size: 3 })
    // fee = ceil(3 · 3333 · 7 / 100) = ceil(699.93) = 700; notional 3 · 333,300 = 999,900
    // lock 3 · (333,300 + ceil(233.31)=234) = 1,000,602; charged 1,000,600; 2 released
    expect(p.fills[0]).toMatchObject({ kind: "mint", takerFeeMicro: 700, makerRebateMicro: 0 })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 1_000_600, locked: 0 })
    expect(h.pos("alice")).toMatchObject({ yes: 3, costYes: 1_000_600 })
    expect(h.bal(FEE_ACCOUNT)).toEqual({ available: 700, locked: 0 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 2_000_100, locked: 0 })
    expect(h.pos("bob")).toMatchObject({ no: 3, costNo: 2_000_100 })
    expect(p.events.filter((ev) => ev.type === "balance").map((ev) => (ev.type === "balance" ? ev.user : ""))).toEqual([
      "alice",
      "bob",
      FEE_ACCOUNT
    ])
  })

  it("the buy check uses the taker lock per contract: p·100 + ceil(p·fee/100)", () => {
    const h = new Harness()
    h.createMarket(M, 7)
    // 3 @ 3333 with 7 bps: 3 · 333,534 = 1,000,602
    h.credit("alice", 1_000_601)
    h.rejectOrder({ user: "alice", side: "buy", outcome: "yes", priceBps: 3333, size: 3 }, "insufficient_balance")
    h.credit("alice", 1)
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 3333, size: 3 })
    expect(p.rested).toBe(3)
    // resting: 3 · 333,300 = 999,900 locked, the 702 fee headroom released
    expect(h.bal("alice")).toEqual({ available: 702, locked: 999_900 })
  })

  it("a selling taker pays the fee out of its proceeds at the execution price", () => {
    const h = setup(["bob", "carol", "dave"], 10)
    h.setRebate(0)
    h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 5000, size: 10 })
    const mintFill = h.place({ user: "dave", side: "buy", outcome: "no", priceBps: 5000, size: 10, orderType: "ioc" })
    // dave's fee ceil(10 · 5000 · 10 / 100) = 5,000
    expect(mintFill.fills[0]!.takerFeeMicro).toBe(5_000)
    h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 7001, size: 4 })
    const p = h.place({ user: "carol", side: "sell", outcome: "yes", priceBps: 7000, size: 4, orderType: "ioc" })
    // at the maker's 7001: notional 4 · 700,100 = 2,800,400; fee ceil(4 · 7001 · 10 / 100) = ceil(2800.4) = 2,801
    expect(p.fills[0]).toMatchObject({ takerPriceBps: 7001, takerFeeMicro: 2_801 })
    expect(h.bal("carol")).toEqual({ available: USDC100 - 5_000_000 + 2_800_400 - 2_801, locked: 0 })
    // cost: 5,000,000 − floor(5,000,000 · 4 / 10) = 3,000,000 (fees on sells do not touch the cost)
    expect(h.pos("carol")).toMatchObject({ yes: 6, costYes: 3_000_000 })
    expect(h.bal(FEE_ACCOUNT)).toEqual({ available: 5_000 + 2_801, locked: 0 })
    expect(h.bal("dave")).toEqual({ available: USDC100 - 5_005_000, locked: 0 })
    expect(h.pos("dave")).toMatchObject({ no: 10, costNo: 5_005_000 })
  })

  it("a NO taker's fee uses its own NO price", () => {
    const h = setup(["alice", "bob"], 13)
    h.setRebate(0)
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 8123, size: 7 })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 2000, size: 7 })
    // NO price 10000 − 8123 = 1877; fee ceil(7 · 1877 · 13 / 100) = ceil(1708.07) = 1,709
    expect(p.fills[0]).toMatchObject({ takerPriceBps: 1877, takerFeeMicro: 1_709 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 7 * 187_700 - 1_709, locked: 0 })
  })

  it("rounds up per fill, not per order", () => {
    const h = setup(["alice", "bob", "carol"], 7)
    h.setRebate(0)
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 6667, size: 1 }) // ask 3333
    h.place({ user: "carol", side: "buy", outcome: "no", priceBps: 6667, size: 1 }) // ask 3333
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 3333, size: 2 })
    // each fill: ceil(1 · 3333 · 7 / 100) = ceil(233.31) = 234 (one fill of 2 would be ceil(466.62) = 467)
    expect(p.fills.map((f) => f.takerFeeMicro)).toEqual([234, 234])
    // 2 · 333,300 + 468 = 667,068 = exactly the taker lock 2 · 333,534
    expect(h.bal("alice")).toEqual({ available: USDC100 - 667_068, locked: 0 })
    expect(h.bal(FEE_ACCOUNT).available).toBe(468)
  })

  it("a market's fee change applies to later takers", () => {
    const h = setup(["alice", "bob"])
    h.setRebate(0)
    h.ok({ type: "set_fees", marketId: M, takerFeeBps: 50 })
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 5000, size: 2 })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 5000, size: 2 })
    // ceil(2 · 5000 · 50 / 100) = 5,000
    expect(p.fills[0]!.takerFeeMicro).toBe(5_000)
  })
})

describe("maker rebate", () => {
  // bob rests buy NO 3 @ 6667; alice takes with buy YES 3 @ 3333. rebate wanted = floor(3 · 6667 · 5 / 100) = floor(1000.05) = 1,000.
  const cases: ReadonlyArray<{ name: string; feeBps: number; funded: number; rebate: number; feesAfter: number }> = [
    { name: "unfunded $fees and taker fee 0: no rebate", feeBps: 0, funded: 0, rebate: 0, feesAfter: 0 },
    { name: "funded $fees and taker fee 0: full floor rebate", feeBps: 0, funded: 1_000_000, rebate: 1_000, feesAfter: 999_000 },
    { name: "partly funded $fees: capped at what it holds", feeBps: 0, funded: 600, rebate: 600, feesAfter: 0 },
    // fee ceil(3 · 3333 · 7 / 100) = 700 is added first, then the rebate is capped at 700
    { name: "the fill's own taker fee funds it (capped)", feeBps: 7, funded: 0, rebate: 700, feesAfter: 0 },
    // fee ceil(3 · 3333 · 20 / 100) = ceil(1999.8) = 2,000; rebate 1,000
    { name: "taker fee larger than the rebate", feeBps: 20, funded: 0, rebate: 1_000, feesAfter: 1_000 }
  ]
  it.each(cases)("$name", ({ feeBps, funded, rebate, feesAfter }) => {
    const h = setup(["alice", "bob"], feeBps)
    if (funded > 0) h.credit(FEE_ACCOUNT, funded, "operator")
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 6667, size: 3 })
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 3333, size: 3 })
    expect(p.fills[0]!.makerRebateMicro).toBe(rebate)
    expect(h.bal(FEE_ACCOUNT)).toEqual({ available: feesAfter, locked: 0 })
    // bob paid 3 · 666,700 = 2,000,100 and got the rebate back; the rebate is not in his cost
    expect(h.bal("bob")).toEqual({ available: USDC100 - 2_000_100 + rebate, locked: 0 })
    expect(h.pos("bob").costNo).toBe(2_000_100)
  })

  it("is floor(m · p_maker · bps / 100) on the maker's own price, with a custom rate", () => {
    const h = setup(["alice", "bob"])
    h.credit(FEE_ACCOUNT, 1_000_000, "operator")
    h.setRebate(33)
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 1234, size: 3 })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 8766, size: 3 })
    // floor(3 · 1234 · 33 / 100) = floor(1221.66) = 1,221
    expect(p.fills[0]!.makerRebateMicro).toBe(1_221)
    expect(h.bal("alice")).toEqual({ available: USDC100 - 370_200 + 1_221, locked: 0 })
  })

  it("rebate 0 pays nothing even with a funded $fees", () => {
    const h = setup(["alice", "bob"])
    h.credit(FEE_ACCOUNT, 1_000_000, "operator")
    h.setRebate(0)
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 5000, size: 10 })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 5000, size: 10 })
    expect(p.fills[0]!.makerRebateMicro).toBe(0)
    expect(h.bal(FEE_ACCOUNT).available).toBe(1_000_000)
  })
})

describe("set_fees", () => {
  it("without a market sets the default for new markets only", () => {
    const h = new Harness()
    h.createMarket("old")
    const ev = h.ok({ type: "set_fees", takerFeeBps: 25 })
    expect(ev).toEqual([{ type: "fees_set", marketId: null, takerFeeBps: null, makerRebateBps: 5, defaultTakerFeeBps: 25 }])
    expect(h.createMarket("new")).toEqual([{ type: "market_created", marketId: "new", takerFeeBps: 25 }])
    expect(h.createMarket("explicit", 3)).toEqual([{ type: "market_created", marketId: "explicit", takerFeeBps: 3 }])
    expect(h.engine.markets.get("old")!.takerFeeBps).toBe(0)
  })

  it("the engine default taker fee is 0 and the default rebate is 5", () => {
    const h = new Harness()
    expect(h.createMarket("a")).toEqual([{ type: "market_created", marketId: "a", takerFeeBps: 0 }])
    expect(h.engine.makerRebateBps).toBe(5)
  })

  it("with a market changes only that market", () => {
    const h = new Harness()
    h.createMarket("a")
    h.createMarket("b")
    const ev = h.ok({ type: "set_fees", marketId: "a", takerFeeBps: 1000, makerRebateBps: 0 })
    expect(ev).toEqual([{ type: "fees_set", marketId: "a", takerFeeBps: 1000, makerRebateBps: 0, defaultTakerFeeBps: 0 }])
    expect(h.engine.markets.get("a")!.takerFeeBps).toBe(1000)
    expect(h.engine.markets.get("b")!.takerFeeBps).toBe(0)
    expect(h.engine.defaultTakerFeeBps).toBe(0)
  })

  const invalid: ReadonlyArray<{ name: string; input: { marketId?: string; takerFeeBps?: number; makerRebateBps?: number }; reason: "invalid_fee" | "unknown_market" | "invalid_command" }> = [
    { name: "taker fee above 1000", input: { takerFeeBps: 1001 }, reason: "invalid_fee" },
    { name: "negative taker fee", input: { takerFeeBps: -1 }, reason: "invalid_fee" },
    { name: "fractional taker fee", input: { takerFeeBps: 1.5 }, reason: "invalid_fee" },
    { name: "rebate above 1000", input: { makerRebateBps: 1001 }, reason: "invalid_fee" },
    { name: "negative rebate", input: { makerRebateBps: -5 }, reason: "invalid_fee" },
    { name: "market fee above 1000", input: { marketId: M, takerFeeBps: 1001 }, reason: "invalid_fee" },
    { name: "unknown market", input: { marketId: "nope", takerFeeBps: 10 }, reason: "unknown_market" },
    { name: "neither fee given", input: {}, reason: "invalid_command" }
  ]
  it.each(invalid)("rejects $name ($reason) and changes nothing", ({ input, reason }) => {
    const h = new Harness()
    h.createMarket(M)
    h.reject({ type: "set_fees", ...input }, reason, null)
    expect(h.engine.defaultTakerFeeBps).toBe(0)
    expect(h.engine.makerRebateBps).toBe(5)
  })

  it("create_market rejects a fee above 1000 (invalid_fee), accepts 1000", () => {
    const h = new Harness()
    h.reject({ type: "create_market", marketId: "x", takerFeeBps: 1001 }, "invalid_fee", null)
    h.createMarket("x", 1000)
    h.reject({ type: "create_market", marketId: "x" }, "market_exists", null)
    h.reject({ type: "create_market", marketId: "" }, "invalid_market_id", null)
  })
})
