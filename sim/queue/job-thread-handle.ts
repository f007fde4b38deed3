// The worker's handle on one job thread (job-thread.ts, started on the entry module it is given:
// sim/job-thread.mjs, which registers the job kinds): starts it, runs one job at a time on it,
// and turns the thread dying mid-job (out of memory, a crash in native code) into ThreadDied, so
// the worker hands that job back to the queue rather than reporting it as the job's result.
import { Worker } from "node:worker_threads"
import type { ThreadJob, ThreadReply } from "./job-thread.ts"

export class ThreadDied extends Error {
  override readonly name = "ThreadDied"
}

export class JobThread {
  readonly ready: Promise<void>
  private readonly worker: Worker
  private pending: { resolve: (r: ThreadReply) => void; reject: (e: Error) => void } | null = null
  private exited = false

  constructor(entry: URL) {
    this.worker = new Worker(entry)
    this.ready = new Promise((resolve, reject) => {
      this.worker.on("message", (m: ThreadReply | "ready") => {
        if (m === "ready") return resolve()
        const p = this.pending
        this.pending = null
        p?.resolve(m)
      })
      const die = (why: string): void => {
        this.exited = true
        reject(new ThreadDied(why))
        const p = this.pending
        this.pending = null
        p?.reject(new ThreadDied(why))
      }
      this.worker.on("error", (err) => die(`job thread failed: ${err.message}`))
      this.worker.on("exit", (code) => die(`job thread exited (code ${code})`))
    })
  }

  get alive(): boolean {
    return !this.exited
  }

  run(job: ThreadJob): Promise<ThreadReply> {
    if (this.exited) return Promise.reject(new ThreadDied("job thread is gone"))
    if (this.pending !== null) return Promise.reject(new Error("job thread is busy"))
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject }
      this.worker.postMessage(job)
    })
  }

  terminate(): Promise<number> {
    return this.worker.terminate()
  }
}
