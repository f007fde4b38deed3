// The service's background workers (deposit watcher + payout worker, LP-bot runner, snapshotter,
// history projector) as one shape: a named pass and its period. Each is a fiber forked in the
// service's Scope and repeated by a `Schedule` (`forkWorker`): `Effect.repeat` runs one pass at a
// time by construction, and closing the Scope interrupts the fiber, which waits for the pass in
// flight (a pass is uninterruptible) — so the finalizers after it (the journal's close) never race a
// pass. The same fibers run in a simulated world, on its scheduler's Clock and Effect Scheduler
// (sim/world.ts), so no real timer fires there (docs/runtime.md).
import { Clock, Duration, Effect, Schedule, type Scope } from "effect"

export interface Worker {
  /** For errors and docs: "chain", "lp", "snapshot", "history". */
  readonly name: string
  /** One pass. Failures are reported, never end the worker: the next pass retries. */
  readonly pass: Effect.Effect<unknown, unknown>
  /** Between the starts of two passes, as `setInterval` did; a pass running over its period is never overlapped (the next follows within a period). */
  readonly everyMs: number
}

/** A worker whose pass is a plain async step. */
export const stepWorker = (name: string, everyMs: number, step: () => Promise<unknown>): Worker => ({
  name,
  everyMs,
  pass: Effect.tryPromise({ try: step, catch: (err) => err })
})

/** One pass as an Effect: uninterruptible (a pass is never cut in half), its failure handed to `onError`. */
export const workerPass = (w: Worker, onError: (err: unknown) => void): Effect.Effect<void> =>
  w.pass.pipe(
    Effect.catchAll((e) => Effect.sync(() => onError(e))),
    Effect.asVoid,
    Effect.uninterruptible
  )

/**
 * The ambient Clock with its reading taken from a monotonic clock: `Schedule.fixed` computes each
 * next pass from the Clock's reading, and Effect's default one reads the system's wall time, which an operator
 * or NTP may step (docs/time.md). The sleeps stay the ambient Clock's (live: timers; simulated: the
 * scheduler's virtual time).
 */
const monotonicClock = (ambient: Clock.Clock, monoMs: () => number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: monoMs,
  currentTimeMillis: Effect.sync(monoMs),
  unsafeCurrentTimeNanos: () => BigInt(Math.round(monoMs() * 1_000_000)),
  currentTimeNanos: Effect.sync(() => BigInt(Math.round(monoMs() * 1_000_000))),
  sleep: (d) => ambient.sleep(d)
})

/**
 * The worker's fiber: the first pass one period after start, then every period; lives as long as
 * the enclosing Scope. With `monoMs` (the service's MonoClockService) its schedule follows elapsed
 * time, never a wall-clock step.
 */
export const forkWorker = (w: Worker, onError: (err: unknown) => void, monoMs?: () => number): Effect.Effect<void, never, Scope.Scope> =>
  Effect.clockWith((ambient) =>
    workerPass(w, onError).pipe(
      Effect.repeat(Schedule.fixed(Duration.millis(w.everyMs))),
      Effect.delay(Duration.millis(w.everyMs)),
      monoMs === undefined ? (e) => e : Effect.withClock(monotonicClock(ambient, monoMs)),
      Effect.forkScoped,
      Effect.asVoid
    )
  )
