// What a run records over time for its report: the per-minute series (equity, each market's mid,
// our inventory and best quotes), the outcome path the interval and fidelity read, and each
// market's mid path for the markouts.
import type { OutcomePath, Series } from "./report.ts"
import type { MarketState } from "./venue.ts"

export class RunRecorder {
  readonly series: Series
  readonly outcome: OutcomePath
  readonly midPaths: ReadonlyArray<{ tMs: number[]; midBps: number[] }>

  constructor(private readonly markets: ReadonlyArray<MarketState>, botStartMs: number) {
    this.series = {
      tSec: [], equityMicro: [], cashMicro: [], pnlMicro: [],
      mid2: markets.map(() => []), netYes: markets.map(() => []), bidBps: markets.map(() => []), askBps: markets.map(() => [])
    }
    this.outcome = { fromSec: Math.floor(botStartMs / 1000), tSec: [], tradingPnlMicro: [], fills: [] }
    this.midPaths = markets.map(() => ({ tMs: [], midBps: [] }))
  }

  /** The quoted markets' trading PnL and fills so far, at tSec (the last point of a second is kept). */
  recordOutcome(tSec: number): void {
    let pnl = 0
    let n = 0
    for (const ms of this.markets) {
      if (!ms.quoting) continue
      pnl += ms.pnlMicro - ms.rebatesMicro
      n += ms.fills
    }
    const o = this.outcome
    if (o.tSec.at(-1) === tSec) {
      o.tradingPnlMicro[o.tSec.length - 1] = pnl
      o.fills[o.tSec.length - 1] = n
      return
    }
    o.tSec.push(tSec)
    o.tradingPnlMicro.push(pnl)
    o.fills.push(n)
  }

  /** One sample at tMs: the account's figures, and each market's mid, inventory and our best resting quotes. */
  sample(tMs: number, equityMicro: number, cashMicro: number, capitalMicro: number): void {
    const s = this.series
    s.tSec.push(Math.floor(tMs / 1000))
    s.equityMicro.push(equityMicro)
    s.cashMicro.push(cashMicro)
    s.pnlMicro.push(equityMicro - capitalMicro)
    for (const ms of this.markets) {
      let bid = -1
      let ask = -1
      for (const o of ms.ours) {
        if (o.remaining === 0) continue
        if (o.isBid && o.yesPriceBps > bid) bid = o.yesPriceBps
        if (!o.isBid && (ask < 0 || o.yesPriceBps < ask)) ask = o.yesPriceBps
      }
      s.mid2[ms.idx]!.push(ms.bidTop >= 0 && ms.askTop >= 0 ? ms.bidTop + ms.askTop : -1)
      s.netYes[ms.idx]!.push(ms.netYes)
      s.bidBps[ms.idx]!.push(bid)
      s.askBps[ms.idx]!.push(ask)
    }
    this.recordOutcome(Math.floor(tMs / 1000))
  }

  /** The mid path for markouts: each change of a market's mid after a data event. */
  noteMid(idx: number, tMs: number, mid2: number): void {
    const path = this.midPaths[idx]!
    if (mid2 >= 0 && path.midBps.at(-1) !== mid2 / 2) {
      path.tMs.push(tMs)
      path.midBps.push(mid2 / 2)
    }
  }
}
