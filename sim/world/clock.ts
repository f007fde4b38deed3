// The scheduler as the service's clocks. As an Effect `Clock` it hands the service its wall
// time the way `npm start` does (src/main.ts reads `Clock.unsafeCurrentTimeMillis`), only
// from a virtual clock that can be stepped (Scheduler.stepWall); its `sleep` and the
// `MonoClock` below run on virtual time itself, the monotonic clock no step moves. Effect's
// own TestClock would do, but each `adjust` yields to the real event loop (~4 ms here), far
// too slow to step a simulated day event by event; this clock moves only when the scheduler
// takes its next event (docs/decisions.md).
import { Clock, Duration, Effect } from "effect"
import type { MonoClock } from "../../src/time/clock.ts"
import type { Rng } from "./random.ts"
import type { Scheduler } from "./scheduler.ts"

export const schedulerClock = (s: Scheduler): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => s.wallMs(),
  currentTimeMillis: Effect.sync(() => s.wallMs()),
  unsafeCurrentTimeNanos: () => BigInt(s.wallMs()) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(s.wallMs()) * 1_000_000n),
  sleep: (duration) =>
    Effect.async<void>((resume) => {
      const timer = s.after(Duration.toMillis(duration), () => resume(Effect.void))
      return Effect.sync(() => timer.cancel())
    })
})

/** The sim layer of the monotonic clock: virtual time. */
export const schedulerMonoClock = (s: Scheduler): MonoClock => ({ monoMs: () => s.nowMs() })

/** A wall-clock step at `atSec` into the run, by `bySec` (negative: back). */
export interface ClockStepSpec {
  readonly at: number
  readonly by: number
}

export interface RandomClockSteps {
  /** Mean seconds between steps (exponential). */
  readonly every: number
  /** Largest step back and forward, seconds. */
  readonly max_back: number
  readonly max_forward: number
  /** Each step is undone (the clock comes back) this many seconds later; 0 leaves it. */
  readonly revert_after: number
}

/**
 * The scenario's wall-clock steps, fixed and drawn from the seed: each at its virtual time,
 * noted through `note`. Random steps alternate direction at random and come back after
 * `revert_after`, so the wall clock wanders both ways around true time.
 */
export const scheduleClockSteps = (
  s: Scheduler,
  rng: Rng,
  startMs: number,
  durationSec: number,
  steps: ReadonlyArray<ClockStepSpec>,
  random: RandomClockSteps | undefined,
  note: (atSec: number, bySec: number) => void
): void => {
  const step = (bySec: number): void => {
    s.stepWall(bySec * 1000)
    note((s.nowMs() - startMs) / 1000, bySec)
  }
  for (const f of steps) s.at(startMs + f.at * 1000, () => step(f.by), true)
  if (random === undefined) return
  const endMs = startMs + durationSec * 1000
  for (let t = startMs; ; ) {
    t += rng.exponential(random.every * 1000)
    if (t >= endMs) break
    const bySec = rng.chance(0.5) ? -rng.int(1, Math.max(1, random.max_back)) : rng.int(1, Math.max(1, random.max_forward))
    s.at(t, () => step(bySec), true)
    if (random.revert_after > 0) s.at(t + random.revert_after * 1000, () => step(-bySec), true)
  }
}
