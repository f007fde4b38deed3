// cancel_order and cancel_all.
import { describe, expect, it } from "vitest"
import { M, mint, setup, USDC100 } from "./harness.ts"

describe("cancel_order", () => {
  it("cancels the user's own resting buy and releases remaining · lockPerContract", () => {
    const h = setup()
    const o = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 4, orderType: "ioc" }) // fills 4 of alice's
    const ev = h.ok({ type: "cancel_order", user: "alice", orderId: o.orderId })
    expect(ev).toEqual([
      { type: "order_cancelled", orderId: o.orderId, user: "alice", marketId: M, remaining: 6, reason: "user" },
      { type: "balance", user: "alice", availableMicro: USDC100 - 2_400_000, lockedMicro: 0 }
    ])
    expect(h.resting()).toEqual([])
    expect(h.top()).toEqual({ bid: -1, ask: -1 })
  })

  it("cancelling a resting sell unlocks its shares", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000)
    const o = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 7000, size: 4 })
    const ev = h.ok({ type: "cancel_order", user: "alice", orderId: o.orderId })
    expect(ev.map((e) => e.type)).toEqual(["order_cancelled", "position"])
    expect(h.pos("alice")).toMatchObject({ yes: 10, yesLocked: 0 })
  })

  it("releases the maker lock (without taker fee) on a fee market", () => {
    const h = setup(["alice"], 100)
    // resting lock: 3 · 333,300 = 999,900 (the taker part ceil(3333·100/100) = 3,333 per contract was released on resting)
    const o = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 3333, size: 3 })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 999_900, locked: 999_900 })
    h.ok({ type: "cancel_order", user: "alice", orderId: o.orderId })
    expect(h.bal("alice")).toEqual({ available: USDC100, locked: 0 })
  })

  it("someone else's order is order_not_found and stays", () => {
    const h = setup()
    const o = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    h.reject({ type: "cancel_order", user: "bob", orderId: o.orderId }, "order_not_found")
    expect(h.resting()).toEqual([o.orderId])
  })

  it.each([
    { name: "an unknown id", orderId: 999 },
    { name: "a non-integer id", orderId: 1.5 },
    { name: "a negative id", orderId: -1 }
  ])("$name is order_not_found", ({ orderId }) => {
    const h = setup()
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    h.reject({ type: "cancel_order", user: "alice", orderId }, "order_not_found")
  })

  it("an already cancelled or filled order is order_not_found", () => {
    const h = setup()
    const a = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 10 })
    h.ok({ type: "cancel_order", user: "alice", orderId: a.orderId })
    h.reject({ type: "cancel_order", user: "alice", orderId: a.orderId }, "order_not_found")
    const b = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 2 })
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 2 })
    h.reject({ type: "cancel_order", user: "alice", orderId: b.orderId }, "order_not_found")
    // an IOC never rests, so its id is not cancellable either
    const c = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 2, orderType: "ioc" })
    h.reject({ type: "cancel_order", user: "alice", orderId: c.orderId }, "order_not_found")
  })

  it("an empty user is invalid_user", () => {
    const h = setup()
    h.reject({ type: "cancel_order", user: "", orderId: 1 }, "invalid_user", null)
  })
})

describe("cancel_all", () => {
  // alice: m1 bid 6000×2 (id a), m2 bid 5000×3 (id b), m1 sell YES… (needs shares, skipped), m1 buy NO 3000×4 (id c); bob: m1 bid 5500×1.
  const book = () => {
    const h = setup()
    h.createMarket("m2")
    const a = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 2 })
    const b = h.place({ user: "alice", marketId: "m2", side: "buy", outcome: "yes", priceBps: 5000, size: 3 })
    const c = h.place({ user: "alice", side: "buy", outcome: "no", priceBps: 3000, size: 4 })
    const bob = h.place({ user: "bob", side: "buy", outcome: "yes", priceBps: 5500, size: 1 })
    return { h, a, b, c, bob }
  }

  it("without a market cancels the user's orders in every market, oldest first, and only theirs", () => {
    const { h, a, b, c, bob } = book()
    const ev = h.ok({ type: "cancel_all", user: "alice" })
    expect(ev.filter((e) => e.type === "order_cancelled")).toEqual([
      { type: "order_cancelled", orderId: a.orderId, user: "alice", marketId: M, remaining: 2, reason: "user" },
      { type: "order_cancelled", orderId: b.orderId, user: "alice", marketId: "m2", remaining: 3, reason: "user" },
      { type: "order_cancelled", orderId: c.orderId, user: "alice", marketId: M, remaining: 4, reason: "user" }
    ])
    expect(h.resting()).toEqual([bob.orderId])
    expect(h.bal("alice")).toEqual({ available: USDC100, locked: 0 })
  })

  it("with a market cancels only that market's orders", () => {
    const { h, a, b, c, bob } = book()
    const ev = h.ok({ type: "cancel_all", user: "alice", marketId: M })
    expect(ev.filter((e) => e.type === "order_cancelled").map((e) => (e.type === "order_cancelled" ? e.orderId : 0))).toEqual([a.orderId, c.orderId])
    expect(h.resting()).toEqual([b.orderId, bob.orderId])
    // m2 bid still locks 3 · 500,000 = 1,500,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 1_500_000, locked: 1_500_000 })
  })

  it("an unknown market is unknown_market; a user with nothing open gets no cancellations", () => {
    const { h } = book()
    h.reject({ type: "cancel_all", user: "alice", marketId: "nope" }, "unknown_market")
    const ev = h.ok({ type: "cancel_all", user: "carol" })
    expect(ev.filter((e) => e.type === "order_cancelled")).toEqual([])
  })
})
