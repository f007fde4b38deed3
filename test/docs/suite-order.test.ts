// `npm test` starts its files longest first (test/suite/sequencer.ts), by the durations recorded
// in test/suite/durations.json, else by a guess from the file's source.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { durationsOf } from "../../scripts/test-durations.ts"
import { GUESS_QUICK_SEC, GUESS_SLOW_SEC, longestFirst, recordedDurations, weightOf } from "../suite/durations.ts"

const ROOT = join(import.meta.dirname, "../..")

describe("the suite's order", () => {
  it("is longest first, ties by path, whatever order the files came in", () => {
    const w: Record<string, number> = { "a.test.ts": 5, "b.test.ts": 90, "c.test.ts": 5, "d.test.ts": 0.1 }
    const order = longestFirst(["d.test.ts", "c.test.ts", "a.test.ts", "b.test.ts"], (f) => w[f]!, (f) => f)
    expect(order).toEqual(["b.test.ts", "a.test.ts", "c.test.ts", "d.test.ts"])
    expect(longestFirst([...order].reverse(), (f) => w[f]!, (f) => f)).toEqual(order)
  })

  it("weighs a file by its record, else by its source: one that starts a process before one that does not", () => {
    const recorded = { "test/x.test.ts": 42 }
    expect(weightOf("test/x.test.ts", recorded, () => "spawn(process.execPath)")).toBe(42)
    expect(weightOf("test/new.test.ts", recorded, () => 'const child = spawn(process.execPath, ["x"])')).toBe(GUESS_SLOW_SEC)
    expect(weightOf("test/new.test.ts", recorded, () => "expect(1 + 1).toBe(2)")).toBe(GUESS_QUICK_SEC)
    expect(GUESS_SLOW_SEC).toBeGreaterThan(GUESS_QUICK_SEC)
  })

  it("records seconds per file from a vitest JSON report, paths relative to the repository", () => {
    const report = {
      testResults: [
        { name: join(ROOT, "test/b.test.ts"), startTime: 1_000, endTime: 13_345 },
        { name: join(ROOT, "test/a.test.ts"), startTime: 0, endTime: 49 }
      ]
    }
    expect(durationsOf(report, ROOT)).toEqual({ "test/a.test.ts": 0, "test/b.test.ts": 12.3 })
    expect(Object.keys(durationsOf(report, ROOT))).toEqual(["test/a.test.ts", "test/b.test.ts"])
    expect(durationsOf({}, ROOT)).toEqual({})
  })

  it("the record names existing test files only (record again after a rename: npm run test:durations), and starts the scenario sweeps early", () => {
    const recorded = recordedDurations()
    const files = Object.keys(recorded)
    expect(files.length).toBeGreaterThan(100)
    for (const f of files) expect(existsSync(join(ROOT, f)), f).toBe(true)
    // The two CPU-heaviest files, which a fresh clone's default order started last (issue 35, run 38).
    const order = longestFirst(files, (f) => recorded[f]!, (f) => f)
    expect(order.indexOf("test/sim/sweep.test.ts")).toBeLessThan(12)
    expect(order.indexOf("test/sim/determinism.test.ts")).toBeLessThan(12)
  })
})
