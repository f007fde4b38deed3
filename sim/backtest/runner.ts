// One backtest: the data replayed through the real engine in time order, our strategy
// driven as the live bot would be (one pure LP strategy per market), seen through a feed
// with latency and acting through an order-entry path with latency.
//
// Time is ms. Between two data events the runner fires, earliest first, everything due:
// day closes (rewards paid), order batches reaching the exchange, feed deliveries to the
// strategy, strategy timers (re-quote cadence) and the per-minute samples. Ties go in
// that order, and all internal events at a data event's time come before it.
//
// The strategy sees each market event after the feed latency: the book mid, and our
// inventory and PnL as they were right after that event. A decision goes out as one
// batch (cancel our quotes in that market, then place the new ones post-only) that the
// exchange applies after the order-entry latency. Both paths keep FIFO order.
import type { Engine } from "../../src/engine/engine.ts"
import type { EngineEvent } from "../../src/engine/types.ts"
import type { Exchange, Listener } from "../../src/service/exchange.ts"
import { specToJson } from "../../src/lp/strategy-spec.ts"
import { type Decision, makeStrategy, type StrategyInput } from "../../src/lp/strategy.ts"
import { Background } from "./background.ts"
import { type BacktestConfig, marketParams, specOf } from "./config.ts"
import { BacktestInputError, type Dataset, KIND_ADD, KIND_CANCEL, KIND_NEW, KIND_SNAPSHOT, KIND_TRADE, ORDER_TYPES, TAKER_BUY } from "./dataset.ts"
import { BotDriver } from "./driver.ts"
import { Feed } from "./feed.ts"
import { MAX_OWNER_WALLETS, OrderLevelBook } from "./order-level.ts"
import { ownersAhead, ownersBehind, passTimes } from "./pass.ts"
import { queueModel } from "./queue.ts"
import { RunRecorder } from "./recorder.ts"
import type { BacktestReport } from "./report.ts"
import { buildReport, dataStartMs } from "./report-build.ts"
import { DAY_MS, RewardsLedger } from "./rewards.ts"
import { Rng } from "../world/random.ts"
import { computeStats } from "./stats.ts"
import { RunTally } from "./tally.ts"
import { followersOf } from "./follow.ts"
import { ResponseFlow } from "./response/flow.ts"
import { MarketState, Venue } from "./venue.ts"

export { startWarnings } from "./report-build.ts"

export interface RunOptions {
  /** Called every 65,536 events and at the end: for a progress bar. */
  readonly onProgress?: (done: number, total: number) => void
  /** Every engine result, for tests that recount from the engine's own events. */
  readonly tap?: (events: ReadonlyArray<EngineEvent>) => void
  /** Every journal record applied to the backtest's exchange (after its markets, `createMarkets`): the run as a journal. */
  readonly onRecord?: Listener
  /** Step the strategy on every feed delivery instead of only when it could act (tests: same result). */
  readonly everyStep?: boolean
  /** Every strategy step taken, with what it was shown and what it answered: for comparing a backtest with a live bot's journaled steps. */
  readonly onStep?: (marketId: string, input: StrategyInput, decision: Decision) => void
}

export interface RunResult {
  readonly report: BacktestReport
  /** The engine after the run (tests check it against the report). */
  readonly engine: Engine
  /** The service's exchange the run went through (its bot, rewards book and engine). */
  readonly exchange: Exchange
}

/** Each market's median trade size (1 when it has no trades): synthetic depth is a multiple of it. */
const medianSizes = (d: Dataset): number[] => {
  const counts = d.markets.map(() => 0)
  for (let i = 0; i < d.count; i++) if (d.kind[i] === KIND_TRADE) counts[d.market[i]!]!++
  const sizes = counts.map((c) => new Int32Array(c))
  const fill = d.markets.map(() => 0)
  for (let i = 0; i < d.count; i++) if (d.kind[i] === KIND_TRADE) sizes[d.market[i]!]![fill[d.market[i]!]!++] = d.size[i]!
  return sizes.map((s) => (s.length === 0 ? 1 : s.sort()[s.length >> 1]!))
}

/** The market's tick: the gcd of its trade prices, at most 100 bps. */
const ticks = (d: Dataset): number[] => {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))
  const g = d.markets.map(() => 0)
  for (let i = 0; i < d.count; i++) if (d.kind[i] === KIND_TRADE) g[d.market[i]!] = gcd(d.priceBps[i]!, g[d.market[i]!]!)
  return g.map((x) => (x === 0 ? 100 : Math.min(x, 100)))
}

/** The markets whose tape has snapshots or order events (an order-level book), and those with every order's arrival (order flow). */
const marketKinds = (d: Dataset): { snapshot: Set<number>; orderLevel: Set<number>; flow: Set<number> } => {
  const kinds = { snapshot: new Set<number>(), orderLevel: new Set<number>(), flow: new Set<number>() }
  for (let i = 0; i < d.count; i++) {
    const k = d.kind[i]!
    if (k !== KIND_TRADE) kinds.snapshot.add(d.market[i]!)
    if (k === KIND_ADD || k === KIND_CANCEL || k === KIND_NEW) kinds.orderLevel.add(d.market[i]!)
    if (k === KIND_NEW) kinds.flow.add(d.market[i]!)
  }
  return kinds
}

/** Each market's state, with our strategy on those we quote; the bot's first step at firstStepMs. */
const marketStates = (d: Dataset, config: BacktestConfig, v: Venue, firstStepMs: number): MarketState[] => {
  const params = marketParams(config, d)
  const medians = medianSizes(d)
  const tickOf = ticks(d)
  const kinds = marketKinds(d)
  const quoting = config.quoteMarkets === null ? null : new Set(config.quoteMarkets)
  for (const id of config.quoteMarkets ?? []) if (!d.markets.includes(id)) throw new BacktestInputError(`market ${id} is not in the data`)
  return d.markets.map((id, m) => {
    const depth = config.bgDepth ?? Math.max(1, 5 * medians[m]!)
    const ms = new MarketState(m, id, v.engine.markets.get(id)!, tickOf[m]!, kinds.snapshot.has(m), depth, params[m]!, makeStrategy(params[m]!))
    ms.quoting = quoting === null || quoting.has(id)
    ms.orderLevel = kinds.orderLevel.has(m)
    ms.orderFlow = kinds.flow.has(m)
    // The bot's first step: at its start, or the next tick for a ticked bot (it then quotes once it knows a mid).
    if (ms.quoting) ms.timerMs = firstStepMs
    return ms
  })
}

export const runBacktest = (d: Dataset, config: BacktestConfig, opts: RunOptions = {}): RunResult => new Run(d, config, opts).run()

/**
 * One run's parts and its two loops: the data events in time order, and between two of them
 * every internal event due (`advance`). Ties go day close, batch arrival, feed delivery, strategy
 * timer, sample, response taker; all internal events at a data event's time come before it.
 */
class Run {
  private readonly v: Venue
  private readonly tally: RunTally
  private readonly markets: MarketState[]
  private readonly bg: Background
  private readonly l3: OrderLevelBook
  private readonly response: ResponseFlow | null
  private readonly driver: BotDriver
  private readonly feed: Feed
  private readonly recorder: RunRecorder
  private readonly rewards: RewardsLedger
  private readonly botStartMs: number
  private readonly sampleMs: number
  private nextSampleMs: number
  private nextDayMs: number

  constructor(
    private readonly d: Dataset,
    private readonly config: BacktestConfig,
    private readonly opts: RunOptions
  ) {
    // An order-level tape gives each owner its own wallet (rewards score and cap per maker), up to a bound.
    const wallets = d.orders > 0 ? Math.min(MAX_OWNER_WALLETS, Math.max(config.bgMakers, d.owners.length)) : config.bgMakers
    // Our fills go to the tally, made right after the venue (it counts on the venue's LP account); no fill comes before.
    const v = new Venue(d.markets, config.capitalMicro, config, wallets, config.bookMoveFills, (ms, ev, cause) => this.tally.onFill(ms, ev, cause, v.nowMs), {
      ...(opts.tap === undefined ? {} : { tap: opts.tap }),
      ...(opts.onRecord === undefined ? {} : { onRecord: opts.onRecord })
    })
    this.v = v
    this.tally = new RunTally(v.lpAccount, config.capitalMicro)
    this.botStartMs = Math.max(d.tMs[0]!, config.startSec === null ? 0 : config.startSec * 1000)
    const tickMs = config.feedLatency.tickMs ?? 0
    // A ticked bot (the server-managed one) takes its first step at the first tick after its start, as live.
    const firstStepMs = tickMs > 0 ? (Math.floor(this.botStartMs / tickMs) + 1) * tickMs : this.botStartMs
    const markets = (this.markets = marketStates(d, config, v, firstStepMs))
    v.startBot(markets.filter((ms) => ms.quoting).map((ms) => ms.id), specToJson(specOf(config)))
    this.bg = new Background(v, queueModel(config.queueModel, config.queuePower, new Rng(config.seed, "queue")), new Rng(config.seed, "background"), config.bgLevels, config.bgChurnPct)
    // Makers that follow the book (follow.ts): with a model that fitted them, in a flow replay only.
    const follow = config.response?.follow ?? null
    const flow = markets.some((ms) => ms.orderFlow)
    this.l3 = new OrderLevelBook(v, this.bg, follow === null || !flow ? null : { slope: follow.slope, followers: followersOf(d) })
    // The takers our quotes attract (docs/backtesting.md "The market-response model"); none without a model.
    // An interval's response draw k has its own arrival stream (sim/backtest/interval-run.ts).
    const responseStream = (config.responseDraw ?? 0) > 0 ? `response/draw${config.responseDraw}` : "response"
    this.response = config.response === null ? null : new ResponseFlow(config.response, d, markets, v, new Rng(config.seed, responseStream))
    this.driver = new BotDriver(v, markets, this.response, { spec: config.entryLatency, rng: new Rng(config.seed, "latency/entry") }, firstStepMs, tickMs, {
      everyStep: opts.everyStep === true, onStep: opts.onStep
    })
    this.feed = new Feed((i) => markets[d.market[i]!]!, d.count, config.feedLatency, new Rng(config.seed, "latency/feed"), tickMs)
    this.recorder = new RunRecorder(markets, this.botStartMs)
    // The service samples rewards once a minute from its start, not from the first trade: a tape's clock starts at its from_sec.
    const startMs = dataStartMs(d, config)
    this.rewards = new RewardsLedger(config.rewards, Math.floor(startMs / 1000), markets, v)
    this.sampleMs = config.sampleSec * 1000
    this.nextSampleMs = Math.ceil(startMs / this.sampleMs) * this.sampleMs
    this.nextDayMs = (Math.floor(startMs / DAY_MS) + 1) * DAY_MS
  }

  run(): RunResult {
    const { d, config, tally, recorder } = this
    const n = d.count
    const endMs = Math.max(d.tMs[n - 1]!, config.endSec === null ? 0 : config.endSec * 1000)
    // The rows of the bots ahead of ours in the runner's pass lead their second: ours sees them at its tick.
    const tAt = passTimes(d, ownersAhead(d, config), ownersBehind(d, config))
    for (let i = 0; i < n; i++) {
      const t = tAt[i]!
      this.advance(t)
      this.v.at(t)
      const ms = this.markets[d.market[i]!]!
      this.apply(i, ms)
      tally.remark(ms)
      if (this.response !== null && ms.quoting) this.response.refresh(ms, t)
      recorder.noteMid(ms.idx, t, this.feed.record(i, t, ms))
      tally.trackDrawdown()
      if ((i & 0xffff) === 0xffff && this.opts.onProgress !== undefined) this.opts.onProgress(i + 1, n)
    }
    this.advance(endMs)
    // Credit before the last sample, so the plotted equity ends at the headline figure (every income in it).
    this.closeDay(endMs)
    if (recorder.series.tSec.at(-1) !== Math.floor(endMs / 1000)) this.sample(endMs)
    // The path ends on the run's own figures, whatever came after the last sample at its second.
    recorder.recordOutcome(Math.floor(endMs / 1000))
    this.opts.onProgress?.(n, n)
    return this.result(endMs)
  }

  /** Data event i in its market: the order-level book's event, or a print and a snapshot on the modelled book. */
  private apply(i: number, ms: MarketState): void {
    const { d, v, l3 } = this
    const kind = d.kind[i]!
    if (ms.orderLevel) {
      // The orders are the book; its snapshots add nothing. Replaying the flow, the engine makes the trades.
      if (kind === KIND_NEW || kind === KIND_ADD || kind === KIND_CANCEL) l3.ownerActs(ms, d.owner[i]!)
      if (kind === KIND_NEW) l3.arrive(ms, d.orderId[i]!, d.side[i] === 0, d.priceBps[i]!, d.size[i]!, ORDER_TYPES[d.orderType[i]!]!, d.owner[i]!)
      else if (kind === KIND_TRADE) {
        if (!ms.orderFlow) v.take(ms, d.side[i] === TAKER_BUY, d.priceBps[i]!, d.size[i]!)
        l3.filledInTape(ms, d.orderId[i]!, d.size[i]!)
      } else if (kind === KIND_ADD) l3.add(ms, d.orderId[i]!, d.side[i] === 0, d.priceBps[i]!, d.size[i]!, d.owner[i]!)
      else if (kind === KIND_CANCEL) l3.cancel(ms, d.orderId[i]!)
      l3.tops(ms)
    } else if (kind === KIND_TRADE) {
      this.bg.beforeTrade(ms, d.side[i] === TAKER_BUY, d.priceBps[i]!, d.size[i]!)
      v.take(ms, d.side[i] === TAKER_BUY, d.priceBps[i]!, d.size[i]!)
    } else if (kind === KIND_SNAPSHOT) {
      this.bg.snapshot(ms, d, d.levelStart[i]!, d.size[i]!)
    }
  }

  /** Fires every internal event due at or before tMs, earliest first (ties in the order named on the class). */
  private advance(tMs: number): void {
    const { driver, feed, response } = this
    for (;;) {
      let best = this.nextDayMs
      let kind = 0
      if (driver.nextBatchMs < best) {
        best = driver.nextBatchMs
        kind = 1
      }
      if (feed.nextMs < best) {
        best = feed.nextMs
        kind = 2
      }
      if (driver.minTimerMs < best) {
        best = driver.minTimerMs
        kind = 3
      }
      if (this.nextSampleMs < best) {
        best = this.nextSampleMs
        kind = 4
      }
      if (response !== null && response.nextMs < best) {
        best = response.nextMs
        kind = 5
      }
      if (best > tMs) return
      if (kind === 0) {
        this.closeDay(best)
        this.nextDayMs += DAY_MS
      } else if (kind === 1) driver.arriveNext()
      else if (kind === 2) {
        const ms = feed.deliverNext()
        driver.onDelivery(ms, best, feed.nextMs === best)
      } else if (kind === 3) driver.stepTimers(best)
      else if (kind === 4) {
        this.sample(best)
        this.nextSampleMs += this.sampleMs
      } else this.respond(best)
    }
  }

  /** Response takers due now take our quotes; the market is re-marked as after any fill. */
  private respond(tMs: number): void {
    this.v.at(tMs)
    this.response!.fire(tMs)
    for (const ms of this.markets) this.tally.remark(ms)
    this.tally.trackDrawdown()
  }

  private sample(tMs: number): void {
    this.v.at(tMs)
    this.rewards.sample()
    this.recorder.sample(tMs, this.tally.equity(), this.tally.cashMicro(), this.config.capitalMicro)
  }

  /** Pays the days that have ended, as the service does once journal time has left them (every maker is credited). */
  private closeDay(tMs: number): void {
    this.v.at(tMs)
    if (this.rewards.payClosed() > 0) this.tally.trackDrawdown()
  }

  private result(endMs: number): RunResult {
    const { d, config, v, tally, recorder } = this
    const response = { takers: this.response?.counts.takers ?? 0, informed: this.response?.counts.informed ?? 0 }
    const report = buildReport(d, config, {
      venue: v, background: this.bg, orderLevel: this.l3, markets: this.markets, rewards: this.rewards, tally, series: recorder.series, response, endMs
    })
    const { stats, fillMarkoutsBps } = computeStats({
      capitalMicro: config.capitalMicro, volumeMicro: report.summary.volume_micro, marketIds: d.markets, series: recorder.series, fills: tally.fills,
      midPaths: recorder.midPaths, endMs, botStartSec: Math.floor(this.botStartMs / 1000), rewardDays: this.rewards.days, tradingPnlMicro: report.summary.trading_pnl_micro
    })
    return { report: { ...report, stats, fill_markouts_bps: fillMarkoutsBps, outcome_path: recorder.outcome, interval: null }, engine: v.engine, exchange: v.exchange }
  }
}
