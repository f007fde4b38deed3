// `npm run test:durations -- <report.json>`: records each test file's duration from a vitest JSON
// report (`npm test -- --reporter=default --reporter=json --outputFile=report.json`) into
// test/suite/durations.json, the order `npm test` starts its files in on a fresh clone
// (test/suite/sequencer.ts). Record again after a file's time changes a lot; a stale record only
// changes the order.
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { isAbsolute, join, relative, sep } from "node:path"
import { DURATIONS_FILE } from "../test/suite/durations.ts"

const USAGE = "usage: npm run test:durations -- <vitest JSON report>   (writes test/suite/durations.json)"
const ROOT = join(import.meta.dirname, "..")

interface Report {
  readonly testResults?: ReadonlyArray<{ readonly name: string; readonly startTime: number; readonly endTime: number }>
}

/**
 * A report's file name as a path in this repository. Reports are often made in another clone (a
 * fresh one for a clean timing), so a name outside `root` is taken from its last `test/` folder on:
 * every test file lives under test/ (vitest.config.ts). A record naming another clone's files passed
 * here while that clone existed and failed on CI's clone (stop 44).
 */
export const repoPathOf = (name: string, root: string): string => {
  const rel = relative(root, name).split(sep).join("/")
  if (!rel.startsWith("../") && !isAbsolute(rel)) return rel
  const slashed = name.split(sep).join("/")
  const at = slashed.lastIndexOf("/test/")
  if (at < 0) throw new Error(`${name} is not a test file under test/`)
  return slashed.slice(at + 1)
}

/** Seconds per file (one decimal), keys sorted: the file diffs line by line. */
export const durationsOf = (report: Report, root: string): Record<string, number> => {
  const rows = (report.testResults ?? []).map((t) => [repoPathOf(t.name, root), Math.round((t.endTime - t.startTime) / 100) / 10] as const)
  return Object.fromEntries(rows.sort(([a], [b]) => (a < b ? -1 : 1)))
}

const main = (argv: ReadonlyArray<string>): number => {
  if (argv.length !== 1 || argv[0] === "--help" || argv[0] === "-h") {
    process.stderr.write(`${USAGE}\n`)
    return argv.length === 1 ? 0 : 2
  }
  let report: Report
  try {
    report = JSON.parse(readFileSync(argv[0]!, "utf8")) as Report
  } catch (err) {
    process.stderr.write(`test:durations: cannot read ${argv[0]}: ${(err as Error).message}\n`)
    return 2
  }
  let durations: Record<string, number>
  try {
    durations = durationsOf(report, ROOT)
  } catch (err) {
    process.stderr.write(`test:durations: ${(err as Error).message}\n`)
    return 2
  }
  const missing = Object.keys(durations).filter((f) => !existsSync(join(ROOT, f)))
  if (missing.length > 0) {
    process.stderr.write(`test:durations: ${missing.length} files of the report are not in this repository (e.g. ${missing[0]}): nothing written\n`)
    return 2
  }
  const n = Object.keys(durations).length
  if (n === 0) {
    process.stderr.write(`test:durations: ${argv[0]} has no test files (is it a vitest JSON report?)\n`)
    return 2
  }
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(durations, null, 1)}\n`)
  process.stdout.write(`test:durations: ${n} files, ${Math.round(Object.values(durations).reduce((s, x) => s + x, 0))} s in all, written to ${relative(ROOT, DURATIONS_FILE)}\n`)
  return 0
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) process.exitCode = main(process.argv.slice(2))
