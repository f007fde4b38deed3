// LP rewards earned in the backtest, by the service's own records on the backtest's exchange:
// `set_rewards_config`, a `rewards_sample` once a minute (every market's resting orders,
// background makers and us) and a `pay_rewards` for each day that has ended, applied to the
// exchange's rewards book (src/service/rewards-book.ts) as the LP worker's are. This ledger only
// adds what the report shows: each paid day from our side, and our pre-cap entitlement per market.
import { SHARE_SCALE } from "../../src/lp/rewards.ts"
import type { RewardsParams } from "../../src/service/commands.ts"
import { DAY_SEC, type RewardsBook } from "../../src/service/rewards-book.ts"
import { LP, type MarketState, type Venue } from "./venue.ts"

export const DAY_MS = DAY_SEC * 1000

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

export class RewardsLedger {
  readonly days: RewardDay[] = []
  /** Our pre-cap entitlement per market, summed over paid days. */
  readonly rawByMarket: number[]
  totalMicro = 0

  /** The service's journaled configuration takes effect at `startSec` (the service's start: accrual counts from there). */
  constructor(
    config: RewardsParams,
    startSec: number,
    private readonly markets: ReadonlyArray<MarketState>,
    private readonly v: Venue
  ) {
    this.rawByMarket = new Array<number>(markets.length).fill(0)
    v.at(startSec * 1000)
    v.rewardsRecord({ type: "set_rewards_config", config })
  }

  /** The exchange's rewards book. */
  get book(): RewardsBook {
    return this.v.exchange.rewards
  }

  /** One minute's sample of every market's resting book: the service's `rewards_sample` record, at the venue's time. */
  sample(): void {
    this.v.rewardsRecord({ type: "rewards_sample" })
  }

  /** Pays every sampled day that has ended by the venue's time, each by the service's `pay_rewards` record. Returns ours. */
  payClosed(): number {
    const tsSec = Math.floor(this.v.nowMs / 1000)
    let ours = 0
    for (const day of this.book.closedUnpaidDays(tsSec)) {
      const params = this.book.allocationParams(day)
      const state = this.book.days.get(day)
      if (params === null || state === undefined) continue
      // Our pre-cap entitlement per market, for the report (the allocation itself is the book's).
      let dayRaw = 0
      for (const m of state.accrual.markets) {
        const share = m.makers.find((x) => x.maker === LP)
        const ms = this.markets.find((x) => x.id === m.marketId)
        const budget = params.marketBudgetsMicro?.[m.marketId] ?? 0
        if (share === undefined || ms === undefined || m.samples === 0) continue
        const raw = Number((BigInt(budget) * BigInt(share.shareFp)) / (BigInt(m.samples) * SHARE_SCALE))
        this.rawByMarket[ms.idx]! += raw
        dayRaw += raw
      }
      const minutes = state.minutes
      const poolMicro = params.dailyBudgetMicro
      const paid = this.v.rewardsRecord({ type: "pay_rewards", day }).paid
      if (paid === undefined) continue
      const mine = paid.payouts.find((p) => p.maker === LP)
      const lpMicro = mine?.amountMicro ?? 0
      this.days.push({
        day, poolMicro, paidMicro: paid.paidMicro, lpMicro, lpRawMicro: dayRaw,
        lpScore: mine?.score ?? 0, lpCapped: mine?.capped ?? false, minutes
      })
      ours += lpMicro
    }
    this.totalMicro += ours
    return ours
  }

  /** What the open (unfinished) day would pay us if it closed now: never paid, as in the service. */
  unpaidEstimateMicro(): number {
    let sum = 0
    for (const day of this.book.days.keys()) sum += this.book.estimate(day, LP).estimateMicro
    return sum
  }
}
