// A seeded synthetic order flow: per market a hidden probability walks in logit space
// (Brownian with rare jumps); the market's best bid and ask sit on its tick grid around
// it, one or two ticks wide; takers arrive as a Poisson process, lean towards the side
// the hidden probability favours (informed flow, the market maker's adverse selection),
// and trade lognormal sizes at the touch. Optional book snapshots every N seconds list
// five levels a side. The shipped sample (fixtures/backtest/) is this generator's output.
import { buildDataset, type Dataset, type LevelColumns, TAKER_BUY, TAKER_SELL, type TradeColumns } from "./dataset.ts"
import { Rng } from "../world/random.ts"

export interface SyntheticMarket {
  readonly id: string
  /** Starting hidden YES probability, 0..1. */
  readonly p0: number
  readonly tickBps: number
  /** Share of all trades. */
  readonly weight: number
  /** Standard deviation of the logit over one day. */
  readonly dailyLogitVol: number
}

export const DEFAULT_MARKETS: ReadonlyArray<SyntheticMarket> = [
  { id: "btc-above-150k-2025", p0: 0.22, tickBps: 100, weight: 0.35, dailyLogitVol: 0.35 },
  { id: "fed-cut-march", p0: 0.71, tickBps: 100, weight: 0.25, dailyLogitVol: 0.5 },
  { id: "house-dem-2026", p0: 0.46, tickBps: 100, weight: 0.25, dailyLogitVol: 0.25 },
  { id: "eth-flips-btc-2025", p0: 0.06, tickBps: 10, weight: 0.15, dailyLogitVol: 0.6 }
]

/** 2025-01-15 00:00:00 UTC: the sample day starts on a rewards day boundary. */
export const DEFAULT_START_SEC = 1_736_899_200
const DAY_SEC = 86_400
const MEDIAN_SIZE = 12
const SNAPSHOT_LEVELS = 5
const SNAPSHOT_DEPTH = 60
const JUMP_PROBABILITY = 0.0005
const JUMP_LOGIT_SD = 0.4
const INFORMED_LEAN = 2
const WIDTH_FLIP_PROBABILITY = 0.02

export interface SyntheticOptions {
  readonly seed: string
  readonly trades: number
  readonly startSec?: number
  readonly durationSec?: number
  readonly markets?: ReadonlyArray<SyntheticMarket>
  /** 0 (default): trades only. */
  readonly snapshotEverySec?: number
}

const clamp = (x: number, lo: number, hi: number): number => (x < lo ? lo : x > hi ? hi : x)

/** The touch around a fair price: bid on the tick grid, one or two ticks wide, inside 1..9999. */
const touch = (fairBps: number, tick: number, wide: boolean): [number, number] => {
  const floor = Math.floor(fairBps / tick) * tick
  let bid = wide && fairBps - floor < tick / 2 ? floor - tick : floor
  bid = clamp(bid, tick, 10_000 - 2 * tick)
  const ask = clamp(bid + (wide ? 2 : 1) * tick, bid + tick, 10_000 - tick)
  return [bid, ask]
}

// One piece: one generator loop whose random draws must stay in this order (the seed's output is recorded).
export const generateSynthetic = (opts: SyntheticOptions): { trades: TradeColumns; levels: LevelColumns | null } => {
  const n = opts.trades
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`synthetic trades must be a positive integer (got ${n})`)
  const markets = opts.markets ?? DEFAULT_MARKETS
  const startSec = opts.startSec ?? DEFAULT_START_SEC
  const duration = opts.durationSec ?? DAY_SEC
  const every = opts.snapshotEverySec ?? 0
  const flow = new Rng(opts.seed, "synthetic/flow")
  const walk = new Rng(opts.seed, "synthetic/walk")
  const book = new Rng(opts.seed, "synthetic/book")
  const totalWeight = markets.reduce((s, m) => s + m.weight, 0)
  const logit = markets.map((m) => Math.log(m.p0 / (1 - m.p0)))
  const lastT = markets.map(() => 0)
  // Whether each market's touch is two ticks wide; sticky, like a real book's spread.
  const wide = markets.map(() => false)
  const sdPerSqrtSec = markets.map((m) => m.dailyLogitVol / Math.sqrt(DAY_SEC))

  const trades = {
    n, exactMs: false, marketNames: markets.map((m) => m.id),
    tMs: new Float64Array(n), market: new Uint16Array(n), priceBps: new Uint16Array(n), size: new Int32Array(n), side: new Uint8Array(n)
  }
  const lv = { tMs: [] as number[], market: [] as number[], isAsk: [] as number[], priceBps: [] as number[], size: [] as number[] }
  const fairOf = (m: number): number => 10_000 / (1 + Math.exp(-logit[m]!))
  let nextSnapSec = 0

  const snapshotAll = (atSec: number): void => {
    for (let m = 0; m < markets.length; m++) {
      const tick = markets[m]!.tickBps
      const [bid, ask] = touch(fairOf(m), tick, book.next() < 0.4)
      for (let k = 0; k < SNAPSHOT_LEVELS; k++) {
        for (const [isAsk, price] of [[0, bid - k * tick], [1, ask + k * tick]] as const) {
          if (price < 1 || price > 9_999) continue
          lv.tMs.push((startSec + atSec) * 1000)
          lv.market.push(m)
          lv.isAsk.push(isAsk)
          lv.priceBps.push(price)
          lv.size.push(Math.max(1, Math.round(SNAPSHOT_DEPTH * (1 + k / 2) * (0.5 + book.next()))))
        }
      }
    }
  }

  let t = 0
  const gapMean = duration / (n + 1)
  for (let i = 0; i < n; i++) {
    t = Math.min(t + flow.exponential(gapMean), duration - 1)
    while (every > 0 && nextSnapSec <= t) {
      snapshotAll(nextSnapSec)
      nextSnapSec += every
    }
    let pick = flow.next() * totalWeight
    let m = 0
    while (m < markets.length - 1 && pick >= markets[m]!.weight) pick -= markets[m++]!.weight
    const spec = markets[m]!
    const dt = t - lastT[m]!
    lastT[m] = t
    logit[m] = clamp(logit[m]! + sdPerSqrtSec[m]! * Math.sqrt(dt) * walk.normal() + (walk.next() < JUMP_PROBABILITY ? JUMP_LOGIT_SD * walk.normal() : 0), -4.6, 4.6)
    const fair = fairOf(m)
    if (flow.next() < WIDTH_FLIP_PROBABILITY) wide[m] = !wide[m]
    const [bid, ask] = touch(fair, spec.tickBps, wide[m]!)
    const buyProbability = clamp(0.5 + (INFORMED_LEAN * (fair - (bid + ask) / 2)) / (ask - bid), 0.1, 0.9)
    const buy = flow.next() < buyProbability
    const price = buy ? ask : bid
    const minSize = Math.ceil(100 / Math.min(price, 10_000 - price))
    const size = clamp(Math.round(MEDIAN_SIZE * Math.exp(flow.normal())), minSize, 5_000)
    trades.tMs[i] = (startSec + Math.floor(t)) * 1000
    trades.market[i] = m
    trades.priceBps[i] = price
    trades.size[i] = size
    trades.side[i] = buy ? TAKER_BUY : TAKER_SELL
  }
  const levels: LevelColumns | null = every > 0
    ? {
        n: lv.tMs.length, marketNames: markets.map((m) => m.id), tMs: Float64Array.from(lv.tMs), market: Uint16Array.from(lv.market),
        isAsk: Uint8Array.from(lv.isAsk), priceBps: Uint16Array.from(lv.priceBps), size: Int32Array.from(lv.size)
      }
    : null
  return { trades, levels }
}

export const syntheticDataset = (opts: SyntheticOptions): Dataset => {
  const { trades, levels } = generateSynthetic(opts)
  return buildDataset(`synthetic:${opts.trades}:seed=${opts.seed}`, trades, levels)
}
