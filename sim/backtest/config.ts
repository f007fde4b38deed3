// What one backtest run is: the strategy, the capital and every model knob. Plain data
// (structured-cloneable) so sweep workers receive it as is.
import { MICRO_PER_CONTRACT } from "../../src/engine/money.ts"
import { paramsFromPreset, type PresetName } from "../../src/lp/presets.ts"
import type { StrategySpec } from "../../src/lp/strategy-spec.ts"
import { type StrategyParams, validateParams } from "../../src/lp/strategy.ts"
import { BacktestInputError, type Dataset, KIND_TRADE } from "./dataset.ts"

export type QueueModelName = "risk-averse" | "prob"
export const QUEUE_MODELS: ReadonlyArray<QueueModelName> = ["risk-averse", "prob"]

/** Latency = baseMs + an exponential draw with mean jitterMs, rounded to whole ms. */
export interface LatencySpec {
  readonly baseMs: number
  readonly jitterMs: number
}

export type StrategySource =
  | { readonly kind: "preset"; readonly preset: PresetName }
  | { readonly kind: "spec"; readonly spec: StrategySpec; readonly params: StrategyParams }

export interface RewardsSpec {
  /** The daily pool for all the run's markets, split equally and pro-rated by minutes sampled. */
  readonly poolDailyMicro: number
  readonly bandSpreadBpsMax: number
  readonly minSizeContracts: number
  readonly perWalletCapPct: number
}

export interface BacktestConfig {
  readonly seed: string
  readonly capitalMicro: number
  readonly strategy: StrategySource
  /** Applied over every market's params (CLI flags, sweeps). */
  readonly overrides: Partial<StrategyParams>
  readonly queueModel: QueueModelName
  /** Probabilistic model: f(x) = x^power, P(decrease ahead) = f(front) / (f(front) + f(back)). */
  readonly queuePower: number
  readonly entryLatency: LatencySpec
  readonly feedLatency: LatencySpec
  /** Synthetic depth (markets without snapshots): levels a side around the recent trade prices. */
  readonly bgLevels: number
  /** Contracts at the top synthetic level; null = 5 × the market's median trade size. */
  readonly bgDepth: number | null
  /** Percent of trades after which one synthetic level's depth is redrawn (background adds and cancels). */
  readonly bgChurnPct: number
  /** Background maker wallets sharing the depth (the rewards competition). */
  readonly bgMakers: number
  readonly makerRebateBps: number
  readonly takerFeeBps: number
  readonly rewards: RewardsSpec
  /** Equity, inventory, quotes and rewards are sampled this often. */
  readonly sampleSec: number
}

export const DEFAULT_CONFIG: BacktestConfig = {
  seed: "1",
  capitalMicro: 1_000 * MICRO_PER_CONTRACT,
  strategy: { kind: "preset", preset: "balanced" },
  overrides: {},
  queueModel: "risk-averse",
  queuePower: 3,
  entryLatency: { baseMs: 50, jitterMs: 20 },
  feedLatency: { baseMs: 100, jitterMs: 50 },
  bgLevels: 5,
  bgDepth: null,
  bgChurnPct: 10,
  bgMakers: 8,
  makerRebateBps: 5,
  takerFeeBps: 0,
  rewards: { poolDailyMicro: 1_000 * MICRO_PER_CONTRACT, bandSpreadBpsMax: 300, minSizeContracts: 10, perWalletCapPct: 40 },
  sampleSec: 60
}

/** Each market's first trade price: the mid a preset sizes its ladder with (the bot starts knowing the market). */
export const firstPrices = (d: Dataset): number[] => {
  const out = d.markets.map(() => 5_000)
  const seen = d.markets.map(() => false)
  for (let i = 0; i < d.count; i++) {
    const m = d.market[i]!
    if (!seen[m] && d.kind[i] === KIND_TRADE) {
      seen[m] = true
      out[m] = d.priceBps[i]!
    }
  }
  return out
}

/**
 * Per-market strategy params. Presets split the capital equally across markets and size
 * the ladder at each market's first price; an advanced spec applies as is to every market.
 * Overrides go on top, then validation (a bad combination is an input error, named).
 */
export const marketParams = (config: BacktestConfig, d: Dataset): StrategyParams[] => {
  const perMarket = Math.floor(config.capitalMicro / d.markets.length)
  if (perMarket < 1) throw new BacktestInputError(`capital ${config.capitalMicro} micro is too small for ${d.markets.length} markets`)
  const mids = firstPrices(d)
  const src = config.strategy
  const preset: PresetName | null = src.kind === "preset" ? src.preset : src.spec.mode === "simple" ? src.spec.preset : null
  return d.markets.map((_, m) => {
    const base = preset !== null ? paramsFromPreset(preset, perMarket, mids[m]!) : (src as { params: StrategyParams }).params
    const params: StrategyParams = { ...base, ...config.overrides }
    const error = validateParams(params)
    if (error !== null) throw new BacktestInputError(`strategy parameter ${error}`)
    return params
  })
}
