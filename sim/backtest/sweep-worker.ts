// A sweep worker: receives the dataset once (columns on SharedArrayBuffers, so no copy)
// and then runs one backtest per job message, answering with its summary and NOTE lines (and writing the
// run's report page when the job carries one).
import { parentPort, workerData } from "node:worker_threads"
import type { BacktestConfig } from "./config.ts"
import type { Dataset } from "./dataset.ts"
import { type RunPage, writeRunPage } from "./report-html/run-page.ts"
import { runBacktest } from "./runner.ts"

export interface SweepJob {
  readonly id: number
  readonly config: BacktestConfig
  readonly page: RunPage | null
}

const data = (workerData as { dataset: Dataset }).dataset
const port = parentPort
if (port === null) throw new Error("sweep-worker.ts runs as a worker thread")
port.on("message", (job: SweepJob) => {
  try {
    const { report } = runBacktest(data, job.config)
    if (job.page !== null) writeRunPage(job.page, job.config, report)
    port.postMessage({ id: job.id, summary: report.summary, assumptions: report.assumptions })
  } catch (err) {
    port.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err) })
  }
})
