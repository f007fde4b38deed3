// `npm run test:durations -- <report.json>`: records each test file's duration from a vitest JSON
// report (`npm test -- --reporter=default --reporter=json --outputFile=report.json`) into
// test/suite/durations.json, the order `npm test` starts its files in on a fresh clone
// (test/suite/sequencer.ts). Record again after a file's time changes a lot; a stale record only
// changes the order.
import { readFileSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { DURATIONS_FILE } from "../test/suite/durations.ts"

const USAGE = "usage: npm run test:durations -- <vitest JSON report>   (writes test/suite/durations.json)"
const ROOT = join(import.meta.dirname, "..")

interface Report {
  readonly testResults?: ReadonlyArray<{ readonly name: string; readonly startTime: number; readonly endTime: number }>
}

/** Seconds per file (one decimal), keys sorted: the file diffs line by line. */
export const durationsOf = (report: Report, root: string): Record<string, number> => {
  const rows = (report.testResults ?? []).map((t) => [relative(root, t.name), Math.round((t.endTime - t.startTime) / 100) / 10] as const)
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
  const durations = durationsOf(report, ROOT)
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
