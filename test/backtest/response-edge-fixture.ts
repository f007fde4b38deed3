// A tape whose takers respond to the edge, for the edge fit's tests: one market's touch (tick
// 1 bps) moves its mid by −12..+12 bps every Exp(8 s) with a spread of 10..40 bps; takers of each
// side arrive as a Poisson process at rate(e) per second, e the edge the touch offers against
// the mid H_TRUE seconds later (buyers: mid later − ask; sellers: bid − mid later), and trade at
// the touch without moving it. Nothing else in the tape knows the rate.
import type { LevelRow, TradeRow } from "../../sim/backtest/dataset.ts"
import { Rng } from "../../sim/world/random.ts"

export const H_TRUE_SEC = 15
export const EDGE_T0_MS = 1_767_225_600_000
const MARKET = "mkt-edge"

/** A logistic rise from 0.005/s at low edges to 0.05/s at high ones, centred on +5 ticks. */
export const risingRate = (e: number): number => 0.005 + 0.045 / (1 + Math.exp(-(e - 5) / 4))
export const flatRate = (): number => 0.02

export interface EdgeTapeRows {
  readonly trades: TradeRow[]
  readonly levels: LevelRow[]
  readonly endMs: number
}

/** Sizes that depend on the taker's edge (ticks) against the mid `hSec` later, for the size fit's test (default: 1..20 at random). */
export interface SizeBy {
  readonly hSec: number
  readonly size: (rng: Rng, edgeTicks: number) => number
}

export const generateEdgeTape = (seed: string, durationSec: number, rate: (edgeTicks: number) => number, hSec = H_TRUE_SEC, sizeBy?: SizeBy): EdgeTapeRows => {
  const rng = new Rng(seed, "edge-tape")
  const endMs = EDGE_T0_MS + durationSec * 1000
  // The touch path first: (time, bid, ask), a change every Exp(8 s) at a whole ms.
  const t: number[] = []
  const bid: number[] = []
  const ask: number[] = []
  let mid = 5000
  for (let at = EDGE_T0_MS; at < endMs; at += Math.max(1, Math.round(rng.exponential(8000)))) {
    mid = Math.min(9000, Math.max(1000, mid + rng.int(-12, 12)))
    const spread = rng.int(10, 40)
    t.push(at)
    bid.push(mid - Math.floor(spread / 2))
    ask.push(mid - Math.floor(spread / 2) + spread)
  }
  const idx = (ms: number): number => {
    let lo = 0
    let hi = t.length - 1
    while (lo < hi) {
      const m = (lo + hi + 1) >> 1
      if (t[m]! <= ms) lo = m
      else hi = m - 1
    }
    return lo
  }
  const longEdge = (ms: number, buy: boolean, j: number, hLongSec: number): number => {
    const k = idx(ms + hLongSec * 1000)
    const mid2 = bid[k]! + ask[k]!
    return buy ? (mid2 - 2 * ask[j]!) / 2 : (2 * bid[j]! - mid2) / 2
  }
  // Breakpoints of the edge: the touch changes, and the mid H later changes.
  const hMs = hSec * 1000
  const cuts = [...new Set([...t, ...t.map((x) => x - hMs).filter((x) => x > EDGE_T0_MS)])].sort((a, b) => a - b)
  const trades: TradeRow[] = []
  const snapshotMs = new Set(t)
  for (let k = 0; k < cuts.length; k++) {
    const from = cuts[k]!
    const to = Math.min(endMs, k + 1 < cuts.length ? cuts[k + 1]! : endMs)
    const j = idx(from)
    const later = idx(from + hMs)
    const mid2Later = bid[later]! + ask[later]!
    for (const buy of [true, false]) {
      const e = buy ? (mid2Later - 2 * ask[j]!) / 2 : (2 * bid[j]! - mid2Later) / 2
      const r = rate(e)
      for (let at = from + rng.exponential(1000 / r); at < to; at += rng.exponential(1000 / r)) {
        const ms = Math.floor(at)
        // A trade in a snapshot's own ms would be read against the book after it: keep the tape unambiguous.
        if (ms < from || snapshotMs.has(ms)) continue
        const size = sizeBy === undefined ? rng.int(1, 20) : sizeBy.size(rng, longEdge(ms, buy, j, sizeBy.hSec))
        trades.push({ tsMs: ms, marketId: MARKET, priceBps: buy ? ask[j]! : bid[j]!, size, takerSide: buy ? "buy" : "sell" })
      }
    }
  }
  trades.sort((a, b) => a.tsMs - b.tsMs)
  const levels: LevelRow[] = []
  for (let k = 0; k < t.length; k++) {
    levels.push({ tsMs: t[k]!, marketId: MARKET, side: "bid", priceBps: bid[k]!, size: 50 })
    levels.push({ tsMs: t[k]!, marketId: MARKET, side: "ask", priceBps: ask[k]!, size: 50 })
  }
  return { trades, levels, endMs }
}
