// LP rewards earned in the backtest, by the service's own book (src/service/rewards-book.ts):
// the same sampling of every market's resting orders (background makers and us) once a minute,
// the same split of the daily budget across markets by scored minutes, the same per-wallet
// cap on the whole daily budget, and the same rule that a day is paid only once it has ended.
// The backtest engine plays the exchange, so the book reads it exactly as the service reads its own.
import type { Engine } from "../../src/engine/engine.ts"
import { SHARE_SCALE } from "../../src/lp/rewards.ts"
import type { RewardsParams } from "../../src/service/commands.ts"
import { DAY_SEC, RewardsBook } from "../../src/service/rewards-book.ts"
import { LP, type MarketState } from "./venue.ts"

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
  readonly book = new RewardsBook()
  readonly days: RewardDay[] = []
  /** Our pre-cap entitlement per market, summed over paid days. */
  readonly rawByMarket: number[]
  totalMicro = 0

  constructor(
    config: RewardsParams,
    startSec: number,
    private readonly markets: ReadonlyArray<MarketState>
  ) {
    this.rawByMarket = new Array<number>(markets.length).fill(0)
    this.book.setConfig(config, startSec)
  }

  /** One minute's sample of every market's resting book, as the service's `rewards_sample` record takes it. */
  sample(tsSec: number, engine: Engine): void {
    this.book.sample(tsSec, engine)
  }

  /** Pays every sampled day that has ended by `tsSec`, as the service's `pay_rewards`; `credit` books each payout in the engine. Returns ours. */
  payClosed(tsSec: number, credit: (maker: string, amountMicro: number, ref: string) => boolean): number {
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
      const paid = this.book.pay(day, tsSec, credit)
      if (paid === null) continue
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
