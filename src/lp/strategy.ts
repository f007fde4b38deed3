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
  // Paused on inventory skew: cancel resting quotes, place these (only the inventory-reducing side, at
  // most the excess over the resume level; may be empty). Same handling as "quote": only the label differs.
  | { readonly kind: "pause"; readonly reason: "inventory_skew"; readonly quotes: ReadonlyArray<Quote> }
  | { readonly kind: "stop"; readonly reason: StopReason }            // cancel all; terminal

/** Plain JSON (numbers, booleans, strings, null) so callers can snapshot and restore it verbatim. */
export interface StrategyState {
  readonly startedSec: number
  /** When the last re-quote ("quote", or "pause" with its unwinding quotes) was made; null = re-quote at the next chance (start, pause, resume). */
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

/** Innermost bid and ask, clamped into 1..9998 and 2..9999, which can never make bid0 ≥ ask0. */
const innermost = (p: StrategyParams, midBps: number, netYes: number, volBps: number): { bid0: number; ask0: number } => {
  const widen = volWidenBps(p, volBps)
  const bidRaw = midBps - leanBps(p, netYes) - Math.floor(p.spreadBps / 2) - widen
  const askRaw = bidRaw + p.spreadBps + 2 * widen
  return { bid0: clamp(bidRaw, MIN_QUOTE_BPS, MAX_QUOTE_BPS - 1), ask0: clamp(askRaw, MIN_QUOTE_BPS + 1, MAX_QUOTE_BPS) }
}

/**
 * The ladder around `midBps`:
 *   centre = mid − lean;  bid0 = centre − floor(spread/2) − widen;  ask0 = bid0 + spread + 2·widen
 * bid0 is clamped into 1..9998 and ask0 into 2..9999 (each side keeps its innermost quote at the
 * most conservative legal price instead of vanishing), which can never make bid0 ≥ ask0.
 * Level i sits i·levelStepBps further out; levels past 1 / 9999 and dust levels are dropped.
 * Order: bids best first, then asks best first.
 */
export const computeQuotes = (p: StrategyParams, midBps: number, netYes: number, volBps: number): Quote[] => {
  const { bid0, ask0 } = innermost(p, midBps, netYes, volBps)
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

/**
 * The largest |netYes| at which a paused strategy resumes: |netYes|·200 < maxInventory·skewTolerancePct
 * ⇔ |netYes| ≤ floor((maxInventory·skewTolerancePct − 1) / 200). Never negative (both factors ≥ 1).
 */
export const resumeInventory = (p: StrategyParams): number => Math.floor((p.maxInventory * p.skewTolerancePct - 1) / 200)

/**
 * A paused strategy's quotes: the inventory-reducing side of `computeQuotes`' ladder (long YES →
 * asks, long NO → bids), at the same skew-leaned prices, best first, with the sizes capped so
 * that together they come to at most the excess |netYes| − resumeInventory. Filling all of them
 * therefore lands exactly on the resume level and can never flip the position; nothing adds to
 * the skew. Each level takes min(contractsPerLevel, what is left); a level past 1 / 9999 or dust
 * at its capped size is dropped and leaves its contracts to the next one.
 */
export const computeUnwindQuotes = (p: StrategyParams, midBps: number, netYes: number, volBps: number): Quote[] => {
  const net = Math.trunc(netYes)
  let left = Math.abs(net) - resumeInventory(p)
  if (net === 0 || left <= 0) return []
  const { bid0, ask0 } = innermost(p, midBps, net, volBps)
  const out: Quote[] = []
  for (let i = 0; i < p.levelsPerSide && left > 0; i++) {
    const size = Math.min(p.contractsPerLevel, left)
    const q: Quote = net > 0 ? { side: "ask", priceBps: ask0 + i * p.levelStepBps, size } : { side: "bid", priceBps: bid0 - i * p.levelStepBps, size }
    if (q.priceBps < MIN_QUOTE_BPS || q.priceBps > MAX_QUOTE_BPS) break // deeper levels are further out still
    if (isDustQuote(size, q.priceBps)) continue
    out.push(q)
    left -= size
  }
  return out
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
 * 3. not paused and |netYes|·100 > maxInventory·pct → pause and re-quote at once;
 *    paused and |netYes|·200 < maxInventory·pct → resume and re-quote at once.
 * 4. re-quote when never quoted (or just paused/resumed) or tsSec − lastQuoteSec ≥ rebalanceIntervalSec,
 *    and some mid is known: "quote" with the ladder, or while paused "pause" with only the unwinding
 *    side (computeUnwindQuotes); otherwise "hold" — except that entering a pause with no mid known
 *    still answers "pause" with no quotes, so the two-sided ladder never keeps adding to the skew.
 */
export const stepStrategy = (p: StrategyParams, prev: StrategyState, input: StrategyInput): StepResult => {
  if (prev.stopped !== null) return { state: prev, decision: { kind: "stop", reason: prev.stopped } }
  const mid = normaliseMid(input.midBps)
  const seen: StrategyState = mid === null ? prev : { ...prev, lastMidBps: mid }

  const stop = stopReasonFor(p, input.pnlMicro)
  if (stop !== null) return { state: { ...seen, stopped: stop, lastQuoteSec: null }, decision: { kind: "stop", reason: stop } }

  // Integer hysteresis: pause above tolerance, resume only below half of it, so one fill cannot flap the bot.
  // Either transition re-quotes at once: the resting ladder was built for the other regime.
  const absNet100 = Math.abs(input.netYes) * 100
  const tolerance100 = p.maxInventory * p.skewTolerancePct
  let state = seen
  const entering = !state.paused && absNet100 > tolerance100
  if (entering) state = { ...state, paused: true, lastQuoteSec: null }
  else if (state.paused && absNet100 * 2 < tolerance100) state = { ...state, paused: false, lastQuoteSec: null }

  const due = state.lastQuoteSec === null || input.tsSec - state.lastQuoteSec >= p.rebalanceIntervalSec
  const quoteMid = state.lastMidBps
  if (!due || quoteMid === null) {
    return { state, decision: entering ? { kind: "pause", reason: "inventory_skew", quotes: [] } : HOLD }
  }
  // A paused re-quote is a re-quote like any other (cadence, volatility EWMA), just one-sided.
  const volBps = nextVolBps(state.volBps, state.quotedMidBps, quoteMid)
  const next: StrategyState = { ...state, lastQuoteSec: input.tsSec, quotedMidBps: quoteMid, volBps }
  if (state.paused) {
    return { state: next, decision: { kind: "pause", reason: "inventory_skew", quotes: computeUnwindQuotes(p, quoteMid, input.netYes, volBps) } }
  }
  return { state: next, decision: { kind: "quote", quotes: computeQuotes(p, quoteMid, input.netYes, volBps) } }
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
