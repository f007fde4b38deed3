// Order validation: enums, price/size bounds, dust, nonces, balance/share checks, check order,
// and the command envelope (bad_sequence, bad_time, invalid_command).
import { describe, expect, it } from "vitest"
import type { Command, OrderType, Outcome, RejectReason, Side, Stp } from "../../../src/engine/index.ts"
import { Harness, M, mint, setup, T0, USDC100, type OrderSpec } from "./harness.ts"

const buy = (over: Partial<OrderSpec> = {}): OrderSpec => ({ user: "alice", side: "buy", outcome: "yes", priceBps: 5000, size: 10, ...over })

describe("invalid fields", () => {
  const cases: ReadonlyArray<{ name: string; spec: OrderSpec; reason: RejectReason; user?: null }> = [
    { name: "empty user", spec: buy({ user: "" }), reason: "invalid_user", user: null },
    { name: "129-char user", spec: buy({ user: "u".repeat(129) }), reason: "invalid_user", user: null },
    { name: "side", spec: buy({ side: "hold" as unknown as Side }), reason: "invalid_side" },
    { name: "outcome", spec: buy({ outcome: "maybe" as unknown as Outcome }), reason: "invalid_outcome" },
    { name: "order type", spec: buy({ orderType: "fak" as unknown as OrderType }), reason: "invalid_order_type" },
    { name: "stp", spec: buy({ stp: "none" as unknown as Stp }), reason: "invalid_stp" },
    { name: "price −1", spec: buy({ priceBps: -1 }), reason: "invalid_price" },
    { name: "price 10001", spec: buy({ priceBps: 10_001 }), reason: "invalid_price" },
    { name: "fractional price", spec: buy({ priceBps: 50.5 }), reason: "invalid_price" },
    { name: "NaN price", spec: buy({ priceBps: Number.NaN }), reason: "invalid_price" },
    { name: "size 0", spec: buy({ size: 0 }), reason: "invalid_size" },
    { name: "size 100,000,001", spec: buy({ size: 100_000_001 }), reason: "invalid_size" },
    { name: "fractional size", spec: buy({ size: 1.5 }), reason: "invalid_size" },
    { name: "nonce 0", spec: buy({ nonce: 0 }), reason: "invalid_nonce" },
    { name: "negative nonce", spec: buy({ nonce: -3 }), reason: "invalid_nonce" },
    { name: "fractional nonce", spec: buy({ nonce: 1.5 }), reason: "invalid_nonce" },
    { name: "unknown market", spec: buy({ marketId: "nope" }), reason: "unknown_market" }
  ]
  it.each(cases)("$name → $reason", ({ spec, reason, user }) => {
    const h = setup()
    h.reject(h.orderInput(spec), reason, user === null ? null : spec.user)
  })
})

describe("check order: the first failing check is the reason", () => {
  const cases: ReadonlyArray<{ name: string; spec: OrderSpec; reason: RejectReason }> = [
    { name: "side before price", spec: buy({ side: "x" as unknown as Side, priceBps: -1 }), reason: "invalid_side" },
    { name: "outcome before order type", spec: buy({ outcome: "x" as unknown as Outcome, orderType: "x" as unknown as OrderType }), reason: "invalid_outcome" },
    { name: "order type before stp", spec: buy({ orderType: "x" as unknown as OrderType, stp: "x" as unknown as Stp }), reason: "invalid_order_type" },
    { name: "stp before price", spec: buy({ stp: "x" as unknown as Stp, priceBps: 20_000 }), reason: "invalid_stp" },
    { name: "price before size", spec: buy({ priceBps: 20_000, size: 0 }), reason: "invalid_price" },
    { name: "size before nonce", spec: buy({ size: 0, nonce: 0 }), reason: "invalid_size" },
    { name: "nonce before market", spec: buy({ nonce: 0, marketId: "nope" }), reason: "invalid_nonce" },
    { name: "stale nonce before halted (a fresh nonce is spent before the market is read)", spec: buy({ marketId: "halted", nonce: 1 }), reason: "nonce_stale" },
    { name: "stale nonce before resolved", spec: buy({ marketId: "resolved", nonce: 1 }), reason: "nonce_stale" },
    { name: "halted after a fresh nonce", spec: buy({ marketId: "halted" }), reason: "market_halted" },
    { name: "resolved after a fresh nonce", spec: buy({ marketId: "resolved" }), reason: "market_resolved" },
    { name: "stale nonce before dust", spec: buy({ nonce: 1, priceBps: 1, size: 1 }), reason: "nonce_stale" },
    { name: "dust before unknown builder", spec: buy({ priceBps: 1, size: 1, builderKey: "nope" }), reason: "dust_order" },
    { name: "unknown builder before would_cross", spec: buy({ priceBps: 7000, orderType: "post_only", builderKey: "nope" }), reason: "unknown_builder" },
    { name: "would_cross before insufficient_balance", spec: buy({ priceBps: 7000, size: 1000, orderType: "post_only" }), reason: "would_cross" },
    { name: "insufficient_balance before fok_unfilled", spec: buy({ priceBps: 7000, size: 1000, orderType: "fok" }), reason: "insufficient_balance" },
    { name: "insufficient_shares before fok_unfilled", spec: buy({ side: "sell", priceBps: 1000, size: 1000, orderType: "fok" }), reason: "insufficient_shares" }
  ]
  it.each(cases)("$name", ({ spec, reason }) => {
    const h = setup()
    h.createMarket("halted")
    h.ok({ type: "set_market_status", marketId: "halted", status: "halted" })
    h.createMarket("resolved")
    h.ok({ type: "set_market_status", marketId: "resolved", status: "resolved", winningOutcome: "yes" })
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 100, size: 1, nonce: 1 })
    h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 3000, size: 2 }) // ask @ YES 7000
    h.rejectOrder(spec, reason)
  })
})

describe("price and size bounds", () => {
  it("price 10000 is valid (lock 1,000,000 per contract)", () => {
    const h = setup()
    const p = h.place(buy({ priceBps: 10_000, size: 3 }))
    expect(p.rested).toBe(3)
    expect(h.bal("alice").locked).toBe(3_000_000)
  })

  it("price 0 is a valid price but always dust", () => {
    const h = setup()
    h.rejectOrder(buy({ priceBps: 0, size: 100_000_000 }), "dust_order")
  })

  it("size 100,000,000 is valid", () => {
    const h = new Harness()
    h.createMarket(M)
    // 100,000,000 · 1 · 100 = 10,000,000,000 micro
    h.credit("whale", 10_000_000_000)
    h.place({ user: "whale", side: "buy", outcome: "yes", priceBps: 1, size: 100_000_000 })
    expect(h.bal("whale")).toEqual({ available: 0, locked: 10_000_000_000 })
  })
})

describe("dust: size · price · 100 < 10,000 is rejected", () => {
  const cases: ReadonlyArray<{ size: number; priceBps: number; ok: boolean }> = [
    { size: 1, priceBps: 99, ok: false }, // 9,900
    { size: 1, priceBps: 100, ok: true }, // 10,000 exactly
    { size: 3, priceBps: 33, ok: false }, // 9,900
    { size: 2, priceBps: 50, ok: true }, // 10,000
    { size: 100, priceBps: 1, ok: true }, // 10,000
    { size: 99, priceBps: 1, ok: false } // 9,900
  ]
  it.each(cases)("$size @ $priceBps → accepted: $ok", ({ size, priceBps, ok }) => {
    const h = setup()
    if (ok) {
      h.place(buy({ size, priceBps }))
      expect(h.bal("alice").locked).toBe(10_000)
    } else h.rejectOrder(buy({ size, priceBps }), "dust_order")
  })

  it("dust applies to sells in their own terms", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 5000)
    h.rejectOrder({ user: "alice", side: "sell", outcome: "yes", priceBps: 99, size: 1 }, "dust_order")
    h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 100, size: 1 })
  })
})

describe("nonces", () => {
  it("must exceed the last spent nonce; stale and equal are rejected and spend nothing", () => {
    const h = setup()
    h.place(buy({ nonce: 5 }))
    h.rejectOrder(buy({ nonce: 5 }), "nonce_stale")
    h.rejectOrder(buy({ nonce: 4 }), "nonce_stale")
    h.place(buy({ nonce: 6 }))
    expect(h.engine.accounts.get("alice")!.lastNonce).toBe(6)
    // gaps are fine
    h.place(buy({ nonce: 100 }))
    h.rejectOrder(buy({ nonce: 99 }), "nonce_stale")
  })

  it("a refused order spends its fresh nonce: the same signed body is never accepted later (docs/decisions.md)", () => {
    const h = setup()
    h.place(buy({ nonce: 5 }))
    // Refused for want of money: nonce 10 is spent, so the very same order is stale once money arrives.
    h.rejectOrder(buy({ nonce: 10, size: 1_000_000 }), "insufficient_balance")
    expect(h.engine.accounts.get("alice")!.lastNonce).toBe(10)
    h.credit("alice", 1_000_000_000_000)
    h.rejectOrder(buy({ nonce: 10, size: 1_000_000 }), "nonce_stale")
    h.rejectOrder(buy({ nonce: 7 }), "nonce_stale")
    h.place(buy({ nonce: 11 }))
    // A fill-or-kill the book could not fill, then liquidity appears: the old body stays refused.
    h.rejectOrder({ ...buy({ nonce: 12 }), orderType: "fok" }, "fok_unfilled")
    h.place({ ...buy({ user: "bob", nonce: 1 }), side: "buy", outcome: "no", priceBps: 10_000 - 5_000 })
    h.rejectOrder({ ...buy({ nonce: 12 }), orderType: "fok" }, "nonce_stale")
    // A user with no account yet gets one holding only the spent nonce; field errors spend nothing.
    h.rejectOrder(buy({ user: "zoe", nonce: 3 }), "insufficient_balance")
    expect(h.engine.accounts.get("zoe")!.lastNonce).toBe(3)
    h.rejectOrder(buy({ user: "yann", nonce: 3, priceBps: 10_001 }), "invalid_price")
    expect(h.engine.accounts.has("yann")).toBe(false)
  })

  it("are per user", () => {
    const h = setup()
    h.place(buy({ nonce: 5 }))
    h.place(buy({ user: "bob", nonce: 1 }))
  })
})

describe("balance and share checks", () => {
  it("a buy needs available ≥ size · lockPerContract: one micro short is rejected", () => {
    const h = new Harness()
    h.createMarket(M)
    h.credit("alice", 2_999_999)
    h.rejectOrder(buy({ priceBps: 6000, size: 5 }), "insufficient_balance")
    h.credit("alice", 1)
    h.place(buy({ priceBps: 6000, size: 5 }))
    expect(h.bal("alice")).toEqual({ available: 0, locked: 3_000_000 })
  })

  it("locked money does not count", () => {
    const h = new Harness()
    h.createMarket(M)
    h.credit("alice", 5_000_000)
    h.place(buy({ priceBps: 6000, size: 5 }))
    h.rejectOrder(buy({ priceBps: 6000, size: 5 }), "insufficient_balance")
  })

  it("a user without an account cannot buy (and is left with an empty account holding the spent nonce)", () => {
    const h = setup()
    h.rejectOrder(buy({ user: "ghost", nonce: 4 }), "insufficient_balance")
    expect(h.bal("ghost")).toEqual({ available: 0, locked: 0 })
    expect(h.engine.accounts.get("ghost")!.lastNonce).toBe(4)
  })

  it("no naked shorts: selling without shares, or more than the unlocked shares, is rejected", () => {
    const h = setup()
    h.rejectOrder({ user: "carol", side: "sell", outcome: "yes", priceBps: 5000, size: 1 }, "insufficient_shares")
    mint(h, "alice", "bob", 10, 5000)
    h.rejectOrder({ user: "alice", side: "sell", outcome: "no", priceBps: 5000, size: 1 }, "insufficient_shares")
    h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 9000, size: 7 })
    h.rejectOrder({ user: "alice", side: "sell", outcome: "yes", priceBps: 9000, size: 4 }, "insufficient_shares")
    h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 9000, size: 3 })
    expect(h.pos("alice")).toMatchObject({ yes: 10, yesLocked: 10 })
  })
})

describe("command envelope", () => {
  const credit = (seq: number, tsSec: number): Command => ({ type: "credit", user: "alice", amountMicro: 1, ref: "r", seq, tsSec })

  it.each([
    { name: "a skipped seq", delta: 2 },
    { name: "a replayed seq", delta: 0 },
    { name: "a far-behind seq", delta: -3 },
    { name: "a fractional seq", delta: 0.5 }
  ])("bad_sequence for $name (seq = last + $delta): not consumed, nothing changes", ({ delta }) => {
    const h = setup()
    const hash = h.hash()
    const ev = h.raw(credit(h.seq + delta, h.tsSec))
    expect(ev).toEqual([{ type: "rejected", command: "credit", reason: "bad_sequence", user: null }])
    expect(h.hash()).toBe(hash)
    expect(h.engine.lastSeq).toBe(h.seq)
    h.credit("alice", 1) // seq h.seq + 1 still works
  })

  it("bad_time for a time before the last command: not consumed, nothing changes", () => {
    const h = setup()
    h.advance(10)
    h.credit("alice", 1)
    const hash = h.hash()
    const ev = h.raw(credit(h.seq + 1, h.tsSec - 1))
    expect(ev).toEqual([{ type: "rejected", command: "credit", reason: "bad_time", user: null }])
    expect(h.hash()).toBe(hash)
    expect(h.engine.lastTsSec).toBe(T0 + 10)
    // the same time is fine, and the seq was not consumed
    h.credit("alice", 1)
  })

  it("a non-integer time is bad_time", () => {
    const h = setup()
    const ev = h.raw(credit(h.seq + 1, h.tsSec + 0.5))
    expect(ev).toEqual([{ type: "rejected", command: "credit", reason: "bad_time", user: null }])
  })

  it("an unknown command type is invalid_command and consumes its seq", () => {
    const h = setup()
    h.reject({ type: "explode" } as unknown as { type: "credit"; user: string; amountMicro: number; ref: string }, "invalid_command", null)
    h.credit("alice", 1)
  })

  it("the harness seq and the engine agree after a mix of accepted and rejected commands", () => {
    const h = setup()
    h.rejectOrder(buy({ marketId: "nope" }), "unknown_market")
    h.place(buy())
    expect(h.engine.lastSeq).toBe(h.seq)
    expect(h.seq).toBe(7) // create_market, 4 credits, 1 rejection, 1 order
  })
})

describe("check order with a malformed (non-string) builderKey", () => {
  // docs/engine.md: unknown_builder comes after unknown_market, market_halted, market_resolved,
  // nonce_stale and dust_order. A non-string key names no builder, so it is an unknown builder
  // and must not outrank the earlier checks.
  const cases: ReadonlyArray<{ name: string; spec: OrderSpec; reason: RejectReason }> = [
    { name: "unknown market", spec: buy({ marketId: "nope" }), reason: "unknown_market" },
    { name: "halted market", spec: buy({ marketId: "halted" }), reason: "market_halted" },
    { name: "stale nonce", spec: buy({ nonce: 1 }), reason: "nonce_stale" },
    { name: "dust", spec: buy({ priceBps: 1, size: 1 }), reason: "dust_order" }
  ]
  it.each(cases)("$name wins over a non-string builderKey", ({ spec, reason }) => {
    const h = setup()
    h.createMarket("halted")
    h.ok({ type: "set_market_status", marketId: "halted", status: "halted" })
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 100, size: 1, nonce: 1 })
    const input = { ...h.orderInput(spec), builderKey: 42 as unknown as string }
    h.reject(input, reason)
  })

  it("a non-string builderKey on an otherwise valid order is unknown_builder", () => {
    const h = setup()
    h.reject({ ...h.orderInput(buy()), builderKey: 42 as unknown as string }, "unknown_builder")
  })
})

describe("event shapes", () => {
  it("order_accepted echoes the order with its id, defaults and time; fill carries every field", () => {
    const h = setup()
    h.advance(42)
    const maker = h.place({ user: "bob", side: "buy", outcome: "no", priceBps: 4000, size: 3, nonce: 9 })
    expect(maker.events[0]).toEqual({
      type: "order_accepted",
      orderId: 1,
      user: "bob",
      marketId: M,
      side: "buy",
      outcome: "no",
      priceBps: 4000,
      size: 3,
      orderType: "gtc",
      stp: "cancel_resting",
      nonce: 9,
      builderKey: null,
      tsSec: T0 + 42
    })
    h.advance(1)
    const p = h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 6500, size: 2, orderType: "ioc" })
    expect(p.fills).toEqual([
      {
        type: "fill",
        tradeId: 1,
        marketId: M,
        kind: "mint",
        yesPriceBps: 6000,
        size: 2,
        tsSec: T0 + 43,
        takerOrderId: 2,
        takerUser: "alice",
        takerSide: "buy",
        takerOutcome: "yes",
        takerPriceBps: 6000,
        makerOrderId: 1,
        makerUser: "bob",
        makerSide: "buy",
        makerOutcome: "no",
        makerPriceBps: 4000,
        makerRemaining: 1,
        takerFeeMicro: 0,
        makerRebateMicro: 0,
        takerBuilderFeeMicro: 0,
        makerBuilderFeeMicro: 0,
        takerBuilderWallet: null,
        makerBuilderWallet: null
      }
    ])
    // alice: 2 · 600,000 = 1,200,000; bob still locks 1 · 400,000
    expect(p.events.slice(2)).toEqual([
      { type: "balance", user: "alice", availableMicro: USDC100 - 1_200_000, lockedMicro: 0 },
      { type: "balance", user: "bob", availableMicro: USDC100 - 1_200_000, lockedMicro: 400_000 },
      { type: "position", user: "alice", marketId: M, yes: 2, no: 0, yesLocked: 0, noLocked: 0, costYesMicro: 1_200_000, costNoMicro: 0 },
      { type: "position", user: "bob", marketId: M, yes: 0, no: 2, yesLocked: 0, noLocked: 0, costYesMicro: 0, costNoMicro: 800_000 }
    ])
  })

  it("a sell that only rests still reports the seller's balance (the taker's account is always touched)", () => {
    const h = setup()
    mint(h, "alice", "bob", 10, 6000)
    const p = h.place({ user: "alice", side: "sell", outcome: "yes", priceBps: 7000, size: 4 })
    expect(p.events.map((e) => e.type)).toEqual(["order_accepted", "order_rested", "balance", "position"])
    expect(p.events[3]).toEqual({ type: "position", user: "alice", marketId: M, yes: 10, no: 0, yesLocked: 4, noLocked: 0, costYesMicro: 6_000_000, costNoMicro: 0 })
  })
})
