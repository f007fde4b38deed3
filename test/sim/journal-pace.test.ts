// The auditor's business-time check (sim/scenario/journal-pace.ts): records stamped by the business clock
// never trip it, whatever the wall clock does; records stamped by the old rule — the wall clock,
// but never before the last record — trip it after a step either way.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { BusinessClock } from "../../src/time/business-clock.ts"
import { JournalPace } from "../../sim/scenario/journal-pace.ts"

const DAY_MS = 86_400_000
const T0_MS = 1_767_311_100_000

/** Records every `gapMs` of elapsed time with wall-clock steps between them, stamped by `stamp`. */
const stampRun = (moves: ReadonlyArray<{ gapMs: number; stepMs: number }>, rule: "business" | "old") => {
  const c = { wall: T0_MS, mono: 0 }
  const clock = new BusinessClock(
    () => c.wall,
    () => c.mono
  )
  let lastSec = 0
  const stampSec = (): number => {
    const ms = rule === "business" ? clock.readMs(lastSec * 1000) : Math.max(lastSec * 1000, c.wall)
    lastSec = Math.floor(ms / 1000)
    return lastSec
  }
  const pace = new JournalPace()
  const found: string[] = []
  for (const m of moves) {
    c.wall += m.gapMs + m.stepMs
    c.mono += m.gapMs
    found.push(...pace.observe(c.mono, stampSec()))
  }
  return found
}

/** A record every 500 ms for `sec` seconds. */
const steady = (sec: number) => Array.from({ length: sec * 2 }, () => ({ gapMs: 500, stepMs: 0 }))

describe("the journal-pace check", () => {
  it("never trips on business time, whatever the steps and the load", () => {
    const move = fc.record({
      gapMs: fc.integer({ min: 0, max: 120_000 }),
      stepMs: fc.oneof(fc.constant(0), fc.integer({ min: -8 * DAY_MS, max: 8 * DAY_MS }), fc.integer({ min: -5_000, max: 5_000 }))
    })
    fc.assert(fc.property(fc.array(move, { maxLength: 200 }), (moves) => {
        expect(stampRun(moves, "business")).toEqual([])
      })
    )
  })

  it("catches the old stamp after a forward excursion: the jump, then one second standing still", () => {
    const moves = [...steady(10), { gapMs: 500, stepMs: 3_600_000 }, ...steady(2), { gapMs: 500, stepMs: -3_600_000 }, ...steady(120)]
    expect(stampRun(moves, "business")).toEqual([])
    const found = stampRun(moves, "old")
    expect(found.some((f) => /^journal time jumped 3600 s between records 0\.5 s/.test(f)), found.join("\n")).toBe(true)
    expect(found.some((f) => /^journal time stood still: second \d+ stamped on 5 records over 2\.0 s/.test(f)), found.join("\n")).toBe(true)
    expect(found.some((f) => /^journal time advanced 0 s over 60\.\d s of elapsed time \(at least 30 s\)/.test(f)), found.join("\n")).toBe(true)
  })

  it("catches the old stamp after a backward step, even with records too sparse to share a second", () => {
    const sparse = Array.from({ length: 40 }, () => ({ gapMs: 1_500, stepMs: 0 }))
    const moves = [...sparse, { gapMs: 1_500, stepMs: -120_000 }, ...sparse]
    expect(stampRun(moves, "business")).toEqual([])
    expect(stampRun(moves, "old").filter((f) => /^journal time (stood still|advanced)/.test(f)).length).toBeGreaterThan(0)
  })

  it("a new process may start anywhere: restart() forgets the last one's records", () => {
    const pace = new JournalPace()
    expect(pace.observe(1_000, 100)).toEqual([])
    pace.restart()
    expect(pace.observe(2_000, 5_000)).toEqual([])
    expect(pace.observe(2_500, 5_000)).toEqual([])
    expect(pace.observe(3_000, 5_100)[0]).toMatch(/^journal time jumped 100 s/)
  })
})
