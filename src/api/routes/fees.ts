// The fees group (SPEC §4 "Fees and rewards"): fees, the rewards configuration, a maker's
// rewards (by user key or linked wallet) and the leaderboard. Public, like every read.
import { isUserKey } from "../../auth/ed25519.ts"
import { normalizeAddress } from "../../chain/chain.ts"
import { ApiError } from "../../domain/errors.ts"
import { leaderboard, rewardsView } from "../../service/rewards-views.ts"
import { TTL_SEC } from "../cache.ts"
import { type AppCtx, nowSec } from "../context.ts"
import { API } from "../declaration/api.ts"
import { json } from "../http.ts"
import { implement } from "../serve.ts"

const noStore = { "cache-control": "no-store", "x-cache": "MISS" }

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

export const fees = implement<AppCtx>()(API.fees, {
  fees: (ctx, { req }) => ctx.cache.serve(req.path, TTL_SEC.fees, () => json(200, feesView(ctx))),
  rewardsConfig: (ctx, { req }) =>
    ctx.cache.serve(req.path, TTL_SEC.fees, () =>
      json(200, {
        daily_budget_micro_usdc: ctx.config.rewards.dailyBudgetMicro,
        maker_rebate_bps: ctx.exchange.engine.makerRebateBps,
        rewards_band_spread_bps_max: ctx.config.rewards.bandSpreadBpsMax,
        per_wallet_cap_pct: ctx.config.rewards.perWalletCapPct
      })
    ),
  rewardsMe: (ctx, { query }) => json(200, rewardsView(ctx.exchange, query.user, nowSec(ctx)), noStore),
  rewardsWallet: (ctx, { path }) => {
    let user = path.wallet
    if (!isUserKey(path.wallet)) {
      // Extension: a linked EVM wallet names its user too.
      const evm = normalizeAddress(path.wallet)
      if (evm === null) throw new ApiError("invalid_pubkey", "wallet: a base58 user key or a linked 0x address")
      const linked = ctx.exchange.userOfWallet.get(evm)
      if (linked === undefined) throw new ApiError("not_found", "no user is linked to this wallet")
      user = linked
    }
    return json(200, rewardsView(ctx.exchange, user, nowSec(ctx)), noStore)
  },
  leaderboard: (ctx, { query, req }) => {
    const days = query.days ?? 7
    const limit = query.limit ?? 50
    return ctx.cache.serve(`${req.path}?days=${days}&limit=${limit}`, TTL_SEC.fees, () => json(200, leaderboard(ctx.exchange, days, limit, nowSec(ctx))))
  }
})
