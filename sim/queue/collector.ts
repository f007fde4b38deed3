// The caller's bookkeeping of a sweep on the queue: result parts gathered per run, exactly one
// result kept per job (the first complete one), later ones checked against it, the files each
// kept result carries written where its job said, and the progress counts. No network here.
//
// Exactly once: a job can be run twice (its worker stalled past ack_wait, or was killed after
// storing its result but before acknowledging), so results are keyed by job and the first kept.
// Runs are deterministic: a later result must carry the same digest; a different one is a conflict.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import type { QueueProgress } from "./progress.ts"
import { decode, type JobOutput, MAX_DELIVER } from "./protocol.ts"

export interface CollectedJob {
  readonly label: string
  readonly outputs: ReadonlyArray<string>
}

export type JobOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string }

/** A result still arriving in parts: one per job and run (`<worker>/<delivery>`). */
interface Pending {
  readonly parts: Array<Uint8Array | undefined>
  got: number
}

export class ResultCollector {
  readonly outcomes: Array<JobOutcome | undefined>
  readonly conflicts: string[] = []
  readonly workers = new Set<string>()
  duplicates = 0
  private readonly digests: Array<string | undefined>
  private readonly winners: Array<string | undefined>
  private readonly running = new Map<number, string>()
  private readonly pending = new Map<string, Pending>()
  private done = 0

  constructor(
    private readonly jobs: ReadonlyArray<CollectedJob>,
    private readonly progress: QueueProgress,
    private readonly onSettle: (index: number, outcome: JobOutcome) => void,
    private readonly onAllDone: () => void
  ) {
    this.outcomes = new Array(jobs.length)
    this.digests = new Array(jobs.length)
    this.winners = new Array(jobs.length)
  }

  showState(): void {
    this.progress.update({ done: this.done, total: this.jobs.length, running: this.running.size, workers: this.workers.size })
  }

  private known(index: number): boolean {
    return Number.isSafeInteger(index) && index >= 0 && index < this.jobs.length
  }

  /** A worker said it started a job (progress only). */
  started(index: number, worker: string): void {
    if (!this.known(index) || this.outcomes[index] !== undefined) return
    this.running.set(index, worker)
    this.workers.add(worker)
    this.showState()
  }

  /** JetStream gave the job up after MAX_DELIVER deliveries: that is its result. */
  gaveUp(index: number, deliveries: number): void {
    if (!this.known(index) || this.outcomes[index] !== undefined) return
    this.settle(index, { ok: false, error: `delivered ${deliveries} times (max_deliver ${MAX_DELIVER}) and no worker finished it: each one that took it died or was stopped mid-job` })
  }

  /** One part of one run's result; the run's result is taken once all its parts are in. */
  part(index: number, run: string, worker: string, part: number, parts: number, data: Uint8Array): void {
    if (!this.known(index) || !(Number.isSafeInteger(parts) && parts > 0 && Number.isSafeInteger(part) && part >= 0 && part < parts)) return
    const key = `${index} ${run}`
    const p = this.pending.get(key) ?? { parts: new Array<Uint8Array | undefined>(parts), got: 0 }
    this.pending.set(key, p)
    if (p.parts[part] === undefined) p.got++
    p.parts[part] = Uint8Array.from(data)
    if (p.got < parts) return
    this.pending.delete(key)
    let output: JobOutput
    try {
      output = decode<JobOutput>(Buffer.concat(p.parts as Uint8Array[]))
    } catch (err) {
      this.progress.note(`queue: an unreadable result for ${this.jobs[index]!.label} from ${worker}: ${(err as Error).message}`)
      return
    }
    this.accept(index, output, worker)
  }

  private accept(index: number, output: JobOutput, worker: string): void {
    const job = this.jobs[index]!
    this.workers.add(worker)
    if (this.outcomes[index] !== undefined) {
      if (this.digests[index] === output.digest) {
        this.duplicates++
        this.progress.note(`queue: ${job.label} ran twice (also on ${worker}); the same result, kept once`)
      } else {
        const line = `${job.label}: two runs disagree (${this.winners[index]}: ${this.digests[index]?.slice(0, 16)}, ${worker}: ${output.digest.slice(0, 16)}), a determinism bug or two workers on different platforms; the first result is shown`
        this.conflicts.push(line)
        this.progress.note(`queue: CONFLICT ${line}`)
      }
      return
    }
    if (output.files.length !== job.outputs.length) {
      return this.settle(index, { ok: false, error: `worker ${worker} sent ${output.files.length} output files for ${job.outputs.length}` })
    }
    job.outputs.forEach((path, i) => {
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, output.files[i]!)
    })
    this.digests[index] = output.digest
    this.winners[index] = worker
    this.settle(index, { ok: true, value: output.value })
  }

  private settle(index: number, outcome: JobOutcome): void {
    this.outcomes[index] = outcome
    this.running.delete(index)
    this.done++
    this.onSettle(index, outcome)
    this.showState()
    if (this.done === this.jobs.length) this.onAllDone()
  }
}
