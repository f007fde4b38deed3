// Order types: gtc, post_only, ioc, fok (including FOK against the user's own orders under each STP mode).
// Market M has a 0 taker fee and `$fees` is empty, so rebates are 0 and every cost is m·p·100.
import { describe, expect, it } from "vitest"
import type { Stp } from "../../../src/engine/index.ts"
import { M, mint, setup, stateWithoutClock, typesOf, USDC100 } from "./harness.ts"

describe("gtc", () => {
  it("rests on an empty book, locking size·p·100", () => {
    const h = setup()
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    // lock = 10 · 6000 · 100 = 6,000,000
    expect(typesOf(p.events)).toEqual(["order_accepted", "order_rested", "balance"])
    expect(p.rested).toBe(10)
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000, locked: 6_000_000 })
    expect(h.top()).toEqual({ bid: 6000, ask: -1 })
    expect(h.resting()).toEqual([p.orderId])
  })

  it("a buy NO rests on the ask side at 10000 − p", () => {
    const h = setup()
    const p = h.place({ user: "alice", side: "buy", outcome: "no", priceBps: 3500, size: 4 })
    // lock = 4 · 3500 · 100 = 1,400,000; ask at YES 6500
    expect(h.top()).toEqual({ bid: -1, ask: 6500 })
    expect(p.rested).toBe(4)
    expect(h.bal("alice")).toEqual({ available: USDC100 - 1_400_000, locked: 1_400_000 })
  })

  it("a sell YES rests locking shares, not cash", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000) // alice: 10 YES, cost 6,000,000
    const p = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 7000, size: 4 })
    expect(p.rested).toBe(4)
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000, locked: 0 })
    expect(h.pos("alice")).toEqual({ yes: 10, no: 0, yesLocked: 4, noLocked: 0, costYes: 6_000_000, costNo: 0 })
    expect(h.top()).toEqual({ bid: -1, ask: 7000 })
  })

  it("matches what crosses, then rests the remainder", () => {
    const h = setup()
    const maker = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 4 }) // ask @ YES 6000
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    expect(typesOf(p.events)).toEqual(["order_accepted", "fill", "order_rested", "balance", "balance", "position", "position"])
    expect(p.fills.map((f) => [f.makerOrderId, f.size, f.yesPriceBps, f.kind])).toEqual([[maker.orderId, 4, 6000, "mint"]])
    expect(p.rested).toBe(6)
    // alice: paid 4 · 600,000 = 2,400,000; still locks 6 · 600,000 = 3,600,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 2_400_000 - 3_600_000, locked: 3_600_000 })
    expect(h.remaining(p.orderId)).toBe(6)
  })
})

describe("post_only", () => {
  const cases: ReadonlyArray<{ name: string; outcome: "yes" | "no"; priceBps: number; crosses: boolean }> = [
    // Resting: carol's bid YES @ 6000 (bids), bob's buy NO @ 3000 (ask @ YES 7000).
    { name: "buy YES below the best ask rests", outcome: "yes", priceBps: 6999, crosses: false },
    { name: "buy YES at the best ask crosses", outcome: "yes", priceBps: 7000, crosses: true },
    { name: "buy YES through the best ask crosses", outcome: "yes", priceBps: 7500, crosses: true },
    { name: "buy NO whose YES price is above the best bid rests", outcome: "no", priceBps: 3999, crosses: false },
    { name: "buy NO whose YES price equals the best bid crosses", outcome: "no", priceBps: 4000, crosses: true },
    { name: "buy NO whose YES price is below the best bid crosses", outcome: "no", priceBps: 4500, crosses: true }
  ]
  it.each(cases)("$name", ({ outcome, priceBps, crosses }) => {
    const h = setup()
    h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 3000, size: 5 })
    const spec = { user: "alice", side: "buy", outcome, priceBps, size: 5, orderType: "post_only" } as const
    if (crosses) {
      h.rejectOrder(spec, "would_cross")
      expect(h.bal("alice")).toEqual({ available: USDC100, locked: 0 })
    } else {
      const p = h.place(spec)
      expect(p.fills).toEqual([])
      expect(p.rested).toBe(5)
      // lock = 5 · p · 100
      expect(h.bal("alice")).toEqual({ available: USDC100 - 5 * priceBps * 100, locked: 5 * priceBps * 100 })
    }
  })

  it("is rejected would_cross when only the user's own order would cross", () => {
    const h = setup()
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    h.rejectOrder({ user: "alice", side: "buy", outcome: "no", priceBps: 4000, size: 5, orderType: "post_only" }, "would_cross")
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_000_000, locked: 3_000_000 })
  })

  it("a crossing post_only sell is rejected and its shares stay free", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000)
    h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 6500, size: 5 })
    h.rejectOrder({ user: "alice", side: "sell", outcome: "yes", priceBps: 6500, size: 5, orderType: "post_only" }, "would_cross")
    expect(h.pos("alice").yesLocked).toBe(0)
  })
})

describe("ioc", () => {
  it("fills what it can and cancels the rest with reason ioc", () => {
    const h = setup()
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 4 }) // ask @ 6000
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10, orderType: "ioc" })
    expect(typesOf(p.events).slice(0, 3)).toEqual(["order_accepted", "fill", "order_cancelled"])
    expect(p.fills.map((f) => f.size)).toEqual([4])
    expect(p.cancelled).toEqual([{ type: "order_cancelled", orderId: p.orderId, user: "alice", marketId: M, remaining: 6, reason: "ioc" }])
    expect(p.rested).toBeNull()
    // alice pays 4 · 600,000 = 2,400,000, nothing stays locked
    expect(h.bal("alice")).toEqual({ available: USDC100 - 2_400_000, locked: 0 })
    expect(h.resting()).toEqual([])
  })

  it("an IOC that fills nothing (empty book) is accepted, cancelled and consumes its nonce", () => {
    const h = setup()
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10, orderType: "ioc", nonce: 7 })
    expect(typesOf(p.events)).toEqual(["order_accepted", "order_cancelled", "balance"])
    expect(p.cancelled[0]).toMatchObject({ orderId: p.orderId, remaining: 10, reason: "ioc" })
    expect(h.bal("alice")).toEqual({ available: USDC100, locked: 0 })
    expect(h.engine.accounts.get("alice")!.lastNonce).toBe(7)
    h.rejectOrder({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10, orderType: "ioc", nonce: 7 }, "nonce_stale")
  })

  it("an IOC whose limit does not reach the best price fills nothing and leaves the book alone", () => {
    const h = setup()
    const maker = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 4 })
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 5999, size: 10, orderType: "ioc" })
    expect(p.fills).toEqual([])
    expect(p.cancelled[0]).toMatchObject({ remaining: 10, reason: "ioc" })
    expect(h.remaining(maker.orderId)).toBe(4)
    expect(h.bal("alice")).toEqual({ available: USDC100, locked: 0 })
  })

  it("an IOC sell releases its unfilled shares", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000)
    h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 6500, size: 3 })
    const p = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 6000, size: 8, orderType: "ioc" })
    expect(p.fills.map((f) => [f.size, f.yesPriceBps])).toEqual([[3, 6500]])
    expect(p.cancelled[0]).toMatchObject({ remaining: 5, reason: "ioc" })
    // cost 6,000,000 − floor(6,000,000 · 3 / 10) = 4,200,000
    expect(h.pos("alice")).toEqual({ yes: 7, no: 0, yesLocked: 0, noLocked: 0, costYes: 4_200_000, costNo: 0 })
  })
})

describe("fok", () => {
  // Asks: bob buy NO 4 @ 4100 (YES 5900), carol buy NO 6 @ 4000 (YES 6000).
  const book = () => {
    const h = setup()
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4100, size: 4 })
    h.place({ user: "carol", side: "buy", outcome: "no", priceBps: 4000, size: 6 })
    return h
  }

  it("fills entirely across levels when it can", () => {
    const h = book()
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10, orderType: "fok" })
    expect(p.fills.map((f) => [f.yesPriceBps, f.size])).toEqual([
      [5900, 4],
      [6000, 6]
    ])
    expect(p.cancelled).toEqual([])
    expect(p.rested).toBeNull()
    // 4 · 590,000 + 6 · 600,000 = 2,360,000 + 3,600,000 = 5,960,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 5_960_000, locked: 0 })
    expect(h.pos("alice")).toMatchObject({ yes: 10, costYes: 5_960_000 })
  })

  const unfillable: ReadonlyArray<{ name: string; priceBps: number; size: number }> = [
    { name: "more than the whole book", priceBps: 6000, size: 11 },
    { name: "more than is inside the limit", priceBps: 5900, size: 5 },
    { name: "a limit below the best ask", priceBps: 5800, size: 1 }
  ]
  it.each(unfillable)("is rejected fok_unfilled and changes nothing but its spent nonce: $name", ({ priceBps, size }) => {
    const h = book()
    const before = stateWithoutClock(h.engine)
    h.rejectOrder({ user: "alice", side: "buy", outcome: "yes", priceBps, size, orderType: "fok", nonce: 3 }, "fok_unfilled")
    expect(stateWithoutClock(h.engine)).toEqual({
      ...before,
      accounts: before.accounts.map((a) => (a.user === "alice" ? { ...a, lastNonce: 3 } : a))
    })
    // the nonce was spent: the same body is stale, the next one is not
    h.rejectOrder({ user: "alice", side: "buy", outcome: "yes", priceBps, size, orderType: "fok", nonce: 3 }, "nonce_stale")
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 100, size: 1, nonce: 4 })
  })

  // Bids: alice (own) buy YES 5 @ 6100, then bob buy YES 5 @ 6000. alice FOKs buy NO 5 @ 4000 (YES 6000).
  const ownFirst: ReadonlyArray<{ stp: Stp; fills: boolean }> = [
    { stp: "cancel_resting", fills: true },
    { stp: "cancel_taking", fills: false },
    { stp: "cancel_both", fills: false }
  ]
  it.each(ownFirst)("own order ahead of other liquidity, stp $stp → fills: $fills", ({ stp, fills }) => {
    const h = setup()
    const own = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6100, size: 5 })
    const bob = h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    const spec = { user: "alice", side: "buy", outcome: "no", priceBps: 4000, size: 5, orderType: "fok", stp } as const
    if (!fills) {
      h.rejectOrder(spec, "fok_unfilled")
      expect(h.resting()).toEqual([own.orderId, bob.orderId])
      expect(h.bal("alice")).toEqual({ available: USDC100 - 3_050_000, locked: 3_050_000 })
      return
    }
    const p = h.place(spec)
    expect(p.cancelled).toEqual([{ type: "order_cancelled", orderId: own.orderId, user: "alice", marketId: M, remaining: 5, reason: "stp" }])
    expect(p.fills.map((f) => [f.makerOrderId, f.size, f.yesPriceBps, f.takerPriceBps])).toEqual([[bob.orderId, 5, 6000, 4000]])
    // own bid's 5 · 610,000 = 3,050,000 released; pays 5 · 400,000 = 2,000,000 for NO
    expect(h.bal("alice")).toEqual({ available: USDC100 - 2_000_000, locked: 0 })
    expect(h.resting()).toEqual([])
  })

  it.each(["cancel_resting", "cancel_taking", "cancel_both"] as const)(
    "other liquidity ahead of the own order suffices, stp %s → fills and keeps the own order",
    (stp) => {
      const h = setup()
      const bob = h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 6100, size: 5 })
      const own = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
      const p = h.place({ user: "alice", side: "buy", outcome: "no", priceBps: 4000, size: 5, orderType: "fok", stp })
      expect(p.fills.map((f) => [f.makerOrderId, f.size, f.takerPriceBps])).toEqual([[bob.orderId, 5, 3900]])
      expect(p.cancelled).toEqual([])
      expect(h.resting()).toEqual([own.orderId])
      // NO cost 5 · 390,000 = 1,950,000; own bid still locks 5 · 600,000 = 3,000,000
      expect(h.bal("alice")).toEqual({ available: USDC100 - 1_950_000 - 3_000_000, locked: 3_000_000 })
    }
  )

  it.each(["cancel_resting", "cancel_taking", "cancel_both"] as const)(
    "only the user's own orders inside the limit, stp %s → fok_unfilled, own order untouched",
    (stp) => {
      const h = setup()
      const own = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6100, size: 5 })
      h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 5000, size: 50 }) // outside the limit
      h.rejectOrder({ user: "alice", side: "buy", outcome: "no", priceBps: 4000, size: 5, orderType: "fok", stp }, "fok_unfilled")
      expect(h.remaining(own.orderId)).toBe(5)
    }
  )

  it.each([
    { stp: "cancel_resting" as const, fills: true },
    { stp: "cancel_taking" as const, fills: false },
    { stp: "cancel_both" as const, fills: false }
  ])("own order first in FIFO at the same level, stp $stp → fills: $fills", ({ stp, fills }) => {
    const h = setup()
    const own = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    const bob = h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    const spec = { user: "alice", side: "buy", outcome: "no", priceBps: 4000, size: 5, orderType: "fok", stp } as const
    if (!fills) {
      h.rejectOrder(spec, "fok_unfilled")
      expect(h.resting()).toEqual([own.orderId, bob.orderId])
      return
    }
    const p = h.place(spec)
    expect(p.cancelled.map((c) => [c.orderId, c.reason])).toEqual([[own.orderId, "stp"]])
    expect(p.fills.map((f) => [f.makerOrderId, f.size])).toEqual([[bob.orderId, 5]])
  })

  it("a FOK sell fills entirely or not at all", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000)
    h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 6500, size: 3 })
    h.rejectOrder({ user: "alice", side: "sell", outcome: "yes", priceBps: 6000, size: 4, orderType: "fok" }, "fok_unfilled")
    expect(h.pos("alice").yesLocked).toBe(0)
    const p = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 6000, size: 3, orderType: "fok" })
    expect(p.fills.map((f) => [f.size, f.yesPriceBps, f.kind])).toEqual([[3, 6500, "normal"]])
    // proceeds 3 · 650,000 = 1,950,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000 + 1_950_000, locked: 0 })
  })
})
