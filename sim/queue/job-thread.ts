// A queue worker's job thread: runs one job at a time off the worker's main thread, so the main
// thread stays free to send JetStream its in-progress acknowledgements while a long run keeps this
// one busy (a simulated day never yields to the event loop for long). It knows no job kind: the
// thread's entry module (sim/job-thread.ts) hands it one runner per kind, so the queue sits below
// the sweeps and the backtester whose jobs it carries rather than importing them.
import { parentPort } from "node:worker_threads"
import type { JobKind, JobOutput } from "./protocol.ts"

export interface ThreadJob {
  readonly kind: JobKind
  readonly payload: unknown
  readonly outputs: ReadonlyArray<string>
  readonly shared: { readonly sha256: string; readonly bytes: Uint8Array } | null
}

export type ThreadReply = { readonly ok: true; readonly output: JobOutput } | { readonly ok: false; readonly error: string }

/** Runs one job of its kind: the payload, the output paths the caller named, the shared input if the job has one. */
export type JobRunner = (payload: unknown, outputs: ReadonlyArray<string>, shared: ThreadJob["shared"]) => JobOutput | Promise<JobOutput>

/** Serves the worker's jobs on this thread, each with its kind's runner, then tells the worker it is ready. */
export const serveJobs = (runners: Readonly<Record<JobKind, JobRunner>>): void => {
  const port = parentPort
  if (port === null) throw new Error("the job thread runs as a worker thread")
  // async: a runner that throws at once is a failed job, not a dead thread.
  const run = async (job: ThreadJob): Promise<JobOutput> => runners[job.kind](job.payload, job.outputs, job.shared)
  port.on("message", (job: ThreadJob) => {
    run(job).then(
      (output) => port.postMessage({ ok: true, output } satisfies ThreadReply),
      (err: unknown) => port.postMessage({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies ThreadReply)
    )
  })
  port.postMessage("ready")
}
