// Daily LP rewards, part 2: turning a day's accrual into integer payouts.
//
//   raw(maker) = Σ_market floor(budget_m · shareFp(maker, m) / (samples_m · SHARE_SCALE))
//   then the per-wallet cap (a % of the whole daily pool), with the excess
//   redistributed pro rata to uncapped makers until nobody is over the cap.
//
// Rounding is always down, and every step can only shrink the total, so
// Σ payouts ≤ Σ market budgets ≤ dailyBudgetMicro. What is not paid (floor dust,
// minutes nobody scored in, excess nobody can absorb under the cap) is reported
// as unpaidMicro and stays in the pool.

import { type DayAccrual, SHARE_SCALE, type ScoreParams } from "./rewards.ts"

export interface AllocationParams {
  /** The whole day's pool, integer micro-USDC. */
  readonly dailyBudgetMicro: number
  /** Per-wallet cap as an integer percent of dailyBudgetMicro (SPEC default 40). */
  readonly perWalletCapPct: number
  /**
   * Optional per-market budgets (micro), summing to at most dailyBudgetMicro.
   * Absent: the budget is split equally (floored) across the day's sampled markets.
   */
  readonly marketBudgetsMicro?: Readonly<Record<string, number>>
}

export type RewardParams = ScoreParams & AllocationParams

export const DEFAULT_PER_WALLET_CAP_PCT = 40

export interface CapInput {
  readonly maker: string
  readonly rawMicro: number
}

export interface CappedAmount {
  readonly maker: string
  readonly amountMicro: number
  readonly capped: boolean
}

export interface MakerPayout {
  readonly maker: string
  /** Paid at the day's close. */
  readonly amountMicro: number
  /** Before the per-wallet cap and its redistribution. */
  readonly rawMicro: number
  readonly capped: boolean
  /** Share-minutes: Σ over markets and sampled minutes of the maker's share, floored to 1e-6. Display only. */
  readonly score: number
}

export interface MarketBudget {
  readonly marketId: string
  readonly budgetMicro: number
}

export interface DayAllocation {
  readonly dayIndex: number
  readonly capMicro: number
  readonly marketBudgets: ReadonlyArray<MarketBudget>
  /** Sorted by maker id. */
  readonly payouts: ReadonlyArray<MakerPayout>
  readonly paidMicro: number
  /** dailyBudgetMicro − paidMicro; never negative. */
  readonly unpaidMicro: number
}

const assertInt = (name: string, value: number, min: number, max: number): void => {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${value}`)
  }
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Floor of the per-wallet cap: floor(dailyBudgetMicro · pct / 100). */
export const walletCapMicro = (dailyBudgetMicro: number, perWalletCapPct: number): number =>
  Number((BigInt(dailyBudgetMicro) * BigInt(perWalletCapPct)) / 100n)

const resolveMarketBudgets = (day: DayAccrual, params: AllocationParams): MarketBudget[] => {
  const map = params.marketBudgetsMicro
  if (map === undefined) {
    const count = day.markets.length
    const eachMicro = count === 0 ? 0 : Math.floor(params.dailyBudgetMicro / count)
    return day.markets.map((m) => ({ marketId: m.marketId, budgetMicro: eachMicro }))
  }
  let totalMicro = 0
  for (const id of Object.keys(map).sort(byString)) {
    const budgetMicro = map[id] ?? 0
    assertInt(`marketBudgetsMicro[${id}]`, budgetMicro, 0, Number.MAX_SAFE_INTEGER)
    totalMicro += budgetMicro
  }
  if (totalMicro > params.dailyBudgetMicro) {
    throw new RangeError(`market budgets sum to ${totalMicro} micro, over the daily budget ${params.dailyBudgetMicro}`)
  }
  // Own keys only, so a market id such as "__proto__" or "toString" never reads the prototype.
  return day.markets.map((m) => ({
    marketId: m.marketId,
    budgetMicro: Object.hasOwn(map, m.marketId) ? (map[m.marketId] ?? 0) : 0
  }))
}

/**
 * Per-wallet cap with pro-rata redistribution (water-filling). Each round caps
 * every maker whose pro-rata amount would exceed the cap; capping only raises
 * the others' pro-rata factor, so rounds stop within one per maker. Uncapped
 * makers get floor(raw · remaining / uncappedRaw). Σ amounts ≤ Σ raw; excess
 * that nobody can absorb (everyone capped) is simply not paid.
 */
export const applyWalletCap = (raws: ReadonlyArray<CapInput>, capMicro: number): CappedAmount[] => {
  assertInt("capMicro", capMicro, 0, Number.MAX_SAFE_INTEGER)
  const sorted = [...raws].sort((a, b) => byString(a.maker, b.maker))
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i]
    if (r === undefined) continue
    assertInt(`rawMicro[${r.maker}]`, r.rawMicro, 0, Number.MAX_SAFE_INTEGER)
    if (i > 0 && sorted[i - 1]?.maker === r.maker) throw new RangeError(`duplicate maker ${r.maker}`)
  }
  const cap = BigInt(capMicro)
  const totalRaw = sorted.reduce((sum, r) => sum + BigInt(r.rawMicro), 0n)
  const capped = new Set<string>()
  let remaining = totalRaw
  let uncappedRaw = totalRaw
  for (;;) {
    const over = sorted.filter((r) => !capped.has(r.maker) && BigInt(r.rawMicro) * remaining > cap * uncappedRaw)
    if (over.length === 0) break
    for (const r of over) {
      capped.add(r.maker)
      remaining -= cap
      uncappedRaw -= BigInt(r.rawMicro)
    }
  }
  return sorted.map((r) => {
    if (capped.has(r.maker)) return { maker: r.maker, amountMicro: capMicro, capped: true }
    const amount = uncappedRaw === 0n ? 0n : (BigInt(r.rawMicro) * remaining) / uncappedRaw
    return { maker: r.maker, amountMicro: Number(amount), capped: false }
  })
}

/** Closes a day: per-market floors, then the per-wallet cap. Pure; same input → same output. */
export const allocateDay = (day: DayAccrual, params: AllocationParams): DayAllocation => {
  assertInt("dailyBudgetMicro", params.dailyBudgetMicro, 0, Number.MAX_SAFE_INTEGER)
  assertInt("perWalletCapPct", params.perWalletCapPct, 0, 100)
  const marketBudgets = resolveMarketBudgets(day, params)
  const budgetByMarket = new Map(marketBudgets.map((b) => [b.marketId, b.budgetMicro]))
  const rawByMaker = new Map<string, bigint>()
  const shareByMaker = new Map<string, bigint>()
  for (const market of day.markets) {
    const budget = BigInt(budgetByMarket.get(market.marketId) ?? 0)
    const denominator = BigInt(market.samples) * SHARE_SCALE
    for (const m of market.makers) {
      const shareFp = BigInt(m.shareFp)
      shareByMaker.set(m.maker, (shareByMaker.get(m.maker) ?? 0n) + shareFp)
      const rawMicro = denominator === 0n ? 0n : (budget * shareFp) / denominator
      rawByMaker.set(m.maker, (rawByMaker.get(m.maker) ?? 0n) + rawMicro)
    }
  }
  const capMicro = walletCapMicro(params.dailyBudgetMicro, params.perWalletCapPct)
  const raws = [...rawByMaker.entries()].map(([maker, raw]) => ({ maker, rawMicro: Number(raw) }))
  const payouts = applyWalletCap(raws, capMicro).map((a): MakerPayout => {
    const shareFp = shareByMaker.get(a.maker) ?? 0n
    return {
      maker: a.maker,
      amountMicro: a.amountMicro,
      rawMicro: Number(rawByMaker.get(a.maker) ?? 0n),
      capped: a.capped,
      score: Number((shareFp * 1_000_000n) / SHARE_SCALE) / 1_000_000
    }
  })
  const paidMicro = payouts.reduce((sum, p) => sum + p.amountMicro, 0)
  if (paidMicro > params.dailyBudgetMicro) throw new Error("defect: rewards allocation overspent the pool")
  return { dayIndex: day.dayIndex, capMicro, marketBudgets, payouts, paidMicro, unpaidMicro: params.dailyBudgetMicro - paidMicro }
}

export interface TodayEstimate {
  readonly maker: string
  readonly estimateMicro: number
  readonly score: number
}

/**
 * What each maker would be paid if the day closed now: the accrual so far is
 * already divided by the minutes sampled so far, so this is allocateDay on it.
 */
export const estimateToday = (day: DayAccrual, params: AllocationParams): TodayEstimate[] =>
  allocateDay(day, params).payouts.map((p) => ({ maker: p.maker, estimateMicro: p.amountMicro, score: p.score }))
