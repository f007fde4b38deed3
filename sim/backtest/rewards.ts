// LP rewards earned in the backtest: each sampling minute every market's resting book
// (background makers and us) is scored with src/lp/rewards.ts, accrued per UTC day, and
// the day is allocated with src/lp/rewards-alloc.ts at 00:00 UTC, our payout credited to
// our balance in the engine. The pool is split equally across the run's markets and
// pro-rated by the minutes sampled, so a partial day earns a partial pool.
import type { BookSide } from "../../src/engine/book.ts"
import type { Account } from "../../src/engine/state.ts"
import { allocateDay } from "../../src/lp/rewards-alloc.ts"
import { addSample, type DayAccrual, emptyDay, marketSample, type RestingQuote, SHARE_SCALE } from "../../src/lp/rewards.ts"
import type { RewardsSpec } from "./config.ts"
import { LP, type MarketState } from "./venue.ts"

export const DAY_MS = 86_400_000

export interface RewardDay {
  readonly day: number
  readonly poolMicro: number
  readonly paidMicro: number
  readonly lpMicro: number
  readonly lpRawMicro: number
  readonly lpScore: number
  readonly lpCapped: boolean
  readonly minutes: number
}

/** Best price whose cumulative size from the top reaches minSize, or -1. */
const cutoff = (side: BookSide, minSize: number): number => {
  let depth = 0
  for (let p = side.best; p !== -1; p = side.nextPrice(p)) {
    depth += side.levels[p]!.size
    if (depth >= minSize) return p
  }
  return -1
}

/**
 * The resting orders that can matter to a sample: each side from the top through the
 * size cutoff (they set the adjusted mid) and on while inside the band around it.
 */
export const quotesNearMid = (ms: MarketState, spec: RewardsSpec, lp: Account): RestingQuote[] => {
  const out: RestingQuote[] = []
  const bids = ms.market.bids
  const asks = ms.market.asks
  const cutBid = cutoff(bids, spec.minSizeContracts)
  const cutAsk = cutoff(asks, spec.minSizeContracts)
  if (cutBid < 0 || cutAsk < 0) return out
  const mid2 = cutBid + cutAsk
  const v2 = 2 * spec.bandSpreadBpsMax
  for (const side of [bids, asks]) {
    const cut = side === bids ? cutBid : cutAsk
    for (let p = side.best; p !== -1; p = side.nextPrice(p)) {
      const beyondCut = side.isBid ? p < cut : p > cut
      if (beyondCut && Math.abs(2 * p - mid2) >= v2) break
      for (let o = side.levels[p]!.head; o !== null; o = o.next) {
        out.push({ maker: o.account === lp ? LP : o.account.user, isBid: side.isBid, yesPriceBps: p, size: o.remaining })
      }
    }
  }
  return out
}

export class RewardsLedger {
  private day: DayAccrual | null = null
  private minutes = 0
  readonly days: RewardDay[] = []
  /** Our pre-cap entitlement per market, summed over days. */
  readonly rawByMarket: number[]
  totalMicro = 0

  constructor(
    private readonly spec: RewardsSpec,
    private readonly marketCount: number,
    private readonly sampleSec: number
  ) {
    this.rawByMarket = new Array<number>(marketCount).fill(0)
  }

  sample(tMs: number, markets: ReadonlyArray<MarketState>, lp: Account): void {
    const dayIndex = Math.floor(tMs / DAY_MS)
    if (this.day === null) this.day = emptyDay(dayIndex)
    const params = { bandSpreadBpsMax: this.spec.bandSpreadBpsMax, minSizeContracts: this.spec.minSizeContracts }
    for (const ms of markets) this.day = addSample(this.day, ms.id, marketSample(quotesNearMid(ms, this.spec, lp), params))
    this.minutes++
  }

  /** Allocates the open day; returns our payout (0 when nothing was sampled). */
  close(markets: ReadonlyArray<MarketState>): number {
    const day = this.day
    this.day = null
    const minutes = this.minutes
    this.minutes = 0
    if (day === null) return 0
    const samplesPerDay = Math.floor(DAY_MS / 1000 / this.sampleSec)
    const perMarket = Math.floor(this.spec.poolDailyMicro / this.marketCount)
    const budgets: Record<string, number> = {}
    for (const m of day.markets) budgets[m.marketId] = Math.floor((perMarket * Math.min(m.samples, samplesPerDay)) / samplesPerDay)
    const poolMicro = Object.values(budgets).reduce((s, b) => s + b, 0)
    // The cap is a share of the pool actually on offer, so a partial day caps pro rata too.
    const alloc = allocateDay(day, { dailyBudgetMicro: poolMicro, perWalletCapPct: this.spec.perWalletCapPct, marketBudgetsMicro: budgets })
    const mine = alloc.payouts.find((p) => p.maker === LP)
    for (const m of day.markets) {
      const share = m.makers.find((x) => x.maker === LP)
      const ms = markets.find((x) => x.id === m.marketId)
      if (share === undefined || ms === undefined || m.samples === 0) continue
      this.rawByMarket[ms.idx]! += Number((BigInt(budgets[m.marketId]!) * BigInt(share.shareFp)) / (BigInt(m.samples) * SHARE_SCALE))
    }
    const lpMicro = mine?.amountMicro ?? 0
    this.days.push({
      day: day.dayIndex, poolMicro, paidMicro: alloc.paidMicro, lpMicro, lpRawMicro: mine?.rawMicro ?? 0,
      lpScore: mine?.score ?? 0, lpCapped: mine?.capped ?? false, minutes
    })
    this.totalMicro += lpMicro
    return lpMicro
  }
}
