// The report of one run, built from its end state: each market's figures (checked against the
// engine's and the exchange's own books), the summary, and what the run assumed.
import { startWarning } from "./bunching.ts"
import type { BacktestConfig } from "./config.ts"
import type { Dataset } from "./dataset.ts"
import type { Background } from "./background.ts"
import { FOLLOWER_MIN_ORDERS, FOLLOWER_RESTING_SHARE, followersOf } from "./follow.ts"
import type { OrderLevelBook } from "./order-level.ts"
import type { BacktestReport, MarketReport, Series } from "./report.ts"
import type { RewardsLedger } from "./rewards.ts"
import type { RunTally } from "./tally.ts"
import { LP, type MarketState, type Venue } from "./venue.ts"

/** Where the run's clock starts: the data's given start (a tape's from_sec), else its first event. */
export const dataStartMs = (d: Dataset, config: BacktestConfig): number => (config.beginSec === null ? d.tMs[0]! : Math.min(d.tMs[0]!, config.beginSec * 1000))

/** The run's end state, as buildReport reads it. */
export interface RunEnd {
  readonly venue: Venue
  readonly background: Background
  readonly orderLevel: OrderLevelBook
  readonly markets: ReadonlyArray<MarketState>
  readonly rewards: RewardsLedger
  readonly tally: RunTally
  readonly series: Series
  readonly response: { readonly takers: number; readonly informed: number }
  readonly endMs: number
}

// One piece: the report's fields, each computed in a line or two from the run's end state.
export const buildReport = (d: Dataset, config: BacktestConfig, end: RunEnd): Omit<BacktestReport, "stats" | "fill_markouts_bps" | "outcome_path" | "interval"> => {
  const { venue: v, background: bg, orderLevel: l3, markets, rewards, tally, series, endMs } = end
  const fills = tally.fills
  const finalEquity = tally.equity()
  const markTotal = tally.markTotal
  const causes = { fromTrades: tally.fillsFromTrades, response: { ...tally.byResponse, ...end.response } }
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
      volume_micro: sum((m) => m.volume_micro), max_drawdown_micro: tally.maxDrawdown,
      max_drawdown_pct: tally.peakAtMaxDrawdown <= 0 ? 0 : Math.round((tally.maxDrawdown / tally.peakAtMaxDrawdown) * 1e6) / 1e6,
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
