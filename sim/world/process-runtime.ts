// The Effect runtime of one simulated process: the Clock and the Effect `Scheduler` its fibers
// (the service's workers) run on. Time is the scheduler's virtual time; a fiber task runs at once
// when nothing else of this runtime is running (so a worker's pass starts inside the timer event
// that wakes it, as a live timer callback would), else right after the task in progress. When the
// process dies, its runtime dies with it: no timer of it fires and no task of it runs again, so an
// abandoned Scope leaves nothing behind (a crash runs no finalizer, as `kill -9` would not).
import { type Clock, Duration, Effect, Scheduler as EffectScheduler } from "effect"
import { schedulerClock } from "./clock.ts"
import type { Scheduler } from "./scheduler.ts"

export interface ProcessRuntime {
  readonly clock: Clock.Clock
  readonly scheduler: EffectScheduler.Scheduler
}

/** `alive` is asked at each timer and task. */
export const processRuntime = (s: Scheduler, alive: () => boolean): ProcessRuntime => {
  // The scheduler's Clock (sim/world/clock.ts), its sleeps dead with the process. The workers' schedules
  // read the service's monotonic clock (src/runtime/workers.ts), not this Clock's reading.
  const clock: Clock.Clock = {
    ...schedulerClock(s),
    sleep: (duration) =>
      Effect.async<void>((resume) => {
        const timer = s.after(Duration.toMillis(duration), () => (alive() ? resume(Effect.void) : undefined))
        return Effect.sync(() => timer.cancel())
      })
  }
  // A trampoline: tasks scheduled while one runs wait for it, in order; none runs re-entrantly.
  const queue: Array<() => void> = []
  let running = false
  const scheduler = EffectScheduler.make((task) => {
    if (!alive()) return
    queue.push(task)
    if (running) return
    running = true
    try {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) if (alive()) next()
    } finally {
      running = false
    }
  })
  return { clock, scheduler }
}
