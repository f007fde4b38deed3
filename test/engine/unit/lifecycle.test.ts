// Market lifecycle: halts, resumption, resolution (cancels resting orders, final) and redemption.
// Market M has a 0 taker fee and `$fees` stays empty, so rebates are 0.
import { describe, expect, it } from "vitest"
import { M, mint, setup, USDC100 } from "./harness.ts"

describe("halt and resume", () => {
  it("a halted market rejects new orders but keeps resting ones, which can be cancelled; resume reopens it", () => {
    const h = setup()
    const keep = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5 })
    const drop = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 5000, size: 4 })
    const other = h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 5500, size: 2 })
    expect(h.ok({ type: "set_market_status", marketId: M, status: "halted" })).toEqual([
      { type: "market_status", marketId: M, status: "halted", winningOutcome: null }
    ])
    h.rejectOrder({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 5 }, "market_halted")
    expect(h.resting()).toEqual([keep.orderId, drop.orderId, other.orderId])
    // cancel one by id, the other via cancel_all for the market
    h.ok({ type: "cancel_order", user: "alice", orderId: drop.orderId })
    h.ok({ type: "cancel_all", user: "carol", marketId: M })
    expect(h.resting()).toEqual([keep.orderId])
    // alice still locks 5 · 600,000 = 3,000,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_000_000, locked: 3_000_000 })
    expect(h.bal("carol")).toEqual({ available: USDC100, locked: 0 })
    h.ok({ type: "set_market_status", marketId: M, status: "active" })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 5 })
    expect(p.fills.map((f) => [f.makerOrderId, f.size])).toEqual([[keep.orderId, 5]])
  })

  it.each([
    { name: "unknown market", marketId: "nope", status: "halted" as const, reason: "unknown_market" as const },
    { name: "invalid status", marketId: M, status: "paused" as unknown as "halted", reason: "invalid_status" as const }
  ])("set_market_status rejects $name", ({ marketId, status, reason }) => {
    const h = setup()
    h.reject({ type: "set_market_status", marketId, status }, reason, null)
  })

  it("resolved needs a winning outcome; other statuses must not carry one", () => {
    const h = setup()
    h.reject({ type: "set_market_status", marketId: M, status: "resolved" }, "invalid_command", null)
    h.reject({ type: "set_market_status", marketId: M, status: "halted", winningOutcome: "yes" }, "invalid_command", null)
    h.reject(
      { type: "set_market_status", marketId: M, status: "resolved", winningOutcome: "maybe" as unknown as "yes" },
      "invalid_command",
      null
    )
    expect(h.market().status).toBe("active")
  })
})

describe("resolution", () => {
  it("cancels every resting order (bids best-first, then asks, FIFO within a level) with reason resolution", () => {
    const h = setup(["alice", "bob", "carol", "dave", "erin"])
    mint(h, "erin", "dave", 4, 5000) // erin 4 YES (cost 2,000,000), dave 4 NO
    const a1 = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 2 }) // bid 6000
    const b2 = h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 6100, size: 2 }) // bid 6100
    const c3 = h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 6000, size: 2 }) // bid 6000, after a1
    const d4 = h.place({ user: "dave", side: "buy", outcome: "no", priceBps: 3000, size: 2 }) // ask 7000
    const e5 = h.place({ user: "erin", side: "sell", outcome: "yes", priceBps: 6500, size: 3 }) // ask 6500
    const ev = h.ok({ type: "set_market_status", marketId: M, status: "resolved", winningOutcome: "yes" })
    expect(ev[0]).toEqual({ type: "market_status", marketId: M, status: "resolved", winningOutcome: "yes" })
    const cancels = ev.filter((e) => e.type === "order_cancelled")
    expect(cancels.map((c) => (c.type === "order_cancelled" ? [c.orderId, c.user, c.remaining, c.reason] : []))).toEqual([
      [b2.orderId, "bob", 2, "resolution"],
      [a1.orderId, "alice", 2, "resolution"],
      [c3.orderId, "carol", 2, "resolution"],
      [e5.orderId, "erin", 3, "resolution"],
      [d4.orderId, "dave", 2, "resolution"]
    ])
    expect(h.resting()).toEqual([])
    for (const u of ["alice", "bob", "carol"]) expect(h.bal(u)).toEqual({ available: USDC100, locked: 0 })
    expect(h.bal("dave")).toEqual({ available: USDC100 - 2_000_000, locked: 0 })
    expect(h.pos("erin")).toEqual({ yes: 4, no: 0, yesLocked: 0, noLocked: 0, costYes: 2_000_000, costNo: 0 })
    // supplies and backing are untouched until redemption
    expect(h.market()).toMatchObject({ status: "resolved", yesSupply: 4, noSupply: 4, backingMicro: 4_000_000 })
  })

  it("is final: any further status change and any new order is rejected market_resolved", () => {
    const h = setup()
    h.ok({ type: "set_market_status", marketId: M, status: "resolved", winningOutcome: "no" })
    h.reject({ type: "set_market_status", marketId: M, status: "active" }, "market_resolved", null)
    h.reject({ type: "set_market_status", marketId: M, status: "halted" }, "market_resolved", null)
    h.reject({ type: "set_market_status", marketId: M, status: "resolved", winningOutcome: "yes" }, "market_resolved", null)
    h.rejectOrder({ user: "alice", side: "buy", outcome: "yes", priceBps: 5000, size: 2 }, "market_resolved")
    expect(h.engine.markets.get(M)!.winningOutcome).toBe("no")
  })

  it("a halted market can be resolved", () => {
    const h = setup()
    const o = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 5000, size: 2 })
    h.ok({ type: "set_market_status", marketId: M, status: "halted" })
    const ev = h.ok({ type: "set_market_status", marketId: M, status: "resolved", winningOutcome: "yes" })
    expect(ev.filter((e) => e.type === "order_cancelled")).toEqual([
      { type: "order_cancelled", orderId: o.orderId, user: "alice", marketId: M, remaining: 2, reason: "resolution" }
    ])
  })
})

describe("redeem", () => {
  // alice 10 YES, bob 10 NO (6000); carol 2 YES, dave 2 NO (5000); erin 3 YES, carol 3 NO (5000).
  // YES supply 15, NO supply 15, backing 15,000,000.
  const book = () => {
    const h = setup(["alice", "bob", "carol", "dave", "erin"])
    mint(h, "alice", "bob", 10, 6000)
    mint(h, "carol", "dave", 2, 5000)
    mint(h, "erin", "carol", 3, 5000)
    expect(h.market()).toMatchObject({ yesSupply: 15, noSupply: 15, backingMicro: 15_000_000 })
    return h
  }

  it("is rejected market_not_resolved before resolution, unknown_market for a missing market", () => {
    const h = book()
    h.reject({ type: "redeem", user: "alice", marketId: M }, "market_not_resolved")
    h.ok({ type: "set_market_status", marketId: M, status: "halted" })
    h.reject({ type: "redeem", user: "alice", marketId: M }, "market_not_resolved")
    h.reject({ type: "redeem", user: "alice", marketId: "nope" }, "unknown_market")
    h.reject({ type: "redeem", user: "", marketId: M }, "invalid_user", null)
  })

  it("YES wins: pays 1,000,000 per winning share, burns both outcomes, shrinks supply and backing", () => {
    const h = book()
    h.ok({ type: "set_market_status", marketId: M, status: "resolved", winningOutcome: "yes" })
    const a = h.ok({ type: "redeem", user: "alice", marketId: M })
    expect(a[0]).toEqual({ type: "redeemed", user: "alice", marketId: M, winningShares: 10, losingShares: 0, payoutMicro: 10_000_000 })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000 + 10_000_000, locked: 0 })
    expect(h.hasPosition("alice")).toBe(false)
    expect(h.market()).toMatchObject({ yesSupply: 5, noSupply: 15, backingMicro: 5_000_000 })

    // carol holds 2 YES and 3 NO: paid for 2, the 3 NO are burned
    const c = h.ok({ type: "redeem", user: "carol", marketId: M })
    expect(c[0]).toMatchObject({ winningShares: 2, losingShares: 3, payoutMicro: 2_000_000 })
    expect(h.bal("carol")).toEqual({ available: USDC100 - 1_000_000 - 1_500_000 + 2_000_000, locked: 0 })
    expect(h.market()).toMatchObject({ yesSupply: 3, noSupply: 12, backingMicro: 3_000_000 })

    // bob holds only losing shares: accepted, pays 0, burns 10 NO
    const b = h.ok({ type: "redeem", user: "bob", marketId: M })
    expect(b[0]).toMatchObject({ winningShares: 0, losingShares: 10, payoutMicro: 0 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000, locked: 0 })
    expect(h.hasPosition("bob")).toBe(false)
    expect(h.market()).toMatchObject({ yesSupply: 3, noSupply: 2, backingMicro: 3_000_000 })

    h.reject({ type: "redeem", user: "alice", marketId: M }, "nothing_to_redeem")
    h.reject({ type: "redeem", user: "ghost", marketId: M }, "nothing_to_redeem")

    h.ok({ type: "redeem", user: "erin", marketId: M })
    h.ok({ type: "redeem", user: "dave", marketId: M })
    expect(h.market()).toMatchObject({ yesSupply: 0, noSupply: 0, backingMicro: 0 })
  })

  it("NO wins: NO holders are paid", () => {
    const h = book()
    h.ok({ type: "set_market_status", marketId: M, status: "resolved", winningOutcome: "no" })
    const b = h.ok({ type: "redeem", user: "bob", marketId: M })
    expect(b[0]).toMatchObject({ winningShares: 10, losingShares: 0, payoutMicro: 10_000_000 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000 + 10_000_000, locked: 0 })
    const c = h.ok({ type: "redeem", user: "carol", marketId: M })
    expect(c[0]).toMatchObject({ winningShares: 3, losingShares: 2, payoutMicro: 3_000_000 })
    // YES 15 − 2 = 13; NO 15 − 10 − 3 = 2; backing 2 · 1,000,000
    expect(h.market()).toMatchObject({ yesSupply: 13, noSupply: 2, backingMicro: 2_000_000 })
  })

  it("shares that were on resting sells at resolution are unlocked and redeemable", () => {
    const h = book()
    h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 9000, size: 6 })
    h.ok({ type: "set_market_status", marketId: M, status: "resolved", winningOutcome: "yes" })
    expect(h.pos("alice")).toMatchObject({ yes: 10, yesLocked: 0 })
    const a = h.ok({ type: "redeem", user: "alice", marketId: M })
    expect(a[0]).toMatchObject({ payoutMicro: 10_000_000 })
  })
})
