// Business time (src/time/business-clock.ts, docs/time.md "Business time"): the wall clock while it
// keeps pace with the monotonic clock; across steps it never goes back, never stands still and
// never jumps (between half and twice the rate of real time), and it meets the wall clock again.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { BusinessClock, FAST_RATE, SLOW_RATE } from "../../src/time/business-clock.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"

const DAY_MS = 86_400_000
const T0_MS = 1_795_305_600_000

/** Time passing (both clocks) or a wall-clock step; `read` says whether business time is read after it. */
type Move = { readonly passMs: number; readonly stepMs: number; readonly read: boolean }

const pass = fc.record({ passMs: fc.integer({ min: 1, max: 600_000 }), stepMs: fc.constant(0), read: fc.boolean() })
const step = fc.record({
  passMs: fc.constant(0),
  stepMs: fc.oneof(fc.integer({ min: -8 * DAY_MS, max: 8 * DAY_MS }), fc.integer({ min: -2_000, max: 2_000 })),
  read: fc.boolean()
})

/** Runs the moves, reading business time where asked (and after the last); returns each reading with the clocks. */
const drive = (moves: ReadonlyArray<Move>, floorMs = 0) => {
  const c = { wall: T0_MS, mono: 5_000 }
  const clock = new BusinessClock(
    () => c.wall,
    () => c.mono
  )
  const readings = [{ wall: c.wall, mono: c.mono, business: clock.readMs(floorMs) }]
  const read = () => readings.push({ wall: c.wall, mono: c.mono, business: clock.readMs(floorMs) })
  moves.forEach((m, i) => {
    c.wall += m.passMs + m.stepMs
    c.mono += m.passMs
    if (m.read || i === moves.length - 1) read()
  })
  return { c, clock, readings, read }
}

describe("business time", () => {
  it("is the wall clock exactly while nothing steps it", () => {
    fc.assert(
      fc.property(fc.array(pass, { maxLength: 60 }), (moves) => {
        for (const r of drive(moves).readings) expect(r.business).toBe(r.wall)
      })
    )
  })

  it("never goes back, advances between half and twice the elapsed time, whatever the steps", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(pass, step), { maxLength: 60 }), (moves) => {
        const { readings } = drive(moves)
        for (let i = 1; i < readings.length; i++) {
          const [a, b] = [readings[i - 1]!, readings[i]!]
          const elapsedMs = b.mono - a.mono
          // Whole milliseconds: ⌊x + y⌋ − ⌊x⌋ lies in [⌊y⌋, ⌊y⌋ + 1].
          expect(b.business - a.business).toBeGreaterThanOrEqual(Math.floor(SLOW_RATE * elapsedMs))
          expect(b.business - a.business).toBeLessThanOrEqual(FAST_RATE * elapsedMs + 1)
          if (elapsedMs >= 2) expect(b.business).toBeGreaterThan(a.business)
        }
      })
    )
  })

  it("meets the wall clock again, exactly, within twice the offset of elapsed time", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(pass, step), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 20 }), (moves, reads) => {
        const { c, readings, read } = drive(moves)
        const aheadMs = readings.at(-1)!.business - c.wall
        // Ahead it loses (1 − SLOW_RATE) of the elapsed time, behind it gains (FAST_RATE − 1): 2·|offset| covers both.
        const needMs = 2 * Math.abs(aheadMs) + 1
        for (let i = 0; i < reads; i++) {
          const passMs = Math.ceil(needMs / reads)
          c.wall += passMs
          c.mono += passMs
          read()
        }
        expect(readings.at(-1)!.business).toBe(c.wall)
      })
    )
  })

  it("a new process starts at the later of its last record and the wall clock, and runs on from there", () => {
    const c = { wall: T0_MS, mono: 0 }
    const clock = new BusinessClock(
      () => c.wall,
      () => c.mono
    )
    const lastRecordMs = T0_MS + 120_000 // the wall clock is 2 minutes behind the journal
    expect(clock.readMs(lastRecordMs)).toBe(lastRecordMs)
    c.wall += 10_000
    c.mono += 10_000
    expect(clock.readMs(lastRecordMs)).toBe(lastRecordMs + 5_000) // half speed, not frozen
    c.wall += 240_000
    c.mono += 240_000
    expect(clock.readMs(lastRecordMs)).toBe(c.wall)
    const behind = new BusinessClock(
      () => c.wall,
      () => c.mono
    )
    expect(behind.readMs(T0_MS)).toBe(c.wall) // the wall clock ahead of the journal: the wall clock
  })

  it("a +2-day excursion of 2 s moves business time 4 s, and a 120 s step back is slewed away in 240 s", () => {
    const c = { wall: T0_MS, mono: 0 }
    const clock = new BusinessClock(
      () => c.wall,
      () => c.mono
    )
    const at = (passMs: number, stepMs = 0) => {
      c.wall += passMs + stepMs
      c.mono += passMs
      return clock.readMs(0) - T0_MS
    }
    expect(at(0)).toBe(0)
    expect(at(0, 2 * DAY_MS)).toBe(0) // the step itself moves nothing
    expect(at(2_000)).toBe(4_000) // twice as fast while behind
    expect(at(0, -2 * DAY_MS)).toBe(4_000) // back: now 2 s ahead
    expect(at(4_000)).toBe(6_000) // half speed until the wall clock (6 s) meets it
    expect(at(1_000)).toBe(7_000)
    expect(at(0, -120_000)).toBe(7_000)
    expect(at(240_000)).toBe(7_000 + 120_000)
    expect(at(1_000) + T0_MS).toBe(c.wall)
  })

  it("in an Exchange given one clock for both, a step back is slewed rather than frozen", () => {
    const clock = { ms: T0_MS }
    const x = new Exchange(() => clock.ms, memoryJournal())
    const credit = () => x.submit({ type: "credit", user: "u", amountMicro: 1, ref: `c${x.lastSeq}` })
    credit()
    clock.ms -= 60_000
    credit()
    clock.ms += 10_000
    credit()
    expect(x.tsSec).toBe(T0_MS / 1000 + 5)
  })
})
