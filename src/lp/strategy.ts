// The LP bot's quoting strategy (SPEC §1 "Provide Liquidity") as a pure function of
// (state, input): the server-managed bot, the simulator and the backtester all drive
// the same `step`, so a backtest reproduces live behaviour exactly. No clock, no
// randomness, no I/O; every number is an integer and every rounding is spelled out.
// Prices are YES-terms bps on the one book (docs/engine.md); quotes are post-only.
import { MAX_AMOUNT_MICRO, MAX_ORDER_SIZE, MAX_PRICE_BPS, MICRO_PER_BPS, MIN_NOTIONAL_MICRO } from "../engine/money.ts"

export interface StrategyParams {
  readonly spreadBps: number            // distance between innermost bid and innermost ask, YES bps (100 = 1¢), ≥ 2
  readonly levelsPerSide: number        // 1..10
  readonly levelStepBps: number         // distance between successive levels on one side, ≥ 1
  readonly contractsPerLevel: number    // ≥ 1
  readonly rebalanceIntervalSec: number // re-quote cadence, default 15
  readonly maxInventory: number         // |net YES| in contracts at which the lean is full
  readonly skewLeanBps: number          // how far the quote centre shifts away from inventory at full lean
  readonly skewTolerancePct: number     // 1..100: pause quoting when |netYes| > maxInventory·pct/100; resume below half of that
  readonly volWidenPct: number          // extra half-spread = realised vol (bps, EWMA of |Δmid| per rebalance) · pct / 100
  readonly stopLossMicro: number        // 0 = off; stop for good when pnlMicro ≤ −stopLossMicro
  readonly takeProfitMicro: number      // 0 = off; stop for good when pnlMicro ≥ takeProfitMicro
}

export interface StrategyInput {
  readonly tsSec: number
  readonly midBps: number | null   // YES mid; null when the book is empty/one-sided (then the last seen mid is used)
  readonly netYes: number          // YES contracts held − NO contracts held in this market
  readonly pnlMicro: number        // mark-to-market PnL since the bot started (computed by the caller)
}

export interface Quote { readonly side: "bid" | "ask"; readonly priceBps: number; readonly size: number } // YES terms; always post-only

export type StopReason = "stop_loss" | "take_profit"

export type Decision =
  | { readonly kind: "hold" }                                        // keep resting quotes as they are
  | { readonly kind: "quote"; readonly quotes: ReadonlyArray<Quote> } // cancel resting quotes, place these
  | { readonly kind: "pause"; readonly reason: "inventory_skew" }     // cancel all; quote nothing until skew is back in tolerance
  | { readonly kind: "stop"; readonly reason: StopReason }            // cancel all; terminal

/** Plain JSON (numbers, booleans, strings, null) so callers can snapshot and restore it verbatim. */
export interface StrategyState {
  readonly startedSec: number
  /** When the last "quote" decision was made; null = quote at the next chance (start, after a pause). */
  readonly lastQuoteSec: number | null
  /** Latest non-null mid seen on any step: the fallback when the book goes empty. */
  readonly lastMidBps: number | null
  /** The mid the last re-quote was built on: the reference for the next |Δmid|. */
  readonly quotedMidBps: number | null
  /** Realised volatility, integer bps: vol' = floor((3·vol + |Δmid|) / 4) at each re-quote. */
  readonly volBps: number
  readonly paused: boolean
  readonly stopped: StopReason | null
}

export interface StepResult { readonly state: StrategyState; readonly decision: Decision }

export interface Strategy {
  readonly params: StrategyParams
  init(tsSec: number): StrategyState
  step(state: StrategyState, input: StrategyInput): StepResult
}

export const MIN_QUOTE_BPS = 1
export const MAX_QUOTE_BPS = MAX_PRICE_BPS - 1
export const MAX_LEVELS_PER_SIDE = 10
export const MAX_REBALANCE_INTERVAL_SEC = 86_400
/** Keeps skewLeanBps · maxInventory and maxInventory · 200 far inside the safe-integer range. */
export const MAX_INVENTORY_CONTRACTS = 10_000_000_000
export const MAX_VOL_WIDEN_PCT = 1_000
/** Weight of the newest |Δmid| in the volatility EWMA is 1/VOL_EWMA_DIVISOR. */
export const VOL_EWMA_DIVISOR = 4
export const DEFAULT_REBALANCE_INTERVAL_SEC = 15

const HOLD: Decision = { kind: "hold" }
const PAUSE: Decision = { kind: "pause", reason: "inventory_skew" }

const clamp = (x: number, lo: number, hi: number): number => (x < lo ? lo : x > hi ? hi : x)
const isIntIn = (x: unknown, lo: number, hi: number): boolean =>
  typeof x === "number" && Number.isSafeInteger(x) && x >= lo && x <= hi

/**
 * A YES-terms quote is placed either in YES terms (price p) or as the opposite NO order
 * (price 10000 − p), depending on holdings (see quotes.ts). Dropping it when either form is
 * dust (size · price · 100 < 10,000 micro) means the exchange never sees a dust order from us.
 */
export const isDustQuote = (size: number, priceBps: number): boolean =>
  size * Math.min(priceBps, MAX_PRICE_BPS - priceBps) * MICRO_PER_BPS < MIN_NOTIONAL_MICRO

const RULES: ReadonlyArray<readonly [keyof StrategyParams, number, number]> = [
  ["spreadBps", 2, MAX_QUOTE_BPS - MIN_QUOTE_BPS],
  ["levelsPerSide", 1, MAX_LEVELS_PER_SIDE],
  ["levelStepBps", 1, MAX_QUOTE_BPS - MIN_QUOTE_BPS],
  ["contractsPerLevel", 1, MAX_ORDER_SIZE],
  ["rebalanceIntervalSec", 1, MAX_REBALANCE_INTERVAL_SEC],
  ["maxInventory", 1, MAX_INVENTORY_CONTRACTS],
  ["skewLeanBps", 0, MAX_QUOTE_BPS - MIN_QUOTE_BPS],
  ["skewTolerancePct", 1, 100],
  ["volWidenPct", 0, MAX_VOL_WIDEN_PCT],
  ["stopLossMicro", 0, MAX_AMOUNT_MICRO],
  ["takeProfitMicro", 0, MAX_AMOUNT_MICRO]
]

/** The valid range of each parameter, for callers that map errors to their own field names. */
export const PARAM_RANGES: Readonly<Record<keyof StrategyParams, readonly [number, number]>> = Object.fromEntries(
  RULES.map(([k, lo, hi]) => [k, [lo, hi] as const])
) as Record<keyof StrategyParams, readonly [number, number]>

/** null = ok; otherwise a message that starts with the offending field's name. */
export const validateParams = (p: StrategyParams): string | null => {
  for (const [field, lo, hi] of RULES) {
    if (!isIntIn(p[field], lo, hi)) return `${field} must be an integer in ${lo}..${hi} (got ${String(p[field])})`
  }
  return null
}

/** Centre shift, bps: skewLeanBps · clamp(netYes, ±maxInventory) / maxInventory, truncated toward zero so ±inventory lean symmetrically. Long YES → positive → centre moves down. */
export const leanBps = (p: StrategyParams, netYes: number): number =>
  Math.trunc((p.skewLeanBps * clamp(Math.trunc(netYes), -p.maxInventory, p.maxInventory)) / p.maxInventory)

/** Extra half-spread from volatility, floored: volBps · volWidenPct / 100. */
export const volWidenBps = (p: StrategyParams, volBps: number): number => Math.floor((volBps * p.volWidenPct) / 100)

/** Next volatility estimate, floored so that a still market decays it to exactly 0. */
export const nextVolBps = (volBps: number, prevMidBps: number | null, midBps: number): number =>
  prevMidBps === null ? volBps : Math.floor(((VOL_EWMA_DIVISOR - 1) * volBps + Math.abs(midBps - prevMidBps)) / VOL_EWMA_DIVISOR)

/**
 * The ladder around `midBps`:
 *   centre = mid − lean;  bid0 = centre − floor(spread/2) − widen;  ask0 = bid0 + spread + 2·widen
 * bid0 is clamped into 1..9998 and ask0 into 2..9999 (each side keeps its innermost quote at the
 * most conservative legal price instead of vanishing), which can never make bid0 ≥ ask0.
 * Level i sits i·levelStepBps further out; levels past 1 / 9999 and dust levels are dropped.
 * Order: bids best first, then asks best first.
 */
export const computeQuotes = (p: StrategyParams, midBps: number, netYes: number, volBps: number): Quote[] => {
  const widen = volWidenBps(p, volBps)
  const bidRaw = midBps - leanBps(p, netYes) - Math.floor(p.spreadBps / 2) - widen
  const askRaw = bidRaw + p.spreadBps + 2 * widen
  const bid0 = clamp(bidRaw, MIN_QUOTE_BPS, MAX_QUOTE_BPS - 1)
  const ask0 = clamp(askRaw, MIN_QUOTE_BPS + 1, MAX_QUOTE_BPS)
  const size = p.contractsPerLevel
  const bids: Quote[] = []
  const asks: Quote[] = []
  for (let i = 0; i < p.levelsPerSide; i++) {
    const bid = bid0 - i * p.levelStepBps
    if (bid >= MIN_QUOTE_BPS && !isDustQuote(size, bid)) bids.push({ side: "bid", priceBps: bid, size })
    const ask = ask0 + i * p.levelStepBps
    if (ask <= MAX_QUOTE_BPS && !isDustQuote(size, ask)) asks.push({ side: "ask", priceBps: ask, size })
  }
  return [...bids, ...asks]
}

/** A fractional mid (e.g. (bid+ask)/2) is rounded half up to whole bps and clamped to 0..10000; non-finite counts as no mid. */
const normaliseMid = (midBps: number | null): number | null =>
  midBps === null || !Number.isFinite(midBps) ? null : clamp(Math.round(midBps), 0, MAX_PRICE_BPS)

const stopReasonFor = (p: StrategyParams, pnlMicro: number): StopReason | null => {
  if (p.stopLossMicro > 0 && pnlMicro <= -p.stopLossMicro) return "stop_loss"
  if (p.takeProfitMicro > 0 && pnlMicro >= p.takeProfitMicro) return "take_profit"
  return null
}

export const initState = (tsSec: number): StrategyState => ({
  startedSec: tsSec,
  lastQuoteSec: null,
  lastMidBps: null,
  quotedMidBps: null,
  volBps: 0,
  paused: false,
  stopped: null
})

/**
 * One step, in this order:
 * 1. stopped → "stop" again (terminal; repeating it is harmless for the caller).
 * 2. stop-loss, then take-profit → "stop".
 * 3. not paused and |netYes|·100 > maxInventory·pct → "pause" (once; then "hold" while paused).
 *    paused and |netYes|·200 < maxInventory·pct → resume and re-quote at once.
 * 4. re-quote when never quoted (or resumed) or tsSec − lastQuoteSec ≥ rebalanceIntervalSec,
 *    and some mid is known; otherwise "hold".
 */
export const stepStrategy = (p: StrategyParams, prev: StrategyState, input: StrategyInput): StepResult => {
  if (prev.stopped !== null) return { state: prev, decision: { kind: "stop", reason: prev.stopped } }
  const mid = normaliseMid(input.midBps)
  const seen: StrategyState = mid === null ? prev : { ...prev, lastMidBps: mid }

  const stop = stopReasonFor(p, input.pnlMicro)
  if (stop !== null) return { state: { ...seen, stopped: stop, lastQuoteSec: null }, decision: { kind: "stop", reason: stop } }

  // Integer hysteresis: pause above tolerance, resume only below half of it, so one fill cannot flap the bot.
  const absNet100 = Math.abs(input.netYes) * 100
  const tolerance100 = p.maxInventory * p.skewTolerancePct
  let state = seen
  if (!state.paused && absNet100 > tolerance100) {
    return { state: { ...state, paused: true, lastQuoteSec: null }, decision: PAUSE }
  }
  if (state.paused) {
    if (absNet100 * 2 >= tolerance100) return { state, decision: HOLD }
    state = { ...state, paused: false }
  }

  const due = state.lastQuoteSec === null || input.tsSec - state.lastQuoteSec >= p.rebalanceIntervalSec
  const quoteMid = state.lastMidBps
  if (!due || quoteMid === null) return { state, decision: HOLD }
  const volBps = nextVolBps(state.volBps, state.quotedMidBps, quoteMid)
  const quotes = computeQuotes(p, quoteMid, input.netYes, volBps)
  return {
    state: { ...state, lastQuoteSec: input.tsSec, quotedMidBps: quoteMid, volBps },
    decision: { kind: "quote", quotes }
  }
}

/** Throws on invalid params: callers validate user input first (validateParams / parseStrategySpec). */
export const makeStrategy = (params: StrategyParams): Strategy => {
  const error = validateParams(params)
  if (error !== null) throw new RangeError(`invalid strategy params: ${error}`)
  const frozen: StrategyParams = Object.freeze({ ...params })
  return {
    params: frozen,
    init: initState,
    step: (state, input) => stepStrategy(frozen, state, input)
  }
}
