// A figure measured back to back against an older commit (issue 15: the busy day's wall time
// against the commit before the work, "machines differ by ±30%, so compare in one run").
// The older commit is checked out into a temporary git worktree that shares this checkout's
// node_modules, and the same command runs in both, alternately, as whole processes.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const ROOT = join(import.meta.dirname, "..")

export interface Pairs {
  /** Wall seconds of each run, in run order: here (this checkout) and there (the baseline). */
  readonly here: number[]
  readonly there: number[]
  /** here ÷ there, pair by pair. */
  readonly ratios: number[]
}

const git = (args: string[]): { ok: boolean; out: string } => {
  const r = spawnSync("git", args, { cwd: ROOT, encoding: "utf8" })
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim() }
}

/** Wall seconds of one run of `argv` (node args) in `dir`; throws when it fails. */
const timed = (dir: string, argv: ReadonlyArray<string>): number => {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, argv, { cwd: dir, encoding: "utf8", stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 * 1024 * 1024 })
  const sec = Number(process.hrtime.bigint() - t0) / 1e9
  if (r.status !== 0) throw new Error(`${argv.join(" ")} in ${dir} exited ${r.status}: ${(r.stderr ?? "").slice(-400)}`)
  return sec
}

/**
 * Runs `argv` in this checkout and in `rev` alternately, `pairs` times (here first), or returns
 * why the baseline cannot be built (no git, a shallow clone without `rev`).
 */
export const backToBack = (rev: string, argv: ReadonlyArray<string>, pairs: number, log: (m: string) => void): Pairs | string => {
  const resolved = git(["rev-parse", "--verify", `${rev}^{commit}`])
  if (!resolved.ok) return `baseline ${rev} is not in this clone (${resolved.out.split("\n")[0]}); a full clone has it`
  const dir = mkdtempSync(join(tmpdir(), "twinbook-baseline-"))
  const added = git(["worktree", "add", "--detach", dir, resolved.out])
  if (!added.ok) {
    rmSync(dir, { recursive: true, force: true })
    return `git worktree add failed: ${added.out.split("\n").at(-1)}`
  }
  try {
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"))
    const out: Pairs = { here: [], there: [], ratios: [] }
    for (let i = 0; i < pairs; i++) {
      log(`  pair ${i + 1}/${pairs}: this checkout…`)
      out.here.push(timed(ROOT, argv))
      log(`  pair ${i + 1}/${pairs}: ${rev}…`)
      out.there.push(timed(dir, argv))
      out.ratios.push(out.here[i]! / out.there[i]!)
    }
    return out
  } finally {
    git(["worktree", "remove", "--force", dir])
    rmSync(dir, { recursive: true, force: true })
  }
}

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
