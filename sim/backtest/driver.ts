// Our strategy driven as the live bot is: a step when it could answer anything but `hold`, each
// decision sent as one batch that reaches the exchange after the order-entry latency (FIFO), and
// applied there as the bot runner's step (`lp_bot_step`, then the new quotes post-only).
import type { ActingDecision } from "../../src/service/lp-bot-step.ts"
import type { Decision, StrategyInput, StrategyState } from "../../src/lp/strategy.ts"
import type { LatencySpec } from "./config.ts"
import type { ResponseFlow } from "./response/flow.ts"
import type { Rng } from "../world/random.ts"
import type { MarketState, Venue } from "./venue.ts"

/** One latency draw: the base plus an exponential jitter, whole ms. */
export const latencyMs = (spec: LatencySpec, rng: Rng): number => spec.baseMs + Math.round(rng.exponential(spec.jitterMs))

interface Batch {
  readonly atMs: number
  readonly ms: MarketState
  /** The acting decision, journaled as the bot runner journals it when the batch arrives. */
  readonly decision: ActingDecision
  readonly state: StrategyState
}

export interface DriverOptions {
  /** Step on every feed delivery instead of only when the strategy could act (tests: same result). */
  readonly everyStep: boolean
  readonly onStep?: ((marketId: string, input: StrategyInput, decision: Decision) => void) | undefined
}

export class BotDriver {
  private readonly batches: Batch[] = []
  private bp = 0
  private lastEntryAt = 0
  private readonly ticked = new Set<MarketState>()
  /** The earliest market timer (re-quote cadence), +∞ without one. */
  minTimerMs: number

  constructor(
    private readonly v: Venue,
    private readonly markets: ReadonlyArray<MarketState>,
    private readonly response: ResponseFlow | null,
    private readonly entry: { readonly spec: LatencySpec; readonly rng: Rng },
    /** Nothing is stepped before it: the bot's start, or the first tick after it for a ticked bot. */
    readonly firstStepMs: number,
    /** The bot's tick (0: it steps on each delivery). */
    private readonly tickMs: number,
    private readonly opts: DriverOptions
  ) {
    this.minTimerMs = markets.some((ms) => ms.quoting) ? firstStepMs : Number.POSITIVE_INFINITY
  }

  /** When the next batch reaches the exchange, +∞ without one. */
  get nextBatchMs(): number {
    return this.bp < this.batches.length ? this.batches[this.bp]!.atMs : Number.POSITIVE_INFINITY
  }

  /** The next batch reaches the exchange (the queue is compacted now and then). */
  arriveNext(): void {
    this.arrive(this.batches[this.bp++]!)
    if (this.bp > 4096 && this.bp * 2 > this.batches.length) {
      this.batches.splice(0, this.bp)
      this.bp = 0
    }
  }

  /**
   * A feed delivery at nowMs. A ticked bot steps once per market and tick, on the book as the tick
   * finds it: after the last delivery of that instant (the events it saw applied in order).
   */
  onDelivery(ms: MarketState, nowMs: number, moreAtThisInstant: boolean): void {
    if (this.tickMs === 0) return this.step(ms, nowMs)
    this.ticked.add(ms)
    if (moreAtThisInstant) return
    for (const t of this.ticked) this.step(t, nowMs)
    this.ticked.clear()
  }

  /** Steps every market whose timer is due at nowMs. */
  stepTimers(nowMs: number): void {
    for (const ms of this.markets) if (ms.timerMs === nowMs) this.step(ms, nowMs)
  }

  step(ms: MarketState, nowMs: number): void {
    if (ms.stopReason !== null || !ms.quoting) return
    const tsSec = Math.floor(nowMs / 1000)
    if (ms.obsMid2 >= 0) ms.seenMid2 = ms.obsMid2
    if (nowMs < this.firstStepMs) return
    if (!this.opts.everyStep && !mustStep(ms, tsSec)) return
    const input: StrategyInput = { tsSec, midBps: ms.seenMid2 < 0 ? null : ms.seenMid2 / 2, netYes: ms.obsNetYes, pnlMicro: ms.obsPnlMicro }
    const r = ms.strategy.step(ms.state, input)
    this.opts.onStep?.(ms.id, input, r.decision)
    ms.state = r.state
    const decision = r.decision
    if (decision.kind === "quote") {
      closePause(ms, nowMs)
      ms.requotes++
      this.send(ms, nowMs, decision, r.state)
    } else if (decision.kind === "pause") {
      // Only entering a pause starts the paused clock; every pause decision is a (one-sided) re-quote.
      if (ms.pausedSinceMs < 0) {
        ms.pausedSinceMs = nowMs
        ms.pauses++
      }
      ms.requotes++
      this.send(ms, nowMs, decision, r.state)
    } else if (decision.kind === "stop") {
      closePause(ms, nowMs)
      ms.stopReason = decision.reason
      ms.stoppedAtMs = nowMs
      this.send(ms, nowMs, decision, r.state)
    }
    const timer = ms.stopReason === null && r.state.lastQuoteSec !== null ? (r.state.lastQuoteSec + ms.params.rebalanceIntervalSec) * 1000 : Number.POSITIVE_INFINITY
    if (timer !== ms.timerMs) {
      ms.timerMs = timer
      this.refreshMinTimer()
    }
  }

  private refreshMinTimer(): void {
    this.minTimerMs = Number.POSITIVE_INFINITY
    for (const ms of this.markets) if (ms.timerMs < this.minTimerMs) this.minTimerMs = ms.timerMs
  }

  private send(ms: MarketState, nowMs: number, decision: ActingDecision, state: StrategyState): void {
    this.lastEntryAt = Math.max(this.lastEntryAt, nowMs + latencyMs(this.entry.spec, this.entry.rng))
    this.batches.push({ atMs: this.lastEntryAt, ms, decision, state })
  }

  /**
   * A batch reaches the exchange as the bot runner's step does: `lp_bot_step` (our orders in that
   * market cancelled, the state kept; a stop ends there), then the new quotes as session orders, post-only.
   */
  private arrive(b: Batch): void {
    this.v.at(b.atMs)
    const ms = b.ms
    for (const spec of this.v.botStep(ms, b.decision, b.state)) {
      ms.ordersPlaced++
      if (this.v.placeLp(ms, spec) !== null) ms.quotedContracts += spec.size
    }
    if (b.decision.kind !== "stop") this.response?.refresh(ms, b.atMs)
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

/** Ends a pause at nowMs (its span kept for the report). */
const closePause = (ms: MarketState, nowMs: number): void => {
  if (ms.pausedSinceMs >= 0) {
    ms.pausedMs += nowMs - ms.pausedSinceMs
    ms.pauseSpansMs.push([ms.pausedSinceMs, nowMs])
    ms.pausedSinceMs = -1
  }
}
