// A simulated process's Effect runtime (sim/world/process-runtime.ts) dies with the process: once
// `alive` says no, none of its fibers' timers fires and none of its tasks runs, which is what lets
// a crash abandon the process's Scope instead of closing it (docs/runtime.md "In the simulator").
import { Effect, Schedule } from "effect"
import { describe, expect, it } from "vitest"
import { processRuntime } from "../../sim/world/process-runtime.ts"
import { Scheduler } from "../../sim/world/scheduler.ts"

describe("a simulated process's runtime", () => {
  it("runs a scheduled fiber on virtual time, and nothing of it once the process is dead", async () => {
    const s = new Scheduler(0)
    let alive = true
    const rt = processRuntime(s, () => alive)
    const passesAtMs: number[] = []
    // Forked synchronously, as World.start boots a process with Effect.runSync.
    Effect.runSync(
      Effect.forkDaemon(Effect.repeat(Effect.sync(() => void passesAtMs.push(s.nowMs())), Schedule.spaced("1 second"))).pipe(
        Effect.withClock(rt.clock),
        Effect.withScheduler(rt.scheduler)
      )
    )
    // The first pass ran inside the fork, at once: no scheduler event was needed for it.
    expect(passesAtMs).toEqual([0])
    await s.run(3_500)
    expect(passesAtMs).toEqual([0, 1_000, 2_000, 3_000])
    alive = false
    await s.run(10_000)
    expect(passesAtMs).toEqual([0, 1_000, 2_000, 3_000])
  })
})
