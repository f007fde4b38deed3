// A tape with a known market response, for the fit's tests: the touch of one market stands at
// a spread drawn from 2..30 ticks (1 bps) for Exp(60 s) at a time; takers of each side arrive as
// a Poisson process at a·exp(−b·spread) per second and trade at the touch; a share π of them are
// informed: the mid jumps JUMP bps their way one second after they trade. Sizes are lognormal.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { LevelRow, TradeRow } from "../../sim/backtest/dataset.ts"
import { Rng } from "../../sim/world/random.ts"

export interface Truth {
  readonly aPerSec: number
  readonly bPerTick: number
  readonly informedShare: number
  readonly sizeMu: number
  readonly sizeSigma: number
}

export const TRUTH: Truth = { aPerSec: 0.05, bPerTick: 0.08, informedShare: 0.4, sizeMu: 2, sizeSigma: 0.5 }
export const T0_MS = 1_767_225_600_000
const MARKET = "mkt-response"
const JUMP_BPS = 20

export interface ResponseTape {
  readonly trades: TradeRow[]
  readonly levels: LevelRow[]
  readonly endMs: number
}

export const generateResponseTape = (seed: string, durationSec: number, truth: Truth = TRUTH): ResponseTape => {
  const rng = new Rng(seed, "response-tape")
  const trades: TradeRow[] = []
  const levels: LevelRow[] = []
  let mid = 5000
  let spread = 10
  const touch = (tMs: number): void => {
    // One snapshot per ms: a later change in the same ms replaces it.
    if (levels.length > 0 && levels[levels.length - 1]!.tsMs === tMs) levels.length -= 2
    levels.push({ tsMs: tMs, marketId: MARKET, side: "bid", priceBps: mid - Math.floor(spread / 2), size: 50 })
    levels.push({ tsMs: tMs, marketId: MARKET, side: "ask", priceBps: mid - Math.floor(spread / 2) + spread, size: 50 })
  }
  // Pending informed jumps: [time ms, signed bps], applied in time order.
  const jumps: Array<[number, number]> = []
  const endMs = T0_MS + durationSec * 1000
  let t = T0_MS
  while (t < endMs) {
    spread = rng.int(2, 30)
    mid += rng.int(-2, 2)
    touch(t)
    const segEnd = Math.min(endMs, t + Math.max(1000, Math.round(rng.exponential(60_000))))
    const rate = truth.aPerSec * Math.exp(-truth.bPerTick * spread)
    for (let at = t + rng.exponential(1000 / (2 * rate)); at < segEnd; at += rng.exponential(1000 / (2 * rate))) {
      const ms = Math.floor(at)
      while (jumps.length > 0 && jumps[0]![0] <= ms) {
        const [jumpMs, move] = jumps.shift()!
        mid += move
        touch(jumpMs)
      }
      const buy = rng.chance(0.5)
      if (rng.chance(truth.informedShare)) jumps.push([ms + 1000, buy ? JUMP_BPS : -JUMP_BPS])
      const size = Math.max(1, Math.round(Math.exp(truth.sizeMu + truth.sizeSigma * rng.normal())))
      const bid = mid - Math.floor(spread / 2)
      trades.push({ tsMs: ms, marketId: MARKET, priceBps: buy ? bid + spread : bid, size, takerSide: buy ? "buy" : "sell" })
    }
    while (jumps.length > 0 && jumps[0]![0] < segEnd) {
      const [at, move] = jumps.shift()!
      mid += move
      touch(at)
    }
    t = segEnd
  }
  return { trades, levels, endMs }
}

/** Writes the tape as a tape directory (tape.json, trades.csv, book.csv), as npm run sim -- --tape writes one. */
export const writeResponseTape = (dir: string, tape: ResponseTape, withBook = true): void => {
  mkdirSync(dir, { recursive: true })
  const meta = {
    format: "twinbook-tape", version: 2, source: "response fixture", from_sec: Math.floor(T0_MS / 1000), to_sec: Math.floor(tape.endMs / 1000),
    snapshot_interval_sec: 0, markets: [MARKET], fees: { maker_rebate_bps: 5, default_taker_fee_bps: 0, taker_fee_bps: {} }, rewards: null,
    excluded_users: [], trades: tape.trades.length, snapshots: tape.levels.length, orders: 0
  }
  writeFileSync(join(dir, "tape.json"), `${JSON.stringify(meta, null, 2)}\n`)
  writeFileSync(join(dir, "trades.csv"), ["ts_ms,market_id,price_bps,size,taker_side", ...tape.trades.map((r) => `${r.tsMs},${r.marketId},${r.priceBps},${r.size},${r.takerSide}`)].join("\n") + "\n")
  if (withBook) writeFileSync(join(dir, "book.csv"), ["ts_ms,market_id,side,price_bps,size", ...tape.levels.map((r) => `${r.tsMs},${r.marketId},${r.side},${r.priceBps},${r.size}`)].join("\n") + "\n")
}
