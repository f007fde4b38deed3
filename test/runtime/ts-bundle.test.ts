// scripts/run-ts.mjs runs an entry point from its bundle (docs/decisions.md "Starting a TypeScript
// process"): the entry sees its own location in import.meta and its own path as argv[1], an edit
// to any file it imports shows at the next start, and dependencies still resolve from node_modules;
// two checkouts sharing one node_modules (so one bundle cache) each run their own code.
import { spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
const run = (entry: string, ...args: string[]): string => {
  const r = spawnSync(process.execPath, ["scripts/run-ts.mjs", entry, ...args], { cwd: root, encoding: "utf8" })
  expect(r.stderr).toBe("")
  expect(r.status).toBe(0)
  return r.stdout
}

describe("scripts/run-ts.mjs", () => {
  it("keeps import.meta and argv[1] of the source, and rebuilds after an edit to an imported file", () => {
    // Inside the repository (so `effect` resolves as for any entry point), in a fresh folder.
    mkdirSync(join(root, ".cache"), { recursive: true })
    const dir = mkdtempSync(join(root, ".cache", "run-ts-test-"))
    const entry = join(dir, "entry.ts")
    writeFileSync(join(dir, "word.ts"), 'export const word: string = "first"\n')
    // Imported on demand: a chunk of its own, loaded when the entry asks for it.
    writeFileSync(join(dir, "later.ts"), 'import { Option } from "effect"\nexport const later: string = Option.getOrElse(Option.some("loaded"), () => "")\n')
    writeFileSync(
      entry,
      [
        'import { Option } from "effect"',
        'import { word } from "./word.ts"',
        "const n: number = Option.getOrElse(Option.some(2), () => 0)",
        'const { later } = await import("./later.ts")',
        "console.log(JSON.stringify({ dirname: import.meta.dirname, filename: import.meta.filename, url: import.meta.url, argv1: process.argv[1], args: process.argv.slice(2), word, n, later }))"
      ].join("\n")
    )
    const first = JSON.parse(run(entry, "--flag", "x")) as Record<string, unknown>
    expect(first).toEqual({ dirname: dir, filename: entry, url: `file://${entry}`, argv1: entry, args: ["--flag", "x"], word: "first", n: 2, later: "loaded" })

    writeFileSync(join(dir, "word.ts"), 'export const word: string = "second!"\n')
    expect(JSON.parse(run(entry))).toMatchObject({ word: "second!" })
    // The same size and an mtime that differs is an edit too.
    writeFileSync(join(dir, "word.ts"), 'export const word: string = "third!!"\n')
    utimesSync(join(dir, "word.ts"), new Date(2_000_000_000_000), new Date(2_000_000_000_000))
    expect(JSON.parse(run(entry))).toMatchObject({ word: "third!!" })
    // Nothing changed: the cached bundle answers the same.
    expect(JSON.parse(run(entry))).toMatchObject({ word: "third!!" })
    rmSync(dir, { recursive: true, force: true })
  }, 120_000)

  it("two checkouts sharing node_modules: each runs its own entry, in any order, with the cache warm", () => {
    // A worktree with a symlinked node_modules shares the bundle cache. Before a bundle's name held its
    // checkout's path, the second checkout found the first one's bundle of the "same" entry fresh (its
    // recorded inputs, the first checkout's files, unchanged) and ran it.
    const base = mkdtempSync(join(tmpdir(), "ts-bundle-"))
    const checkout = (name: string, word: string): string => {
      const dir = join(base, name)
      mkdirSync(join(dir, "scripts"), { recursive: true })
      for (const f of ["ts-bundle.mjs", "run-ts.mjs"]) copyFileSync(join(root, "scripts", f), join(dir, "scripts", f))
      symlinkSync(join(root, "node_modules"), join(dir, "node_modules"))
      writeFileSync(join(dir, "entry.ts"), `const word: string = ${JSON.stringify(word)}\nprocess.stdout.write(word)\n`)
      return dir
    }
    const inCheckout = (dir: string): string => spawnSync(process.execPath, ["scripts/run-ts.mjs", "entry.ts"], { cwd: dir, encoding: "utf8" }).stdout
    try {
      const a = checkout("a", "from-a")
      const b = checkout("b", "from-b")
      expect([inCheckout(a), inCheckout(b), inCheckout(a), inCheckout(b)]).toEqual(["from-a", "from-b", "from-a", "from-b"])
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  }, 120_000)

  it("without an entry: a usage line and exit 2", () => {
    const r = spawnSync(process.execPath, ["scripts/run-ts.mjs"], { cwd: root, encoding: "utf8" })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^usage: node scripts\/run-ts\.mjs <entry\.ts>/)
  })
})
