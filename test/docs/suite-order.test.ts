// `npm test` starts its files longest first (test/suite/sequencer.ts), by the durations recorded
// in test/suite/durations.json, else by a guess from the file's source.
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { durationsOf } from "../../scripts/test-durations.ts"
import { GUESS_QUICK_SEC, GUESS_SLOW_SEC, longestFirst, mostlyWaits, plannedOrder, recordedDurations, weightOf } from "../suite/durations.ts"

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
    // Put together, so that this file's own source does not read as one that starts a process.
    const starts = ["const child = spa", 'wn(process.execPath, ["x"])'].join("")
    expect(weightOf("test/x.test.ts", recorded, () => starts)).toBe(42)
    expect(weightOf("test/new.test.ts", recorded, () => starts)).toBe(GUESS_SLOW_SEC)
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

  it("records a report made in another clone under this repository's paths, and refuses a name outside test/", () => {
    const other = { testResults: [{ name: "/tmp/run50/test/api/account.test.ts", startTime: 0, endTime: 900 }] }
    expect(durationsOf(other, ROOT)).toEqual({ "test/api/account.test.ts": 0.9 })
    expect(() => durationsOf({ testResults: [{ name: "/tmp/run50/src/x.ts", startTime: 0, endTime: 1 }] }, ROOT)).toThrow(/not a test file/)
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

  /** Which files overlap when each of two workers takes the next file as soon as it is free. */
  const overlaps = (order: string[], w: Record<string, number>): Array<[string, string]> => {
    const ends = [0, 0]
    const spans: Array<{ f: string; from: number; to: number }> = []
    for (const f of order) {
      const k = ends[0]! <= ends[1]! ? 0 : 1
      spans.push({ f, from: ends[k]!, to: ends[k]! + w[f]! })
      ends[k] = ends[k]! + w[f]!
    }
    return spans.flatMap((a, i) => spans.slice(i + 1).filter((b) => a.from < b.to && b.from < a.to).map((b): [string, string] => [a.f, b.f]))
  }

  it("keeps two files that mostly wait from running side by side, when files that compute can run beside them", () => {
    const w: Record<string, number> = { "wait-a": 90, "wait-b": 80, "cpu-a": 60, "cpu-b": 50, "cpu-c": 40, "cpu-d": 30 }
    const waits = (f: string) => f.startsWith("wait")
    const plain = longestFirst(Object.keys(w), (f) => w[f]!, (f) => f)
    // Longest first alone runs wait-a beside wait-b (what run 43 did with the browser and NATS files).
    expect(overlaps(plain, w)).toContainEqual(["wait-a", "wait-b"])
    const planned = plannedOrder(Object.keys(w), (f) => w[f]!, waits, (f) => f)
    expect([...planned].sort()).toEqual(Object.keys(w).sort())
    expect(overlaps(planned, w).filter(([a, b]) => waits(a) && waits(b))).toEqual([])
    // With nothing that computes left, waiting files still run (after one another).
    expect(plannedOrder(["wait-a", "wait-b"], (f) => w[f]!, waits, (f) => f)).toEqual(["wait-a", "wait-b"])
  })

  it("a file says it mostly waits in a line of its own; the browser journeys and the NATS journal do", () => {
    expect(mostlyWaits("// suite: mostly waits (NATS elections)\nimport x")).toBe(true)
    expect(mostlyWaits("const s = \"// suite: mostly waits\"")).toBe(false)
    for (const f of ["test/web/e2e.test.ts", "test/cluster/jetstream-log.test.ts"]) expect(mostlyWaits(readFileSync(join(ROOT, f), "utf8")), f).toBe(true)
    expect(mostlyWaits(readFileSync(join(ROOT, "test/sim/sweep.test.ts"), "utf8"))).toBe(false)
  })
})
