// The clock layers (src/time/clock.ts, sim/world/clock.ts): the step detector's thresholds, and the
// simulator's wall clock stepping while its monotonic clock (virtual time) runs on.
import { describe, expect, it } from "vitest"
import { ClockWatch, STEP_BACK_MS, STEP_FORWARD_MS } from "../../src/time/clock.ts"
import { schedulerClock, schedulerMonoClock } from "../../sim/world/clock.ts"
import { Scheduler } from "../../sim/world/scheduler.ts"

const clocks = () => {
  const c = { wall: 1_000_000, mono: 0 }
  const events: Array<Readonly<Record<string, unknown>>> = []
  const watch = new ClockWatch(() => c.wall, () => c.mono, (e) => void events.push(e))
  const pass = (ms: number) => {
    c.wall += ms
    c.mono += ms
  }
  return { c, events, watch, pass }
}

describe("ClockWatch", () => {
  it("takes exactly 1 s back or 60 s forward as drift, and anything beyond as one step, logged once", () => {
    const { c, events, watch, pass } = clocks()
    expect(watch.check()).toBeNull() // the first check only sets the baseline
    pass(1_000)
    c.wall -= STEP_BACK_MS
    expect(watch.check()).toBeNull()
    pass(1_000)
    c.wall += STEP_FORWARD_MS
    expect(watch.check()).toBeNull()
    pass(1_000)
    c.wall -= STEP_BACK_MS + 1
    expect(watch.check()).toMatchObject({ direction: "back", stepMs: -(STEP_BACK_MS + 1) })
    pass(1_000)
    expect(watch.check()).toBeNull() // the same step is not reported again
    c.wall += STEP_FORWARD_MS + 1
    expect(watch.check()).toMatchObject({ direction: "forward", stepMs: STEP_FORWARD_MS + 1 })
    expect(events.map((e) => [e.event, e.direction, e.step_ms])).toEqual([
      ["clock_step", "back", -(STEP_BACK_MS + 1)],
      ["clock_step", "forward", STEP_FORWARD_MS + 1]
    ])
    expect(watch.status(c.wall)).toMatchObject({ steps_detected: 2, last_step: { direction: "forward" }, wall_minus_journal_ms: 0 })
  })

  it("never takes slow slewing for a step, however far it adds up", () => {
    const { c, watch, pass } = clocks()
    watch.check()
    for (let i = 0; i < 3_600; i++) {
      pass(1_000)
      c.wall -= 900 // 0.9 s slow every second: an hour later the wall clock is 54 minutes behind
      expect(watch.check()).toBeNull()
    }
    expect(watch.stepsDetected).toBe(0)
  })
})

describe("the simulator's clocks", () => {
  it("steps the wall clock (the Effect Clock the service reads) while virtual time, the monotonic clock, runs on", async () => {
    const s = new Scheduler(1_000_000)
    const wall = schedulerClock(s)
    const mono = schedulerMonoClock(s)
    const seen: Array<[number, number]> = []
    s.at(1_010_000, () => s.stepWall(-120_000), true)
    s.at(1_020_000, () => s.stepWall(3_600_000), true)
    for (const at of [1_005_000, 1_015_000, 1_025_000]) s.at(at, () => void seen.push([wall.unsafeCurrentTimeMillis(), mono.monoMs()]), true)
    await s.run(1_030_000)
    expect(seen).toEqual([
      [1_005_000, 1_005_000],
      [1_015_000 - 120_000, 1_015_000],
      [1_025_000 + 3_480_000, 1_025_000]
    ])
  })
})
