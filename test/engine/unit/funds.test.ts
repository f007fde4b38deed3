// credit / debit: amounts, overflow, withdraw nonces, balance checks.
import { describe, expect, it } from "vitest"
import { MAX_BALANCE_MICRO, type RejectReason } from "../../../src/engine/index.ts"
import { Harness, M } from "./harness.ts"

describe("credit", () => {
  it("adds to available and reports the new balance", () => {
    const h = new Harness()
    const ev = h.ok({ type: "credit", user: "alice", amountMicro: 1_234_567, ref: "tx1:0" })
    expect(ev).toEqual([
      { type: "credited", user: "alice", amountMicro: 1_234_567, ref: "tx1:0" },
      { type: "balance", user: "alice", availableMicro: 1_234_567, lockedMicro: 0 }
    ])
    h.credit("alice", 1)
    expect(h.bal("alice")).toEqual({ available: 1_234_568, locked: 0 })
    expect(h.engine.netDepositsMicro).toBe(1_234_568)
  })

  it("accepts 1 and 1e15", () => {
    const h = new Harness()
    h.credit("alice", 1)
    h.credit("bob", 1_000_000_000_000_000)
    expect(h.bal("bob").available).toBe(1e15)
  })

  const invalid: ReadonlyArray<{ name: string; user: string; amountMicro: number; reason: RejectReason; expUser: string | null }> = [
    { name: "zero", user: "alice", amountMicro: 0, reason: "invalid_amount", expUser: "alice" },
    { name: "negative", user: "alice", amountMicro: -5, reason: "invalid_amount", expUser: "alice" },
    { name: "fractional", user: "alice", amountMicro: 1.5, reason: "invalid_amount", expUser: "alice" },
    { name: "above 1e15", user: "alice", amountMicro: 1e15 + 1, reason: "invalid_amount", expUser: "alice" },
    { name: "NaN", user: "alice", amountMicro: Number.NaN, reason: "invalid_amount", expUser: "alice" },
    { name: "empty user", user: "", amountMicro: 10, reason: "invalid_user", expUser: null }
  ]
  it.each(invalid)("rejects $name ($reason)", ({ user, amountMicro, reason, expUser }) => {
    const h = new Harness()
    h.credit("alice", 5)
    h.reject({ type: "credit", user, amountMicro, ref: "r" }, reason, expUser)
    expect(h.engine.netDepositsMicro).toBe(5)
  })

  it("a balance may reach 2^51 but not exceed it (amount_overflow); locked money counts", () => {
    const h = new Harness()
    h.createMarket(M)
    // 2^51 = 2,251,799,813,685,248 = 2 · 1e15 + 251,799,813,685,248
    h.credit("alice", 1e15)
    h.credit("alice", 1e15)
    h.credit("alice", 251_799_813_685_247) // 2^51 − 1
    // lock 1,000,000 in a resting order: available + locked is still 2^51 − 1
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 10_000, size: 1 })
    h.reject({ type: "credit", user: "alice", amountMicro: 2, ref: "r" }, "amount_overflow")
    h.credit("alice", 1)
    expect(h.bal("alice")).toEqual({ available: MAX_BALANCE_MICRO - 1_000_000, locked: 1_000_000 })
    h.reject({ type: "credit", user: "alice", amountMicro: 1, ref: "r" }, "amount_overflow")
  })
})

describe("debit", () => {
  const funded = () => {
    const h = new Harness()
    h.createMarket(M)
    h.credit("alice", 10_000_000)
    return h
  }

  it("removes from available and records the withdraw nonce", () => {
    const h = funded()
    const ev = h.ok({ type: "debit", user: "alice", amountMicro: 2_500_000, withdrawNonce: 1, ref: "w1" })
    expect(ev).toEqual([
      { type: "debited", user: "alice", amountMicro: 2_500_000, withdrawNonce: 1, ref: "w1" },
      { type: "balance", user: "alice", availableMicro: 7_500_000, lockedMicro: 0 }
    ])
    expect(h.engine.netDepositsMicro).toBe(7_500_000)
    expect(h.engine.accounts.get("alice")!.lastWithdrawNonce).toBe(1)
  })

  it("the whole available balance can be withdrawn", () => {
    const h = funded()
    h.ok({ type: "debit", user: "alice", amountMicro: 10_000_000, withdrawNonce: 1, ref: "w" })
    expect(h.bal("alice")).toEqual({ available: 0, locked: 0 })
  })

  it("withdraw nonces: equal or lower is stale; a rejected debit does not consume its nonce", () => {
    const h = funded()
    h.ok({ type: "debit", user: "alice", amountMicro: 1, withdrawNonce: 3, ref: "w" })
    h.reject({ type: "debit", user: "alice", amountMicro: 1, withdrawNonce: 3, ref: "w" }, "withdraw_nonce_stale")
    h.reject({ type: "debit", user: "alice", amountMicro: 1, withdrawNonce: 2, ref: "w" }, "withdraw_nonce_stale")
    h.reject({ type: "debit", user: "alice", amountMicro: 999_999_999, withdrawNonce: 9, ref: "w" }, "insufficient_balance")
    h.ok({ type: "debit", user: "alice", amountMicro: 1, withdrawNonce: 4, ref: "w" })
    expect(h.bal("alice").available).toBe(10_000_000 - 2)
  })

  it("order nonces and withdraw nonces are independent", () => {
    const h = funded()
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 5000, size: 1, nonce: 50 })
    h.ok({ type: "debit", user: "alice", amountMicro: 1, withdrawNonce: 1, ref: "w" })
  })

  it("locked money cannot be withdrawn", () => {
    const h = funded()
    h.place({ user: "alice", side: "buy", outcome: "yes", priceBps: 5000, size: 10 }) // locks 5,000,000
    h.reject({ type: "debit", user: "alice", amountMicro: 5_000_001, withdrawNonce: 1, ref: "w" }, "insufficient_balance")
    h.ok({ type: "debit", user: "alice", amountMicro: 5_000_000, withdrawNonce: 1, ref: "w" })
    expect(h.bal("alice")).toEqual({ available: 0, locked: 5_000_000 })
  })

  const invalid: ReadonlyArray<{ name: string; user: string; amountMicro: number; withdrawNonce: number; reason: RejectReason }> = [
    { name: "zero amount", user: "alice", amountMicro: 0, withdrawNonce: 1, reason: "invalid_amount" },
    { name: "amount above 1e15", user: "alice", amountMicro: 1e15 + 1, withdrawNonce: 1, reason: "invalid_amount" },
    { name: "fractional amount", user: "alice", amountMicro: 0.5, withdrawNonce: 1, reason: "invalid_amount" },
    { name: "nonce 0", user: "alice", amountMicro: 1, withdrawNonce: 0, reason: "invalid_nonce" },
    { name: "more than available", user: "alice", amountMicro: 10_000_001, withdrawNonce: 1, reason: "insufficient_balance" },
    { name: "unknown user", user: "ghost", amountMicro: 1, withdrawNonce: 1, reason: "insufficient_balance" }
  ]
  it.each(invalid)("rejects $name ($reason)", ({ user, amountMicro, withdrawNonce, reason }) => {
    const h = funded()
    h.reject({ type: "debit", user, amountMicro, withdrawNonce, ref: "w" }, reason)
    expect(h.engine.netDepositsMicro).toBe(10_000_000)
  })

  it("empty user is invalid_user", () => {
    const h = funded()
    h.reject({ type: "debit", user: "", amountMicro: 1, withdrawNonce: 1, ref: "w" }, "invalid_user", null)
  })
})
