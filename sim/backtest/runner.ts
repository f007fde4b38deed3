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
import type { EngineEvent, FillEvent } from "../../src/engine/types.ts"
import type { Exchange, Listener } from "../../src/service/exchange.ts"
import type { ActingDecision } from "../../src/service/lp-bot-step.ts"
import { specToJson } from "../../src/lp/strategy-spec.ts"
import { type Decision, makeStrategy, type StrategyInput, type StrategyState } from "../../src/lp/strategy.ts"
import { Background } from "./background.ts"
import { startWarning } from "./bunching.ts"
import { type BacktestConfig, type LatencySpec, marketParams, specOf } from "./config.ts"
import { BacktestInputError, type Dataset, KIND_ADD, KIND_CANCEL, KIND_NEW, KIND_SNAPSHOT, KIND_TRADE, ORDER_TYPES, TAKER_BUY } from "./dataset.ts"
import { MAX_OWNER_WALLETS, OrderLevelBook } from "./order-level.ts"
import { ownersAhead, ownersBehind, passTimes } from "./pass.ts"
import { queueModel } from "./queue.ts"
import type { BacktestReport, FillRow, MarketReport, OutcomePath, Series } from "./report.ts"
import { DAY_MS, RewardsLedger } from "./rewards.ts"
import { Rng } from "../world/random.ts"
import { computeStats } from "./stats.ts"
import { FOLLOWER_MIN_ORDERS, FOLLOWER_RESTING_SHARE, followersOf } from "./follow.ts"
import { ResponseFlow } from "./response/flow.ts"
import { CAUSE_RESPONSE, CAUSE_TRADE, type FillCause, LP, MarketState, ownNotionalMicro, Venue } from "./venue.ts"

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

interface Batch {
  readonly atMs: number
  readonly ms: MarketState
  /** The acting decision, journaled as the bot runner journals it when the batch arrives. */
  readonly decision: ActingDecision
  readonly state: StrategyState
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

/** Where the run's clock starts: the data's given start (a tape's from_sec), else its first event. */
const dataStartMs = (d: Dataset, config: BacktestConfig): number => (config.beginSec === null ? d.tMs[0]! : Math.min(d.tMs[0]!, config.beginSec * 1000))

const latency = (spec: LatencySpec, rng: Rng): number => spec.baseMs + Math.round(rng.exponential(spec.jitterMs))

// One piece: the replay loop and its steps (feed, sample, day close, advance) share the run's mutable state as closures; splitting it into named modules (issue 35 item 5) is not done yet.
export const runBacktest = (d: Dataset, config: BacktestConfig, opts: RunOptions = {}): RunResult => {
  const params = marketParams(config, d)
  const everyStep = opts.everyStep === true
  const fills: FillRow[] = []
  let fillsFromTrades = 0
  const byResponse = { fills: 0, contracts: 0 }
  const onFill = (ms: MarketState, ev: FillEvent, cause: FillCause): void => {
    const size = ev.size
    const notional = ownNotionalMicro(size, ev.makerPriceBps)
    const isBuy = ev.makerSide === "buy"
    ms.cashFlowMicro += (isBuy ? -notional : notional) + ev.makerRebateMicro - ev.makerBuilderFeeMicro
    ms.rebatesMicro += ev.makerRebateMicro
    ms.volumeMicro += notional
    if (ev.makerOutcome === "yes") ms.yes += isBuy ? size : -size
    else ms.no += isBuy ? size : -size
    ms.fills++
    ms.filledContracts += size
    if (cause === CAUSE_TRADE) fillsFromTrades++
    if (cause === CAUSE_RESPONSE) {
      byResponse.fills++
      byResponse.contracts += size
    }
    fills.push({
      tMs: v.nowMs, market: ms.idx, side: ev.makerSide, outcome: ev.makerOutcome, priceBps: ev.makerPriceBps,
      yesPriceBps: ev.yesPriceBps, size, rebateMicro: ev.makerRebateMicro, cause: cause === CAUSE_TRADE ? "trade" : cause === CAUSE_RESPONSE ? "response" : "book"
    })
  }
  // An order-level tape gives each owner its own wallet (rewards score and cap per maker), up to a bound.
  const wallets = d.orders > 0 ? Math.min(MAX_OWNER_WALLETS, Math.max(config.bgMakers, d.owners.length)) : config.bgMakers
  const v = new Venue(d.markets, config.capitalMicro, config, wallets, config.bookMoveFills, onFill, {
    ...(opts.tap === undefined ? {} : { tap: opts.tap }),
    ...(opts.onRecord === undefined ? {} : { onRecord: opts.onRecord })
  })
  const medians = medianSizes(d)
  const tickOf = ticks(d)
  const snapshotMarkets = new Set<number>()
  const orderMarkets = new Set<number>()
  const flowMarkets = new Set<number>()
  for (let i = 0; i < d.count; i++) {
    const k = d.kind[i]!
    if (k !== KIND_TRADE) snapshotMarkets.add(d.market[i]!)
    if (k === KIND_ADD || k === KIND_CANCEL || k === KIND_NEW) orderMarkets.add(d.market[i]!)
    if (k === KIND_NEW) flowMarkets.add(d.market[i]!)
  }
  const quoting = config.quoteMarkets === null ? null : new Set(config.quoteMarkets)
  for (const id of config.quoteMarkets ?? []) if (!d.markets.includes(id)) throw new BacktestInputError(`market ${id} is not in the data`)
  const botStartMs = Math.max(d.tMs[0]!, config.startSec === null ? 0 : config.startSec * 1000)
  const tickMs = config.feedLatency.tickMs ?? 0
  // A ticked bot (the server-managed one) takes its first step at the first tick after its start, as live.
  const firstStepMs = tickMs > 0 ? (Math.floor(botStartMs / tickMs) + 1) * tickMs : botStartMs
  const markets = d.markets.map((id, m) => {
    const depth = config.bgDepth ?? Math.max(1, 5 * medians[m]!)
    const ms = new MarketState(m, id, v.engine.markets.get(id)!, tickOf[m]!, snapshotMarkets.has(m), depth, params[m]!, makeStrategy(params[m]!))
    ms.quoting = quoting === null || quoting.has(id)
    ms.orderLevel = orderMarkets.has(m)
    ms.orderFlow = flowMarkets.has(m)
    // The bot's first step: at its start, or the next tick for a ticked bot (it then quotes once it knows a mid).
    if (ms.quoting) ms.timerMs = firstStepMs
    return ms
  })
  v.startBot(markets.filter((ms) => ms.quoting).map((ms) => ms.id), specToJson(specOf(config)))
  const bg = new Background(v, queueModel(config.queueModel, config.queuePower, new Rng(config.seed, "queue")), new Rng(config.seed, "background"), config.bgLevels, config.bgChurnPct)
  // Makers that follow the book (follow.ts): with a model that fitted them, in a flow replay only.
  const follow = config.response?.follow ?? null
  const l3 = new OrderLevelBook(v, bg, follow === null || flowMarkets.size === 0 ? null : { slope: follow.slope, followers: followersOf(d) })
  // The takers our quotes attract (docs/backtesting.md "The market-response model"); none without a model.
  // An interval's response draw k has its own arrival stream (sim/backtest/interval-run.ts).
  const responseStream = (config.responseDraw ?? 0) > 0 ? `response/draw${config.responseDraw}` : "response"
  const response = config.response === null ? null : new ResponseFlow(config.response, d, markets, v, new Rng(config.seed, responseStream))
  const entryRng = new Rng(config.seed, "latency/entry")
  const feedRng = new Rng(config.seed, "latency/feed")
  const ticked = new Set<MarketState>()
  // The service samples rewards once a minute from its start, not from the first trade: a tape's clock starts at its from_sec.
  const startMs = dataStartMs(d, config)
  const rewards = new RewardsLedger(config.rewards, Math.floor(startMs / 1000), markets, v)
  const lpAcct = v.lpAccount

  // Feed: per data event, when the strategy sees it and what it sees.
  const n = d.count
  const feedAt = new Float64Array(n)
  const feedMid2 = new Int32Array(n)
  const feedNetYes = new Float64Array(n)
  const feedPnl = new Float64Array(n)
  let fed = 0
  let fp = 0
  let lastFeedAt = 0
  const batches: Batch[] = []
  let bp = 0
  let lastEntryAt = 0
  let minTimerMs = markets.some((ms) => ms.quoting) ? firstStepMs : Number.POSITIVE_INFINITY
  const sampleMs = config.sampleSec * 1000
  const endMs = Math.max(d.tMs[n - 1]!, config.endSec === null ? 0 : config.endSec * 1000)
  let nextSampleMs = Math.ceil(startMs / sampleMs) * sampleMs
  let nextDayMs = (Math.floor(startMs / DAY_MS) + 1) * DAY_MS
  let markTotal = 0
  let peak = config.capitalMicro
  let maxDrawdown = 0
  let peakAtMaxDrawdown = config.capitalMicro
  const midPaths = markets.map(() => ({ tMs: [] as number[], midBps: [] as number[] }))
  const series: Series = {
    tSec: [], equityMicro: [], cashMicro: [], pnlMicro: [],
    mid2: markets.map(() => []), netYes: markets.map(() => []), bidBps: markets.map(() => []), askBps: markets.map(() => [])
  }
  const outcome: OutcomePath = { fromSec: Math.floor(botStartMs / 1000), tSec: [], tradingPnlMicro: [], fills: [] }
  /** The quoted markets' trading PnL and fills so far, at tSec (the last point of a second is kept). */
  const recordOutcome = (tSec: number): void => {
    let pnl = 0
    let n = 0
    for (const ms of markets) {
      if (!ms.quoting) continue
      pnl += ms.pnlMicro - ms.rebatesMicro
      n += ms.fills
    }
    if (outcome.tSec.at(-1) === tSec) {
      outcome.tradingPnlMicro[outcome.tSec.length - 1] = pnl
      outcome.fills[outcome.tSec.length - 1] = n
      return
    }
    outcome.tSec.push(tSec)
    outcome.tradingPnlMicro.push(pnl)
    outcome.fills.push(n)
  }

  const equity = (): number => lpAcct.availableMicro + lpAcct.lockedMicro + markTotal
  const trackDrawdown = (): void => {
    const e = equity()
    if (e > peak) peak = e
    if (peak - e > maxDrawdown) {
      maxDrawdown = peak - e
      peakAtMaxDrawdown = peak
    }
  }
  const remark = (ms: MarketState): void => {
    if (ms.mid2 < 0) return
    const mark = ms.yes * ms.mid2 * 50 + ms.no * (20_000 - ms.mid2) * 50
    markTotal += mark - ms.markMicro
    ms.markMicro = mark
  }
  const refreshMinTimer = (): void => {
    minTimerMs = Number.POSITIVE_INFINITY
    for (const ms of markets) if (ms.timerMs < minTimerMs) minTimerMs = ms.timerMs
  }
  const send = (ms: MarketState, nowMs: number, decision: Batch["decision"], state: StrategyState): void => {
    lastEntryAt = Math.max(lastEntryAt, nowMs + latency(config.entryLatency, entryRng))
    batches.push({ atMs: lastEntryAt, ms, decision, state })
  }
  const closePause = (ms: MarketState, nowMs: number): void => {
    if (ms.pausedSinceMs >= 0) {
      ms.pausedMs += nowMs - ms.pausedSinceMs
      ms.pauseSpansMs.push([ms.pausedSinceMs, nowMs])
      ms.pausedSinceMs = -1
    }
  }

  /**
   * Could a step now answer anything but `hold`? docs/lp.md "One step, in order": a stop at the
   * PnL limits, a pause above the skew tolerance, a resume below half of it, or a re-quote when
   * due (paused or not: a paused strategy re-quotes its unwinding side on the same cadence).
   * Otherwise the step is skipped: its only effect would be remembering the mid, and
   * the mid we pass is always the last one seen, so no later step can tell the difference
   * (RunOptions.everyStep checks this equivalence in the tests).
   */
  const mustStep = (ms: MarketState, tsSec: number): boolean => {
    const st = ms.state
    const p = ms.params
    const pnl = ms.obsPnlMicro
    if ((p.stopLossMicro > 0 && pnl <= -p.stopLossMicro) || (p.takeProfitMicro > 0 && pnl >= p.takeProfitMicro)) return true
    const absNet100 = Math.abs(ms.obsNetYes) * 100
    const tolerance100 = p.maxInventory * p.skewTolerancePct
    if (st.paused ? absNet100 * 2 < tolerance100 : absNet100 > tolerance100) return true
    return st.lastQuoteSec === null || tsSec - st.lastQuoteSec >= p.rebalanceIntervalSec
  }

  const step = (ms: MarketState, nowMs: number): void => {
    if (ms.stopReason !== null || !ms.quoting) return
    const tsSec = Math.floor(nowMs / 1000)
    if (ms.obsMid2 >= 0) ms.seenMid2 = ms.obsMid2
    if (nowMs < firstStepMs) return
    if (!everyStep && !mustStep(ms, tsSec)) return
    const st = ms.state
    const input: StrategyInput = { tsSec, midBps: ms.seenMid2 < 0 ? null : ms.seenMid2 / 2, netYes: ms.obsNetYes, pnlMicro: ms.obsPnlMicro }
    const r = ms.strategy.step(st, input)
    opts.onStep?.(ms.id, input, r.decision)
    ms.state = r.state
    const decision = r.decision
    if (decision.kind === "quote") {
      closePause(ms, nowMs)
      ms.requotes++
      send(ms, nowMs, decision, r.state)
    } else if (decision.kind === "pause") {
      // Only entering a pause starts the paused clock; every pause decision is a (one-sided) re-quote.
      if (ms.pausedSinceMs < 0) {
        ms.pausedSinceMs = nowMs
        ms.pauses++
      }
      ms.requotes++
      send(ms, nowMs, decision, r.state)
    } else if (decision.kind === "stop") {
      closePause(ms, nowMs)
      ms.stopReason = decision.reason
      ms.stoppedAtMs = nowMs
      send(ms, nowMs, decision, r.state)
    }
    const timer = ms.stopReason === null && r.state.lastQuoteSec !== null ? (r.state.lastQuoteSec + ms.params.rebalanceIntervalSec) * 1000 : Number.POSITIVE_INFINITY
    if (timer !== ms.timerMs) {
      ms.timerMs = timer
      refreshMinTimer()
    }
  }

  /**
   * A batch reaches the exchange as the bot runner's step does: `lp_bot_step` (our orders in that
   * market cancelled, the state kept; a stop ends there), then the new quotes as session orders, post-only.
   */
  const arrive = (b: Batch): void => {
    v.at(b.atMs)
    const ms = b.ms
    for (const spec of v.botStep(ms, b.decision, b.state)) {
      ms.ordersPlaced++
      if (v.placeLp(ms, spec) !== null) ms.quotedContracts += spec.size
    }
    if (b.decision.kind !== "stop") response?.refresh(ms, b.atMs)
  }

  /** Response takers due now take our quotes; the market is re-marked as after any fill. */
  const respond = (tMs: number): void => {
    v.at(tMs)
    response!.fire(tMs)
    for (const ms of markets) remark(ms)
    trackDrawdown()
  }

  const sample = (tMs: number): void => {
    v.at(tMs)
    rewards.sample()
    const e = equity()
    series.tSec.push(Math.floor(tMs / 1000))
    series.equityMicro.push(e)
    series.cashMicro.push(lpAcct.availableMicro + lpAcct.lockedMicro)
    series.pnlMicro.push(e - config.capitalMicro)
    for (const ms of markets) {
      let bid = -1
      let ask = -1
      for (const o of ms.ours) {
        if (o.remaining === 0) continue
        if (o.isBid && o.yesPriceBps > bid) bid = o.yesPriceBps
        if (!o.isBid && (ask < 0 || o.yesPriceBps < ask)) ask = o.yesPriceBps
      }
      series.mid2[ms.idx]!.push(ms.bidTop >= 0 && ms.askTop >= 0 ? ms.bidTop + ms.askTop : -1)
      series.netYes[ms.idx]!.push(ms.netYes)
      series.bidBps[ms.idx]!.push(bid)
      series.askBps[ms.idx]!.push(ask)
    }
    recordOutcome(Math.floor(tMs / 1000))
  }

  /** Pays the days that have ended, as the service does once journal time has left them (every maker is credited). */
  const closeDay = (tMs: number): void => {
    v.at(tMs)
    if (rewards.payClosed() > 0) trackDrawdown()
  }

  /** Fires every internal event due at or before tMs, earliest first. */
  const advance = (tMs: number): void => {
    for (;;) {
      let best = nextDayMs
      let kind = 0
      if (bp < batches.length && batches[bp]!.atMs < best) {
        best = batches[bp]!.atMs
        kind = 1
      }
      if (fp < fed && feedAt[fp]! < best) {
        best = feedAt[fp]!
        kind = 2
      }
      if (minTimerMs < best) {
        best = minTimerMs
        kind = 3
      }
      if (nextSampleMs < best) {
        best = nextSampleMs
        kind = 4
      }
      if (response !== null && response.nextMs < best) {
        best = response.nextMs
        kind = 5
      }
      if (best > tMs) return
      if (kind === 0) {
        closeDay(best)
        nextDayMs += DAY_MS
      } else if (kind === 1) {
        arrive(batches[bp++]!)
        if (bp > 4096 && bp * 2 > batches.length) {
          batches.splice(0, bp)
          bp = 0
        }
      } else if (kind === 2) {
        const j = fp++
        const ms = markets[d.market[j]!]!
        ms.obsMid2 = feedMid2[j]!
        ms.obsNetYes = feedNetYes[j]!
        ms.obsPnlMicro = feedPnl[j]!
        if (tickMs === 0) step(ms, best)
        else {
          // One step per market and tick, on the book as the tick finds it (the events it saw applied in order).
          ticked.add(ms)
          if (fp < fed && feedAt[fp] === best) continue
          for (const t of ticked) step(t, best)
          ticked.clear()
        }
      } else if (kind === 3) {
        for (const ms of markets) if (ms.timerMs === best) step(ms, best)
      } else if (kind === 4) {
        sample(best)
        nextSampleMs += sampleMs
      } else respond(best)
    }
  }

  // The rows of the bots ahead of ours in the runner's pass lead their second: ours sees them at its tick.
  const tAt = passTimes(d, ownersAhead(d, config), ownersBehind(d, config))
  for (let i = 0; i < n; i++) {
    const t = tAt[i]!
    advance(t)
    v.at(t)
    const ms = markets[d.market[i]!]!
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
      bg.beforeTrade(ms, d.side[i] === TAKER_BUY, d.priceBps[i]!, d.size[i]!)
      v.take(ms, d.side[i] === TAKER_BUY, d.priceBps[i]!, d.size[i]!)
    } else if (kind === KIND_SNAPSHOT) {
      bg.snapshot(ms, d, d.levelStart[i]!, d.size[i]!)
    }
    remark(ms)
    if (response !== null && ms.quoting) response.refresh(ms, t)
    const seenAt = t + latency(config.feedLatency, feedRng)
    // A tick sees what happened before it: an event at the tick's own instant waits for the next one.
    lastFeedAt = Math.max(lastFeedAt, tickMs > 0 ? (Math.floor(seenAt / tickMs) + 1) * tickMs : seenAt)
    feedAt[i] = lastFeedAt
    // As the live bot (src/service/lp-bot-market.ts): the others' mid, else the last trade's price, else none.
    feedMid2[i] = ms.bidTop >= 0 && ms.askTop >= 0 ? ms.bidTop + ms.askTop : ms.lastTradeBps >= 0 ? 2 * ms.lastTradeBps : -1
    // The mid path for markouts: each change of the mid after a data event.
    const path = midPaths[ms.idx]!
    if (feedMid2[i]! >= 0 && path.midBps.at(-1) !== feedMid2[i]! / 2) {
      path.tMs.push(t)
      path.midBps.push(feedMid2[i]! / 2)
    }
    feedNetYes[i] = ms.netYes
    feedPnl[i] = ms.pnlMicro
    fed = i + 1
    trackDrawdown()
    if ((i & 0xffff) === 0xffff && opts.onProgress !== undefined) opts.onProgress(i + 1, n)
  }
  advance(endMs)
  // Credit before the last sample, so the plotted equity ends at the headline figure (every income in it).
  closeDay(endMs)
  if (series.tSec.at(-1) !== Math.floor(endMs / 1000)) sample(endMs)
  // The path ends on the run's own figures, whatever came after the last sample at its second.
  recordOutcome(Math.floor(endMs / 1000))
  opts.onProgress?.(n, n)

  const responded = { ...byResponse, takers: response?.counts.takers ?? 0, informed: response?.counts.informed ?? 0 }
  const report = buildReport(d, config, v, bg, l3, markets, rewards, series, fills, { fromTrades: fillsFromTrades, response: responded }, endMs, equity(), markTotal, maxDrawdown, peakAtMaxDrawdown)
  const { stats, fillMarkoutsBps } = computeStats({
    capitalMicro: config.capitalMicro, volumeMicro: report.summary.volume_micro, marketIds: d.markets, series, fills, midPaths, endMs,
    botStartSec: Math.floor(botStartMs / 1000), rewardDays: rewards.days, tradingPnlMicro: report.summary.trading_pnl_micro
  })
  return { report: { ...report, stats, fill_markouts_bps: fillMarkoutsBps, outcome_path: outcome, interval: null }, engine: v.engine, exchange: v.exchange }
}

// One piece: the report's fields, each computed in a line or two from the run's end state.
const buildReport = (
  d: Dataset, config: BacktestConfig, v: Venue, bg: Background, l3: OrderLevelBook, markets: ReadonlyArray<MarketState>, rewards: RewardsLedger,
  series: Series, fills: FillRow[], causes: { fromTrades: number; response: { fills: number; contracts: number; takers: number; informed: number } }, endMs: number, finalEquity: number, markTotal: number,
  maxDrawdown: number, peakAtMaxDrawdown: number
): Omit<BacktestReport, "stats" | "fill_markouts_bps" | "outcome_path" | "interval"> => {
  const endSec = Math.floor(endMs / 1000)
  const lp = v.lpAccount
  const cash = lp.availableMicro + lp.lockedMicro
  const bot = v.exchange.lpBook.bots.get(LP)
  let unrealised = 0
  const marketReports: MarketReport[] = markets.map((ms) => {
    const pos = lp.positions.get(ms.id)
    const cost = pos === undefined ? 0 : pos.costYesMicro + pos.costNoMicro
    if (pos !== undefined && (pos.yes !== ms.yes || pos.no !== ms.no)) throw new Error(`backtest defect: ${ms.id} position ${pos.yes}/${pos.no} vs fills ${ms.yes}/${ms.no}`)
    // The service's own accounting of our bot (the LP book, fed by the exchange's fills) must agree with the report's.
    const botCash = bot?.markets.find((m) => m.marketId === ms.id)?.cashMicro ?? 0
    if (botCash !== ms.cashFlowMicro) throw new Error(`backtest defect: ${ms.id} bot cash ${botCash} in the exchange's LP book vs ${ms.cashFlowMicro} from our fills`)
    unrealised += ms.markMicro - cost
    const pausedMs = ms.pausedMs + (ms.pausedSinceMs >= 0 ? endMs - ms.pausedSinceMs : 0)
    const spans = ms.pausedSinceMs >= 0 ? [...ms.pauseSpansMs, [ms.pausedSinceMs, endMs] as [number, number]] : ms.pauseSpansMs
    return {
      market_id: ms.id, fills: ms.fills, filled_contracts: ms.filledContracts, quoted_contracts: ms.quotedContracts,
      orders_placed: ms.ordersPlaced, requotes: ms.requotes, volume_micro: ms.volumeMicro, net_yes: ms.netYes, yes: ms.yes, no: ms.no,
      mark_bps: ms.mid2 < 0 ? null : ms.mid2 / 2, pnl_micro: ms.pnlMicro, maker_rebates_micro: ms.rebatesMicro,
      lp_rewards_raw_micro: rewards.rawByMarket[ms.idx]!, pauses: ms.pauses, time_paused_sec: Math.floor(pausedMs / 1000),
      paused_spans_ms: spans,
      stop_reason: ms.stopReason, time_stopped_sec: ms.stoppedAtMs < 0 ? 0 : Math.floor((endMs - ms.stoppedAtMs) / 1000), params: ms.params
    }
  })
  const sum = (f: (m: MarketReport) => number): number => marketReports.reduce((s, m) => s + f(m), 0)
  const pnl = finalEquity - config.capitalMicro
  const rebates = sum((m) => m.maker_rebates_micro)
  const rejects: Record<string, number> = {}
  for (const [k, n] of [...v.lpRejects.entries()].sort()) rejects[k] = n
  const quoted = sum((m) => m.quoted_contracts)
  const filled = sum((m) => m.filled_contracts)
  const src = config.strategy
  return {
    assumptions: assumptionsOf(d, config, markets, bg),
    summary: {
      source: d.source, seed: config.seed,
      strategy: src.kind === "preset" ? `preset ${src.preset}` : src.spec.mode === "simple" ? `spec simple ${src.spec.preset}` : "spec advanced",
      queue_model: markets.every((ms) => ms.orderLevel)
        ? "exact (order-level tape)"
        : config.queueModel === "prob" ? `prob (power ${config.queuePower})` : "risk-averse",
      book: bookOf(markets),
      markets: markets.length, trades: d.trades, snapshots: d.snapshots, order_events: d.orders, events: d.count,
      from_sec: Math.floor(dataStartMs(d, config) / 1000), to_sec: endSec, capital_micro: config.capitalMicro,
      final_equity_micro: finalEquity, cash_micro: cash, inventory_value_micro: markTotal,
      pnl_micro: pnl, realised_pnl_micro: pnl - unrealised, unrealised_pnl_micro: unrealised,
      trading_pnl_micro: pnl - rebates - rewards.totalMicro, maker_rebates_micro: rebates, lp_rewards_micro: rewards.totalMicro,
      fills: fills.length, fills_from_trades: causes.fromTrades, fills_from_book_moves: fills.length - causes.fromTrades - causes.response.fills,
      fills_from_response: causes.response.fills, response_filled_contracts: causes.response.contracts,
      response_takers: causes.response.takers, response_informed_takers: causes.response.informed,
      filled_contracts: filled, quoted_contracts: quoted, fill_ratio: quoted === 0 ? 0 : Math.round((filled / quoted) * 1e6) / 1e6,
      orders_placed: sum((m) => m.orders_placed), orders_rejected: Object.values(rejects).reduce((s, n) => s + n, 0),
      volume_micro: sum((m) => m.volume_micro), max_drawdown_micro: maxDrawdown,
      max_drawdown_pct: peakAtMaxDrawdown <= 0 ? 0 : Math.round((maxDrawdown / peakAtMaxDrawdown) * 1e6) / 1e6,
      time_paused_sec: sum((m) => m.time_paused_sec), time_stopped_sec: sum((m) => m.time_stopped_sec),
      trades_rejected: v.tradeRejects, engine_commands: v.commands,
      queue_decreases_at_our_level: bg.decreasesAtOurLevel, queue_decreases_ahead: bg.decreasesAhead,
      queue_position_mattered: bg.decreasesAtOurLevel > 0, background_rejected: v.bgRejects, tape_orders_refused: l3.refused, tape_orders_spent_withdrawn: l3.spentWithdrawn, tape_contracts_spent_withdrawn: l3.spentContractsWithdrawn,
      follower_orders: l3.followCounts.placed, follower_orders_moved: l3.followCounts.moved, follower_ticks_moved: l3.followCounts.movedTicks,
      lp_rewards_unpaid_estimate_micro: rewards.unpaidEstimateMicro()
    },
    markets: marketReports,
    rejects,
    rewardDays: rewards.days,
    series,
    fills,
    response_model: config.response
  }
}

/** Where the competing book came from: order-level events, L2 snapshots, or the synthetic model (a mix names each). */
const bookOf = (markets: ReadonlyArray<MarketState>): string => {
  const kinds = new Set(markets.map((ms) => (ms.orderFlow ? "order flow (L3)" : ms.orderLevel ? "orders (L3)" : ms.snapshotMode ? "snapshots (L2)" : "synthetic")))
  return [...kinds].join(" + ")
}

const usdcOf = (micro: number): string => (micro / 1e6).toLocaleString("en-US", { maximumFractionDigits: 2 })

/** A strategy that starts (at its --start-sec, else with the data) inside a bunched stretch of seconds: said loudly, as input warnings are. */
export const startWarnings = (d: Dataset, config: BacktestConfig): string[] => {
  if (d.count === 0) return []
  const w = startWarning(d.bunching, Math.floor(Math.max(d.tMs[0]!, config.startSec === null ? 0 : config.startSec * 1000) / 1000))
  return w === null ? [] : [w]
}

/** What the data did not say and the run assumed, and model notes a reader must see first. */
const assumptionsOf = (d: Dataset, config: BacktestConfig, markets: ReadonlyArray<MarketState>, bg: Background): string[] => {
  const out: string[] = [...d.warnings, ...startWarnings(d, config)].map((w) => `INPUT WARNING ${d.source}: ${w}`)
  const synthetic = markets.filter((ms) => !ms.snapshotMode).map((ms) => ms.id)
  const orderLevel = markets.filter((ms) => ms.orderLevel).length
  if (orderLevel > 0) {
    out.push(`queue position exact in ${orderLevel === markets.length ? "every market" : `${orderLevel} of ${markets.length} markets`}: the tape's order-level events place and cancel each competitor order (${d.orders} events, ${d.owners.length} owners), so the queue model is not used there`)
  }
  const flow = markets.filter((ms) => ms.orderFlow).length
  if (flow > 0) {
    out.push(`order flow replayed in ${flow === markets.length ? "every market" : `${flow} of ${markets.length} markets`}: every order enters the engine as it arrived (takers up to their own limit and size), so trades come from matching, not from the tape's prints; ${config.response === null ? "takers still do not react to our quotes (--response adds a fitted market-response model's takers)" : "the tape's takers do not react to our quotes; the market-response model adds takers that do"}`)
    const follow = config.response?.follow ?? null
    if (follow !== null) {
      const n = followersOf(d).reduce((s, f) => s + f, 0)
      out.push(`makers follow the book: the tape's ${n} re-quoting maker${n === 1 ? "" : "s"} (at least ${FOLLOWER_MIN_ORDERS} orders, ${FOLLOWER_RESTING_SHARE * 100} % of them resting) place each limit order moved by ${follow.slope} × (the mid of the rest of the book with us − the one in the tape), whole ticks, as the response model's fit says makers follow the book`)
    }
  }
  if (synthetic.length > 0) {
    out.push(`competitor depth is synthetic (no book snapshots) in ${synthetic.length === markets.length ? "every market" : `${synthetic.length} of ${markets.length} markets`}: a model of other makers, not a record of them`)
  }
  if (config.provenance.fees === "assumed") {
    out.push(`fee schedule assumed (the data has none): maker rebate ${config.makerRebateBps} bps, taker fee ${config.takerFeeBps} bps; rebates are paid only out of taker fees collected, as the engine pays them`)
  }
  if (config.provenance.rewards === "assumed") {
    out.push(`LP rewards configuration assumed (the data has none): the service's default ${usdcOf(config.rewards.dailyBudgetMicro)} USDC a day, band ${config.rewards.bandSpreadBpsMax} bps, size cutoff ${config.rewards.minSizeContracts}, cap ${config.rewards.perWalletCapPct}% per wallet`)
  }
  if (config.bookMoveFills) out.push("book-move fills are on: rebuilt background orders may trade with our quotes (fills_from_book_moves)")
  if (bg.decreasesAtOurLevel === 0 && markets.some((ms) => ms.quoting && !ms.orderLevel)) out.push("queue position never mattered: no background decrease met one of our levels, so both queue models give this result")
  if (d.trades === 0) out.push("the data has no trades")
  for (const note of d.notes) out.push(`input: ${note}`)
  return out
}
