// The service's two kinds of time (docs/time.md):
//  * durations (rate-limit refill, cache TTLs, timeouts, worker schedules, latency figures)
//    run on the monotonic clock, `monoMs`, which a wall-clock step never moves;
//  * business time (trade and order timestamps, candles, rewards days, payouts) is the
//    journal's time (Exchange.journalMs): the wall clock, slewed across its steps on this
//    monotonic clock (./business-clock.ts), where the wall clock enters, once.
// `MonoClock` is a plain interface today, like the `nowMs` callback, so issue #12 can lift
// it into an Effect tag: `liveMonoClock` is its live layer, sim/world/clock.ts its simulated one.

/** Milliseconds on a clock that only ever moves forward at the rate of real (or virtual) time; its origin means nothing. */
export interface MonoClock {
  readonly monoMs: () => number
}

export const liveMonoClock: MonoClock = {
  monoMs: () => performance.now() // live-only: the process's monotonic clock (the simulator passes the scheduler's)
}

/** The wall clock moved back by more than this against the monotonic clock: a step. */
export const STEP_BACK_MS = 1_000
/** The wall clock moved forward by more than this beyond the elapsed monotonic time: a step. */
export const STEP_FORWARD_MS = 60_000

export interface ClockStep {
  readonly direction: "back" | "forward"
  /** Wall-clock movement beyond the elapsed monotonic time (negative when back). */
  readonly stepMs: number
  readonly atWallMs: number
  readonly atMonoMs: number
}

/** Operator status (GET /v1/admin/clock, docs/api.md). */
export interface ClockStatus {
  readonly wall_ms: number
  readonly mono_ms: number
  readonly journal_ms: number
  /** The wall clock minus the journal's time: negative while the wall clock is behind the journal. */
  readonly wall_minus_journal_ms: number
  readonly steps_detected: number
  readonly last_step: { readonly direction: "back" | "forward"; readonly step_ms: number; readonly at_wall_ms: number } | null
  readonly thresholds: { readonly back_ms: number; readonly forward_ms: number }
}

/**
 * Notices wall-clock steps: between two checks the wall clock should move by the monotonic
 * time elapsed. A difference beyond the thresholds is a step, logged once (the offset is
 * re-based at every check, so slow NTP slewing never adds up to a false step).
 */
export class ClockWatch {
  private offsetMs: number | null = null
  stepsDetected = 0
  lastStep: ClockStep | null = null

  constructor(
    private readonly wallMs: () => number,
    private readonly monoMs: () => number,
    private readonly log: (event: Readonly<Record<string, unknown>>) => void = () => {}
  ) {}

  /** Compares the clocks once; returns the step when this check found one. */
  check(): ClockStep | null {
    const wall = this.wallMs() // live-only: step detection compares the wall clock with the monotonic one
    const mono = this.monoMs()
    const offset = wall - mono
    const previous = this.offsetMs
    this.offsetMs = offset
    if (previous === null) return null
    const stepMs = offset - previous
    if (stepMs >= -STEP_BACK_MS && stepMs <= STEP_FORWARD_MS) return null
    const step: ClockStep = { direction: stepMs < 0 ? "back" : "forward", stepMs, atWallMs: wall, atMonoMs: mono }
    this.stepsDetected++
    this.lastStep = step
    this.log({
      event: "clock_step",
      direction: step.direction,
      step_ms: Math.round(stepMs),
      wall_ms: wall,
      // Signed timestamps are checked against this clock: a wrong one refuses fresh ones (docs/time.md).
      note: "durations run on the monotonic clock and business time on the journal; signed client timestamps are still checked against the wall clock"
    })
    return step
  }

  status(journalMs: number): ClockStatus {
    this.check()
    const wall = this.wallMs() // live-only: the operator status shows the wall clock as read
    const last = this.lastStep
    return {
      wall_ms: wall,
      mono_ms: Math.round(this.monoMs()),
      journal_ms: journalMs,
      wall_minus_journal_ms: wall - journalMs,
      steps_detected: this.stepsDetected,
      last_step: last === null ? null : { direction: last.direction, step_ms: Math.round(last.stepMs), at_wall_ms: last.atWallMs },
      thresholds: { back_ms: STEP_BACK_MS, forward_ms: STEP_FORWARD_MS }
    }
  }
}
