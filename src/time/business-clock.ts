// Business time (docs/time.md "Business time"): the time every journal record carries, made of
// the wall clock W and the monotonic clock M. It is W while W keeps pace with M. A step of W
// (an NTP step, a clock stepped out and back) is not followed: business time keeps advancing
// with the elapsed monotonic time and is slewed back to W, at no less than half and no more than
// twice the rate of real time. So it never goes back, never stands still and never jumps, and a
// clock that is never stepped gives exactly W (every scenario without steps keeps its hashes).

/** While ahead of the wall clock (it stepped back), business time runs at this rate of real time, so it never stands still. */
export const SLOW_RATE = 0.5
/** While behind (the wall clock stepped forward), at this rate, so a step forward is slewed, never jumped. */
export const FAST_RATE = 2

/** What one reading leaves for the next. */
export interface BusinessTimeState {
  readonly wallMs: number
  readonly monoMs: number
  /** Business time minus the wall clock: 0 unless a step is being slewed away. */
  readonly aheadMs: number
}

/**
 * The state after reading the clocks at (`wallMs`, `monoMs`); business time is `wallMs + aheadMs`
 * of the result. `floorMs` is the last record's time: a first reading starts at
 * max(`floorMs`, wall clock), so a restarted process carries on from its journal as before; after
 * that business time is at or past every record it stamped, and the floor no longer binds.
 */
export const nextBusinessTime = (prev: BusinessTimeState | null, wallMs: number, monoMs: number, floorMs: number): BusinessTimeState => {
  if (prev === null) return { wallMs, monoMs, aheadMs: Math.max(0, floorMs - wallMs) }
  // The monotonic clock never goes back; a caller that gives the wall clock for it (one clock, never
  // stepped) may, and the time it goes back is no time elapsed.
  const elapsedMs = Math.max(0, monoMs - prev.monoMs)
  // The wall clock's movement beyond the elapsed time is a step (or drift): business time keeps
  // the elapsed time instead, so the step becomes offset...
  const steppedMs = prev.aheadMs - (wallMs - prev.wallMs - elapsedMs)
  // ...which is slewed away: ahead, by up to (1 − SLOW_RATE) of the elapsed time; behind, (FAST_RATE − 1).
  const slewedMs = steppedMs > 0 ? Math.max(0, steppedMs - (1 - SLOW_RATE) * elapsedMs) : Math.min(0, steppedMs + (FAST_RATE - 1) * elapsedMs)
  return { wallMs, monoMs, aheadMs: Math.max(slewedMs, floorMs - wallMs) }
}

/** Business time of a state, in whole milliseconds (frames carry it; records its seconds). */
export const businessMsOf = (s: BusinessTimeState): number => Math.floor(s.wallMs + s.aheadMs)

/**
 * The wall clock's one entry into business time (the wall-clock guard in test/determinism): each
 * reading advances the state. Owned by the Exchange (`journalMs`), which passes its last record's time.
 */
export class BusinessClock {
  private state: BusinessTimeState | null = null

  constructor(
    private readonly wallMs: () => number,
    /** The monotonic clock (src/time/clock.ts); the wall clock itself where it is never stepped (replays, tests with one clock). */
    private readonly monoMs: () => number
  ) {}

  /** Business time now, never before `floorMs` (the last record's time). */
  readMs(floorMs: number): number {
    const wall = this.wallMs() // stamp: the wall clock enters business time here and nowhere else
    this.state = nextBusinessTime(this.state, wall, this.monoMs(), floorMs)
    return businessMsOf(this.state)
  }
}
