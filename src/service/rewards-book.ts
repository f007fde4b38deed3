// The daily LP pool's state inside the exchange (SPEC §1 second income stream; the
// arithmetic is src/lp/rewards*.ts, the rules docs/rewards.md). Accrual is a pure
// function of the journal: each journaled `rewards_sample` (the LP worker writes one per
// minute of monotonic time) samples the resting books once and credits that one minute to
// the UTC day of its journal time. Minutes nobody sampled earn nothing, so a wall-clock
// jump forward credits one sample, never the skipped minutes, and a day is paid only if it
// was sampled. Journal time never goes backwards, so a paid day never accrues again.
// A closed day is paid by a journaled `pay_rewards`.
import type { Engine } from "../engine/engine.ts"
import type { BookSide } from "../engine/book.ts"
import { addSample, type DayAccrual, emptyDay, type MarketSample, marketSample, type RestingQuote } from "../lp/rewards.ts"
import { type AllocationParams, allocateDay, estimateToday } from "../lp/rewards-alloc.ts"
import type { RewardsParams } from "./commands.ts"

export const MINUTE_SEC = 60
export const DAY_SEC = 86_400
export const DAY_MIN = DAY_SEC / MINUTE_SEC
/** Paid days kept in detail (the leaderboard's longest window); totals are kept forever. */
export const PAID_HISTORY_DAYS = 90

interface DayState {
  accrual: DayAccrual
  /** Minutes in which at least one maker scored, per market: how the pool is split across markets. */
  readonly scored: Map<string, number>
  minutes: number
}

export interface PaidEntry {
  readonly maker: string
  readonly amountMicro: number
  /** Share-minutes (display). */
  readonly score: number
  readonly capped: boolean
}

export interface PaidDay {
  readonly day: number
  readonly paidAtSec: number
  readonly paidMicro: number
  readonly unpaidMicro: number
  /** Sorted by maker. */
  readonly payouts: ReadonlyArray<PaidEntry>
}

export interface MakerTotals {
  paidMicro: number
  score: number
  daysPaid: number
}

export interface RewardsBookJson {
  readonly config: RewardsParams | null
  readonly cursorMin: number | null
  readonly days: ReadonlyArray<{ day: number; accrual: DayAccrual; scored: ReadonlyArray<readonly [string, number]>; minutes: number }>
  readonly paid: ReadonlyArray<PaidDay>
  readonly totals: ReadonlyArray<readonly [string, MakerTotals]>
}

/** Credits a maker through the engine; false when the engine refused. */
export type Credit = (maker: string, amountMicro: number, ref: string) => boolean

const byKey = <T>(a: readonly [string, T], b: readonly [string, T]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)

/** Every resting order of one side, best price first, FIFO within a level. */
const sideQuotes = (side: BookSide, out: RestingQuote[]): void => {
  for (let price = side.best; price !== -1; price = side.nextPrice(price)) {
    for (let o = side.levels[price]?.head ?? null; o !== null; o = o.next) {
      out.push({ maker: o.account.user, isBid: side.isBid, yesPriceBps: price, size: o.remaining })
    }
  }
}

export const dayOfSec = (tsSec: number): number => Math.floor(tsSec / DAY_SEC)

/** "YYYY-MM-DD" of a day number (days since 1970-01-01), without a Date (H. Hinnant's civil_from_days). */
export const dayLabel = (day: number): string => {
  const z = day + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0)
  return `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`
}

export class RewardsBook {
  /** Null until the service journals its configuration: no accrual before that. */
  config: RewardsParams | null = null
  /** The journal minute (unix minutes) of the last sample; null until configured. */
  cursorMin: number | null = null
  readonly days = new Map<number, DayState>()
  /** Ascending by day. */
  readonly paid: PaidDay[] = []
  readonly totals = new Map<string, MakerTotals>()
  /** Each market's last score sample and the book it was taken of (scoreOf). */
  private readonly scores = new Map<string, { bids: BookSide; asks: BookSide; bidChanges: number; askChanges: number; band: number; minSize: number; sample: MarketSample }>()

  setConfig(config: RewardsParams, tsSec: number): void {
    this.config = { ...config }
    this.cursorMin ??= Math.floor(tsSec / MINUTE_SEC)
  }

  /**
   * One sample of every active market's resting book, credited as one minute to the day of
   * `tsSec` (journal time). Days that closed before it with nobody scored are dropped: they
   * have nothing to pay.
   */
  sample(tsSec: number, engine: Engine): void {
    const config = this.config
    if (config === null) return
    const samples: Array<readonly [string, MarketSample]> = []
    for (const id of [...engine.markets.keys()].sort()) {
      const m = engine.markets.get(id)!
      if (m.status !== "active") continue
      samples.push([id, this.scoreOf(id, m.bids, m.asks, config)])
    }
    const day = dayOfSec(tsSec)
    for (const [d, state] of this.days) if (d < day && state.scored.size === 0) this.days.delete(d)
    this.addMinutes(day, samples, 1)
    this.cursorMin = Math.floor(tsSec / MINUTE_SEC)
  }

  /**
   * A market's score sample. A book is sampled every minute and most minutes it has not changed:
   * the sample of unchanged sides (same objects, same change counts) under the same parameters
   * is the one computed last time. Nothing of this is state.
   */
  private scoreOf(id: string, bids: BookSide, asks: BookSide, config: RewardsParams): MarketSample {
    const kept = this.scores.get(id)
    if (
      kept !== undefined && kept.bids === bids && kept.asks === asks && kept.bidChanges === bids.changes && kept.askChanges === asks.changes &&
      kept.band === config.bandSpreadBpsMax && kept.minSize === config.minSizeContracts
    ) {
      return kept.sample
    }
    const quotes: RestingQuote[] = []
    sideQuotes(bids, quotes)
    sideQuotes(asks, quotes)
    const sample = marketSample(quotes, { bandSpreadBpsMax: config.bandSpreadBpsMax, minSizeContracts: config.minSizeContracts })
    this.scores.set(id, { bids, asks, bidChanges: bids.changes, askChanges: asks.changes, band: config.bandSpreadBpsMax, minSize: config.minSizeContracts, sample })
    return sample
  }

  private addMinutes(day: number, samples: ReadonlyArray<readonly [string, MarketSample]>, minutes: number): void {
    let state = this.days.get(day)
    if (state === undefined) this.days.set(day, (state = { accrual: emptyDay(day), scored: new Map(), minutes: 0 }))
    state.minutes += minutes
    for (const [marketId, sample] of samples) {
      state.accrual = addSample(state.accrual, marketId, sample, minutes)
      if (sample.makers.some((mk) => mk.qMinUnits !== "0")) state.scored.set(marketId, (state.scored.get(marketId) ?? 0) + minutes)
    }
  }

  /** Sampled days that journal time `tsSec` has left behind and that are not paid yet, ascending. */
  closedUnpaidDays(tsSec: number): number[] {
    const today = dayOfSec(tsSec)
    return [...this.days.keys()].filter((d) => d < today).sort((a, b) => a - b)
  }

  /**
   * The pool is split across markets by scored minutes (budget_m = floor(D · scored_m / Σ scored)),
   * then within a market by each maker's per-minute share over all sampled minutes: a market
   * quoted for one minute earns one minute's worth, so idle markets cannot be farmed.
   */
  allocationParams(day: number): AllocationParams | null {
    const state = this.days.get(day)
    const config = this.config
    if (state === undefined || config === null) return null
    const total = [...state.scored.values()].reduce((a, b) => a + b, 0)
    const budgets: Record<string, number> = {}
    for (const m of state.accrual.markets) {
      const scored = state.scored.get(m.marketId) ?? 0
      budgets[m.marketId] = total === 0 ? 0 : Number((BigInt(config.dailyBudgetMicro) * BigInt(scored)) / BigInt(total))
    }
    return { dailyBudgetMicro: config.dailyBudgetMicro, perWalletCapPct: config.perWalletCapPct, marketBudgetsMicro: budgets }
  }

  /** Pays a closed day once: credits every maker, records the day, forgets its accrual. */
  pay(day: number, tsSec: number, credit: Credit): PaidDay | null {
    const params = this.allocationParams(day)
    if (params === null || !this.closedUnpaidDays(tsSec).includes(day)) return null
    const alloc = allocateDay(this.days.get(day)!.accrual, params)
    const payouts: PaidEntry[] = []
    let paidMicro = 0
    for (const p of alloc.payouts) {
      const amountMicro = p.amountMicro > 0 && credit(p.maker, p.amountMicro, `rewards:${day}`) ? p.amountMicro : 0
      paidMicro += amountMicro
      payouts.push({ maker: p.maker, amountMicro, score: p.score, capped: p.capped })
      const t = this.totals.get(p.maker) ?? { paidMicro: 0, score: 0, daysPaid: 0 }
      t.paidMicro += amountMicro
      t.score = Math.round((t.score + p.score) * 1e6) / 1e6
      if (amountMicro > 0) t.daysPaid++
      this.totals.set(p.maker, t)
    }
    const record: PaidDay = { day, paidAtSec: tsSec, paidMicro, unpaidMicro: params.dailyBudgetMicro - paidMicro, payouts }
    this.days.delete(day)
    this.paid.push(record)
    this.paid.sort((a, b) => a.day - b.day)
    while (this.paid.length > 0 && this.paid[0]!.day < day - PAID_HISTORY_DAYS) this.paid.shift()
    return record
  }

  /** What `maker` would get for `day` if it closed now (0 when it has not scored). */
  estimate(day: number, maker: string): { estimateMicro: number; score: number; minutes: number } {
    const params = this.allocationParams(day)
    const state = this.days.get(day)
    if (params === null || state === undefined) return { estimateMicro: 0, score: 0, minutes: 0 }
    const mine = estimateToday(state.accrual, params).find((e) => e.maker === maker)
    return { estimateMicro: mine?.estimateMicro ?? 0, score: mine?.score ?? 0, minutes: state.minutes }
  }

  toJSON(): RewardsBookJson {
    return {
      config: this.config,
      cursorMin: this.cursorMin,
      days: [...this.days.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([day, s]) => ({ day, accrual: s.accrual, scored: [...s.scored.entries()].sort(byKey), minutes: s.minutes })),
      paid: this.paid.map((p) => structuredClone(p)),
      totals: [...this.totals.entries()].sort(byKey).map(([k, v]) => [k, { ...v }] as const)
    }
  }

  static fromJSON(j: RewardsBookJson | undefined): RewardsBook {
    const book = new RewardsBook()
    if (j === undefined) return book
    book.config = j.config === null ? null : { ...j.config }
    book.cursorMin = j.cursorMin
    for (const d of j.days) book.days.set(d.day, { accrual: structuredClone(d.accrual), scored: new Map(d.scored), minutes: d.minutes })
    for (const p of j.paid) book.paid.push(structuredClone(p))
    for (const [maker, t] of j.totals) book.totals.set(maker, { ...t })
    return book
  }
}
