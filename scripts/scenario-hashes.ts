// `npm run sim:hashes [-- --write | --check] [--seeds 1..3] [--jobs 2] [scenarios/x.json ...]`
// (subsets: docs/simulation.md "Golden hashes").
// The golden hashes: every shipped scenario at seeds 1..3, run through the sweep's worker
// (the same runScenario path `npm run sim` takes), printed as {scenario, seed, journalHash, stateHash}
// rows. `--write` records them in test/fixtures/scenario-hashes.json; `--check` compares and exits 1
// listing every difference. A refactor that claims "nothing observable changed" must pass --check.
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { basename, join } from "node:path"
import { parseSeeds, runSweep } from "../sim/sweep/sweep.ts"

export interface HashRow {
  readonly scenario: string
  readonly seed: number
  readonly journalHash: string
  readonly stateHash: string
}

const root = join(import.meta.dirname, "..")
export const HASHES_FILE = join(root, "test", "fixtures", "scenario-hashes.json")

const rowKey = (r: { scenario: string; seed: number }): string => `${r.scenario}#${r.seed}`

/** Rows present on one side only or with another hash, one line each. */
export const diffRows = (expected: ReadonlyArray<HashRow>, actual: ReadonlyArray<HashRow>): string[] => {
  const want = new Map(expected.map((r) => [rowKey(r), r]))
  const got = new Map(actual.map((r) => [rowKey(r), r]))
  const out: string[] = []
  for (const [k, a] of got) {
    const e = want.get(k)
    if (e === undefined) out.push(`${k}: not in the recorded file`)
    else {
      if (e.journalHash !== a.journalHash) out.push(`${k}: journalHash ${a.journalHash} != recorded ${e.journalHash}`)
      if (e.stateHash !== a.stateHash) out.push(`${k}: stateHash ${a.stateHash} != recorded ${e.stateHash}`)
    }
  }
  return out
}

/** Runs each (scenario file, seed) in its own sweep worker, `jobs` at a time; rows in file then seed order. */
export const scenarioHashes = async (files: ReadonlyArray<string>, seeds: ReadonlyArray<number>, jobs: number): Promise<HashRow[]> => {
  const queue = files.flatMap((file) => seeds.map((seed) => ({ file, seed })))
  const rows = new Map<string, HashRow>()
  const lane = async (): Promise<void> => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      const { file, seed } = job
      const [r] = await runSweep(file, [seed], undefined, () => {}, 1, null)
      if (r?.summary === undefined) throw new Error(`${file} seed ${seed}: ${r?.error ?? "no result"}`)
      rows.set(`${file}#${seed}`, { scenario: basename(file, ".json"), seed, journalHash: r.summary.journalHash, stateHash: r.summary.stateHash })
      process.stderr.write(`${basename(file, ".json")} seed ${seed} ${r.summary.journalHash} ${r.summary.stateHash}\n`)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, lane))
  return files.flatMap((file) => seeds.map((seed) => rows.get(`${file}#${seed}`)!))
}

export const readRecorded = (): HashRow[] => JSON.parse(readFileSync(HASHES_FILE, "utf8")) as HashRow[]

const USAGE = "usage: npm run sim:hashes -- [--write | --check] [--seeds 1..3] [--jobs 1|2] [scenarios/x.json ...]   (no files: every scenario; --write refuses a subset)"

const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  let mode: "print" | "write" | "check" = "print"
  let seeds = [1, 2, 3]
  let seedsGiven = false
  let jobs = 2
  const files: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === "--write") mode = "write"
    else if (a === "--check") mode = "check"
    else if (a === "--seeds") {
      seeds = parseSeeds(argv[++i] ?? "")
      seedsGiven = true
    }
    else if (a === "--jobs") jobs = Number(argv[++i])
    else if (a.startsWith("--")) {
      process.stderr.write(`sim:hashes: unknown option ${a}\n${USAGE}\n`)
      return 2
    } else files.push(a)
  }
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 2) {
    process.stderr.write("sim:hashes: --jobs 1 or 2 (the machine is shared)\n")
    return 2
  }
  // The recorded file is the whole table: a subset written over it would drop every other row.
  if (mode === "write" && (files.length > 0 || seedsGiven)) {
    process.stderr.write("sim:hashes: --write records every scenario at seeds 1..3; give no file names and no --seeds\n")
    return 2
  }
  if (files.length === 0) files.push(...readdirSync(join(root, "scenarios")).filter((f) => f.endsWith(".json")).sort().map((f) => join("scenarios", f)))
  const started = performance.now() // live-only: wall time is reported, never used by a run
  const rows = await scenarioHashes(files, seeds, jobs)
  const wallSec = (performance.now() - started) / 1000 // live-only: as above
  for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`)
  process.stderr.write(`${rows.length} runs in ${wallSec.toFixed(1)} s wall\n`)
  if (mode === "write") {
    writeFileSync(HASHES_FILE, `${JSON.stringify(rows, null, 2)}\n`)
    process.stderr.write(`wrote ${HASHES_FILE}\n`)
    return 0
  }
  if (mode === "check") {
    const diff = diffRows(readRecorded(), rows)
    for (const d of diff) process.stdout.write(`DIFF ${d}\n`)
    process.stderr.write(diff.length === 0 ? `all ${rows.length} hashes match ${HASHES_FILE}\n` : `${diff.length} differences\n`)
    return diff.length === 0 ? 0 : 1
  }
  return 0
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) process.exitCode = await main(process.argv.slice(2))
