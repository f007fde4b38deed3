// The scheduler as an Effect `Clock`: the simulator hands the service its time the way
// `npm start` does (src/main.ts reads `Clock.unsafeCurrentTimeMillis`), only from a
// virtual clock. Effect's own TestClock would do, but each `adjust` yields to the real
// event loop (~4 ms here), far too slow to step a simulated day event by event; this
// clock moves only when the scheduler takes its next event (docs/decisions.md).
import { Clock, Duration, Effect } from "effect"
import type { Scheduler } from "./scheduler.ts"

export const schedulerClock = (s: Scheduler): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => s.nowMs(),
  currentTimeMillis: Effect.sync(() => s.nowMs()),
  unsafeCurrentTimeNanos: () => BigInt(s.nowMs()) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(s.nowMs()) * 1_000_000n),
  sleep: (duration) =>
    Effect.async<void>((resume) => {
      const timer = s.after(Duration.toMillis(duration), () => resume(Effect.void))
      return Effect.sync(() => timer.cancel())
    })
})
