// The tape's own touch, per market, as it stood over time: best bid and ask from the book
// snapshots (an L2 tape at every change gives it exactly). The fit measures spreads and mid
// moves on it; the backtest looks ahead on it for the mid an informed taker knows is coming.
import { type Dataset, KIND_SNAPSHOT, KIND_TRADE } from "../dataset.ts"

export interface TouchPath {
  readonly tMs: Float64Array
  /** Best bid / ask in YES bps, −1 for an empty side. */
  readonly bid: Int32Array
  readonly ask: Int32Array
}

/** Each market's touch after every snapshot (a market without snapshots has an empty path). */
export const touchPaths = (d: Dataset): TouchPath[] => {
  const rows = d.markets.map(() => ({ t: [] as number[], bid: [] as number[], ask: [] as number[] }))
  for (let i = 0; i < d.count; i++) {
    if (d.kind[i] !== KIND_SNAPSHOT) continue
    const start = d.levelStart[i]!
    const end = start + d.size[i]!
    let bid = -1
    let ask = -1
    // Levels are bids best first, then asks best first.
    if (end > start && d.levelIsAsk[start] === 0) bid = d.levelPrice[start]!
    for (let k = start; k < end; k++) {
      if (d.levelIsAsk[k] === 1) {
        ask = d.levelPrice[k]!
        break
      }
    }
    const r = rows[d.market[i]!]!
    r.t.push(d.tMs[i]!)
    r.bid.push(bid)
    r.ask.push(ask)
  }
  return rows.map((r) => ({ tMs: Float64Array.from(r.t), bid: Int32Array.from(r.bid), ask: Int32Array.from(r.ask) }))
}

/** Index of the last entry at or before tMs, or −1. */
export const indexAt = (p: TouchPath, tMs: number): number => {
  let lo = 0
  let hi = p.tMs.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (p.tMs[mid]! <= tMs) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}

/** The mid ×2 (half-bps stay exact) at tMs, or −1 when the book then was not two-sided. */
export const mid2At = (p: TouchPath, tMs: number): number => {
  const j = indexAt(p, tMs)
  if (j < 0 || p.bid[j]! < 0 || p.ask[j]! < 0) return -1
  return p.bid[j]! + p.ask[j]!
}

/** The market's tick: the gcd of its trade prices, at most 100 bps (the runner's own rule). */
export const marketTicks = (d: Dataset): number[] => {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))
  const g = d.markets.map(() => 0)
  for (let i = 0; i < d.count; i++) if (d.kind[i] === KIND_TRADE) g[d.market[i]!] = gcd(d.priceBps[i]!, g[d.market[i]!]!)
  return g.map((x) => (x === 0 ? 100 : Math.min(x, 100)))
}
