// The backtest's fidelity, measured (docs/backtesting.md "Fidelity"). For one scenario and
// seed: run the world with the LP bots live and read each bot's realised outcome from the
// journal; run it again without one bot (the counterfactual market: every other agent keeps
// its seeds), write that run's tape with book snapshots, and backtest the bot's own spec on
// it from the moment it started, in its markets, with its balance. The realised side is marked
// at the live market's final prices (the headline) and at the counterfactual's (a second figure);
// both sides are compared over the reward days both paid.
import { join } from "node:path"
import { keyFromSecret } from "../../src/client/keys.ts"
import type { BookSide } from "../../src/engine/book.ts"
import type { EngineEvent } from "../../src/engine/types.ts"
import { parseStrategySpec } from "../../src/lp/strategy-spec.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import type { TapeMeta } from "../../src/store/tape.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { type BacktestConfig, DEFAULT_CONFIG, type LatencySpec, type QueueModelName, withTapeMeta } from "../backtest/config.ts"
import type { Dataset } from "../backtest/dataset.ts"
import { loadTape } from "../backtest/load.ts"
import type { ResponseModel } from "../backtest/response/model.ts"
import { runBacktest } from "../backtest/runner.ts"
import { type AttributedFill, attribute, type PnlAttribution, poolAttribution } from "../backtest/attribution.ts"
import { type MidPath, midAt } from "../backtest/stats.ts"
import { DEFAULT_INTERVAL, type IntervalSpec } from "../backtest/interval.ts"
import { withInterval } from "../backtest/interval-run.ts"
import { type BiasFigures, biasFigures } from "./bias.ts"
import { type PerRunFigures, perRunFigures } from "./figures.ts"
import { type Coverage, coverageOf, type RunInterval, runIntervalOf } from "./coverage.ts"
import type { ErrorRun } from "./conformal.ts"
import { Rng } from "../world/random.ts"
import { agentNames, runScenario } from "../scenario/run.ts"
import type { Scenario } from "../scenario/scenario.ts"
import { writeRunTape } from "../scenario/tape.ts"

/** What one bot did, read from the live run's journal. */
export interface Realised {
  readonly agent: string
  readonly user: string
  readonly startSec: number
  readonly markets: ReadonlyArray<string>
  readonly strategy: Readonly<Record<string, string | number>>
  /** The user's balance when the bot started: what the backtest account holds. */
  readonly balanceMicro: number
  readonly fills: number
  readonly filledContracts: number
  readonly rebatesMicro: number
  /** Per market: cash from fills (rebates excluded) and the final holdings. */
  readonly byMarket: Readonly<Record<string, { cashMicro: number; yes: number; no: number }>>
  /** Rewards paid to the user, by day. */
  readonly rewardsByDay: Readonly<Record<string, number>>
  /** Every day the service paid (a journaled `pay_rewards` that paid), whether or not the bot earned on it. */
  readonly paidDays: ReadonlyArray<number>
  /**
   * The live market's final mark per market of the bot: the mid of everyone else's book (the
   * bot's own quotes left out, as the bot and the backtester read a mid), the last time both
   * sides had one; null if they never did.
   */
  readonly liveMarksBps: Readonly<Record<string, number | null>>
  /** Users with an LP bot whose ids sort before this one's: the bots the runner steps ahead of it in each pass (sim/backtest/pass.ts). */
  readonly botsAheadInPass: number
  /** The bot's fills (market: index into `markets`) with the others' mid just before each, and that mid's path per market, for the PnL attribution. */
  readonly attribution: { readonly fills: ReadonlyArray<AttributedFill>; readonly midPaths: ReadonlyArray<MidPath>; readonly endMs: number }
}

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

export const userOfAgent = (seed: number, name: string): string =>
  keyFromSecret(new Rng(`twinbook-sim:${seed}`).fork("agents").fork(name).bytes32("ed25519")).user

const BOT_KIND = "lp_bot"

/** The LP-bot agents of a scenario, by name. */
export const botAgents = (scenario: Scenario): string[] => agentNames(scenario).filter((n) => n.startsWith(`${BOT_KIND}-`))

/** One bot's running account while the journal is replayed (realisedOf). */
type Acc = {
  startSec: number; markets: string[]; strategy: Record<string, string | number>; balanceMicro: number; fills: number; filled: number; rebates: number
  byMarket: Record<string, { cashMicro: number; yes: number; no: number }>; rewards: Record<string, number>; marks: Record<string, number | null>
  attributed: AttributedFill[]; paths: Array<{ tMs: number[]; midBps: number[] }>
}

/** One side of a fill, if it is a tracked bot's: its cash, holdings, rebate and the fill as the attribution reads it (the mid before: the path's last point). */
const accountFill = (s: Acc, ev: Extract<EngineEvent, { type: "fill" }>, tsSec: number, side: "buy" | "sell", outcome: "yes" | "no", priceBps: number, rebate: number): void => {
  const m = s.byMarket[ev.marketId]
  if (m === undefined) return
  const idx = s.markets.indexOf(ev.marketId)
  s.fills++
  s.filled += ev.size
  s.attributed.push({
    tMs: tsSec * 1000, market: idx, side, outcome, yesPriceBps: outcome === "yes" ? priceBps : 10_000 - priceBps, size: ev.size, cause: "trade",
    midBeforeBps: s.paths[idx]!.midBps.at(-1) ?? null
  })
  s.rebates += rebate
  const notional = ev.size * priceBps * 100
  m.cashMicro += side === "buy" ? -notional : notional
  if (outcome === "yes") m.yes += side === "buy" ? ev.size : -ev.size
  else m.no += side === "buy" ? ev.size : -ev.size
}

/**
 * After a record: the others' mid per market of the bot, kept while both sides have one (the mark
 * the run ends on), and the attribution's mid path: the mid the bot quotes around
 * (src/service/lp-bot-market.ts), the others' mid, else the last trade's price.
 */
const trackMids = (x: Exchange, user: string, s: Acc, tsSec: number, lastTradeBps: ReadonlyMap<string, number>): void => {
  for (const id of s.markets) {
    const m = x.engine.markets.get(id)
    const bid = m === undefined ? -1 : othersBest(m.bids, user)
    const ask = m === undefined ? -1 : othersBest(m.asks, user)
    if (bid >= 0 && ask >= 0) s.marks[id] = (bid + ask) / 2
    const mid = bid >= 0 && ask >= 0 ? (bid + ask) / 2 : (lastTradeBps.get(id) ?? null)
    const path = s.paths[s.markets.indexOf(id)]!
    if (mid !== null && path.midBps.at(-1) !== mid) {
      path.tMs.push(tsSec * 1000)
      path.midBps.push(mid)
    }
  }
}

/** Each named bot's realised outcome, replaying the live run's journal. */
export const realisedOf = (records: ReadonlyArray<JournalRecord>, bots: ReadonlyArray<{ agent: string; user: string }>): Realised[] => {
  const x = new Exchange(() => 0, memoryJournal())
  x.history.seed([], Number.POSITIVE_INFINITY)
  const byUser = new Map(bots.map((b) => [b.user, b.agent]))
  const acc = new Map<string, Acc>()
  const paidDays: number[] = []
  const botUsers = new Set<string>()
  // Each market's last trade (YES bps): the history keeps none here (seeded to skip every record, to save memory).
  const lastTradeBps = new Map<string, number>()
  let current: JournalRecord | null = null
  x.onApply((_r, result) => {
    if (result.paid !== undefined) paidDays.push(result.paid.day)
    const cmd = current!.cmd
    if (cmd.type === "lp_start") botUsers.add(cmd.user)
    if (cmd.type === "lp_start" && byUser.has(cmd.user) && !acc.has(cmd.user)) {
      const a = x.engine.accounts.get(cmd.user)
      acc.set(cmd.user, {
        startSec: current!.tsSec, markets: [...cmd.marketIds], strategy: { ...cmd.strategy }, balanceMicro: (a?.availableMicro ?? 0) + (a?.lockedMicro ?? 0),
        fills: 0, filled: 0, rebates: 0, byMarket: Object.fromEntries(cmd.marketIds.map((m) => [m, { cashMicro: 0, yes: 0, no: 0 }])), rewards: {},
        marks: Object.fromEntries(cmd.marketIds.map((m) => [m, null])), attributed: [], paths: cmd.marketIds.map(() => ({ tMs: [], midBps: [] }))
      })
    }
    for (const ev of result.events as ReadonlyArray<EngineEvent>) {
      if (ev.type === "fill") {
        lastTradeBps.set(ev.marketId, ev.yesPriceBps)
        for (const [user, side, outcome, priceBps, rebate] of [
          [ev.makerUser, ev.makerSide, ev.makerOutcome, ev.makerPriceBps, ev.makerRebateMicro],
          [ev.takerUser, ev.takerSide, ev.takerOutcome, ev.takerPriceBps, 0]
        ] as const) {
          const s = acc.get(user)
          if (s !== undefined) accountFill(s, ev, current!.tsSec, side, outcome, priceBps, rebate)
        }
      } else if (ev.type === "credited" && ev.ref.startsWith("rewards:")) {
        const s = acc.get(ev.user)
        if (s !== undefined) s.rewards[ev.ref.slice("rewards:".length)] = (s.rewards[ev.ref.slice("rewards:".length)] ?? 0) + ev.amountMicro
      }
    }
  })
  for (const r of records) {
    current = r
    x.apply(r)
    for (const [user, s] of acc) trackMids(x, user, s, r.tsSec, lastTradeBps)
  }
  return [...acc.entries()].map(([user, s]) => ({
    agent: byUser.get(user)!, user, startSec: s.startSec, markets: s.markets, strategy: s.strategy, balanceMicro: s.balanceMicro,
    fills: s.fills, filledContracts: s.filled, rebatesMicro: s.rebates, byMarket: s.byMarket, rewardsByDay: s.rewards, paidDays, liveMarksBps: s.marks,
    botsAheadInPass: [...botUsers].filter((u) => u < user).length,
    attribution: { fills: s.attributed, midPaths: s.paths, endMs: (records.at(-1)?.tsSec ?? 0) * 1000 }
  }))
}

/** The best price on a side among orders not `user`'s, or -1. */
const othersBest = (side: BookSide, user: string): number => {
  for (let p = side.best; p !== -1; p = side.nextPrice(p)) {
    for (let o = side.levels[p]?.head ?? null; o !== null; o = o.next) if (o.account.user !== user) return p
  }
  return -1
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

/** The bot's trading cash in its markets plus its final holdings at the given marks (a market without a mark adds only its cash). */
export const realisedTradingPnlAt = (realised: Realised, marks: ReadonlyMap<string, number | null> | null): number =>
  Object.entries(realised.byMarket).reduce((s, [id, m]) => {
    const mark = marks?.get(id) ?? null
    return s + m.cashMicro + (mark === null ? 0 : Math.floor(m.yes * mark * 100 + m.no * (10_000 - mark) * 100))
  }, 0)

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

/** The live bot's trading PnL (at the live market's marks) split as a backtest's is, on the others' mid. */
export const realisedAttribution = (realised: Realised, tradingPnlMicro: number): PnlAttribution => {
  const a = realised.attribution
  return attribute(a.fills, (m, tMs) => midAt(a.midPaths[m]!, tMs, false), a.endMs, tradingPnlMicro)
}

/** The median of the values that have a ratio: NaN (0/0) is left out; +Infinity (x/0) is kept, as the largest. */
const median = (xs: ReadonlyArray<number>): number | null => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b)
  if (s.length === 0) return null
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** backtest ÷ realised; 0/0 has no ratio (NaN: left out of the medians, never counted as 1), x/0 is +Infinity. */
const ratio = (b: number, r: number): number => (r === 0 ? (b === 0 ? Number.NaN : Number.POSITIVE_INFINITY) : b / r)

/** The ratios a median is taken of, per figure. */
export type RatioKey = "fills" | "filled_contracts" | "rewards" | "rebates"
const RATIO_FIELDS: ReadonlyArray<readonly [RatioKey, Exclude<keyof Side, "tradingPnlMicro">]> = [
  ["fills", "fills"], ["filled_contracts", "filledContracts"], ["rewards", "rewardsMicro"], ["rebates", "rebatesMicro"]
]

/** Medians of backtest ÷ realised per figure (0/0 runs left out and counted), and of backtest − realised trading PnL at both marks. */
export interface Medians {
  readonly fills: number | null
  readonly filled_contracts: number | null
  readonly rewards: number | null
  readonly rebates: number | null
  /** Backtest − realised trading PnL, the realised side at the live market's final marks (USDC). */
  readonly pnl_diff_usdc: number | null
  /** The same with the realised side at the counterfactual's final marks (the backtest's own). */
  readonly pnl_diff_usdc_at_counterfactual_marks: number | null
  /** Runs with 0 on both sides of a ratio: left out of that median. */
  readonly excluded_zero_zero: Readonly<Record<RatioKey, number>>
}

/** One model's medians over bot-runs; `realisedCf` is the realised PnL each run is compared with at the counterfactual marks. */
const mediansOf = (pairs: ReadonlyArray<{ realised: Side; backtest: Side; realisedPnlCfMicro: number }>): Medians => {
  const out: Record<string, unknown> = {}
  const excluded: Record<string, number> = {}
  for (const [key, k] of RATIO_FIELDS) {
    const xs = pairs.map((p) => ratio(p.backtest[k], p.realised[k]))
    out[key] = median(xs)
    excluded[key] = xs.filter((x) => Number.isNaN(x)).length
  }
  return {
    ...(out as Record<RatioKey, number | null>),
    pnl_diff_usdc: median(pairs.map((p) => (p.backtest.tradingPnlMicro - p.realised.tradingPnlMicro) / 1e6)),
    pnl_diff_usdc_at_counterfactual_marks: median(pairs.map((p) => (p.backtest.tradingPnlMicro - p.realisedPnlCfMicro) / 1e6)),
    excluded_zero_zero: excluded as Record<RatioKey, number>
  }
}

/** The summary: medians, and the headline model's per-run figures (sim/fidelity/figures.ts). */
export interface FidelitySummary extends PerRunFigures {
  readonly scenario: string
  readonly seeds: ReadonlyArray<number>
  /** Book snapshots of the counterfactual tapes: every this many seconds, 0 = at every change. */
  readonly snapshot_interval_sec: number
  readonly headline: { readonly queue: string; readonly latency: string }
  /** The headline model's medians of backtest ÷ realised; a 0/0 run is left out (counted in `median_excluded_zero_zero`), an x/0 run counts as +∞. */
  readonly median_ratio: { readonly fills: number | null; readonly filled_contracts: number | null; readonly rewards: number | null; readonly rebates: number | null }
  /** Per figure of `median_ratio`: the bot-runs left out of its median because both sides are 0. */
  readonly median_excluded_zero_zero: Readonly<Record<RatioKey, number>>
  /** Backtest − realised trading PnL, median over bot-runs, the realised side at the live market's final marks (the headline). */
  readonly median_pnl_diff_usdc: number | null
  /** The same with the realised side at the counterfactual's final marks: both sides at one set of prices. */
  readonly median_pnl_diff_usdc_at_counterfactual_marks: number | null
  /** Medians for every queue × latency model, same fields. */
  readonly by_model: ReadonlyArray<{ queue: string; latency: string } & Medians>
  /** The same medians for the headline model replaying the live tape without the bot (null when not run): the backtester's own error. Its PnL is compared at its own final marks (both PnL fields). */
  readonly replay: Medians | null
  /** Bot-runs with a reward day only one side paid (that day is not compared), and how many such days. */
  readonly reward_days_one_side: { readonly runs: number; readonly realised_only: number; readonly backtest_only: number }
  readonly target: { readonly ratio: readonly [number, number]; readonly pnl_diff_usdc: number }
  /** The share of bot-runs whose realised trading PnL (at the live market's marks) and fills fell inside their headline backtest's interval. */
  readonly coverage: Coverage
  /** The headline model's trading PnL split, summed over bot-runs: realised, backtest, replay (null where none ran). */
  readonly pnl_attribution: { readonly realised: PnlAttribution | null; readonly backtest: PnlAttribution | null; readonly replay: PnlAttribution | null }
  /** Which of the headline's per-run differences are systematic and which the worlds' noise: means with standard errors clustered by seed, and the pooled trading PnL's interval over seeds. */
  readonly bias: BiasFigures
  readonly runs: ReadonlyArray<BotRun>
}

/** Medians over bot-runs of backtest ÷ realised (fills, contracts, rewards, rebates) and backtest − realised trading PnL. */
export const summarise = (scenario: string, seeds: ReadonlyArray<number>, snapshotSec: number, runs: ReadonlyArray<BotRun>): FidelitySummary => {
  const models = runs[0]?.backtests.map((b) => ({ queue: b.queue, latency: b.latency })) ?? []
  const pick = (run: BotRun, q: string, l: string): ModelResult => run.backtests.find((b) => b.queue === q && b.latency === l)!
  const by = models.map((m) => ({
    queue: m.queue, latency: m.latency,
    ...mediansOf(runs.map((r) => ({ realised: r.realised, backtest: pick(r, m.queue, m.latency), realisedPnlCfMicro: r.realisedTradingPnlAtCounterfactualMarksMicro })))
  }))
  const replayed = runs.filter((r) => r.replay !== null)
  // The replay is compared at its own final marks (the live tape's), so both PnL figures are that one.
  const replay = replayed.length === 0 ? null : mediansOf(replayed.map((r) => {
    const pnl = r.replayRealisedTradingPnlMicro ?? r.realised.tradingPnlMicro
    return { realised: { ...r.realised, tradingPnlMicro: pnl }, backtest: r.replay!, realisedPnlCfMicro: pnl }
  }))
  const h = by.find((m) => m.queue === HEADLINE.queue && m.latency === HEADLINE.latency)
  const noRatios: Record<RatioKey, number> = { fills: 0, filled_contracts: 0, rewards: 0, rebates: 0 }
  const headline = runs.map((r) => ({ seed: r.seed, realised: r.realised, backtest: pick(r, HEADLINE.queue, HEADLINE.latency), realisedTradingPnlAtCounterfactualMarksMicro: r.realisedTradingPnlAtCounterfactualMarksMicro }))
  return {
    scenario, seeds, snapshot_interval_sec: snapshotSec, headline: HEADLINE,
    median_ratio: { fills: h?.fills ?? null, filled_contracts: h?.filled_contracts ?? null, rewards: h?.rewards ?? null, rebates: h?.rebates ?? null },
    median_excluded_zero_zero: h?.excluded_zero_zero ?? noRatios,
    median_pnl_diff_usdc: h?.pnl_diff_usdc ?? null,
    median_pnl_diff_usdc_at_counterfactual_marks: h?.pnl_diff_usdc_at_counterfactual_marks ?? null,
    ...perRunFigures(headline),
    by_model: by,
    replay,
    reward_days_one_side: {
      runs: runs.filter((r) => r.rewardDaysOneSide.realisedOnly.length + r.rewardDaysOneSide.backtestOnly.length > 0).length,
      realised_only: runs.reduce((s, r) => s + r.rewardDaysOneSide.realisedOnly.length, 0),
      backtest_only: runs.reduce((s, r) => s + r.rewardDaysOneSide.backtestOnly.length, 0)
    },
    target: { ratio: [0.8, 1.25], pnl_diff_usdc: 10 },
    coverage: coverageOf(runs.map((r) => ({ realised: r.realised, realisedTradingPnlAtCounterfactualMarksMicro: r.realisedTradingPnlAtCounterfactualMarksMicro, interval: r.interval ?? null }))),
    pnl_attribution: pooledAttributions(runs),
    bias: biasFigures(headline),
    runs
  }
}

const pooledAttributions = (runs: ReadonlyArray<BotRun>): FidelitySummary["pnl_attribution"] => {
  const with_ = runs.flatMap((r) => (r.attribution === undefined ? [] : [r.attribution]))
  const replays = with_.flatMap((a) => (a.replay === null ? [] : [a.replay]))
  return {
    realised: with_.length === 0 ? null : poolAttribution(with_.map((a) => a.realised)),
    backtest: with_.length === 0 ? null : poolAttribution(with_.map((a) => a.backtest)),
    replay: replays.length === 0 ? null : poolAttribution(replays)
  }
}

export const tapeDirOf = (outDir: string, seed: number, agent: string): string => join(outDir, `seed${seed}-without-${agent}`)
export const replayDirOf = (outDir: string, seed: number, agent: string): string => join(outDir, `seed${seed}-live-minus-${agent}`)
