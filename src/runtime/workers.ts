// The service's background workers (deposit watcher + payout worker, LP-bot runner, snapshotter,
// history projector) as one shape: a named async step and its period. Live, each is a fiber forked
// in the service's Scope and repeated by a `Schedule` (`forkWorker`): `Effect.repeat` runs one pass
// at a time by construction, and closing the Scope interrupts the fiber, which waits for the pass in
// flight (a pass is uninterruptible) — so the finalizers after it (the journal's close) never race a
// pass. In simulation the scheduler calls the same `step` at virtual times (sim/world.ts), so no
// Effect timer runs inside a simulated world (docs/runtime.md).
import { Duration, Effect, Schedule, type Scope } from "effect"

export interface Worker {
  /** For errors and docs: "chain", "lp", "snapshot", "history". */
  readonly name: string
  /** One pass. Failures are reported, never end the worker: the next pass retries. */
  readonly step: () => Promise<unknown>
  /** Between the starts of two passes, as `setInterval` did; a pass running over its period is never overlapped (the next follows within a period). */
  readonly everyMs: number
}

/** One pass as an Effect: uninterruptible (a pass is never cut in half), its failure handed to `onError`. */
export const workerPass = (w: Worker, onError: (err: unknown) => void): Effect.Effect<void> =>
  Effect.tryPromise(w.step).pipe(
    Effect.catchAll((e) => Effect.sync(() => onError(e.error))),
    Effect.asVoid,
    Effect.uninterruptible
  )

/** The worker's fiber: the first pass one period after start, then every period; lives as long as the enclosing Scope. */
export const forkWorker = (w: Worker, onError: (err: unknown) => void): Effect.Effect<void, never, Scope.Scope> =>
  workerPass(w, onError).pipe(
    Effect.repeat(Schedule.fixed(Duration.millis(w.everyMs))),
    Effect.delay(Duration.millis(w.everyMs)),
    Effect.forkScoped,
    Effect.asVoid
  )
