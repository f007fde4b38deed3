// The determinism contract (docs/determinism.md): outside the live adapters, code
// never reads the wall clock or draws unseeded randomness. A genuine live-only use
// carries `// live-only: <reason>` on the same line.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { sourceFiles } from "./source-files.ts"

const root = join(import.meta.dirname, "..", "..")
const FORBIDDEN = [/Date\.now\(/, /new Date\(/, /Math\.random\(/, /performance\.now\(/, /randomUUID\(/, /process\.hrtime/]

/** Lines using a forbidden API without a live-only justification. */
export const violations = (files: string[]): string[] =>
  files.flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .flatMap((line, i) =>
        FORBIDDEN.some((re) => re.test(line)) && !/\/\/ live-only: \S/.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : []
      )
  )

describe("determinism guard", () => {
  it("src/ and sim/ never read the clock or unseeded randomness outside live-only lines", () => {
    const files = [...sourceFiles(join(root, "src")), ...sourceFiles(join(root, "sim"))]
    expect(files.length).toBeGreaterThan(0)
    expect(violations(files)).toEqual([])
  })

  it("the engine imports nothing but its own modules and node:crypto (no Effect, no I/O)", () => {
    const bad = sourceFiles(join(root, "src", "engine")).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/from\s+"([^"]+)"/g)]
        .map((m) => m[1]!)
        .filter((spec) => !spec.startsWith("./") && spec !== "node:crypto")
        .map((spec) => `${relative(root, file)} imports ${spec}`)
    )
    expect(bad).toEqual([])
  })

  it("the guard itself flags a violation and honours the escape", () => {
    const file = join(mkdtempSync(join(tmpdir(), "guard-")), "sample.ts")
    writeFileSync(
      file,
      ["const a = Date.now()", "const b = Date.now() // live-only: the live clock adapter", "const c = Math.random()", "const d = 1"].join("\n")
    )
    expect(violations([file]).map((v) => v.replace(/^.*sample\.ts:/, ""))).toEqual(["1: const a = Date.now()", "3: const c = Math.random()"])
  })
})
