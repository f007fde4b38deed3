// The backtest's result: summary figures (all integers in micro-USDC, contracts, seconds,
// except the two ratios), per-market figures, and the sampled series and fills behind the
// charts and the DuckDB file. Deterministic: wall-clock figures are added by the CLI only.
import type { StrategyParams } from "../../src/lp/strategy.ts"
import type { RewardDay } from "./rewards.ts"
import type { BacktestStats } from "./stats.ts"
import { ATTRIBUTION_MARKOUT_SEC } from "./attribution.ts"
import { dayLabel } from "../../src/service/rewards-book.ts"
import type { ResponseModel } from "./response/model.ts"
import { edgeTableText, responseLines } from "./response/format.ts"
import { intervalLines, type OutcomeInterval } from "./interval.ts"
import { type CalibratedRange, calibratedRangeLines } from "./interval-calibration.ts"
import { rejectLines, sharePct } from "./rejects.ts"

export interface MarketReport {
  readonly market_id: string
  readonly fills: number
  readonly filled_contracts: number
  readonly quoted_contracts: number
  readonly orders_placed: number
  readonly requotes: number
  readonly volume_micro: number
  readonly net_yes: number
  readonly yes: number
  readonly no: number
  readonly mark_bps: number | null
  readonly pnl_micro: number
  readonly maker_rebates_micro: number
  /** Our pre-cap rewards entitlement from this market (the cap applies per wallet, pool-wide). */
  readonly lp_rewards_raw_micro: number
  readonly pauses: number
  readonly time_paused_sec: number
  /** Each pause, [from, to) in unix ms (to = the run's end while still paused): they sum to time_paused_sec. */
  readonly paused_spans_ms: ReadonlyArray<readonly [number, number]>
  readonly stop_reason: string | null
  readonly time_stopped_sec: number
  readonly params: StrategyParams
}

export interface BacktestSummary {
  readonly source: string
  readonly seed: string
  readonly strategy: string
  readonly queue_model: string
  /** Where the competing book came from: "orders (L3)", "snapshots (L2)", "synthetic", or a mix. */
  readonly book: string
  readonly markets: number
  readonly trades: number
  readonly snapshots: number
  /** Order-level events in the data (a version-2 tape's orders file). */
  readonly order_events: number
  readonly events: number
  readonly from_sec: number
  readonly to_sec: number
  readonly capital_micro: number
  readonly final_equity_micro: number
  readonly cash_micro: number
  readonly inventory_value_micro: number
  readonly pnl_micro: number
  readonly realised_pnl_micro: number
  readonly unrealised_pnl_micro: number
  readonly trading_pnl_micro: number
  readonly maker_rebates_micro: number
  readonly lp_rewards_micro: number
  readonly fills: number
  readonly fills_from_trades: number
  readonly fills_from_book_moves: number
  /** Fills by response takers (the market-response model's takers our quote attracted; 0 without a model), their contracts, the takers sent and those classed informed. */
  readonly fills_from_response: number
  readonly response_filled_contracts: number
  readonly response_takers: number
  readonly response_informed_takers: number
  readonly filled_contracts: number
  readonly quoted_contracts: number
  /** filled_contracts / quoted_contracts (contracts our accepted orders offered). */
  readonly fill_ratio: number
  readonly orders_placed: number
  readonly orders_rejected: number
  readonly volume_micro: number
  readonly max_drawdown_micro: number
  /** max_drawdown_micro / the equity peak it fell from. */
  readonly max_drawdown_pct: number
  readonly time_paused_sec: number
  readonly time_stopped_sec: number
  readonly trades_rejected: number
  readonly engine_commands: number
  readonly queue_decreases_at_our_level: number
  readonly queue_decreases_ahead: number
  /** False when no background decrease ever met one of our levels: the queue model could not matter. */
  readonly queue_position_mattered: boolean
  /** Background orders the engine refused (post-only across our quotes while book-move fills are off). */
  readonly background_rejected: number
  /** Order-level tape orders the engine refused (post-only across one of our quotes). */
  readonly tape_orders_refused: number
  /** Order-level tape orders the tape used up while they still rested here (our quotes took their takers), withdrawn at their owner's next order event in the market; and the contracts they still had. */
  readonly tape_orders_spent_withdrawn: number
  readonly tape_contracts_spent_withdrawn: number
  /** Makers that follow the book (a response model of version 4, flow replay): the re-quoting makers' limit orders placed, those moved with the book, and the ticks they moved in all. */
  readonly follower_orders: number
  readonly follower_orders_moved: number
  readonly follower_ticks_moved: number
  /** The open day's rewards if it closed now: never paid (the service pays a day only once it has ended). */
  readonly lp_rewards_unpaid_estimate_micro: number
}

export interface FillRow {
  readonly tMs: number
  readonly market: number
  readonly side: "buy" | "sell"
  readonly outcome: "yes" | "no"
  /** Own-outcome price. */
  readonly priceBps: number
  readonly yesPriceBps: number
  readonly size: number
  readonly rebateMicro: number
  readonly cause: "trade" | "book" | "response"
}

/** Sampled every sampleSec; per-market arrays are indexed [market][sample]. */
export interface Series {
  readonly tSec: number[]
  readonly equityMicro: number[]
  readonly cashMicro: number[]
  readonly pnlMicro: number[]
  /** bidTop + askTop (half-bps) or -1. */
  readonly mid2: number[][]
  readonly netYes: number[][]
  /** Our best resting bid / ask, YES bps, or -1. */
  readonly bidBps: number[][]
  readonly askBps: number[][]
}

/**
 * The quoted markets' trading PnL (PnL at the mark, rebates out, rewards never in) and fills,
 * cumulative at each sample and at the run's end: what the interval bootstraps (interval.ts).
 */
export interface OutcomePath {
  /** The strategy's start (unix s): nothing happens in the quoted markets before it. */
  readonly fromSec: number
  readonly tSec: number[]
  readonly tradingPnlMicro: number[]
  readonly fills: number[]
}

export interface BacktestReport {
  /** What the run assumed because the data did not say it (fees, rewards, competitor depth), and notes on the models: shown first. */
  readonly assumptions: ReadonlyArray<string>
  readonly summary: BacktestSummary
  readonly markets: ReadonlyArray<MarketReport>
  readonly rejects: Readonly<Record<string, number>>
  readonly rewardDays: ReadonlyArray<RewardDay>
  readonly series: Series
  readonly fills: ReadonlyArray<FillRow>
  /** The market-response model the run applied (its parameters and fit), or null. */
  readonly response_model: ResponseModel | null
  /** Return, Sharpe/Sortino, drawdown duration, turnover, inventory, two-sided time, markouts, rewards share (sim/backtest/stats.ts). */
  readonly stats: BacktestStats
  /** Each fill's markouts at MARKOUT_HORIZONS_SEC (YES bps, null past the data), as `fills`: not in the JSON output. */
  readonly fill_markouts_bps: ReadonlyArray<ReadonlyArray<number | null>>
  /** Behind the interval, like the series: not in the JSON output. */
  readonly outcome_path: OutcomePath
  /** The range for trading PnL and fills (interval-run.ts `runWithInterval`); null when the run was made without one (sweeps). */
  readonly interval: OutcomeInterval | null
  /** The range from the backtest's errors on calibration seeds (--interval-calibration; interval-calibration.ts); null or absent without. */
  readonly calibrated_interval?: CalibratedRange | null
}

const num = (x: number | null, digits = 2): string => (x === null ? "n/a" : x.toFixed(digits))

/** Sharpe and Sortino with their sampling, or why they are not given ("not enough data (…)"). */
export const ratiosText = (t: BacktestStats): string => {
  if (t.sharpe_annualised === null && t.sortino_annualised === null) return `${t.ratios_unavailable ?? "n/a"}; ${t.ratios_sampling}`
  const given = `${num(t.sharpe_annualised)} / ${num(t.sortino_annualised)} from ${t.hourly_returns} ${t.ratios_sampling}`
  return t.ratios_unavailable === null ? given : `${given} (${t.ratios_unavailable})`
}

/** The statistics as label/value lines (console and HTML). */
export const statsLines = (t: BacktestStats): Array<[string, string]> => [
  ["return", `${num(t.return_pct)}%`],
  ["Sharpe / Sortino", ratiosText(t)],
  ["drawdown duration", `${t.max_drawdown_duration_sec.toLocaleString("en-US")} s from the peak ${t.max_drawdown_recovered ? "until recovered" : "to the end (not recovered)"}`],
  ["turnover", `${num(t.turnover)}× capital`],
  ["markouts", t.markouts.map((m) => `${m.horizon_sec}s ${num(m.mean_bps)} bps`).join(", ") + " (mid move after our fills, our side; negative = adverse)"],
  ["trading PnL split", `edge at the fills ${usdc(t.pnl_attribution.edge_micro)} + inventory after them ${usdc(t.pnl_attribution.inventory_micro)} USDC (of which the first ${ATTRIBUTION_MARKOUT_SEC} s: ${usdc(t.pnl_attribution.markout_60s_micro)})`],
  ["two-sided / inventory", t.markets.map((m) => `${m.market_id} ${num(m.quoted_two_sided_pct, 1)}%, |net| mean ${num(m.inventory_mean_abs, 0)} max ${m.inventory_max_abs}`).join("; ")],
  ["rewards share", t.rewards_share_by_day.length === 0 ? "no day paid" : t.rewards_share_by_day.map((d) => `${dayLabel(d.day)} ${num(d.share_pct)}% of the pool`).join(", ")]
]

const usdc = (micro: number): string => (micro / 1e6).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })

/** The human summary on stdout. */
export const formatSummary = (r: BacktestReport): string => {
  const s = r.summary
  const lines: Array<[string, string]> = [
    ["data", `${s.source} (${s.trades.toLocaleString("en-US")} trades, ${s.snapshots} snapshots, ${s.order_events.toLocaleString("en-US")} order events, ${s.markets} markets; book from ${s.book})`],
    ["strategy", `${s.strategy}, queue ${s.queue_model}, seed ${s.seed}`],
    ["capital", `${usdc(s.capital_micro)} USDC`],
    ["final equity", `${usdc(s.final_equity_micro)} USDC (cash ${usdc(s.cash_micro)} + inventory ${usdc(s.inventory_value_micro)})`],
    ["pnl", `${usdc(s.pnl_micro)} USDC = realised ${usdc(s.realised_pnl_micro)} + unrealised ${usdc(s.unrealised_pnl_micro)}`],
    ["  of which", `trading ${usdc(s.trading_pnl_micro)}, maker rebates ${usdc(s.maker_rebates_micro)}, LP rewards ${usdc(s.lp_rewards_micro)}`],
    ["fills", `${s.fills.toLocaleString("en-US")}, ${s.filled_contracts.toLocaleString("en-US")} contracts, fill ratio ${(s.fill_ratio * 100).toFixed(2)}%`],
    ["  of which", `${s.fills_from_trades.toLocaleString("en-US")} by trades, ${s.fills_from_book_moves.toLocaleString("en-US")} by book moves (background orders crossing ours), ${s.fills_from_response.toLocaleString("en-US")} by response takers (${s.response_filled_contracts.toLocaleString("en-US")} contracts)`],
    ...(r.interval === null ? [] : intervalLines(r.interval)),
    ...(r.calibrated_interval == null ? [] : calibratedRangeLines(r.calibrated_interval)),
    ["LP rewards", `${usdc(s.lp_rewards_micro)} USDC paid for ended days; the unfinished day would pay ${usdc(s.lp_rewards_unpaid_estimate_micro)} (not paid, as in the service)`],
    ["queue", `${s.queue_decreases_at_our_level} background decreases at our levels, ${s.queue_decreases_ahead} from ahead of us${s.queue_position_mattered ? "" : ": queue position never mattered in this run"}`],
    ["orders", `${s.orders_placed.toLocaleString("en-US")} placed, ${s.orders_rejected.toLocaleString("en-US")} rejected${s.orders_rejected === 0 ? "" : ` (${sharePct((s.orders_rejected / Math.max(1, s.orders_placed)) * 100)}), by reason:`}`],
    ...rejectLines(r.rejects, s.orders_placed),
    ["max drawdown", `${usdc(s.max_drawdown_micro)} USDC (${(s.max_drawdown_pct * 100).toFixed(2)}%)`],
    ["paused / stopped", `${s.time_paused_sec.toLocaleString("en-US")} s / ${s.time_stopped_sec.toLocaleString("en-US")} s (market-seconds)`],
    ...statsLines(r.stats)
  ]
  const width = Math.max(...lines.map(([k]) => k.length))
  const model = r.response_model === null ? [] : [...responseLines(r.response_model).map(([k, v]) => `RESPONSE  ${k}: ${v}`), ...edgeTableText(r.response_model).map((x) => `RESPONSE  ${x}`), ""]
  const head = [...r.assumptions.map((a) => `NOTE  ${a}`), ...(r.assumptions.length > 0 ? [""] : []), ...model, ...lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`)].join("\n")
  const rows = r.markets.map((m) =>
    [m.market_id, String(m.fills), String(m.net_yes), usdc(m.pnl_micro), usdc(m.maker_rebates_micro), usdc(m.lp_rewards_raw_micro), String(m.time_paused_sec), m.stop_reason ?? "-"]
  )
  const header = ["market", "fills", "net_yes", "pnl", "rebates", "rewards(raw)", "paused_s", "stop"]
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)))
  const fmt = (row: string[]): string => row.map((x, c) => (c === 0 ? x.padEnd(widths[c]!) : x.padStart(widths[c]!))).join("  ")
  return `${head}\n\n${[fmt(header), ...rows.map(fmt)].join("\n")}`
}
