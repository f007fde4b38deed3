// The web app's own arithmetic: cents and micro-USDC formatting and parsing, the order
// ticket's cost preview, the Earn forms' validation (field names), and the error words.
import { describe, expect, it } from "vitest"
import { paramsFromPreset } from "../../src/lp/presets.ts"
import { advancedForm, simpleForm } from "../../web/src/bot/form.ts"
import { describeError, knownErrorCodes } from "../../web/src/errors.ts"
import { formatCents, formatProb, formatUsd, parseCentsToBps, parseUsdToMicro, previewOrder } from "../../web/src/format.ts"

describe("formatting", () => {
  it("prices in cents from bps", () => {
    expect(formatCents(5000)).toBe("50¢")
    expect(formatCents(5250)).toBe("52.5¢")
    expect(formatCents(5205)).toBe("52.05¢")
    expect(formatCents(1)).toBe("0.01¢")
    expect(formatCents(10000)).toBe("100¢")
    expect(formatCents(5000.5)).toBe("50.005¢") // a mid between two levels
    expect(formatProb(0.525)).toBe("52.5¢")
    expect(formatProb(null)).toBe("—")
  })

  it("micro-USDC as dollars: always to the cent, rounded to the nearest, up or down", () => {
    expect(formatUsd(0)).toBe("$0.00")
    expect(formatUsd(1_234_567_890)).toBe("$1,234.57")
    expect(formatUsd(1_234_564_999)).toBe("$1,234.56")
    expect(formatUsd(5_000)).toBe("$0.01") // half a cent rounds up
    expect(formatUsd(4_999)).toBe("<$0.01") // not zero, but less than a cent
    expect(formatUsd(-1_500_000)).toBe("−$1.50")
    expect(formatUsd(-5_000)).toBe("−$0.01")
    expect(formatUsd(2_500_000, { sign: true })).toBe("+$2.50")
    // The ticket's $0.5005: a cost rounds up (never exceeded), proceeds and profit round down.
    expect(formatUsd(500_500, { round: "up" })).toBe("$0.51")
    expect(formatUsd(500_500, { round: "down" })).toBe("$0.50")
    expect(formatUsd(500_000, { round: "up" })).toBe("$0.50")
    expect(formatUsd(-500_500, { round: "down" })).toBe("−$0.51")
    expect(formatUsd(-500_500, { round: "up" })).toBe("−$0.50")
    expect(formatUsd(1, { round: "up" })).toBe("$0.01")
  })

  it("parses typed amounts to integers without floats", () => {
    expect(parseUsdToMicro("12.5")).toBe(12_500_000)
    expect(parseUsdToMicro("$1,000")).toBe(1_000_000_000)
    expect(parseUsdToMicro("0.000001")).toBe(1)
    expect(parseUsdToMicro("0.1")).toBe(100_000) // 0.1 is not 0.1000000000000000055…
    expect(parseUsdToMicro("1.0000001")).toBeNull()
    expect(parseUsdToMicro("-1")).toBeNull()
    expect(parseUsdToMicro("abc")).toBeNull()
    expect(parseCentsToBps("52")).toBe(5200)
    expect(parseCentsToBps("52.5")).toBe(5250)
    expect(parseCentsToBps("0.01")).toBe(1)
    expect(parseCentsToBps("100")).toBe(10000)
    expect(parseCentsToBps("100.01")).toBeNull()
    expect(parseCentsToBps("52.555")).toBeNull()
  })
})

describe("order cost preview", () => {
  it("a buy costs size × price plus the taker fee rounded up, and pays 1 USDC a contract", () => {
    expect(previewOrder({ side: "buy", priceBps: 4000, size: 10, takerFeeBps: 0 })).toEqual({ ok: true, notionalMicro: 4_000_000, maxFeeMicro: 0, payoutMicro: 10_000_000, netMicro: 6_000_000 })
    // fee = ceil(3 · 3333 · 7 / 100) = ceil(699.93) = 700 micro
    expect(previewOrder({ side: "buy", priceBps: 3333, size: 3, takerFeeBps: 7 })).toEqual({ ok: true, notionalMicro: 999_900 + 700, maxFeeMicro: 700, payoutMicro: 3_000_000, netMicro: 3_000_000 - 999_900 - 700 })
  })

  it("a sell receives size × price less the fee", () => {
    expect(previewOrder({ side: "sell", priceBps: 6000, size: 5, takerFeeBps: 10 })).toEqual({ ok: true, notionalMicro: 3_000_000, maxFeeMicro: 3_000, payoutMicro: 0, netMicro: 2_997_000 })
  })

  it("says what is wrong instead of a number", () => {
    expect(previewOrder({ side: "buy", priceBps: 1, size: 50, takerFeeBps: 0 })).toMatchObject({ ok: false, problem: expect.stringContaining("at least 1¢") })
    expect(previewOrder({ side: "buy", priceBps: 5000, size: 0, takerFeeBps: 0 })).toMatchObject({ ok: false, problem: expect.stringContaining("at least 1") })
    expect(previewOrder({ side: "buy", priceBps: 10000, size: 1, takerFeeBps: 0 })).toMatchObject({ ok: false, problem: expect.stringContaining("between") })
    expect(previewOrder({ side: "buy", priceBps: 5000, size: Number.NaN, takerFeeBps: 0 }).ok).toBe(false)
  })
})

describe("Earn forms", () => {
  const good = { capital: "100", spread: "2", levels: "3", contracts: "10", interval: "15", skew: "80", stopLoss: "10", takeProfit: "20" }

  it("a valid Advanced form gives the server's wire spec and params", () => {
    const r = advancedForm(good)
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.spec).toEqual({
      mode: "advanced", capital_micro_usdc: 100_000_000, spread_bps: 200, levels_per_side: 3, contracts_per_level: 10,
      rebalance_interval_secs: 15, skew_tolerance_pct: 80, stop_loss_micro_usdc: 10_000_000, take_profit_micro_usdc: 20_000_000
    })
    expect(r.params.spreadBps).toBe(200)
    expect(r.params.rebalanceIntervalSec).toBe(15)
  })

  it("names the bad field, in the form's units", () => {
    expect(advancedForm({ ...good, spread: "0.01" })).toEqual({ ok: false, errors: { spread: "must be between 0.02¢ and 99.98¢" } })
    expect(advancedForm({ ...good, levels: "11" })).toEqual({ ok: false, errors: { levels: "must be a whole number from 1 to 10" } })
    expect(advancedForm({ ...good, skew: "0" })).toEqual({ ok: false, errors: { skew: "must be a whole number from 1 to 100" } })
    expect(advancedForm({ ...good, interval: "1.5" })).toEqual({ ok: false, errors: { interval: "must be a whole number from 1 to 86400" } })
    expect(advancedForm({ ...good, capital: "0.5" })).toEqual({ ok: false, errors: { capital: "must be between $1.00 and $2,251,799,813.68" } })
    // Text that is not a number of the field's kind still gives the range (docs/web.md promises one).
    expect(advancedForm({ ...good, spread: "150" })).toEqual({ ok: false, errors: { spread: "must be between 0.02¢ and 99.98¢ (cents, e.g. 2 or 1.5)" } })
    expect(advancedForm({ ...good, spread: "wide" })).toEqual({ ok: false, errors: { spread: "must be between 0.02¢ and 99.98¢ (cents, e.g. 2 or 1.5)" } })
    const two = advancedForm({ ...good, contracts: "x", stopLoss: "-1" })
    expect(two.ok === false && Object.keys(two.errors).sort()).toEqual(["contracts", "stopLoss"])
  })

  it("Simple: capital plus a preset, the same params as the server's preset", () => {
    const r = simpleForm("250", "conservative")
    expect(r.ok && r.params).toEqual(paramsFromPreset("conservative", 250_000_000))
    expect(simpleForm("", "balanced")).toEqual({ ok: false, errors: { capital: "must be between $1.00 and $2,251,799,813.68 (dollars, e.g. 100)" } })
    expect(simpleForm("100", "yolo")).toEqual({ ok: false, errors: { preset: "choose a risk preset" } })
  })
})

describe("error words", () => {
  it("every code the service answers has words, with the code beside them", () => {
    const codes = ["would_cross", "insufficient_balance", "insufficient_shares", "fok_unfilled", "dust_order", "market_halted", "market_resolved", "nonce_stale", "trading_disabled", "lp_disabled", "unauthorized", "stale_timestamp", "rate_limited", "wallet_taken", "session_not_delegated", "expiry_out_of_range"]
    for (const c of codes) expect(knownErrorCodes()).toContain(c)
    expect(describeError(422, { error: "would_cross" })).toMatch(/^Post-only order would cross .* \(would_cross\)$/)
    expect(describeError(429, { error: "rate_limited", retry_after: 3 })).toContain("retry in 3s")
    expect(describeError(422, { error: "engine_rejected", detail: "insufficient_balance" })).toContain("Not enough available balance")
    expect(describeError(418, { error: "teapot" })).toBe("The service refused the request (HTTP 418). (teapot)")
  })
})
