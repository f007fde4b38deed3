// Which twinbook a process runs, as a job states it and a worker checks it: sha256 over every
// source file a run executes (src/ and sim/, path and bytes, in path order) and the dependency
// lock. Not the git commit: a checkout with uncommitted edits, or none at all (a tarball), must
// still be told apart from another. Two machines agree exactly when they would run the same code.
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"

const root = join(import.meta.dirname, "..", "..")
const SOURCE = /\.(ts|mts|js|mjs|json)$/

const filesUnder = (dir: string): string[] =>
  readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? filesUnder(path) : SOURCE.test(name) ? [path] : []
    })

let cached: string | null = null

/** The code identity, 64 hex digits (computed once per process). */
export const codeVersion = (): string => {
  if (cached !== null) return cached
  const h = createHash("sha256")
  for (const file of [...filesUnder(join(root, "src")), ...filesUnder(join(root, "sim")), join(root, "package.json"), join(root, "package-lock.json")]) {
    const bytes = readFileSync(file)
    h.update(`${relative(root, file)}\0${bytes.length}\0`).update(bytes)
  }
  cached = h.digest("hex")
  return cached
}

/** The Node major version: a run is only promised identical on the same major (V8's math and sort). */
export const nodeMajor = (version: string = process.versions.node): string => version.split(".")[0]!

/** Why a worker cannot run a job faithfully, or null when it can. */
export const mismatch = (job: { code: string; node: string }, mine: { code: string; node: string }): string | null => {
  if (job.code !== mine.code) return `the job was made by twinbook code ${job.code.slice(0, 12)}, this worker runs ${mine.code.slice(0, 12)} (same checkout and npm install on both machines, or restart the worker on the caller's code)`
  if (nodeMajor(job.node) !== nodeMajor(mine.node)) return `the job was made on Node ${job.node}, this worker runs Node ${mine.node} (runs are promised identical on the same Node major only)`
  return null
}
