// How far two worlds' final marks stand apart (sim/fidelity/marks.ts; docs/backtesting.md "The
// noise floor"), by hand: markets without a mark on either side are left out.
import { describe, expect, it } from "vitest"
import { marksApart, marksApartText } from "../../sim/fidelity/marks.ts"

describe("final marks apart", () => {
  it("takes |a − b| over every market both worlds marked, with its median, 90th percentile and largest", () => {
    const m = marksApart([
      { a: { x: 5000, y: 4000, z: null }, b: { x: 5400, y: 3900, z: 6000 } }, // 400, 100; z unmarked live
      { a: { x: 7000, w: 2000 }, b: { x: 6000 } } // 1000; w not in b
    ])
    // Sorted 100, 400, 1000: median 400; q90 at 1.8 of the way: 400 + 0.8 × 600.
    expect(m).toEqual({ markets: 3, q50_bps: 400, q90_bps: 880, max_bps: 1000 })
    expect(marksApartText(m)).toBe("median 400 bps, 90th percentile 880, largest 1000 (3 bot-run markets)")
  })

  it("says so when no market was marked by both", () => {
    const m = marksApart([{ a: { x: null }, b: { x: 5000 } }])
    expect(m).toEqual({ markets: 0, q50_bps: null, q90_bps: null, max_bps: null })
    expect(marksApartText(m)).toBe("median - bps, 90th percentile -, largest - (0 bot-run markets)")
  })
})
