// scripts/ts-bundle.mjs: two checkouts that share one node_modules (a git worktree whose
// node_modules is a symlink to another checkout's) share its bundle cache; each must still run its
// own code. The bundle of an entry is named by the entry's path inside its checkout, so before the
// checkout's own path was in the name, the second checkout found the first one's bundle of the
// "same" entry fresh (its recorded inputs, the first checkout's files, unchanged) and ran it.
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")
const base = mkdtempSync(join(tmpdir(), "ts-bundle-"))
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** A checkout holding the bundler, one entry that prints `word`, and the repository's node_modules by symlink. */
const checkout = (name: string, word: string): string => {
  const dir = join(base, name)
  mkdirSync(join(dir, "scripts"), { recursive: true })
  for (const f of ["ts-bundle.mjs", "run-ts.mjs"]) copyFileSync(join(ROOT, "scripts", f), join(dir, "scripts", f))
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"))
  writeFileSync(join(dir, "entry.ts"), `const word: string = ${JSON.stringify(word)}\nprocess.stdout.write(word)\n`)
  return dir
}

const run = (dir: string): string => execFileSync(process.execPath, ["scripts/run-ts.mjs", "entry.ts"], { cwd: dir, encoding: "utf8" })

describe("TypeScript bundles of two checkouts sharing node_modules", () => {
  it("each checkout runs its own entry, in any order, with the cache warm", () => {
    const a = checkout("a", "from-a")
    const b = checkout("b", "from-b")
    expect([run(a), run(b), run(a), run(b)]).toEqual(["from-a", "from-b", "from-a", "from-b"])
  }, 120_000)
})
