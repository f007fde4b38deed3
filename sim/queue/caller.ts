// The caller's side of a sweep on the work queue: publishes one job per seed or combination (and
// the sweep's shared input once), feeds what comes back to the collector (exactly one result per
// job, collector.ts), and purges its sweep's messages whatever the ending.
import { randomBytes } from "node:crypto"
import { type JetStreamClient, type JetStreamManager, jetstream, type JsMsg } from "@nats-io/jetstream"
import { headers, type NatsConnection, type Subscription } from "@nats-io/transport-node"
import { publishBlob } from "./blob.ts"
import { type JobOutcome, ResultCollector } from "./collector.ts"
import type { QueueProgress } from "./progress.ts"
import { type BlobRef, blobHeader, DATA_STREAM, encode, HEADER, type JobKind, JOBS_STREAM, subjects } from "./protocol.ts"
import { connectQueue, ensureQueue } from "./streams.ts"
import { codeVersion } from "./version.ts"

export type { JobOutcome } from "./collector.ts"

export interface QueueJobSpec {
  /** How logs and errors name the job: "chaos seed 3", "backtest spread=100 levels=1". */
  readonly label: string
  readonly payload: unknown
  /** Files the job's run produces, written by the caller at these paths. */
  readonly outputs: ReadonlyArray<string>
}

export interface QueueSweep {
  readonly servers: string
  readonly kind: JobKind
  readonly jobs: ReadonlyArray<QueueJobSpec>
  /** One input every job needs (a backtest's dataset), sent once. */
  readonly shared?: Uint8Array
  /** Each accepted result, in completion order (after its files are written). */
  readonly onResult?: (index: number, outcome: JobOutcome) => void
  readonly progress: QueueProgress
  /** The code identity the jobs claim (default: this checkout's); tests claim another. */
  readonly code?: string
}

export interface QueueSweepResult {
  readonly outcomes: ReadonlyArray<JobOutcome>
  /** Jobs whose second result differed from the first: a determinism bug, named. */
  readonly conflicts: ReadonlyArray<string>
  readonly workers: ReadonlyArray<string>
  readonly duplicates: number
}

/** A worker refused a job (other code, other Node, a job it cannot read): the sweep stops. */
export class QueueRefused extends Error {
  override readonly name = "QueueRefused"
}

/** SIGINT or SIGTERM while the sweep ran (its jobs are purged; the CLIs exit 130). */
export class QueueInterrupted extends Error {
  override readonly name = "QueueInterrupted"
}

export { QueueUnreachable } from "./streams.ts"

const publishJobs = async (js: JetStreamClient, s: QueueSweep, sweep: string, blob: BlobRef | null, seqToJob: Map<number, number>): Promise<void> => {
  const code = s.code ?? codeVersion()
  const publishJob = async (index: number): Promise<void> => {
    const job = s.jobs[index]!
    const h = headers()
    h.set(HEADER.sweep, sweep)
    h.set(HEADER.job, String(index))
    h.set(HEADER.kind, s.kind)
    h.set(HEADER.label, job.label)
    h.set(HEADER.code, code)
    h.set(HEADER.node, process.versions.node)
    if (blob !== null) h.set(HEADER.blob, blobHeader(blob))
    const ack = await js.publish(subjects.job(sweep, index), encode({ payload: job.payload, outputs: job.outputs }), { headers: h })
    seqToJob.set(ack.seq, index)
  }
  // In batches: an acknowledged publish per job, without one round trip each.
  for (let i = 0; i < s.jobs.length; i += 256) await Promise.all(Array.from({ length: Math.min(256, s.jobs.length - i) }, (_, k) => publishJob(i + k)))
}

/** A stored result part, or a refusal (which stops the sweep). */
const onResultMessage = (m: JsMsg, sweep: string, s: QueueSweep, collector: ResultCollector, fail: (err: Error) => void): void => {
  const index = Number(m.subject.slice(subjects.sweepResults(sweep).length - 1))
  const h = m.headers
  const worker = h?.get(HEADER.worker) ?? "?"
  const refused = h?.get(HEADER.refused) ?? ""
  if (refused !== "") return fail(new QueueRefused(`worker ${worker} refused ${s.jobs[index]?.label ?? `job ${index}`}: ${refused}`))
  collector.part(index, h?.get(HEADER.run) ?? "", worker, Number(h?.get(HEADER.part)), Number(h?.get(HEADER.parts)), m.data)
}

const json = <T>(data: Uint8Array): T | null => {
  try {
    return JSON.parse(new TextDecoder().decode(data)) as T
  } catch {
    return null
  }
}

/** Runs the jobs on the queue; resolves once every job has its result (or JetStream gave it up). */
export const runOnQueue = async (s: QueueSweep): Promise<QueueSweepResult> => {
  const nc: NatsConnection = await connectQueue(s.servers, "twinbook sweep caller")
  const sweep = randomBytes(6).toString("hex") // live-only: a fresh id names this sweep's subjects
  let finish!: () => void
  let fail!: (err: Error) => void
  const finished = new Promise<void>((resolve, reject) => {
    finish = resolve
    fail = reject
  })
  // Settled early (a refusal while jobs are still being published): awaited below, not unhandled.
  finished.catch(() => undefined)
  const collector = new ResultCollector(s.jobs, s.progress, (i, o) => s.onResult?.(i, o), finish)
  const seqToJob = new Map<number, number>()
  const subs: Subscription[] = []
  const onSignal = (): void => fail(new QueueInterrupted("interrupted"))
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  let jsm: JetStreamManager | null = null
  let stopResults: (() => Promise<unknown>) | null = null
  try {
    jsm = (await ensureQueue(nc)).jsm
    const js = jetstream(nc)
    subs.push(
      nc.subscribe(subjects.events(sweep), {
        callback: (_err, m) => {
          const e = json<{ job: number; worker: string }>(m.data)
          if (e !== null && typeof e.worker === "string") collector.started(e.job, e.worker)
        }
      }),
      // A job delivered MAX_DELIVER times without an acknowledgement is given up by JetStream: its result is an error.
      nc.subscribe(subjects.maxDeliveries, {
        callback: (_err, m) => {
          const a = json<{ stream_seq: number; deliveries: number }>(m.data)
          const index = a === null ? undefined : seqToJob.get(a.stream_seq)
          if (index !== undefined) collector.gaveUp(index, a!.deliveries)
        }
      })
    )
    await nc.flush()
    const results = await (await js.consumers.get(DATA_STREAM, { filter_subjects: [subjects.sweepResults(sweep)] })).consume()
    stopResults = () => results.close()
    void (async () => {
      for await (const m of results) onResultMessage(m, sweep, s, collector, fail)
    })().catch((err: unknown) => fail(err instanceof Error ? err : new Error(String(err))))

    const blob = s.shared === undefined ? null : await publishBlob(js, sweep, s.shared)
    await publishJobs(js, s, sweep, blob, seqToJob)
    const input = blob === null ? "" : ` (shared input ${(blob.bytes / 1024).toFixed(0)} KiB in ${blob.parts} part${blob.parts === 1 ? "" : "s"})`
    s.progress.note(`queue: sweep ${sweep}: ${s.jobs.length} jobs${input} on ${s.servers}; any \`npm run sim:worker -- ${s.servers}\` runs them`)
    collector.showState()
    if (s.jobs.length === 0) finish()
    await finished
    return { outcomes: collector.outcomes as JobOutcome[], conflicts: collector.conflicts, workers: [...collector.workers].sort(), duplicates: collector.duplicates }
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
    s.progress.done()
    for (const sub of subs) sub.unsubscribe()
    await stopResults?.()
    // This sweep's jobs (any left, e.g. after a refusal), results and shared input.
    if (jsm !== null) {
      await jsm.streams.purge(JOBS_STREAM, { filter: subjects.sweepJobs(sweep) }).catch(() => undefined)
      await jsm.streams.purge(DATA_STREAM, { filter: subjects.sweepResults(sweep) }).catch(() => undefined)
      await jsm.streams.purge(DATA_STREAM, { filter: subjects.blob(sweep) }).catch(() => undefined)
    }
    await nc.close()
  }
}
