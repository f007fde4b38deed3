// Daily LP pool reads (SPEC §4 "Fees and rewards"): a maker's accrual and payouts, and the
// leaderboard, in their wire shapes (payload fields: docs/api.md "Rewards").
import type * as W from "../domain/wire.ts"
import type { Exchange } from "./exchange.ts"
import { DAY_SEC, dayLabel, dayOfSec } from "./rewards-book.ts"

const dayFields = (day: number) => ({ day: dayLabel(day), day_start: day * DAY_SEC })

/** One maker's rewards: today's estimate, closed days awaiting payout, paid days (newest first), totals. */
export const rewardsView = (x: Exchange, user: string, now: number): (typeof W.RewardsMe)["Type"] => {
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
export const leaderboard = (x: Exchange, days: number, limit: number, now: number): (typeof W.Leaderboard)["Type"] => {
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
