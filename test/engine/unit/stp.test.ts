// Self-trade prevention: cancel_resting, cancel_taking, cancel_both.
// Market M: 0 taker fee, `$fees` empty (rebates 0).
import { describe, expect, it } from "vitest"
import type { Stp } from "../../../src/engine/index.ts"
import { M, mint, setup, typesOf, USDC100 } from "./harness.ts"

describe("stp: own order at the top of the book", () => {
  // Bids: alice (own) buy YES 5 @ 6000 [locks 3,000,000], bob buy YES 5 @ 5900.
  // alice gtc buy NO 8 @ 4100 (ask @ YES 5900; taker lock 8 · 410,000 = 3,280,000).
  const run = (stp: Stp) => {
    const h = setup()
    const own = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    const bob = h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 5900, size: 5 })
    const p = h.place({ user: "alice", side: "buy", outcome: "no", priceBps: 4100, size: 8, stp })
    return { h, own, bob, p }
  }

  it("cancel_resting cancels the own order (reason stp) and keeps matching; the remainder rests", () => {
    const { h, own, bob, p } = run("cancel_resting")
    expect(typesOf(p.events).slice(0, 4)).toEqual(["order_accepted", "order_cancelled", "fill", "order_rested"])
    expect(p.cancelled).toEqual([{ type: "order_cancelled", orderId: own.orderId, user: "alice", marketId: M, remaining: 5, reason: "stp" }])
    expect(p.fills.map((f) => [f.makerOrderId, f.size, f.yesPriceBps, f.takerPriceBps, f.kind])).toEqual([[bob.orderId, 5, 5900, 4100, "mint"]])
    expect(p.rested).toBe(3)
    // own 3,000,000 released; 5 · 410,000 = 2,050,000 paid; 3 · 410,000 = 1,230,000 stays locked
    expect(h.bal("alice")).toEqual({ available: USDC100 - 2_050_000 - 1_230_000, locked: 1_230_000 })
    expect(h.pos("alice")).toMatchObject({ yes: 0, no: 5, costNo: 2_050_000 })
    expect(h.resting()).toEqual([p.orderId])
    expect(h.top()).toEqual({ bid: -1, ask: 5900 })
  })

  it("cancel_taking stops at once: the own order stays and the whole taker is cancelled (reason stp)", () => {
    const { h, own, bob, p } = run("cancel_taking")
    expect(typesOf(p.events)).toEqual(["order_accepted", "order_cancelled", "balance"])
    expect(p.cancelled).toEqual([{ type: "order_cancelled", orderId: p.orderId, user: "alice", marketId: M, remaining: 8, reason: "stp" }])
    expect(h.resting()).toEqual([own.orderId, bob.orderId])
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_000_000, locked: 3_000_000 })
  })

  it("cancel_both cancels the own resting order and the taker", () => {
    const { h, own, bob, p } = run("cancel_both")
    expect(p.cancelled).toEqual([
      { type: "order_cancelled", orderId: own.orderId, user: "alice", marketId: M, remaining: 5, reason: "stp" },
      { type: "order_cancelled", orderId: p.orderId, user: "alice", marketId: M, remaining: 8, reason: "stp" }
    ])
    expect(p.fills).toEqual([])
    expect(h.resting()).toEqual([bob.orderId])
    expect(h.bal("alice")).toEqual({ available: USDC100, locked: 0 })
  })

  it("stp defaults to cancel_resting", () => {
    const h = setup()
    const own = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    const p = h.place({ user: "alice", side: "buy", outcome: "no", priceBps: 4000, size: 5 })
    expect(p.events[0]).toMatchObject({ type: "order_accepted", stp: "cancel_resting" })
    expect(p.cancelled.map((c) => [c.orderId, c.reason])).toEqual([[own.orderId, "stp"]])
    expect(p.rested).toBe(5)
  })
})

describe("stp: fills before the own order stand", () => {
  // Bids: bob 5 @ 6100, alice (own) 5 @ 6000, carol 5 @ 5900. alice gtc buy NO 12 @ 4100 (YES 5900).
  const run = (stp: Stp) => {
    const h = setup()
    const bob = h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 6100, size: 5 })
    const own = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    const carol = h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 5900, size: 5 })
    const p = h.place({ user: "alice", side: "buy", outcome: "no", priceBps: 4100, size: 12, stp })
    return { h, bob, own, carol, p }
  }

  it("cancel_resting: fills bob, cancels own, fills carol, rests 2", () => {
    const { h, bob, own, carol, p } = run("cancel_resting")
    expect(p.fills.map((f) => [f.makerOrderId, f.size, f.takerPriceBps])).toEqual([
      [bob.orderId, 5, 3900],
      [carol.orderId, 5, 4100]
    ])
    expect(p.cancelled.map((c) => [c.orderId, c.reason, c.remaining])).toEqual([[own.orderId, "stp", 5]])
    expect(p.rested).toBe(2)
    // NO: 5 · 390,000 + 5 · 410,000 = 4,000,000; rest locks 2 · 410,000 = 820,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 4_000_000 - 820_000, locked: 820_000 })
    expect(h.pos("alice")).toMatchObject({ no: 10, costNo: 4_000_000 })
  })

  it("cancel_taking: fills bob, stops at own; own stays, remainder 7 cancelled stp", () => {
    const { h, own, carol, p } = run("cancel_taking")
    expect(p.fills.map((f) => [f.size, f.yesPriceBps])).toEqual([[5, 6100]])
    expect(p.cancelled).toEqual([{ type: "order_cancelled", orderId: p.orderId, user: "alice", marketId: M, remaining: 7, reason: "stp" }])
    expect(p.rested).toBeNull()
    expect(h.resting()).toEqual([own.orderId, carol.orderId])
    // NO 5 · 390,000 = 1,950,000; own still locks 3,000,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 1_950_000 - 3_000_000, locked: 3_000_000 })
    expect(h.pos("alice")).toMatchObject({ no: 5, costNo: 1_950_000 })
  })

  it("cancel_both: fills bob, cancels own and the remainder", () => {
    const { h, own, carol, p } = run("cancel_both")
    expect(p.fills.map((f) => [f.size, f.yesPriceBps])).toEqual([[5, 6100]])
    expect(p.cancelled.map((c) => [c.orderId, c.remaining, c.reason])).toEqual([
      [own.orderId, 5, "stp"],
      [p.orderId, 7, "stp"]
    ])
    expect(h.resting()).toEqual([carol.orderId])
    expect(h.bal("alice")).toEqual({ available: USDC100 - 1_950_000, locked: 0 })
  })

  it("an IOC stopped by cancel_taking is cancelled with reason stp, not ioc", () => {
    const h = setup()
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    const p = h.place({ user: "alice", side: "buy", outcome: "no", priceBps: 4000, size: 5, orderType: "ioc", stp: "cancel_taking" })
    expect(p.cancelled.map((c) => [c.orderId, c.reason])).toEqual([[p.orderId, "stp"]])
  })

  it("a self-trading sell under cancel_resting releases the own resting sell's shares", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 5000) // alice 10 YES
    mint(h, "carol", "alice", 10, 5000) // alice 10 NO
    const own = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 5500, size: 4 }) // ask 5500
    const dave = h.place({ user: "dave", side: "buy", outcome: "no", priceBps: 4400, size: 4 }) // ask 5600
    // alice sells NO @ 4400 → bid @ YES 5600: would merge with her own ask first
    const p = h.place({ user: "alice", side: "sell", outcome: "no", priceBps: 4400, size: 4 })
    expect(p.cancelled.map((c) => [c.orderId, c.reason])).toEqual([[own.orderId, "stp"]])
    expect(p.fills.map((f) => [f.makerOrderId, f.kind, f.size])).toEqual([[dave.orderId, "normal", 4]])
    expect(h.pos("alice")).toMatchObject({ yes: 10, yesLocked: 0, no: 6, noLocked: 0 })
  })
})
