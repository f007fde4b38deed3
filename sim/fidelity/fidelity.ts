// The backtest's fidelity, measured (docs/backtesting.md "Fidelity"). For one scenario and
// seed: run the world with the LP bots live and read each bot's realised outcome from the
// journal (realised.ts); run it again without one bot (the counterfactual market: every other agent keeps
// its seeds), write that run's tape with book snapshots, and backtest the bot's own spec on
// it from the moment it started, in its markets, with its balance. The realised side is marked
// at the live market's final prices (the headline) and at the counterfactual's (a second figure);
// both sides are compared over the reward days both paid (the summary: summary.ts).
import { join } from "node:path"
import { parseStrategySpec } from "../../src/lp/strategy-spec.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import type { TapeMeta } from "../../src/store/tape.ts"
import { type BacktestConfig, DEFAULT_CONFIG, type LatencySpec, type QueueModelName, withTapeMeta } from "../backtest/config.ts"
import type { Dataset } from "../backtest/dataset.ts"
import { loadTape } from "../backtest/load.ts"
import type { ResponseModel } from "../backtest/response/model.ts"
import { runBacktest } from "../backtest/runner.ts"
import type { PnlAttribution } from "../backtest/attribution.ts"
import { DEFAULT_INTERVAL, type IntervalSpec } from "../backtest/interval.ts"
import { withInterval } from "../backtest/interval-run.ts"
import { type RunInterval, runIntervalOf } from "./coverage.ts"
import type { ErrorRun } from "./conformal.ts"
import { botAgents, type Realised, realisedAttribution, realisedOf, realisedTradingPnlAt, userOfAgent } from "./realised.ts"
import { runScenario } from "../scenario/run.ts"
import type { Scenario } from "../scenario/scenario.ts"
import { writeRunTape } from "../scenario/tape.ts"

export interface LatencyModel {
  readonly name: string
  readonly feed: LatencySpec
  readonly entry: LatencySpec
}

/**
 * The latency models each bot-run is backtested with. `tick` is the server-managed bot as it
 * runs (src/workers/lp-bot-runner.ts): stepped once a second, on whole seconds, on the book as it stands,
 * in process, so its orders land at once. `bot` is the earlier approximation of it: each event
 * seen after an exponential delay of mean 0.5 s, in order (so one long draw delays the events
 * behind it too).
 */
export const LATENCY_MODELS: ReadonlyArray<LatencyModel> = [
  { name: "tick", feed: { baseMs: 0, jitterMs: 0, tickMs: 1000 }, entry: { baseMs: 0, jitterMs: 0 } },
  { name: "bot", feed: { baseMs: 0, jitterMs: 500 }, entry: { baseMs: 0, jitterMs: 0 } },
  { name: "zero", feed: { baseMs: 0, jitterMs: 0 }, entry: { baseMs: 0, jitterMs: 0 } },
  { name: "default", feed: DEFAULT_CONFIG.feedLatency, entry: DEFAULT_CONFIG.entryLatency }
]
/**
 * What the backtest reads of the tape, and so how it knows the queue: `flow` replays every
 * order as it arrived (takers up to their own limit and size) through the engine; `adds` keeps
 * the competitors' book order by order (exact queue) and replays trades at the print; the
 * others read only the L2 snapshots and place cancels through that queue model.
 */
export type BookModel = "flow" | "adds" | QueueModelName
export const QUEUE_MODELS: ReadonlyArray<BookModel> = ["flow", "adds", "risk-averse", "prob"]
/**
 * The pair the medians are quoted for: the most complete data the tape has (its order flow,
 * since tape version 2; risk-averse on L2 before it) and the bot's own latency.
 */
export const HEADLINE = { queue: "flow" as BookModel, latency: "tick" }

export interface Side {
  readonly fills: number
  readonly filledContracts: number
  readonly rewardsMicro: number
  /** Maker rebates on the bot's fills in its markets. */
  readonly rebatesMicro: number
  /** Realised: at the live market's final marks (the headline). A backtest: at its own final marks (the counterfactual market's). */
  readonly tradingPnlMicro: number
}

export interface ModelResult extends Side {
  readonly queue: BookModel
  readonly latency: string
  readonly fillsFromBookMoves: number
  /** Fills by the market-response model's takers (0 without a model). */
  readonly fillsFromResponse?: number
  readonly queueDecreasesAtOurLevel: number
}

export interface BotRun {
  readonly seed: number
  readonly agent: string
  /** Its trading PnL at the live market's final marks. */
  readonly realised: Side
  /** The realised trading PnL marked at the headline backtest's final marks (the counterfactual market's): both sides at one set of prices. */
  readonly realisedTradingPnlAtCounterfactualMarksMicro: number
  /** The final marks each figure uses, per market of the bot (YES bps): the live market's, the headline backtest's, the replay's. */
  readonly marks: { readonly live: Readonly<Record<string, number | null>>; readonly counterfactual: Readonly<Record<string, number | null>>; readonly replay: Readonly<Record<string, number | null>> | null }
  readonly backtests: ReadonlyArray<ModelResult>
  /** The headline model on the live tape without the bot (its orders left out, everyone else's as they arrived): the backtester's own error, without the counterfactual's. */
  readonly replay: ModelResult | null
  /** The realised trading PnL marked at the replay's final marks, which the replay's PnL is compared with. */
  readonly replayRealisedTradingPnlMicro: number | null
  readonly tape: string
  readonly tapeTrades: number
  readonly tapeSnapshots: number
  /** The reward days compared: those both the service and the headline backtest paid. */
  readonly rewardDays: ReadonlyArray<number>
  /** Days only one side paid: left out of the rewards compared, flagged here (the unfinished day is paid by neither and is not listed). */
  readonly rewardDaysOneSide: { readonly realisedOnly: ReadonlyArray<number>; readonly backtestOnly: ReadonlyArray<number> }
  /** The headline backtest's range for its trading PnL and fills (docs/backtesting.md "Intervals and coverage"); null or absent: none made. */
  readonly interval?: RunInterval | null
  /** Trading PnL split into edge at the fills and inventory after them (sim/backtest/attribution.ts): realised (at the live market's marks), the headline backtest, the replay. */
  readonly attribution?: { readonly realised: PnlAttribution; readonly backtest: PnlAttribution; readonly replay: PnlAttribution | null }
}

/**
 * The live world: every bot's realised outcome, and per bot the live tape with that bot's own
 * orders left out (`replayDirOf`): replaying it must give back what the bot did, up to the
 * backtester's own mechanics, since every other order in it is the one that really arrived.
 */
export const runLive = async (scenario: Scenario, seed: number, outDir: string, snapshotSec: number, durationSec?: number): Promise<Realised[]> => {
  const summary = await runScenario(scenario, { seed, expectations: false, ...(durationSec === undefined ? {} : { durationSec }) })
  const bots = botAgents(scenario).map((agent) => ({ agent, user: userOfAgent(seed, agent) }))
  for (const b of bots) await writeRunTape(summary, { dir: replayDirOf(outDir, seed, b.agent), intervalSec: snapshotSec, format: "parquet" }, [], [b.user])
  return realisedOf(summary.records as ReadonlyArray<JournalRecord>, bots)
}

/** The counterfactual world without `agent`: its tape (with snapshots) written to `dir`. */
export const runWithout = async (scenario: Scenario, seed: number, agent: string, dir: string, snapshotSec: number, durationSec?: number): Promise<{ dir: string; trades: number; snapshots: number }> => {
  const summary = await runScenario(scenario, { seed, expectations: false, without: [agent], ...(durationSec === undefined ? {} : { durationSec }) })
  const { tape } = await writeRunTape(summary, { dir, intervalSec: snapshotSec, format: "parquet" }, [agent])
  return { dir, trades: tape.meta.trades, snapshots: tape.meta.snapshots }
}

/** The backtest configuration for one bot-run under one book and latency model: the bot's own spec, markets, start and balance. */
export const botBacktestConfig = (seed: number, realised: Realised, tapeMeta: TapeMeta, queue: BookModel, lat: LatencyModel, response: ResponseModel | null = null): BacktestConfig => {
  const parsed = parseStrategySpec(realised.strategy)
  if (!parsed.ok) throw new Error(`${realised.agent}: the journaled spec does not parse: ${parsed.field}: ${parsed.message}`)
  return withTapeMeta(
    {
      ...DEFAULT_CONFIG, seed: `fidelity:${seed}:${realised.agent}`, capitalMicro: realised.balanceMicro,
      strategy: { kind: "spec", spec: parsed.spec, params: parsed.params }, queueModel: queue === "flow" || queue === "adds" ? "risk-averse" : queue,
      feedLatency: lat.feed, entryLatency: lat.entry, quoteMarkets: realised.markets, startSec: realised.startSec, response,
      botsAheadInPass: realised.botsAheadInPass
    },
    tapeMeta
  )
}

// One piece: one bot's backtests over every model in a fixed order, sharing the loaded tape.
/**
 * Backtests one bot on its counterfactual tape with every book and latency model (and on the live tape without it, when given).
 * A market-response model (fitted on calibration seeds) applies to the counterfactual backtests only: the live tape has the real responders.
 * The headline backtest gets its interval (`interval`; its response draws only with a model).
 */
export const backtestBot = async (
  seed: number, realised: Realised, tape: { dir: string; trades: number; snapshots: number }, replayDir: string | null = null, response: ResponseModel | null = null,
  interval: IntervalSpec = DEFAULT_INTERVAL
): Promise<BotRun> => {
  const { dataset: flow, meta } = await loadTape(tape.dir, null, "flow")
  const { dataset: adds } = await loadTape(tape.dir, null, "adds")
  const { dataset: bookOnly } = await loadTape(tape.dir, null, "none")
  // Rewards are summed over the days the service paid; a day the backtest did not pay adds nothing to it, and is flagged below.
  const servicePaid = [...new Set(realised.paidDays)].sort((a, b) => a - b)
  const run = (
    data: Dataset, tapeMeta: TapeMeta, queue: BookModel, lat: LatencyModel, model: ResponseModel | null, spec: IntervalSpec | null = null
  ): { result: ModelResult; marks: Map<string, number | null>; paidDays: number[]; interval: RunInterval | null; attribution: PnlAttribution } => {
    const config = botBacktestConfig(seed, realised, tapeMeta, queue, lat, model)
    const main = runBacktest(data, config)
    const { report } = spec === null ? main : withInterval(data, config, main, spec)
    const ours = report.markets.filter((m) => realised.markets.includes(m.market_id))
    return {
      marks: new Map(ours.map((m) => [m.market_id, m.mark_bps])),
      paidDays: report.rewardDays.map((d) => d.day),
      interval: report.interval === null ? null : runIntervalOf(report.interval),
      attribution: report.stats.pnl_attribution,
      result: {
        queue, latency: lat.name,
        ...tradingOf(report, realised),
        rewardsMicro: report.rewardDays.filter((d) => servicePaid.includes(d.day)).reduce((s, d) => s + d.lpMicro, 0),
        fillsFromBookMoves: report.summary.fills_from_book_moves,
        fillsFromResponse: report.summary.fills_from_response,
        queueDecreasesAtOurLevel: report.summary.queue_decreases_at_our_level
      }
    }
  }
  const results: ModelResult[] = []
  let headline: { marks: Map<string, number | null>; paidDays: number[]; interval: RunInterval | null; attribution: PnlAttribution } | null = null
  for (const queue of QUEUE_MODELS) {
    for (const lat of LATENCY_MODELS) {
      const isHeadline = queue === HEADLINE.queue && lat.name === HEADLINE.latency
      const r = run(queue === "flow" ? flow : queue === "adds" ? adds : bookOnly, meta, queue, lat, response, isHeadline ? interval : null)
      if (isHeadline) headline = r
      results.push(r.result)
    }
  }
  // The days compared are those both sides paid; a day one side paid and the other did not is flagged, not compared.
  const backtestPaid = headline!.paidDays
  const rewardDays = servicePaid.filter((d) => backtestPaid.includes(d))
  const liveMarks = new Map(Object.entries(realised.liveMarksBps))
  const realisedSide: Side = {
    fills: realised.fills,
    filledContracts: realised.filledContracts,
    rewardsMicro: rewardDays.reduce((s, d) => s + (realised.rewardsByDay[String(d)] ?? 0), 0),
    rebatesMicro: realised.rebatesMicro,
    // The headline: what the bot's holdings were worth in the market it really traded in.
    tradingPnlMicro: realisedTradingPnlAt(realised, liveMarks)
  }
  let replay: ModelResult | null = null
  let replayRealisedTradingPnlMicro: number | null = null
  let replayMarks: Map<string, number | null> | null = null
  let replayAttribution: PnlAttribution | null = null
  if (replayDir !== null) {
    const live = await loadTape(replayDir, null, "flow")
    const r = run(live.dataset, live.meta, "flow", LATENCY_MODELS.find((l) => l.name === HEADLINE.latency)!, null)
    replay = r.result
    replayMarks = r.marks
    replayAttribution = r.attribution
    // The replay is judged at its own final marks (the live market's as the backtester reads the live tape).
    replayRealisedTradingPnlMicro = realisedTradingPnlAt(realised, r.marks)
  }
  return {
    seed, agent: realised.agent, realised: realisedSide,
    realisedTradingPnlAtCounterfactualMarksMicro: realisedTradingPnlAt(realised, headline!.marks),
    marks: { live: realised.liveMarksBps, counterfactual: Object.fromEntries(headline!.marks), replay: replayMarks === null ? null : Object.fromEntries(replayMarks) },
    backtests: results, replay, replayRealisedTradingPnlMicro,
    tape: tape.dir, tapeTrades: tape.trades, tapeSnapshots: tape.snapshots, rewardDays,
    rewardDaysOneSide: { realisedOnly: servicePaid.filter((d) => !backtestPaid.includes(d)), backtestOnly: backtestPaid.filter((d) => !servicePaid.includes(d)) },
    interval: headline!.interval,
    attribution: { realised: realisedAttribution(realised, realisedSide.tradingPnlMicro), backtest: headline!.attribution, replay: replayAttribution }
  }
}

/** A backtest's fills, contracts, rebates and trading PnL (rebates out) in the bot's own markets. */
const tradingOf = (report: ReturnType<typeof runBacktest>["report"], realised: Realised): Omit<Side, "rewardsMicro"> => {
  const ours = report.markets.filter((m) => realised.markets.includes(m.market_id))
  return {
    fills: ours.reduce((s, m) => s + m.fills, 0),
    filledContracts: ours.reduce((s, m) => s + m.filled_contracts, 0),
    rebatesMicro: ours.reduce((s, m) => s + m.maker_rebates_micro, 0),
    tradingPnlMicro: ours.reduce((s, m) => s + m.pnl_micro - m.maker_rebates_micro, 0)
  }
}

/**
 * A calibration bot-run for the calibrated intervals (sim/fidelity/conformal.ts): the headline
 * model alone on its counterfactual tape, with the response model fitted without its seed, and
 * its realised side at the live market's marks, as a judged run's headline is compared.
 */
export const backtestHeadline = async (seed: number, realised: Realised, tapeDir: string, response: ResponseModel | null): Promise<ErrorRun> => {
  const q = HEADLINE.queue
  const { dataset, meta } = await loadTape(tapeDir, null, q === "flow" || q === "adds" ? q : "none")
  const lat = LATENCY_MODELS.find((l) => l.name === HEADLINE.latency)!
  const { report } = runBacktest(dataset, botBacktestConfig(seed, realised, meta, HEADLINE.queue, lat, response))
  const b = tradingOf(report, realised)
  return {
    seed, agent: realised.agent,
    realised: { fills: realised.fills, tradingPnlMicro: realisedTradingPnlAt(realised, new Map(Object.entries(realised.liveMarksBps))) },
    backtest: { fills: b.fills, tradingPnlMicro: b.tradingPnlMicro }
  }
}

export const tapeDirOf = (outDir: string, seed: number, agent: string): string => join(outDir, `seed${seed}-without-${agent}`)
export const replayDirOf = (outDir: string, seed: number, agent: string): string => join(outDir, `seed${seed}-live-minus-${agent}`)
