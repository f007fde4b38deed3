// The sweep work queue's wire contract (docs/simulation.md "Sweeps on a work queue"): the
// JetStream names, the settings both sides rely on, and how a job, a shared input and a result
// travel. Payloads are V8's structured-clone serialization (node:v8), gzipped: exactly what the
// local sweeps' postMessage does to the same values (NaN, undefined and typed arrays survive), so
// a result through the queue is the value a worker thread would have handed back.
import { deserialize, serialize } from "node:v8"
import { gunzipSync, gzipSync } from "node:zlib"

/** Jobs: a work-queue stream (a message is gone once a worker acknowledges it). */
export const JOBS_STREAM = "TWINBOOK_SWEEP_JOBS"
/** Results and shared inputs: a limits stream the caller reads from and purges when done. */
export const DATA_STREAM = "TWINBOOK_SWEEP_DATA"
/** The one durable pull consumer every worker shares. */
export const WORKERS_CONSUMER = "workers"

export const subjects = {
  jobs: "twinbook.sweep.job.>",
  job: (sweep: string, index: number): string => `twinbook.sweep.job.${sweep}.${index}`,
  sweepJobs: (sweep: string): string => `twinbook.sweep.job.${sweep}.>`,
  data: ["twinbook.sweep.result.>", "twinbook.sweep.blob.>"],
  result: (sweep: string, index: number): string => `twinbook.sweep.result.${sweep}.${index}`,
  sweepResults: (sweep: string): string => `twinbook.sweep.result.${sweep}.>`,
  blob: (sweep: string): string => `twinbook.sweep.blob.${sweep}`,
  /** Core NATS (not stored): "started job" notes, for the caller's progress line only. */
  events: (sweep: string): string => `twinbook.sweep.event.${sweep}`,
  maxDeliveries: `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${JOBS_STREAM}.${WORKERS_CONSUMER}`
} as const

/** A worker that stops answering for this long (killed, partitioned) has its job redelivered. */
export const ACK_WAIT_MS = 15_000
/** A running job's in-progress acknowledgement: several per ack_wait, so a slow healthy job is never redelivered. */
export const HEARTBEATS_PER_ACK_WAIT = 5
/** Deliveries of one job before JetStream gives up on it (a job that kills every worker). */
export const MAX_DELIVER = 3
/** What an abandoned sweep (its caller killed) leaves behind expires after this; a sweep must finish within it. */
export const MAX_AGE_MS = 7 * 86_400_000
/** Payloads go in chunks under NATS's default 1 MiB max_payload. */
export const CHUNK_BYTES = 512 * 1024

export const HEADER = {
  sweep: "Twinbook-Sweep",
  job: "Twinbook-Job",
  kind: "Twinbook-Kind",
  label: "Twinbook-Label",
  /** The caller's code identity (sim/queue/version.ts): a worker on other code refuses the job. */
  code: "Twinbook-Code",
  node: "Twinbook-Node",
  /** The shared input a job needs: `<sha256>:<parts>:<bytes>`. */
  blob: "Twinbook-Blob",
  /** Which run of a job a result part belongs to: `<worker>/<delivery>`. */
  run: "Twinbook-Run",
  worker: "Twinbook-Worker",
  part: "Twinbook-Part",
  parts: "Twinbook-Parts",
  /** A result that is a refusal: the reason. */
  refused: "Twinbook-Refused"
} as const

export type JobKind = "sim" | "backtest"
export const JOB_KINDS: ReadonlyArray<JobKind> = ["sim", "backtest"]

/** What a job's run hands back: its value, the text of each output file the job named, and a digest of what must not vary between runs. */
export interface JobOutput {
  readonly value: unknown
  readonly files: ReadonlyArray<string>
  /** Deterministic part of the result (wall times excluded): two runs of one job must agree on it. */
  readonly digest: string
}

export interface BlobRef {
  readonly sha256: string
  readonly parts: number
  readonly bytes: number
}

export const blobHeader = (b: BlobRef): string => `${b.sha256}:${b.parts}:${b.bytes}`
export const parseBlobHeader = (text: string): BlobRef | null => {
  const m = /^([0-9a-f]{64}):(\d+):(\d+)$/.exec(text)
  return m === null ? null : { sha256: m[1]!, parts: Number(m[2]), bytes: Number(m[3]) }
}

export const encode = (value: unknown): Uint8Array => gzipSync(serialize(value))
export const decode = <T>(bytes: Uint8Array): T => deserialize(gunzipSync(bytes)) as T

export const chunks = (bytes: Uint8Array): Uint8Array[] => {
  const out: Uint8Array[] = []
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) out.push(bytes.subarray(at, at + CHUNK_BYTES))
  return out.length === 0 ? [new Uint8Array(0)] : out
}

/** `nats://host:4222[,nats://…]` (or tls://, ws://, wss://): a work queue's servers, as opposed to any other value of a flag. */
export const isQueueUrl = (text: string): boolean => text.split(",").every((u) => /^(nats|tls|wss?):\/\/[^\s,]+$/.test(u.trim()))

/** "host:pid": how workers name themselves in logs, progress and results. */
export const workerName = (host: string, pid: number): string => `${host}:${pid}`
