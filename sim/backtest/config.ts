// What one backtest run is: the strategy, the capital and every model knob. Plain data
// (structured-cloneable) so sweep workers receive it as is.
import { DEFAULT_MAKER_REBATE_BPS, DEFAULT_TAKER_FEE_BPS, MICRO_PER_CONTRACT } from "../../src/engine/money.ts"
import type { PresetName } from "../../src/lp/presets.ts"
import { paramsFromSpec, type StrategySpec } from "../../src/lp/strategy-spec.ts"
import { type StrategyParams, validateParams } from "../../src/lp/strategy.ts"
import type { RewardsParams } from "../../src/service/commands.ts"
import type { TapeMeta } from "../../src/store/tape.ts"
import { BacktestInputError, type Dataset } from "./dataset.ts"
import type { ResponseModel } from "./response/model.ts"

export type QueueModelName = "risk-averse" | "prob"
export const QUEUE_MODELS: ReadonlyArray<QueueModelName> = ["risk-averse", "prob"]

/** Latency = baseMs + an exponential draw with mean jitterMs, rounded to whole ms. */
export interface LatencySpec {
  readonly baseMs: number
  readonly jitterMs: number
  /**
   * Feed only: the strategy is stepped every tickMs on the book as it stands, as the
   * server-managed bot is (src/workers/lp-bot-runner.ts, ticked every second on whole seconds), so an
   * event is seen at the first tick after it plus the latency above. 0 or absent: each event is
   * seen on its own after the latency.
   */
  readonly tickMs?: number
}

export type StrategySource =
  | { readonly kind: "preset"; readonly preset: PresetName }
  | { readonly kind: "spec"; readonly spec: StrategySpec; readonly params: StrategyParams }

/** The service's rewards knobs (daily budget, band, size cutoff, per-wallet cap), as journaled by it. */
export type RewardsSpec = RewardsParams

/** What the run took from the data, and what it had to assume because the data did not say. */
export interface Provenance {
  readonly fees: "tape" | "given" | "assumed"
  readonly rewards: "tape" | "given" | "assumed"
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
  /** The engine's fee schedule: rebates are paid only out of the taker fees collected (docs/engine.md). */
  readonly makerRebateBps: number
  readonly takerFeeBps: number
  /** Per-market taker fees over takerFeeBps (a tape's schedule). */
  readonly takerFeeBpsByMarket: Readonly<Record<string, number>>
  readonly rewards: RewardsSpec
  /** Where fees and the rewards configuration came from (the report says so when assumed). */
  readonly provenance: Provenance
  /** Quote only these markets (the others are replayed for the book and the rewards split); null = all. */
  readonly quoteMarkets: ReadonlyArray<string> | null
  /** The strategy starts at this unix second (a bot started mid-tape); null = with the data. */
  readonly startSec: number | null
  /**
   * The data's start (a tape's from_sec, when the service began journaling): the clock, the
   * once-a-minute rewards samples and the days count from there, as the service's did; null (or
   * later than the first event) = the first event.
   */
  readonly beginSec: number | null
  /** The data's end (a tape's to_sec): days that ended by then are paid; null = the last event. */
  readonly endSec: number | null
  /**
   * Background orders placed across our quotes trade with them ("book-move" fills). Off by
   * default: the market's other makers post-only, as every maker here does, so a move
   * through our price shows as trades, never as a background maker taking us.
   */
  readonly bookMoveFills: boolean
  /** Equity, inventory, quotes and rewards are sampled this often. */
  readonly sampleSec: number
  /** The market-response model (`--response`, fitted by `fit-response`): the takers our quotes attract; null = none. */
  readonly response: ResponseModel | null
  /** The tape's LP bots (owners) in the bot runner's pass order (tape.json lp_bots); empty when the tape does not say. */
  readonly lpBotsInPass: ReadonlyArray<string>
  /**
   * How many of them step ahead of ours in each pass, seeing nothing of ours while we see their
   * quotes of that second (sim/backtest/pass.ts; `--bots-ahead`): 0 = ours steps first, as a bot
   * ticked on whole seconds sees nothing of its own second.
   */
  readonly botsAheadInPass: number
  /** The response takers' arrival stream: 0 or absent the run's own; k > 0 an interval draw's (sim/backtest/interval-run.ts). */
  readonly responseDraw?: number
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
  makerRebateBps: DEFAULT_MAKER_REBATE_BPS,
  takerFeeBps: DEFAULT_TAKER_FEE_BPS,
  takerFeeBpsByMarket: {},
  // The service's defaults (src/runtime/boot.ts, docs/rewards.md).
  rewards: { dailyBudgetMicro: 1_000 * MICRO_PER_CONTRACT, bandSpreadBpsMax: 300, minSizeContracts: 10, perWalletCapPct: 40 },
  provenance: { fees: "assumed", rewards: "assumed" },
  quoteMarkets: null,
  startSec: null,
  beginSec: null,
  endSec: null,
  bookMoveFills: false,
  sampleSec: 60,
  response: null,
  lpBotsInPass: [],
  botsAheadInPass: 0
}

/** The strategy spec the run stands for: a preset is the Simple-mode spec with the run's capital, as the bot is started. */
export const specOf = (config: BacktestConfig): StrategySpec =>
  config.strategy.kind === "preset" ? { mode: "simple", capital_micro_usdc: config.capitalMicro, preset: config.strategy.preset } : config.strategy.spec

/**
 * Per-market strategy params: the live bot's own function (`paramsFromSpec`, what
 * `parseStrategySpec` returns to the bot runner) on the same spec, so one spec is one set of
 * params in the bot and here, in every market. Overrides go on top, then validation (a bad
 * combination is an input error, named).
 */
export const marketParams = (config: BacktestConfig, d: Dataset): StrategyParams[] => {
  const base = paramsFromSpec(specOf(config))
  const params: StrategyParams = { ...base, ...config.overrides }
  const error = validateParams(params)
  if (error !== null) throw new BacktestInputError(`strategy parameter ${error}`)
  return d.markets.map(() => params)
}

/** A tape's fee schedule, rewards configuration, start and end, unless given on the command line. */
export const withTapeMeta = (config: BacktestConfig, meta: TapeMeta): BacktestConfig => {
  let c: BacktestConfig = { ...config, beginSec: config.beginSec ?? meta.from_sec, endSec: config.endSec ?? meta.to_sec, lpBotsInPass: meta.lp_bots ?? [] }
  if (c.provenance.fees !== "given") {
    c = {
      ...c,
      makerRebateBps: meta.fees.maker_rebate_bps,
      takerFeeBps: meta.fees.default_taker_fee_bps,
      takerFeeBpsByMarket: { ...meta.fees.taker_fee_bps },
      provenance: { ...c.provenance, fees: "tape" }
    }
  }
  if (c.provenance.rewards !== "given" && meta.rewards !== null) c = { ...c, rewards: { ...meta.rewards }, provenance: { ...c.provenance, rewards: "tape" } }
  return c
}
