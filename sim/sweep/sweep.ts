// A seed sweep across worker threads (one per core): every seed runs the same
// scenario; failing seeds come back with the exact command that reproduces them.
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { basename, join } from "node:path"
import { LOG_FORMAT, LOG_VERSION, type LogHeader, logText, writeLog } from "../scenario/journal-log.ts"
import type { Summary } from "../scenario/run.ts"

export type SweepSummary = Omit<Summary, "records">

export interface SweepResult {
  readonly seed: number
  readonly summary?: SweepSummary
  readonly error?: string
  /** The seed's run log (npm run replay), when the sweep writes logs. */
  readonly log?: string
}

/** Where a seed's run log goes: `<dir>/<scenario file name>-seed<N>.log`, as a single run names it. */
export const seedLogPath = (dir: string, file: string, seed: number): string => join(dir, `${basename(file, ".json")}-seed${seed}.log`)

const logHeader = (summary: Summary): LogHeader => ({
  format: LOG_FORMAT,
  version: LOG_VERSION,
  scenario: summary.scenario,
  seed: summary.seed,
  startSec: summary.startSec,
  records: summary.records.length,
  journalHash: summary.journalHash,
  stateHash: summary.stateHash
})

/** The run log of one run: header with both hashes, then every journal record. */
export const writeSummaryLog = (path: string, summary: Summary): void => writeLog(path, logHeader(summary), summary.records as never)

/** The same log as text (a queue worker sends it back for the caller to write). */
export const summaryLogText = (summary: Summary): string => logText(logHeader(summary), summary.records as never)

/** Results arrive in completion order; this hands them on in seed order, each as soon as every earlier seed is in. */
export const inSeedOrder = (seeds: ReadonlyArray<number>, emit: (r: SweepResult) => void): ((r: SweepResult) => void) => {
  const order = [...seeds].sort((a, b) => a - b)
  const waiting = new Map<number, SweepResult>()
  let next = 0
  return (r) => {
    waiting.set(r.seed, r)
    while (next < order.length && waiting.has(order[next]!)) {
      emit(waiting.get(order[next]!)!)
      waiting.delete(order[next]!)
      next++
    }
  }
}

export const seedOk = (r: SweepResult): boolean => r.error === undefined && r.summary!.ok

/** One line per seed: verdict, both hashes, the log. */
export const seedLine = (r: SweepResult): string =>
  r.summary === undefined
    ? `seed ${r.seed} ERROR ${(r.error ?? "").split("\n")[0]}`
    : `seed ${r.seed} ${r.summary.ok ? "ok    " : "FAILED"} journalHash ${r.summary.journalHash} stateHash ${r.summary.stateHash}${r.log === undefined ? "" : ` log ${r.log}`}`

/** The sweep as a Markdown table: every seed with its hashes, and each failure with the command that reproduces it. */
export const sweepMarkdown = (scenario: string, results: ReadonlyArray<SweepResult>, reproduce: (seed: number) => string): string => {
  const failing = results.filter((r) => !seedOk(r))
  const cell = (t: string): string => t.replaceAll("|", "\\|").replaceAll("\n", " ")
  const lines = [
    `# Seed sweep: ${scenario}`,
    "",
    `${results.length - failing.length} of ${results.length} seeds passed, ${failing.length} failed.`,
    "",
    "| seed | result | journalHash | stateHash | log | reproduce |",
    "|---:|---|---|---|---|---|",
    ...results.map((r) =>
      `| ${r.seed} | ${seedOk(r) ? "ok" : r.error !== undefined ? "ERROR" : "FAILED"} | ${r.summary?.journalHash ?? "-"} | ${r.summary?.stateHash ?? "-"} | ${r.log ?? "-"} | ${seedOk(r) ? "" : `\`${reproduce(r.seed)}\``} |`
    )
  ]
  if (failing.length > 0) {
    lines.push("", "## Failures", "")
    for (const r of failing) lines.push(`- seed ${r.seed}: ${cell((r.error ?? r.summary!.failures[0] ?? "").split("\n")[0]!)}  \n  reproduce: \`${reproduce(r.seed)}\``)
  }
  return `${lines.join("\n")}\n`
}

export const runSweep = async (
  file: string,
  seeds: ReadonlyArray<number>,
  durationSec: number | undefined,
  onResult: (r: SweepResult, done: number) => void,
  workers = Math.min(availableParallelism(), seeds.length),
  /** Each seed's run log goes here (seedLogPath); null: no logs. */
  logDir: string | null = null,
  /** Test-only: a planted storage bug by name (sim/testing/ignore-bytes-written.ts STORAGE_PLANTS), as `--plant` gives it. */
  plant?: string
): Promise<SweepResult[]> => {
  const queue = [...seeds]
  const results: SweepResult[] = []
  const runWorker = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const w = new Worker(new URL("./sweep-worker.mjs", import.meta.url), { workerData: { file, durationSec, logDir, plant } })
      const next = (): void => {
        const seed = queue.shift()
        if (seed === undefined) {
          w.postMessage(null)
          return
        }
        w.postMessage(seed)
      }
      w.on("message", (r: SweepResult) => {
        results.push(r)
        onResult(r, results.length)
        next()
      })
      w.on("error", reject)
      w.on("exit", () => resolve())
      next()
    })
  await Promise.all(Array.from({ length: Math.max(1, workers) }, runWorker))
  return results.sort((a, b) => a.seed - b.seed)
}

/** "1..200" or "1,5,9" or "7". */
export const parseSeeds = (text: string): number[] => {
  const range = /^(\d+)\.\.(\d+)$/.exec(text)
  if (range !== null) {
    const lo = Number(range[1])
    const hi = Number(range[2])
    if (hi < lo) throw new Error(`--seeds ${text}: the range is empty`)
    if (hi - lo >= 100_000) throw new Error(`--seeds ${text}: at most 100,000 seeds`)
    return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i)
  }
  const list = text.split(",").map((s) => s.trim())
  if (list.some((s) => !/^\d+$/.test(s))) throw new Error(`--seeds ${text}: expected N..M or a comma-separated list of integers`)
  return list.map(Number)
}
