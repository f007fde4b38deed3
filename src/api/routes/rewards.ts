// Daily LP pool reads (SPEC §4 "Fees and rewards"): a maker's accrual and payouts, and
// the leaderboard. Public, like every read. Payload fields: docs/api.md "Rewards".
import { isUserKey } from "../../auth/ed25519.ts"
import { normalizeAddress } from "../../chain/chain.ts"
import { ApiError } from "../../domain/errors.ts"
import type { Exchange } from "../../service/exchange.ts"
import { DAY_SEC, dayLabel, dayOfSec } from "../../service/rewards-book.ts"
import { TTL_SEC } from "../cache.ts"
import { type AppCtx, nowSec, requireUserKey } from "../context.ts"
import { json, type Route } from "../http.ts"
import { intParam } from "./params.ts"

const noStore = { "cache-control": "no-store", "x-cache": "MISS" }

const dayFields = (day: number) => ({ day: dayLabel(day), day_start: day * DAY_SEC })

/** One maker's rewards: today's estimate, closed days awaiting payout, paid days (newest first), totals. */
export const rewardsView = (x: Exchange, user: string, now: number) => {
  const today = dayOfSec(now)
  const t = x.rewards.estimate(today, user)
  const pending = [...x.rewards.days.keys()]
    .filter((d) => d < today)
    .sort((a, b) => b - a)
    .map((d) => {
      const e = x.rewards.estimate(d, user)
      return { ...dayFields(d), estimate_micro_usdc: e.estimateMicro, score: e.score }
    })
  const history = x.rewards.paid
    .flatMap((p) => p.payouts.filter((e) => e.maker === user).map((e) => ({ ...dayFields(p.day), micro_usdc: e.amountMicro, score: e.score, capped: e.capped, paid_at: p.paidAtSec })))
    .reverse()
  const totals = x.rewards.totals.get(user)
  return {
    user,
    wallet: x.walletOfUser.get(user) ?? null,
    today: { ...dayFields(today), estimate_micro_usdc: t.estimateMicro, score: t.score, minutes_sampled: t.minutes },
    pending,
    history,
    totals: { paid_micro_usdc: totals?.paidMicro ?? 0, score: totals?.score ?? 0, days_paid: totals?.daysPaid ?? 0 }
  }
}

/** Paid rewards over the `days` closed days before today, ranked by micro_usdc, then score, then maker. */
export const leaderboard = (x: Exchange, days: number, limit: number, now: number) => {
  const today = dayOfSec(now)
  const byMaker = new Map<string, { micro: number; score: number; days: number }>()
  for (const p of x.rewards.paid) {
    if (p.day < today - days || p.day >= today) continue
    for (const e of p.payouts) {
      const agg = byMaker.get(e.maker) ?? { micro: 0, score: 0, days: 0 }
      agg.micro += e.amountMicro
      agg.score += e.score
      agg.days++
      byMaker.set(e.maker, agg)
    }
  }
  const rows = [...byMaker.entries()]
    .sort(([ma, a], [mb, b]) => b.micro - a.micro || b.score - a.score || (ma < mb ? -1 : ma > mb ? 1 : 0))
    .slice(0, limit)
    .map(([maker, a], i) => ({ rank: i + 1, maker, micro_usdc: a.micro, score: Math.round(a.score * 1e6) / 1e6, days_active: a.days }))
  return { days, rows }
}

export const rewardsRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "GET",
    path: "/v1/rewards/me",
    handler: (ctx, req) => {
      const user = req.query.get("user") ?? ""
      requireUserKey("user", user, "invalid_pubkey")
      return json(200, rewardsView(ctx.exchange, user, nowSec(ctx)), noStore)
    }
  },
  {
    method: "GET",
    path: "/v1/rewards/wallet/:wallet",
    handler: (ctx, _req, params) => {
      const wallet = params.wallet!
      let user = wallet
      if (!isUserKey(wallet)) {
        // Extension: a linked EVM wallet names its user too.
        const evm = normalizeAddress(wallet)
        if (evm === null) throw new ApiError("invalid_pubkey", "wallet: a base58 user key or a linked 0x address")
        const linked = ctx.exchange.userOfWallet.get(evm)
        if (linked === undefined) throw new ApiError("not_found", "no user is linked to this wallet")
        user = linked
      }
      return json(200, rewardsView(ctx.exchange, user, nowSec(ctx)), noStore)
    }
  },
  {
    method: "GET",
    path: "/v1/rewards/leaderboard",
    handler: (ctx, req) => {
      const days = intParam(req.query, "days", 7, 1, 90)
      const limit = intParam(req.query, "limit", 50, 1, 200)
      return ctx.cache.serve(`${req.path}?days=${days}&limit=${limit}`, TTL_SEC.fees, () => json(200, leaderboard(ctx.exchange, days, limit, nowSec(ctx))))
    }
  }
]
