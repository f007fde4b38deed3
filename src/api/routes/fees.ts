// GET /v1/fees and GET /v1/rewards/config.
import { TTL_SEC } from "../cache.ts"
import type { AppCtx } from "../context.ts"
import { json, type Route } from "../http.ts"

/**
 * Field names are twinbook's (SPEC: "not shown"): the default taker fee and maker rebate,
 * the taker fee per category (the rate its markets share, or the default when they
 * differ or none exist), and every market's taker fee.
 */
const feesView = (ctx: AppCtx) => {
  const engine = ctx.exchange.engine
  const perMarket: Record<string, { taker_fee_bps: number; slug: string }> = {}
  const byCategory = new Map<string, Set<number>>()
  for (const event of ctx.exchange.catalog.events) {
    for (const m of event.outcomes) {
      const fee = engine.markets.get(m.market_id)?.takerFeeBps ?? engine.defaultTakerFeeBps
      perMarket[m.market_id] = { taker_fee_bps: fee, slug: m.slug }
      let set = byCategory.get(event.category)
      if (set === undefined) byCategory.set(event.category, (set = new Set()))
      set.add(fee)
    }
  }
  const perCategory: Record<string, { taker_fee_bps: number }> = {}
  for (const [category, fees] of byCategory) {
    perCategory[category] = { taker_fee_bps: fees.size === 1 ? [...fees][0]! : engine.defaultTakerFeeBps }
  }
  return {
    default: { taker_fee_bps: engine.defaultTakerFeeBps, maker_rebate_bps: engine.makerRebateBps },
    maker_rebate_bps: engine.makerRebateBps,
    per_category: perCategory,
    per_market: perMarket
  }
}

export const feeRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "GET",
    path: "/v1/fees",
    handler: (ctx, req) => ctx.cache.serve(req.path, TTL_SEC.fees, () => json(200, feesView(ctx)))
  },
  {
    method: "GET",
    path: "/v1/rewards/config",
    handler: (ctx, req) =>
      ctx.cache.serve(req.path, TTL_SEC.fees, () =>
        json(200, {
          daily_budget_micro_usdc: ctx.config.rewards.dailyBudgetMicro,
          maker_rebate_bps: ctx.exchange.engine.makerRebateBps,
          rewards_band_spread_bps_max: ctx.config.rewards.bandSpreadBpsMax,
          per_wallet_cap_pct: ctx.config.rewards.perWalletCapPct
        })
      )
  }
]
