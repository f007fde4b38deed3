// A seed sweep across worker threads (one per core): every seed runs the same
// scenario; failing seeds come back with the exact command that reproduces them.
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import type { Summary } from "./run.ts"

export type SweepSummary = Omit<Summary, "records">

export interface SweepResult {
  readonly seed: number
  readonly summary?: SweepSummary
  readonly error?: string
}

export const runSweep = async (
  file: string,
  seeds: ReadonlyArray<number>,
  durationSec: number | undefined,
  onResult: (r: SweepResult, done: number) => void,
  workers = Math.min(availableParallelism(), seeds.length)
): Promise<SweepResult[]> => {
  const queue = [...seeds]
  const results: SweepResult[] = []
  const runWorker = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const w = new Worker(new URL("./sweep-worker.mjs", import.meta.url), { workerData: { file, durationSec } })
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
