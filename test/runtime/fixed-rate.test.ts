// forkWorker's loop keeps `Schedule.fixed`'s rule written out (src/runtime/workers.ts fixedRate), so
// the workers pass at the same times as `Effect.repeat(Schedule.fixed(...))` did. Checked here
// against the library's own schedule step, for any period and any pass durations (including passes
// that overrun by more than a period), so an Effect upgrade that changes the rule fails this test.
import { Effect, Schedule, ScheduleDecision, ScheduleIntervals } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { fixedRate } from "../../src/runtime/workers.ts"

/** The waits `Schedule.fixed(everyMs)` asks for after passes ending at `endsMs` (its driver: max(0, start − now)). */
const libraryWaits = (everyMs: number, endsMs: ReadonlyArray<number>): number[] => {
  const schedule = Schedule.fixed(`${everyMs} millis`)
  let state = schedule.initial
  const waits: number[] = []
  for (const now of endsMs) {
    const [next, , decision] = Effect.runSync(schedule.step(now, undefined, state))
    state = next
    if (!ScheduleDecision.isContinue(decision)) throw new Error("fixed never ends")
    waits.push(Math.max(0, ScheduleIntervals.start(decision.intervals) - now))
  }
  return waits
}

/** Pass end times: each pass starts when the previous wait ends and takes `durationsMs[i]`. */
const endsFor = (everyMs: number, durationsMs: ReadonlyArray<number>, waitOf: (nowMs: number) => number): { ends: number[]; waits: number[] } => {
  let nowMs = everyMs // the first pass, one period after the fork
  const ends: number[] = []
  const waits: number[] = []
  for (const d of durationsMs) {
    nowMs += d
    ends.push(nowMs)
    const wait = waitOf(nowMs)
    waits.push(wait)
    nowMs += wait
  }
  return { ends, waits }
}

describe("forkWorker's fixed-rate rule", () => {
  it("asks for the same waits as Schedule.fixed after every pass, however long the passes run", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5_000 }), fc.array(fc.nat({ max: 12_000 }), { minLength: 1, maxLength: 40 }), (everyMs, durations) => {
        const ours = endsFor(everyMs, durations.map((d) => d % (3 * everyMs + 1)), fixedRate(everyMs))
        expect(ours.waits).toEqual(libraryWaits(everyMs, ours.ends))
      }),
      { numRuns: 500 }
    )
  })

  it("keeps the first pass's phase, and follows an overrun of more than a period at once", () => {
    const wait = fixedRate(1_000)
    expect(wait(1_000)).toBe(1_000) // first pass ended at 1 000: next at 2 000
    expect(wait(2_300)).toBe(700) // a 300 ms pass: back on the boundary at 3 000
    expect(wait(5_500)).toBe(0) // ran 2.5 s over: at once
    expect(wait(5_600)).toBe(400) // then the boundary at 6 000 again
  })
})
