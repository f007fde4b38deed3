// The run's accounting of our bot: each fill into its market's position and cash, the marks at
// the mid, equity and its drawdown. The engine's own books are checked against it at the end
// (report-build.ts), so it is a second count, not the only one.
import type { Account } from "../../src/engine/state.ts"
import type { FillEvent } from "../../src/engine/types.ts"
import type { FillRow } from "./report.ts"
import { CAUSE_RESPONSE, CAUSE_TRADE, type FillCause, type MarketState, ownNotionalMicro } from "./venue.ts"

export class RunTally {
  readonly fills: FillRow[] = []
  fillsFromTrades = 0
  readonly byResponse = { fills: 0, contracts: 0 }
  /** Our holdings marked at each market's mid, summed. */
  markTotal = 0
  peak: number
  maxDrawdown = 0
  peakAtMaxDrawdown: number

  constructor(
    private readonly lpAccount: Account,
    capitalMicro: number
  ) {
    this.peak = capitalMicro
    this.peakAtMaxDrawdown = capitalMicro
  }

  /** One of our fills at nowMs: position, cash (rebates in, builder fees out), counts and the fill's row. */
  onFill(ms: MarketState, ev: FillEvent, cause: FillCause, nowMs: number): void {
    const size = ev.size
    const notional = ownNotionalMicro(size, ev.makerPriceBps)
    const isBuy = ev.makerSide === "buy"
    ms.cashFlowMicro += (isBuy ? -notional : notional) + ev.makerRebateMicro - ev.makerBuilderFeeMicro
    ms.rebatesMicro += ev.makerRebateMicro
    ms.volumeMicro += notional
    if (ev.makerOutcome === "yes") ms.yes += isBuy ? size : -size
    else ms.no += isBuy ? size : -size
    ms.fills++
    ms.filledContracts += size
    if (cause === CAUSE_TRADE) this.fillsFromTrades++
    if (cause === CAUSE_RESPONSE) {
      this.byResponse.fills++
      this.byResponse.contracts += size
    }
    this.fills.push({
      tMs: nowMs, market: ms.idx, side: ev.makerSide, outcome: ev.makerOutcome, priceBps: ev.makerPriceBps,
      yesPriceBps: ev.yesPriceBps, size, rebateMicro: ev.makerRebateMicro, cause: cause === CAUSE_TRADE ? "trade" : cause === CAUSE_RESPONSE ? "response" : "book"
    })
  }

  /** Marks the market's holdings at its mid (unchanged while it has none). */
  remark(ms: MarketState): void {
    if (ms.mid2 < 0) return
    const mark = ms.yes * ms.mid2 * 50 + ms.no * (20_000 - ms.mid2) * 50
    this.markTotal += mark - ms.markMicro
    ms.markMicro = mark
  }

  cashMicro(): number {
    return this.lpAccount.availableMicro + this.lpAccount.lockedMicro
  }

  equity(): number {
    return this.cashMicro() + this.markTotal
  }

  trackDrawdown(): void {
    const e = this.equity()
    if (e > this.peak) this.peak = e
    if (this.peak - e > this.maxDrawdown) {
      this.maxDrawdown = this.peak - e
      this.peakAtMaxDrawdown = this.peak
    }
  }
}
