// The time contract (docs/time.md): inside the service the wall clock enters in one place,
// the stamp in BusinessClock.readMs (src/time/business-clock.ts, read by Exchange.journalMs), which
// gives business time. Durations use the
// monotonic clock (src/time/clock.ts). Any other wall-clock read — the injected `nowMs`/`wallMs`
// callbacks, Effect's Clock millis, Date — needs `// live-only: <why>` on its line (checking a
// client's signed timestamp is one such reason). src/client/ is excluded: it is the client
// library, whose own wall clock is what a client signs with.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { sourceFiles } from "./source-files.ts"

const root = join(import.meta.dirname, "..", "..")
const WALL_READ = /\b(nowMs|wallMs)\(\)|unsafeCurrentTimeMillis|currentTimeMillis|Date\.now\(|new Date\(/
const STAMP = /\/\/ stamp: \S/
const LIVE_ONLY = /\/\/ live-only: \S/
/** An Effect Clock whose reading is defined as the monotonic clock (src/runtime/workers.ts): a definition, not a wall read. */
const MONO_READING = /^\s*(unsafeCurrentTimeMillis|currentTimeMillis)\s*:.*\bmonoMs\b/

/** Wall-clock reads outside the stamp and live-only lines, and every stamp line (there must be exactly one). */
export const wallClockReads = (files: string[]): { violations: string[]; stamps: string[] } => {
  const violations: string[] = []
  const stamps: string[] = []
  for (const file of files) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        const where = `${relative(root, file)}:${i + 1}: ${line.trim()}`
        if (STAMP.test(line)) stamps.push(where)
        else if (WALL_READ.test(line) && !LIVE_ONLY.test(line) && !MONO_READING.test(line)) violations.push(where)
      })
  }
  return { violations, stamps }
}

describe("wall-clock guard", () => {
  it("src/ reads the wall clock only at the business clock's stamp and on live-only lines", () => {
    const files = sourceFiles(join(root, "src")).filter((f) => !relative(root, f).startsWith(join("src", "client")))
    expect(files.length).toBeGreaterThan(0)
    const { violations, stamps } = wallClockReads(files)
    expect(violations).toEqual([])
    expect(stamps.map((s) => s.slice(0, s.indexOf(":")))).toEqual([join("src", "time", "business-clock.ts")])
  })

  it("the guard itself flags a wall read, honours live-only and counts the stamp", () => {
    const file = join(mkdtempSync(join(tmpdir(), "wall-guard-")), "sample.ts")
    writeFileSync(
      file,
      [
        "const a = ctx.nowMs()",
        "const b = this.wallMs() // stamp: the one entry",
        "const c = ctx.nowMs() // live-only: a signed timestamp",
        "const d = clock.unsafeCurrentTimeMillis()",
        "const e = ctx.monoMs()",
        "  unsafeCurrentTimeMillis: monoMs,",
        "  currentTimeMillis: Effect.sync(() => Date.now()),"
      ].join("\n")
    )
    const { violations, stamps } = wallClockReads([file])
    expect(violations.map((v) => v.replace(/^.*sample\.ts:/, ""))).toEqual([
      "1: const a = ctx.nowMs()",
      "4: const d = clock.unsafeCurrentTimeMillis()",
      "7: currentTimeMillis: Effect.sync(() => Date.now()),"
    ])
    expect(stamps.length).toBe(1)
  })
})
