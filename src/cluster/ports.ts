// The two ports twinbook's cluster mode stands on (DESIGN.md §8, docs/cluster.md): a replicated
// log of journal batches and a leader lease. Live they are a JetStream stream and a JetStream KV
// key (src/cluster/jetstream-*.ts); in the simulator, seeded simulated ones with crash, pause and
// expiry faults; in unit tests, in-memory ones (src/cluster/memory.ts). Nothing home-made does
// consensus or replication: the log's `append` is acknowledged only once the engine under it
// stored the batch on a quorum, synced.
//
// The fencing rule, the only safety rule that is ours: every append names the log position it
// expects to follow (`expectedLast`), and the log refuses it (`LogFenced`) when anything else was
// appended after that position. A leader that took over appends a term marker (an empty batch)
// before its first command; from then on a deposed leader's appends are refused, so it can never
// acknowledge another record. A leader also stops acknowledging the moment its lease lapses on its
// own monotonic clock, whether or not an append was refused.
import type { JournalRecord } from "../service/commands.ts"

/** A log position: JetStream's stream sequence, 1 for the first batch, 0 for an empty log. */
export type LogPosition = number

/** One append: the records a leader made durable together (empty: a term marker). */
export interface LogBatch {
  /** The lease term of the leader that appended it (only grows across leaders). */
  readonly term: number
  /** Which process appended it (for logs and the auditor's "one leader per term" check). */
  readonly holder: string
  /** Contiguous journal records (seq n, n+1, …); none in a term marker. */
  readonly records: ReadonlyArray<JournalRecord>
}

/** An append refused because the log moved past `expectedLast`: the writer is deposed. */
export class LogFenced extends Error {
  readonly _tag = "LogFenced"
  constructor(
    readonly expectedLast: LogPosition,
    readonly detail: string
  ) {
    super(`append after position ${expectedLast} refused: ${detail} (another leader has appended)`)
  }
}

export interface LogReader {
  /** Stops reading; the callback is not called again after this resolves. */
  stop(): Promise<void>
}

export interface ReplicatedLog {
  /**
   * Appends `batch` right after position `expectedLast`; resolves with its own position once the
   * log stored it durably (a quorum, synced). Rejects with `LogFenced` when the log's last
   * position is not `expectedLast`, with another error when the log cannot be reached (the
   * caller treats both as the end of its leadership: it cannot know whether the batch landed).
   */
  append(batch: LogBatch, expectedLast: LogPosition): Promise<LogPosition>
  /** The log's last position now (0 when empty). */
  lastPosition(): Promise<LogPosition>
  /**
   * Calls `onBatch` for each batch from position `from` on, in order, exactly once each; goes on
   * with batches appended later until `stop`. A batch that cannot be decoded is an error (`onError`),
   * never skipped.
   */
  follow(from: LogPosition, onBatch: (position: LogPosition, batch: LogBatch) => void, onError: (err: unknown) => void): LogReader
}

/** A held lease: its term, and until when (monotonic ms) it is certainly still ours. */
export interface Lease {
  readonly holder: string
  readonly term: number
  /** Monotonic ms after which the holder must assume it lost the lease (renewals move it). */
  readonly validUntilMonoMs: number
}

export interface LeasePort {
  /** The lease's lifetime: a holder that does not renew within it loses the lease. */
  readonly ttlMs: number
  /** Takes the lease if nobody holds it: the new lease (with a term greater than any before), else null. */
  acquire(holder: string): Promise<Lease | null>
  /** Renews `lease`: the renewed lease, or null when it is no longer ours (another took it, or it lapsed). */
  renew(lease: Lease): Promise<Lease | null>
  /** Gives the lease up at once (a clean stop), so a standby need not wait for it to lapse. */
  release(lease: Lease): Promise<void>
}
