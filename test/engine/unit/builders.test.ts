// Builder fees: ceil(m · p_own · bps / 100) charged to the order's owner and credited to the
// builder wallet, as taker and as maker; snapshotted at placement.
// Market M has a 0 taker fee and the maker rebate is set to 0, so only builder fees move money.
import { describe, expect, it } from "vitest"
import { M, mint, setup, USDC100 } from "./harness.ts"

const base = () => {
  const h = setup(["alice", "bob", "carol", "dave"])
  h.setRebate(0)
  return h
}

describe("set_builder", () => {
  it("registers and updates a builder", () => {
    const h = base()
    expect(h.setBuilder("bk1", "wallet1", 20)).toEqual([{ type: "builder_set", apiKey: "bk1", wallet: "wallet1", feeBps: 20, enabled: true }])
    h.setBuilder("bk1", "wallet2", 30, false)
    const b = h.engine.builders.get("bk1")!
    expect([b.wallet, b.feeBps, b.enabled]).toEqual(["wallet2", 30, false])
  })

  it.each([
    { name: "fee above 1000", feeBps: 1001, wallet: "w", apiKey: "k", reason: "invalid_fee" as const },
    { name: "negative fee", feeBps: -1, wallet: "w", apiKey: "k", reason: "invalid_fee" as const },
    { name: "empty wallet", feeBps: 10, wallet: "", apiKey: "k", reason: "invalid_user" as const },
    { name: "empty api key", feeBps: 10, wallet: "w", apiKey: "", reason: "invalid_command" as const }
  ])("rejects $name ($reason)", ({ feeBps, wallet, apiKey, reason }) => {
    const h = base()
    h.reject({ type: "set_builder", apiKey, wallet, feeBps, enabled: true }, reason, null)
  })
})

describe("builder fee on fills", () => {
  it("as a buying taker: locked up front, charged ceil, credited to the wallet", () => {
    const h = base()
    h.setBuilder("bk1", "bw", 20)
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 5 }) // ask @ 6000
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "bk1", orderType: "ioc" })
    // ceil(5 · 6000 · 20 / 100) = 6,000
    expect(p.fills[0]).toMatchObject({ takerBuilderFeeMicro: 6_000, takerBuilderWallet: "bw", makerBuilderFeeMicro: 0, makerBuilderWallet: null })
    expect(p.events[0]).toMatchObject({ type: "order_accepted", builderKey: "bk1" })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_006_000, locked: 0 })
    expect(h.pos("alice")).toMatchObject({ yes: 5, costYes: 3_006_000 })
    expect(h.bal("bw")).toEqual({ available: 6_000, locked: 0 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 2_000_000, locked: 0 })
  })

  it("rounds up per fill: 3 @ 3333 at 7 bps → ceil(699.93) = 700", () => {
    const h = base()
    h.setBuilder("bk1", "bw", 7)
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 6667, size: 3 })
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 3333, size: 3, builderKey: "bk1" })
    expect(p.fills[0]!.takerBuilderFeeMicro).toBe(700)
    // lock 3 · (333,300 + ceil(233.31)=234) = 1,000,602; charged 999,900 + 700 = 1,000,600
    expect(h.bal("alice")).toEqual({ available: USDC100 - 1_000_600, locked: 0 })
    expect(h.bal("bw").available).toBe(700)
  })

  it("as a resting buy (maker): the lock includes ceil(p·bps/100) per contract and the fee is charged on fill", () => {
    const h = base()
    h.setBuilder("bk1", "bw", 20)
    const maker = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "bk1" })
    // 5 · (600,000 + ceil(6000 · 20 / 100) = 1,200) = 3,006,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_006_000, locked: 3_006_000 })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 5 })
    expect(p.fills[0]).toMatchObject({ makerOrderId: maker.orderId, makerBuilderFeeMicro: 6_000, makerBuilderWallet: "bw", takerBuilderFeeMicro: 0 })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_006_000, locked: 0 })
    expect(h.pos("alice")).toMatchObject({ yes: 5, costYes: 3_006_000 })
    expect(h.bal("bw").available).toBe(6_000)
  })

  it("as a selling taker: the fee comes out of the proceeds", () => {
    const h = base()
    mint(h, "alice", "bob", 10, 6000)
    h.setBuilder("bk1", "bw", 50)
    h.place({ user: "carol", side: "buy", outcome: "yes", priceBps: 6500, size: 4 })
    const p = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 6500, size: 4, builderKey: "bk1" })
    // notional 4 · 650,000 = 2,600,000; fee ceil(4 · 6500 · 50 / 100) = 13,000
    expect(p.fills[0]).toMatchObject({ takerBuilderFeeMicro: 13_000 })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 6_000_000 + 2_600_000 - 13_000, locked: 0 })
    expect(h.bal("bw").available).toBe(13_000)
  })

  it("as a resting sell (maker): the fee comes out of the maker's proceeds at the maker's own price", () => {
    const h = base()
    mint(h, "alice", "bob", 10, 6000) // bob 10 NO
    h.setBuilder("bk1", "bw", 30)
    h.place({ user: "bob", side: "sell", outcome: "no", priceBps: 3333, size: 3, builderKey: "bk1" }) // bid @ YES 6667
    const p = h.place({ user: "carol", side: "buy", outcome: "no", priceBps: 3333, size: 3 }) // ask @ YES 6667
    // NO 3 @ 3333: notional 999,900; fee ceil(3 · 3333 · 30 / 100) = ceil(2999.7) = 3,000
    expect(p.fills[0]).toMatchObject({ kind: "normal", makerBuilderFeeMicro: 3_000, makerBuilderWallet: "bw" })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 4_000_000 + 999_900 - 3_000, locked: 0 })
  })

  it("taker and maker with different builders each pay their own", () => {
    const h = base()
    h.setBuilder("bk1", "bw1", 20)
    h.setBuilder("bk2", "bw2", 50)
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "bk1" })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 5, builderKey: "bk2" })
    // maker: ceil(5 · 6000 · 20 / 100) = 6,000; taker: ceil(5 · 4000 · 50 / 100) = 10,000
    expect(p.fills[0]).toMatchObject({ makerBuilderFeeMicro: 6_000, takerBuilderFeeMicro: 10_000 })
    expect(h.bal("bw1").available).toBe(6_000)
    expect(h.bal("bw2").available).toBe(10_000)
    expect(h.bal("bob")).toEqual({ available: USDC100 - 2_010_000, locked: 0 })
  })

  it.each([
    { name: "a disabled builder", feeBps: 20, enabled: false },
    { name: "a builder with fee 0", feeBps: 0, enabled: true }
  ])("$name charges nothing and locks nothing extra", ({ feeBps, enabled }) => {
    const h = base()
    h.setBuilder("bk1", "bw", feeBps, enabled)
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "bk1" })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_000_000, locked: 3_000_000 })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 5, builderKey: "bk1" })
    expect(p.fills[0]).toMatchObject({ takerBuilderFeeMicro: 0, makerBuilderFeeMicro: 0, takerBuilderWallet: null, makerBuilderWallet: null })
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_000_000, locked: 0 })
    expect(h.bal("bob")).toEqual({ available: USDC100 - 2_000_000, locked: 0 })
    expect(h.engine.accounts.has("bw")).toBe(false)
  })

  it("an unknown builder key is rejected unknown_builder", () => {
    const h = base()
    h.setBuilder("bk1", "bw", 20)
    h.rejectOrder({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "nope" }, "unknown_builder")
  })
})

describe("builder snapshot at placement", () => {
  it("raising fee_bps later changes neither the resting lock nor the fee charged", () => {
    const h = base()
    h.setBuilder("bk1", "bw", 20)
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "bk1" })
    h.setBuilder("bk1", "bw", 1000)
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_006_000, locked: 3_006_000 })
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 5 })
    expect(p.fills[0]!.makerBuilderFeeMicro).toBe(6_000)
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_006_000, locked: 0 })
  })

  it("a new order after the change uses the new fee", () => {
    const h = base()
    h.setBuilder("bk1", "bw", 20)
    h.setBuilder("bk1", "bw", 100)
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "bk1" })
    // 5 · (600,000 + ceil(6000 · 100 / 100) = 6,000) = 3,030,000
    expect(h.bal("alice")).toEqual({ available: USDC100 - 3_030_000, locked: 3_030_000 })
  })

  it("changing the wallet or disabling later still pays the snapshotted wallet and fee", () => {
    const h = base()
    h.setBuilder("bk1", "bw-old", 20)
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "bk1" })
    h.setBuilder("bk1", "bw-new", 20, false)
    const p = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 5 })
    expect(p.fills[0]).toMatchObject({ makerBuilderFeeMicro: 6_000, makerBuilderWallet: "bw-old" })
    expect(h.bal("bw-old").available).toBe(6_000)
    expect(h.bal("bw-new").available).toBe(0)
  })

  it("cancelling a resting builder order releases exactly its snapshotted lock", () => {
    const h = base()
    h.setBuilder("bk1", "bw", 20)
    const o = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6000, size: 5, builderKey: "bk1" })
    h.setBuilder("bk1", "bw", 0)
    const ev = h.ok({ type: "cancel_order", user: "alice", orderId: o.orderId })
    expect(ev[0]).toEqual({ type: "order_cancelled", orderId: o.orderId, user: "alice", marketId: M, remaining: 5, reason: "user" })
    expect(h.bal("alice")).toEqual({ available: USDC100, locked: 0 })
  })
})
