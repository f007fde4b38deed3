import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  addSample,
  adjustedMidBps,
  type DayAccrual,
  emptyDay,
  type MarketSample,
  marketSample,
  orderScore,
  qMinTimesC,
  type Ratio,
  type RestingQuote,
  SHARE_SCALE
} from "../../src/lp/rewards.ts"
import { allocateDay, applyWalletCap, estimateToday, walletCapMicro } from "../../src/lp/rewards-alloc.ts"

const bid = (maker: string, yesPriceBps: number, size: number): RestingQuote => ({ maker, isBid: true, yesPriceBps, size })
const ask = (maker: string, yesPriceBps: number, size: number): RestingQuote => ({ maker, isBid: false, yesPriceBps, size })

/** r == num/den exactly (cross-multiplied). */
const expectRatio = (r: Ratio, num: bigint, den: bigint): void => expect(r.num * den).toBe(num * r.den)
const units = (sample: MarketSample, maker: string, field: "qOneUnits" | "qTwoUnits" | "qMinUnits"): Ratio => {
  const m = sample.makers.find((x) => x.maker === maker)
  return { num: BigInt(m?.[field] ?? "0"), den: BigInt(sample.scoreUnitDen) }
}
const SCORE = { bandSpreadBpsMax: 300, minSizeContracts: 10 } as const
/** A deep two-sided maker pinning the adjusted mid at `midBps` (±5 bps). */
const anchor = (midBps: number): RestingQuote[] => [bid("anchor", midBps - 5, 1_000), ask("anchor", midBps + 5, 1_000)]
/** A sample with the given exact qMin units per maker (mid 0.50). */
const sampleOf = (qMins: Record<string, bigint>): MarketSample => ({
  midBps: 5_000,
  scoreUnitDen: "1",
  makers: Object.entries(qMins).map(([maker, q]) => ({
    maker, qOne: 0, qTwo: 0, qMin: 0, qOneUnits: "0", qTwoUnits: "0", qMinUnits: q.toString()
  }))
})

describe("orderScore: S(v, s) · size = ((v − s)/v)² · size, exact", () => {
  it("hand-computed values at mid 0.50, v = 3¢", () => {
    expectRatio(orderScore(4_900, 100, 5_000, 300), 400n, 9n) // (2/3)²·100 = 44.4…
    expectRatio(orderScore(4_800, 200, 5_000, 300), 200n, 9n) // (1/3)²·200 = 22.2…
    expectRatio(orderScore(5_050, 200, 5_000, 300), 1_250n, 9n) // (2.5/3)²·200 = 138.8…
    expectRatio(orderScore(5_000, 7, 5_000, 300), 7n, 1n) // at the mid: full size
  })
  it("handles a half-bps mid without rounding it", () => {
    // s = 99.5 bps: ((300 − 99.5)/300)² · 100 = 401² · 100 / 600²
    expectRatio(orderScore(4_900, 100, 4_999.5, 300), 401n * 401n * 100n, 600n * 600n)
  })
  it("is zero at and beyond the band edge", () => {
    expectRatio(orderScore(4_700, 100, 5_000, 300), 0n, 1n)
    expectRatio(orderScore(5_301, 100, 5_000, 300), 0n, 1n)
    expectRatio(orderScore(4_701, 100, 5_000, 300), 100n, 90_000n) // s = 299: (1/300)²·100
  })
})

describe("adjustedMidBps: size-cutoff-adjusted mid", () => {
  it("ignores a small order at the top of the book", () => {
    const book = [bid("dust", 5_100, 5), bid("a", 4_900, 100), ask("a", 5_300, 100)]
    expect(adjustedMidBps(book, 0)).toBe(5_200)
    expect(adjustedMidBps(book, 50)).toBe(5_100) // (4900 + 5300)/2
  })
  it("uses cumulative depth at that price or better, as published", () => {
    const asks = [ask("z", 6_000, 100)]
    expect(adjustedMidBps([bid("a", 5_000, 30), bid("b", 5_000, 30), bid("c", 4_800, 100), ...asks], 50)).toBe(5_500)
    expect(adjustedMidBps([bid("a", 5_000, 30), bid("b", 4_950, 30), bid("c", 4_800, 100), ...asks], 50)).toBe(5_475)
  })
  it("can end in .5 bps, and is null when a side lacks min-size depth", () => {
    expect(adjustedMidBps([bid("a", 4_999, 10), ask("a", 5_002, 10)], 10)).toBe(5_000.5)
    expect(adjustedMidBps([bid("a", 4_999, 10), ask("a", 5_002, 9)], 10)).toBeNull()
    expect(adjustedMidBps([bid("a", 4_999, 10)], 1)).toBeNull()
  })
})

describe("marketSample: Q_one, Q_two, Q_min per maker", () => {
  it("reproduces the published example: mid 0.50, max spread 3¢, Q_one ≈ 111.1, Q_two ≈ 175.0 → Q_min ≈ 111.1", () => {
    // Q_one orders as published: 100 bid @0.49 and 200 bid @0.48 on YES, 100 ask @0.51
    // on NO (= a YES bid @0.49). The published Q_two orders have spreads 1.5¢ ×100,
    // 2¢ ×100 and 0.5¢ ×200, but their listed sides do not all map to the ask
    // bucket; we keep those spreads and sizes and place them as YES asks.
    // The anchor maker pins the adjusted mid at exactly 0.50, which the example assumes.
    const book = [
      ...anchor(5_000),
      bid("pub", 4_900, 100), bid("pub", 4_800, 200), bid("pub", 10_000 - 5_100, 100),
      ask("pub", 5_150, 100), ask("pub", 5_200, 100), ask("pub", 5_050, 200)
    ]
    const sample = marketSample(book, SCORE)
    expect(sample.midBps).toBe(5_000)
    expectRatio(units(sample, "pub", "qOneUnits"), 1_000n, 9n) // 111.11…
    expectRatio(units(sample, "pub", "qTwoUnits"), 175n, 1n)
    expectRatio(units(sample, "pub", "qMinUnits"), 1_000n, 9n) // max(min(111.1, 175), 175/3)
    const pub = sample.makers.find((m) => m.maker === "pub")
    expect(pub?.qOne).toBeCloseTo(111.111, 3)
    expect(pub?.qTwo).toBe(175)
    expect(pub?.qMin).toBeCloseTo(111.111, 3)
  })
  it("drops orders beyond the band and below min size", () => {
    const book = [...anchor(5_000), bid("x", 4_700, 100), ask("x", 5_400, 100), bid("x", 4_990, 9), ask("y", 5_010, 10)]
    const sample = marketSample(book, SCORE)
    expect(sample.makers.map((m) => m.maker)).toEqual(["anchor", "y"])
    expectRatio(units(sample, "y", "qTwoUnits"), 10n * 290n * 290n, 300n * 300n)
  })
  it("single-sided maker: Q/3 inside [0.10, 0.90], nothing outside", () => {
    const inside = marketSample([...anchor(5_000), bid("x", 4_950, 90)], SCORE)
    expectRatio(units(inside, "x", "qOneUnits"), 125n, 2n) // (250/300)²·90 = 62.5
    expectRatio(units(inside, "x", "qMinUnits"), 125n, 6n) // 62.5 / 3
    const outside = marketSample([...anchor(500), bid("x", 450, 90)], SCORE)
    expectRatio(units(outside, "x", "qOneUnits"), 125n, 2n)
    expectRatio(units(outside, "x", "qMinUnits"), 0n, 1n)
    // The anchor is two-sided and symmetric: Q_min = Q_one = Q_two either way.
    expectRatio(units(outside, "anchor", "qMinUnits"), 1_000n * 295n * 295n, 300n * 300n)
  })
  it("c = 3 applies at exactly 1000 and 9000 bps, min() just outside", () => {
    expect(qMinTimesC(9n, 0n, 1_000)).toBe(9n) // Q_min = 9/3
    expect(qMinTimesC(9n, 0n, 9_000)).toBe(9n)
    expect(qMinTimesC(9n, 0n, 999.5)).toBe(0n)
    expect(qMinTimesC(9n, 0n, 9_000.5)).toBe(0n)
    expect(qMinTimesC(9n, 6n, 5_000)).toBe(18n) // min wins: 3·6 > 9
    expect(qMinTimesC(9n, 2n, 5_000)).toBe(9n) // max/c wins: 9 > 3·2
    expect(qMinTimesC(9n, 2n, 9_001)).toBe(6n) // outside: 3·min
    const at1000 = marketSample([...anchor(1_000), ask("x", 1_050, 90)], SCORE)
    expectRatio(units(at1000, "x", "qMinUnits"), 125n, 6n)
    const at9000 = marketSample([...anchor(9_000), bid("x", 8_950, 90)], SCORE)
    expectRatio(units(at9000, "x", "qMinUnits"), 125n, 6n)
    const at999 = marketSample([bid("a", 994, 1_000), ask("a", 1_004, 1_000), ask("x", 1_050, 90)], SCORE)
    expect(at999.midBps).toBe(999)
    expectRatio(units(at999, "x", "qMinUnits"), 0n, 1n)
  })
  it("no mid → nobody scores", () => {
    expect(marketSample([bid("x", 4_900, 100)], SCORE)).toEqual({ midBps: null, scoreUnitDen: "1080000", makers: [] })
  })
  it("rejects malformed input", () => {
    expect(() => marketSample([bid("x", 10_001, 1)], SCORE)).toThrow(RangeError)
    expect(() => marketSample([bid("x", 5_000, 1.5)], SCORE)).toThrow(RangeError)
    expect(() => marketSample([], { bandSpreadBpsMax: 0, minSizeContracts: 1 })).toThrow(RangeError)
  })
})

describe("accrual: per-sample normalisation", () => {
  it("shares are Q_min / ΣQ_min, floored to 1e-18, and empty minutes still count", () => {
    let day = emptyDay(20_000)
    day = addSample(day, "m1", sampleOf({ a: 2n, b: 1n }))
    day = addSample(day, "m1", sampleOf({ b: 5n }))
    day = addSample(day, "m1", marketSample([], SCORE)) // nobody scored
    expect(day).toEqual({
      dayIndex: 20_000,
      markets: [{ marketId: "m1", samples: 3, makers: [{ maker: "a", shareFp: "666666666666666666" }, { maker: "b", shareFp: "1333333333333333333" }] }]
    })
    const alloc = allocateDay(day, { dailyBudgetMicro: 3_000_000, perWalletCapPct: 100 })
    // a: floor(3e6 · 0.666…/3) = 666_666, b: floor(3e6 · 1.333…/3) = 1_333_333; the empty minute's third is unpaid.
    expect(alloc.payouts.map((p) => [p.maker, p.amountMicro])).toEqual([["a", 666_666], ["b", 1_333_333]])
    expect(alloc.paidMicro + alloc.unpaidMicro).toBe(3_000_000)
    expect(alloc.unpaidMicro).toBe(1_000_001)
    expect(alloc.payouts[0]?.score).toBe(0.666666)
  })
  it("minutes = n equals n identical samples", () => {
    const s = sampleOf({ a: 3n, b: 7n })
    let once = emptyDay(1)
    for (let i = 0; i < 5; i++) once = addSample(once, "m", s)
    expect(addSample(emptyDay(1), "m", s, 5)).toEqual(once)
  })
  it("the day's state is plain JSON", () => {
    const day = addSample(addSample(emptyDay(3), "m2", sampleOf({ a: 1n })), "m1", sampleOf({ b: 1n }))
    expect(JSON.parse(JSON.stringify(day))).toEqual(day)
    expect(day.markets.map((m) => m.marketId)).toEqual(["m1", "m2"])
  })
})

describe("allocation: budgets and the per-wallet cap", () => {
  const oneMarket = (qMins: Record<string, bigint>): DayAccrual => addSample(emptyDay(0), "m", sampleOf(qMins))

  it("a 70% maker is capped at 40%, the excess goes pro rata to the others", () => {
    const alloc = allocateDay(oneMarket({ a: 70n, b: 20n, c: 10n }), { dailyBudgetMicro: 1_000_000, perWalletCapPct: 40 })
    expect(alloc.capMicro).toBe(400_000)
    expect(alloc.payouts.map((p) => [p.maker, p.rawMicro, p.amountMicro, p.capped])).toEqual([
      ["a", 700_000, 400_000, true],
      ["b", 200_000, 400_000, false], // 200k + 300k · 2/3, exactly at the cap
      ["c", 100_000, 200_000, false]
    ])
    expect(alloc.unpaidMicro).toBe(0)
  })
  it("redistribution that pushes a second maker over the cap caps them too", () => {
    const alloc = allocateDay(oneMarket({ a: 60n, b: 30n, c: 10n }), { dailyBudgetMicro: 1_000_000, perWalletCapPct: 40 })
    // Round 1 caps a; b would then get 300k · 60/40 = 450k > 400k; round 2 caps b; c takes the rest.
    expect(alloc.payouts.map((p) => [p.maker, p.amountMicro, p.capped])).toEqual([["a", 400_000, true], ["b", 400_000, true], ["c", 200_000, false]])
    expect(alloc.paidMicro).toBe(1_000_000)
  })
  it("excess nobody can absorb stays unpaid", () => {
    expect(allocateDay(oneMarket({ a: 1n }), { dailyBudgetMicro: 1_000_000, perWalletCapPct: 40 }).unpaidMicro).toBe(600_000)
    const two = allocateDay(oneMarket({ a: 1n, b: 1n }), { dailyBudgetMicro: 1_000_000, perWalletCapPct: 40 })
    expect(two.payouts.map((p) => p.amountMicro)).toEqual([400_000, 400_000])
    expect(two.unpaidMicro).toBe(200_000)
  })
  it("cap arithmetic floors", () => {
    expect(walletCapMicro(1_000_001, 40)).toBe(400_000)
    expect(applyWalletCap([{ maker: "z", rawMicro: 5 }, { maker: "y", rawMicro: 0 }], 2)).toEqual([
      { maker: "y", amountMicro: 0, capped: false },
      { maker: "z", amountMicro: 2, capped: true }
    ])
  })
  it("splits the budget equally across sampled markets by default", () => {
    const day = addSample(addSample(emptyDay(0), "m2", sampleOf({ b: 1n })), "m1", sampleOf({ a: 1n }))
    const alloc = allocateDay(day, { dailyBudgetMicro: 1_000_001, perWalletCapPct: 100 })
    expect(alloc.marketBudgets).toEqual([{ marketId: "m1", budgetMicro: 500_000 }, { marketId: "m2", budgetMicro: 500_000 }])
    expect(alloc.payouts.map((p) => p.amountMicro)).toEqual([500_000, 500_000])
    expect(alloc.unpaidMicro).toBe(1)
  })
  it("honours a per-market budget map; unlisted markets get nothing", () => {
    let day = addSample(emptyDay(0), "m1", sampleOf({ a: 1n }))
    day = addSample(day, "m2", sampleOf({ b: 1n }))
    day = addSample(day, "toString", sampleOf({ c: 1n }))
    const alloc = allocateDay(day, { dailyBudgetMicro: 1_000_000, perWalletCapPct: 100, marketBudgetsMicro: { m1: 700_000, m2: 200_000, m9: 50_000 } })
    expect(alloc.payouts.map((p) => [p.maker, p.amountMicro])).toEqual([["a", 700_000], ["b", 200_000], ["c", 0]])
    expect(alloc.unpaidMicro).toBe(100_000)
    expect(() => allocateDay(day, { dailyBudgetMicro: 1_000, perWalletCapPct: 40, marketBudgetsMicro: { m1: 600, m2: 401 } })).toThrow(RangeError)
  })
  it("estimateToday is the allocation of the minutes sampled so far", () => {
    const day = oneMarket({ a: 3n, b: 1n })
    expect(estimateToday(day, { dailyBudgetMicro: 800, perWalletCapPct: 100 })).toEqual([
      { maker: "a", estimateMicro: 600, score: 0.75 },
      { maker: "b", estimateMicro: 200, score: 0.25 }
    ])
  })
})

// ---- properties ----------------------------------------------------------

const makerArb = fc.constantFrom("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7")
const sampleArb = fc.dictionary(makerArb, fc.bigInt({ min: 0n, max: 10n ** 20n }), { maxKeys: 8 })
const dayPlanArb = fc.array(
  fc.record({ marketId: fc.constantFrom("a", "b", "c", "d"), qMins: sampleArb, minutes: fc.integer({ min: 1, max: 300 }) }),
  { maxLength: 25 }
)
const buildDay = (plan: ReadonlyArray<{ marketId: string; qMins: Record<string, bigint>; minutes: number }>): DayAccrual =>
  plan.reduce((day, s) => addSample(day, s.marketId, sampleOf(s.qMins), s.minutes), emptyDay(0))

describe("properties", () => {
  it("Σ payouts ≤ budget, every payout ≤ cap, uncapped makers never lose to the cap", () => {
    fc.assert(
      fc.property(
        dayPlanArb,
        fc.integer({ min: 0, max: 2 ** 50 }),
        fc.integer({ min: 0, max: 100 }),
        fc.option(fc.dictionary(fc.constantFrom("a", "b", "c", "x"), fc.integer({ min: 0, max: 2 ** 40 })), { nil: undefined }),
        (plan, dailyBudgetMicro, perWalletCapPct, rawMap) => {
          const total = rawMap === undefined ? 0 : Object.values(rawMap).reduce((s, v) => s + v, 0)
          const map = rawMap !== undefined && total <= dailyBudgetMicro ? rawMap : undefined
          const params = map === undefined ? { dailyBudgetMicro, perWalletCapPct } : { dailyBudgetMicro, perWalletCapPct, marketBudgetsMicro: map }
          const alloc = allocateDay(buildDay(plan), params)
          const sum = alloc.payouts.reduce((s, p) => s + p.amountMicro, 0)
          expect(sum).toBe(alloc.paidMicro)
          expect(alloc.paidMicro).toBeLessThanOrEqual(dailyBudgetMicro)
          expect(alloc.unpaidMicro).toBe(dailyBudgetMicro - alloc.paidMicro)
          const rawTotal = alloc.payouts.reduce((s, p) => s + p.rawMicro, 0)
          expect(rawTotal).toBeLessThanOrEqual(dailyBudgetMicro)
          for (const p of alloc.payouts) {
            expect(Number.isSafeInteger(p.amountMicro) && p.amountMicro >= 0).toBe(true)
            expect(p.amountMicro).toBeLessThanOrEqual(alloc.capMicro)
            if (!p.capped) expect(p.amountMicro).toBeGreaterThanOrEqual(p.rawMicro)
          }
          // Water-filling loses at most floor dust, unless every earning maker is capped.
          const uncappedEarners = alloc.payouts.filter((p) => !p.capped && p.rawMicro > 0).length
          if (uncappedEarners > 0) expect(sum).toBeGreaterThanOrEqual(rawTotal - uncappedEarners)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("shares of one sample sum to at most SHARE_SCALE per minute", () => {
    fc.assert(
      fc.property(dayPlanArb, (plan) => {
        for (const m of buildDay(plan).markets) {
          const sum = m.makers.reduce((s, x) => s + BigInt(x.shareFp), 0n)
          expect(sum <= BigInt(m.samples) * SHARE_SCALE).toBe(true)
        }
      }),
      { numRuns: 200 }
    )
  })

  it("same input → same output, whatever the insertion order", () => {
    const quoteArb = fc.record({
      maker: makerArb,
      isBid: fc.boolean(),
      yesPriceBps: fc.integer({ min: 4_500, max: 5_500 }),
      size: fc.integer({ min: 1, max: 1_000 })
    })
    fc.assert(
      fc.property(fc.array(quoteArb, { maxLength: 30 }), fc.array(fc.nat(), { minLength: 30, maxLength: 30 }), dayPlanArb, (quotes, keys, plan) => {
        const shuffled = [...quotes].map((q, i) => ({ q, k: keys[i] ?? 0 })).sort((a, b) => a.k - b.k).map((x) => x.q)
        expect(marketSample(shuffled, SCORE)).toEqual(marketSample(quotes, SCORE))
        // Reverse the makers inside each sample and the order of markets between samples of different markets.
        const reversedMakers = plan.map((s) => ({ ...s, qMins: Object.fromEntries(Object.entries(s.qMins).reverse()) }))
        const byMarket = [...plan].sort((a, b) => (a.marketId < b.marketId ? -1 : a.marketId > b.marketId ? 1 : 0))
        const params = { dailyBudgetMicro: 123_456_789, perWalletCapPct: 40 }
        const base = allocateDay(buildDay(plan), params)
        expect(allocateDay(buildDay(reversedMakers), params)).toEqual(base)
        expect(allocateDay(buildDay(byMarket), params)).toEqual(base)
        expect(allocateDay(JSON.parse(JSON.stringify(buildDay(plan))) as DayAccrual, params)).toEqual(base)
      }),
      { numRuns: 200 }
    )
  })
})
