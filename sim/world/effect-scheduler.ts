// Effect inside a simulated world. Effect's default scheduler runs fiber tasks on microtasks, but
// after 2048 consecutive hops it falls back to a real `setTimeout(0)` (so a busy fiber cannot starve
// the event loop): a real timer inside the world, whose firing order against the scheduler's events
// depends on the machine. Here fiber tasks are events of the simulation's scheduler at the current
// virtual instant instead, and time comes from the scheduler's Clock (sim/world/clock.ts), so an Effect
// run in the world (World.runEffect) is as deterministic as the rest of it.
// Proved by test/sim/no-real-timers.test.ts.
import { Cause, Effect, Exit, Scheduler as EffectScheduler } from "effect"
import { schedulerClock } from "./clock.ts"
import type { Scheduler } from "./scheduler.ts"

/** Fiber tasks as scheduler events at the current virtual instant, in the order they were scheduled. */
export const simEffectScheduler = (s: Scheduler): EffectScheduler.Scheduler => EffectScheduler.make((task) => void s.after(0, task))

/** Runs `effect` on the simulation's scheduler and clock; resolves (or rejects with the original error) when it ends. */
export const runInSim = <A, E>(s: Scheduler, effect: Effect.Effect<A, E>): Promise<A> => {
  const scheduler = simEffectScheduler(s)
  const fiber = Effect.runFork(effect.pipe(Effect.withClock(schedulerClock(s)), Effect.withScheduler(scheduler)), { scheduler })
  return new Promise((resolve, reject) =>
    fiber.addObserver((exit) => (Exit.isSuccess(exit) ? resolve(exit.value) : reject(Cause.squash(exit.cause))))
  )
}
