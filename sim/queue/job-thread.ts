// A queue worker's job thread: runs one job at a time, of either kind, off the worker's main
// thread, so the main thread stays free to send JetStream its in-progress acknowledgements
// while a long run keeps this one busy (a simulated day never yields to the event loop for long).
import { parentPort } from "node:worker_threads"
import { runBacktestJob, type BacktestJob } from "../backtest/queue-job.ts"
import type { JobKind, JobOutput } from "./protocol.ts"
import { runSimJob, type SimJob } from "./sim-job.ts"

export interface ThreadJob {
  readonly kind: JobKind
  readonly payload: unknown
  readonly outputs: ReadonlyArray<string>
  readonly shared: { readonly sha256: string; readonly bytes: Uint8Array } | null
}

export type ThreadReply = { readonly ok: true; readonly output: JobOutput } | { readonly ok: false; readonly error: string }

const port = parentPort
if (port === null) throw new Error("job-thread.ts runs as a worker thread")

const run = async (job: ThreadJob): Promise<JobOutput> =>
  job.kind === "sim" ? runSimJob(job.payload as SimJob, job.outputs) : runBacktestJob(job.payload as BacktestJob, job.shared)

port.on("message", (job: ThreadJob) => {
  run(job).then(
    (output) => port.postMessage({ ok: true, output } satisfies ThreadReply),
    (err: unknown) => port.postMessage({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies ThreadReply)
  )
})
port.postMessage("ready")
