// The service's background workers (deposit watcher + payout worker, LP-bot runner, snapshotter,
// history projector) as one shape: a named pass and its period. Each is a fiber forked in the
// service's Scope and repeated on `Schedule.fixed`'s rule (`forkWorker`): one pass at a time by
// construction, and closing the Scope interrupts the fiber, which waits for the pass in
// flight (a pass is uninterruptible) — so the finalizers after it (the journal's close) never race a
// pass. The same fibers run in a simulated world, on its scheduler's Clock and Effect Scheduler
// (sim/world/world.ts), so no real timer fires there (docs/runtime.md).
import { Duration, Effect, type Scope } from "effect"

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
 * `Schedule.fixed(everyMs)`'s rule (effect 3.22, internal/schedule.ts), as a plain function of the
 * time read after each pass: how long to wait before the next one. The first wait is a whole
 * period, counted from the end of the first pass; later passes keep to that start's period
 * boundaries, and a pass that ran over by more than a period is followed at once (no pile-up).
 */
export const fixedRate = (everyMs: number): ((nowMs: number) => number) => {
  let startMs: number | null = null
  let lastRunMs = 0
  return (nowMs) => {
    if (startMs === null) {
      startMs = nowMs
      lastRunMs = nowMs + everyMs
      return everyMs
    }
    const boundaryMs = everyMs - ((nowMs - startMs) % everyMs)
    const nextRunMs = nowMs > lastRunMs + everyMs ? nowMs : nowMs + (boundaryMs === 0 ? everyMs : boundaryMs)
    lastRunMs = nextRunMs
    return nextRunMs - nowMs
  }
}

/**
 * The worker's fiber: the first pass one period after start, then every period; lives as long as
 * the enclosing Scope. Its schedule reads `monoMs` (the service's MonoClockService), so it follows
 * elapsed time, never a wall-clock step; the sleeps are the ambient Clock's. The loop is
 * `Effect.repeat(Schedule.fixed(…))` written out: the same pass times (the golden hashes did not
 * move), at a quarter of the cost per pass — the schedule
 * driver's state, iteration metadata and a Clock provided per pass made a no-op pass cost ~38 µs
 * in the simulator against ~9 µs here, ~6 s of every simulated day with four workers.
 */
export const forkWorker = (w: Worker, onError: (err: unknown) => void, monoMs: () => number): Effect.Effect<void, never, Scope.Scope> =>
  Effect.clockWith((clock) => {
    const nextWaitMs = fixedRate(w.everyMs)
    // A wait of 0 (running behind) does not sleep at all, as the schedule's driver does not.
    const wait = Effect.suspend(() => {
      const ms = nextWaitMs(monoMs())
      return ms > 0 ? clock.sleep(Duration.millis(ms)) : Effect.void
    })
    return clock.sleep(Duration.millis(w.everyMs)).pipe(
      Effect.zipRight(Effect.forever(Effect.zipRight(workerPass(w, onError), wait))),
      Effect.forkScoped,
      Effect.asVoid
    )
  })
