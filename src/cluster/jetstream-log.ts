// The replicated log (src/cluster/ports.ts `ReplicatedLog`) on a NATS JetStream stream
// (docs/cluster.md "The replicated journal"). One batch is one message (./journal-batch.ts); its
// log position is the message's stream sequence. JetStream does the consensus and replication:
// a publish is acknowledged once the stream's Raft group stored it on a quorum, and with the
// servers' `sync_interval: always` each of those synced it to disk first. Ours is the fence: every
// append carries `Nats-Expected-Last-Sequence`, which the stream leader checks against the
// stream's last sequence, in its Raft order, before it proposes the message.
//
// One append at a time: a caller appends batch k+1 only after batch k's append resolved (group
// commit gathers the next batch meanwhile). JetStream would take a pipelined k+1 (the clustered
// leader checks the expectation against the sequence including proposals in flight), but then a
// failed k leaves k+1's outcome tied to it, and "which of my appends landed" gets harder to say;
// one in flight keeps every outcome the append's own. A second concurrent append is refused.
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig
} from "@nats-io/jetstream"
import { errors, type NatsConnection, nanos, RequestError } from "@nats-io/transport-node"
import { type EncodedBatch, encodeBatch } from "./journal-batch.ts"
import { type FollowOptions, followStream } from "./jetstream-follow.ts"
import { type LogBatch, LogFenced, type LogPosition, type LogReader, type ReplicatedLog } from "./ports.ts"

export interface JetStreamLogOptions {
  /** The stream's name (default TWINBOOK_JOURNAL). */
  readonly stream?: string
  /** The one subject the stream holds (default twinbook.journal). */
  readonly subject?: string
  /** Raft replicas: 3 in production (a quorum of 2 survives one node); 1 for single-node tests. */
  readonly replicas?: number
  /** The largest message the stream takes (its max_msg_size); the server's max_payload caps it further. */
  readonly maxMessageBytes?: number
  /** How long one publish waits for its acknowledgement. */
  readonly appendTimeoutMs?: number
  /**
   * Publishes per append when the stream does not answer (no responders, timeout); 1 = never
   * retry. The default (DEFAULT_APPEND_ATTEMPTS; pauses of 0.25, 0.5, 0.75, then 1 s) rides out the election after
   * the stream's leader dies: measured on 3 local nodes, one timed-out publish and three
   * unanswered ones before the new leader took the fifth.
   */
  readonly appendAttempts?: number
  /** For `follow`: see ./jetstream-follow.ts. */
  readonly follow?: FollowOptions
}

/**
 * Publishes per append while the stream does not answer: about 16 s of pauses (1 s each past the
 * fourth). Six (3.5 s) gave up during an election on a machine with both cores busy; waiting longer
 * is safe — the fence refuses a stale append and the leader acknowledges only while its lease holds.
 */
export const DEFAULT_APPEND_ATTEMPTS = 20

export const DEFAULT_STREAM = "TWINBOOK_JOURNAL"
export const DEFAULT_SUBJECT = "twinbook.journal"
/** Batches up to a few MB: group commit under load gathers thousands of ~100-byte records. */
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
/** Room left in a message for the batch's headers and NATS's own. */
const HEADER_ALLOWANCE_BYTES = 1024

/**
 * The stream twinbook creates (and the settings it insists on in one it finds):
 *  - file storage: an acknowledged batch must survive every node restarting (memory would not);
 *  - `num_replicas` 3 in production: acknowledged only once two of three stored it;
 *  - limits retention with no limit at all (no max_msgs/bytes/age): the journal is never pruned —
 *    a work-queue or interest stream would delete what a consumer read; `discard: new`, so a store
 *    that fills refuses the next append (the leader stops) rather than dropping the oldest batches;
 *  - `deny_delete`, `deny_purge`, no rollup headers: nobody removes a batch through the API;
 *  - `max_msg_size` a few MB for big group-commit batches (the servers' `max_payload`, 1 MB by
 *    default, must be raised to match, or it caps batches instead — `maxBatchBytes` takes both);
 *  - `duplicate_window` 1 s, the smallest useful: twinbook sends no Nats-Msg-Id, because the fence
 *    already makes a repeated publish fail (it expects a position the first one moved past), so the
 *    window would hold nothing;
 *  - `allow_direct` off: direct gets are answered by any replica, a lagging one included; the
 *    journal is read through consumers and the stream leader, never through direct gets.
 */
export const journalStreamConfig = (stream: string, subject: string, replicas: number, maxMessageBytes: number): Partial<StreamConfig> & { name: string } => ({
  name: stream,
  description: "twinbook journal: one message per group-committed batch (docs/cluster.md)",
  subjects: [subject],
  storage: StorageType.File,
  num_replicas: replicas,
  retention: RetentionPolicy.Limits,
  max_msgs: -1,
  max_bytes: -1,
  max_age: 0,
  max_msgs_per_subject: -1,
  max_msg_size: maxMessageBytes,
  discard: DiscardPolicy.New,
  duplicate_window: nanos(1_000),
  deny_delete: true,
  deny_purge: true,
  allow_rollup_hdrs: false,
  allow_direct: false
})

/** What makes an existing stream unsafe to hold the journal (empty: safe). */
export const streamConfigProblems = (actual: Partial<StreamConfig>, subject: string, replicas: number): string[] => {
  const problems: string[] = []
  const unlimited = (v: number | undefined): boolean => v === undefined || v <= 0
  if (actual.storage !== StorageType.File) problems.push(`storage is ${actual.storage}, not file: acknowledged batches would not survive a restart`)
  if (actual.num_replicas !== replicas) problems.push(`num_replicas is ${actual.num_replicas}, not ${replicas}`)
  if (actual.retention !== RetentionPolicy.Limits) problems.push(`retention is ${actual.retention}, not limits: read batches would be deleted`)
  for (const limit of ["max_msgs", "max_bytes", "max_age", "max_msgs_per_subject"] as const) {
    if (!unlimited(actual[limit])) problems.push(`${limit} is ${actual[limit]}: the journal would be pruned`)
  }
  if (!(actual.subjects ?? []).includes(subject)) problems.push(`subjects ${JSON.stringify(actual.subjects ?? [])} do not include ${subject}`)
  if (actual.deny_delete !== true) problems.push("deny_delete is off: a batch could be deleted through the API")
  if (actual.deny_purge !== true) problems.push("deny_purge is off: the journal could be purged through the API")
  if (actual.allow_rollup_hdrs === true) problems.push("allow_rollup_hdrs is on: a rollup header would purge the journal")
  if (actual.sealed === true) problems.push("the stream is sealed: appends are refused")
  if (actual.mirror !== undefined && actual.mirror !== null) problems.push("the stream is a mirror: it takes no appends")
  return problems
}

/** The stream's configuration does not keep the journal safe; twinbook will not run on it. */
export class UnsafeStream extends Error {
  readonly _tag = "UnsafeStream"
  constructor(
    readonly stream: string,
    readonly problems: ReadonlyArray<string>
  ) {
    super(`stream ${stream} cannot hold the journal: ${problems.join("; ")} (fix or remove the stream; docs/cluster.md)`)
  }
}

/** The append may or may not have landed: the log could not be reached, or answered with an error. */
export class LogUnreachable extends Error {
  readonly _tag = "LogUnreachable"
  constructor(
    readonly expectedLast: LogPosition,
    readonly detail: string,
    options?: ErrorOptions
  ) {
    super(`append after position ${expectedLast} not acknowledged: ${detail} (whether it landed is unknown)`, options)
  }
}

export const isWrongLastSequence = (err: unknown): boolean =>
  // 10071 is what 2.10 answers (JSStreamWrongLastSequenceErrF, "wrong last sequence: N");
  // 10164 (JSStreamWrongLastSequenceConstantErr) is newer servers' form of the same refusal.
  err instanceof JetStreamApiError && (err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)

const isTimeout = (err: unknown): boolean => err instanceof errors.TimeoutError

/** Nobody took the request (no stream leader during an election): it was certainly not stored. */
const wasNotReceived = (err: unknown): boolean => {
  if (err instanceof RequestError && err.isNoResponders()) return true
  const cause = err instanceof Error ? err.cause : undefined
  if (cause instanceof RequestError && cause.isNoResponders()) return true
  // The server answered 503 (e.g. "JetStream cluster not available"): it refused, stored nothing.
  return err instanceof JetStreamApiError && err.status === 503
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const describe = (err: unknown): string => (err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err))

/** Creates the stream if it is absent (idempotent), refuses an unsafe one, and returns the log. */
export const openJetStreamLog = async (nc: NatsConnection, options: JetStreamLogOptions = {}): Promise<JetStreamLog> => {
  const stream = options.stream ?? DEFAULT_STREAM
  const subject = options.subject ?? DEFAULT_SUBJECT
  const replicas = options.replicas ?? 3
  const jsm = await jetstreamManager(nc)
  const want = journalStreamConfig(stream, subject, replicas, options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES)
  const existing = async (): Promise<StreamConfig | null> => {
    try {
      return (await jsm.streams.info(stream)).config
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return null
      throw err
    }
  }
  let config = await existing()
  if (config === null) {
    try {
      config = (await jsm.streams.add(want)).config
    } catch (err) {
      // Another process created it meanwhile (with another configuration, or the server says so):
      // judge what is there.
      config = await existing()
      if (config === null) throw err
    }
  }
  const problems = streamConfigProblems(config, subject, replicas)
  if (problems.length > 0) throw new UnsafeStream(stream, problems)
  return new JetStreamLog(nc, jetstream(nc), jsm, stream, subject, config.max_msg_size, options)
}

export class JetStreamLog implements ReplicatedLog {
  private appending = false
  private readonly appendTimeoutMs: number
  private readonly appendAttempts: number

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly stream: string,
    readonly subject: string,
    private readonly streamMaxMessageBytes: number,
    private readonly options: JetStreamLogOptions
  ) {
    this.appendTimeoutMs = options.appendTimeoutMs ?? 5_000
    this.appendAttempts = Math.max(1, options.appendAttempts ?? DEFAULT_APPEND_ATTEMPTS)
  }

  /** The largest encoded batch (its records' frames) an append takes: the stream's and the server's limits, less room for headers. */
  get maxBatchBytes(): number {
    const serverMax = this.nc.info?.max_payload ?? 1024 * 1024
    const streamMax = this.streamMaxMessageBytes > 0 ? this.streamMaxMessageBytes : serverMax
    return Math.min(serverMax, streamMax) - HEADER_ALLOWANCE_BYTES
  }

  async append(batch: LogBatch, expectedLast: LogPosition): Promise<LogPosition> {
    if (this.appending) throw new Error("JetStreamLog.append called while another append is in flight: append one batch at a time")
    const msg = encodeBatch(batch)
    if (msg.payload.length > this.maxBatchBytes) {
      throw new Error(`batch of ${msg.payload.length} bytes exceeds the log's ${this.maxBatchBytes} (stream max_msg_size, server max_payload): split it`)
    }
    this.appending = true
    try {
      return await this.publish(msg, expectedLast)
    } finally {
      this.appending = false
    }
  }

  /**
   * Publishes with the fence, retrying only what is safe to retry: a request nobody received
   * (no responders, a 503) and a timeout. After a timeout the first publish may have landed;
   * then a retry is refused by the fence (the log is past `expectedLast`), and the message at
   * `expectedLast + 1` tells which: ours (same term, holder, records, bytes) means this append
   * landed there; anything else, another leader's, means we are fenced.
   */
  private async publish(msg: EncodedBatch, expectedLast: LogPosition): Promise<LogPosition> {
    let mayHaveLanded = false
    for (let attempt = 1; ; attempt++) {
      try {
        const ack = await this.js.publish(this.subject, msg.payload, {
          headers: msg.headers,
          expect: { lastSequence: expectedLast, streamName: this.stream },
          timeout: this.appendTimeoutMs
        })
        if (ack.seq !== expectedLast + 1 || ack.duplicate) throw new LogUnreachable(expectedLast, `the stream acknowledged position ${ack.seq}${ack.duplicate ? " as a duplicate" : ""}`)
        return ack.seq
      } catch (err) {
        if (err instanceof LogUnreachable) throw err
        if (isWrongLastSequence(err)) {
          if (mayHaveLanded && (await this.holdsOurs(expectedLast + 1, msg))) return expectedLast + 1
          throw new LogFenced(expectedLast, (err as Error).message)
        }
        const timeout = isTimeout(err)
        const notReceived = !timeout && wasNotReceived(err)
        if (!(timeout || notReceived) || attempt >= this.appendAttempts) {
          const why = timeout ? `no acknowledgement within ${this.appendTimeoutMs} ms` : notReceived ? "no stream leader answered (an election, or too many nodes down)" : describe(err)
          throw new LogUnreachable(expectedLast, `${why} after ${attempt} attempt(s)`, { cause: err })
        }
        mayHaveLanded ||= timeout
        await sleep(Math.min(250 * attempt, 1_000))
      }
    }
  }

  /** Whether the message at `position` is `msg` (false when it cannot be read). */
  private async holdsOurs(position: LogPosition, msg: EncodedBatch): Promise<boolean> {
    try {
      const stored = await this.jsm.streams.getMessage(this.stream, { seq: position })
      if (stored === null) return false
      for (const key of msg.headers.keys()) if (stored.header.get(key) !== msg.headers.get(key)) return false
      return Buffer.from(stored.data).equals(msg.payload)
    } catch {
      return false
    }
  }

  /** From the stream leader's stream info (one small request; the leader knows its last sequence). */
  async lastPosition(): Promise<LogPosition> {
    return (await this.jsm.streams.info(this.stream)).state.last_seq
  }

  follow(from: LogPosition, onBatch: (position: LogPosition, batch: LogBatch) => void, onError: (err: unknown) => void): LogReader {
    // A pull must hold the largest message whole (else the server withholds it): twice it, and then some.
    const pullMaxBytes = Math.max(32 * 1024 * 1024, 2 * Math.max(this.streamMaxMessageBytes, this.nc.info?.max_payload ?? 0) + 65_536)
    return followStream(this.nc, this.js, this.jsm, this.stream, from, onBatch, onError, { pullMaxBytes, ...this.options.follow })
  }
}
