// The worker threads of `npm run fidelity`: jobs on a pool, results in completion order. A job
// that failed on its input (a BacktestInputError: e.g. a fit its tapes cannot give) comes back as
// that error's one line, so the command can say it as one line; any other failure keeps its stack.
import { Worker } from "node:worker_threads"
import { BacktestInputError } from "../backtest/dataset.ts"
import type { FidelityJob, JobReply } from "./worker.ts"

export interface PoolOptions {
  readonly file: string
  readonly durationSec?: number
  readonly snapshotSec: number
  readonly workers: number
}

/** Runs every job; rejects after all ran if any failed: with a BacktestInputError when each failure was one, else an Error naming them all. */
export const pool = async (o: PoolOptions, jobs: ReadonlyArray<FidelityJob>, onResult: (job: FidelityJob, result: unknown) => void): Promise<void> => {
  const queue = [...jobs]
  const failures: string[] = []
  let inputOnly = true
  const runWorker = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const w = new Worker(new URL("./worker.mjs", import.meta.url), { workerData: { file: o.file, durationSec: o.durationSec, snapshotSec: o.snapshotSec } })
      const next = (): void => void w.postMessage(queue.shift() ?? null)
      w.on("message", (m: JobReply) => {
        if (m.error !== undefined) {
          failures.push(`${m.job.kind} seed ${m.job.seed}: ${m.error}`)
          inputOnly &&= m.input === true
        } else onResult(m.job, m.result)
        next()
      })
      w.on("error", reject)
      w.on("exit", () => resolve())
      next()
    })
  await Promise.all(Array.from({ length: Math.min(o.workers, Math.max(1, jobs.length)) }, runWorker))
  if (failures.length > 0) throw inputOnly ? new BacktestInputError(failures.join("; ")) : new Error(failures.join("\n"))
}
