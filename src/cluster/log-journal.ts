// The leader's journal on the replicated log (src/cluster/ports.ts): the same `Journal` the file
// journal is (src/store/file-journal.ts), so the exchange, the feed and the workers cannot tell
// them apart. Appends made in one turn form a batch; one batch is in flight at a time (each
// names the position of the one before it, which only its ack tells), the next gathers meanwhile.
// A batch's waiters resolve only when the log stored it AND the lease was still certainly ours
// when the ack arrived: a leader paused past its lease (a zombie) acknowledges nothing, even if
// its append landed before the new leader's marker (the new leader applies it; its clients were
// never told). Any refusal or failure is the end of this leadership: fail-stop, as a failed disk
// write is for the file journal (`onFatal`), with an error saying which.
import type { JournalRecord } from "../service/commands.ts"
import type { BatchListener, Journal } from "../store/file-journal.ts"
import { type Lease, LogFenced, type LogPosition, type ReplicatedLog } from "./ports.ts"

/** This process is no longer the leader: its lease lapsed, or another leader appended. */
export class LeadershipLost extends Error {
  readonly _tag = "LeadershipLost"
  constructor(
    readonly term: number,
    readonly reason: "lease_lapsed" | "fenced" | "log_unreachable",
    detail: string
  ) {
    super(`leadership of term ${term} lost (${reason}): ${detail}`)
  }
}

export interface LogJournalOptions {
  readonly log: ReplicatedLog
  readonly holder: string
  /** The current lease (the keeper renews it); read at every batch. */
  readonly lease: () => Lease
  readonly monoMs: () => number
  /** The position this leader's appends follow: its term marker's. */
  readonly after: LogPosition
  /** Called once, when leadership ends: nothing more is acknowledged. */
  readonly onFatal: (err: LeadershipLost) => void
  /** Runs the writer after the current turn (setImmediate live; the scheduler in the simulator). */
  readonly defer?: (run: () => void) => void
}

export interface LogJournal extends Journal {
  /** The position of the last batch stored. */
  readonly position: () => LogPosition
  /** Ends the leadership now (the lease keeper lost the lease): pending and later appends fail. */
  fail(err: LeadershipLost): void
}

// One piece: a factory whose append queue, flush and leadership loss share the pending batch.
export const openLogJournal = (o: LogJournalOptions): LogJournal => {
  const defer = o.defer ?? setImmediate
  let position = o.after
  let pending: JournalRecord[] = []
  let waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = []
  let inFlight: Promise<void> | null = null
  let failed: LeadershipLost | null = null
  let lastAppend: Promise<void> = Promise.resolve()
  const listeners: BatchListener[] = []

  const fail = (err: LeadershipLost): void => {
    if (failed !== null) return
    failed = err
    for (const w of waiters) w.reject(err)
    waiters = []
    pending = []
    o.onFatal(err)
  }

  const lapsed = (lease: Lease): boolean => o.monoMs() >= lease.validUntilMonoMs

  const writeBatches = async (): Promise<void> => {
    while (pending.length > 0 && failed === null) {
      const records = pending
      const batchWaiters = waiters
      pending = []
      waiters = []
      const lastSeq = records[records.length - 1]!.seq
      for (const l of listeners) l.cut(lastSeq)
      const lease = o.lease()
      if (lapsed(lease)) {
        for (const w of batchWaiters) w.reject(new LeadershipLost(lease.term, "lease_lapsed", "the lease lapsed before the batch was sent"))
        return fail(new LeadershipLost(lease.term, "lease_lapsed", "the lease lapsed before a batch was sent"))
      }
      let stored: LogPosition
      try {
        stored = await o.log.append({ term: lease.term, holder: o.holder, records }, position)
      } catch (err) {
        const lost =
          err instanceof LogFenced
            ? new LeadershipLost(lease.term, "fenced", err.message)
            : new LeadershipLost(lease.term, "log_unreachable", `append failed, its outcome unknown: ${err instanceof Error ? err.message : String(err)}`)
        for (const w of batchWaiters) w.reject(lost)
        return fail(lost)
      }
      // Acknowledged only while the lease is certainly still ours: a pause past it means another
      // leader may have taken over while this append was in flight.
      const now = o.lease()
      if (lapsed(now)) {
        const lost = new LeadershipLost(now.term, "lease_lapsed", `batch stored at position ${stored} after the lease lapsed: not acknowledged`)
        for (const w of batchWaiters) w.reject(lost)
        return fail(lost)
      }
      position = stored
      for (const l of listeners) l.durable(lastSeq)
      for (const w of batchWaiters) w.resolve()
    }
  }
  const kick = (): void => {
    if (inFlight !== null) return
    inFlight = new Promise<void>((done) =>
      defer(() =>
        void writeBatches().finally(() => {
          inFlight = null
          done()
          if (pending.length > 0 && failed === null) kick()
        })
      )
    )
  }
  const drain = async (): Promise<void> => {
    while (inFlight !== null || (pending.length > 0 && failed === null)) {
      if (inFlight === null) kick()
      await inFlight
    }
    if (failed !== null) throw failed
  }

  return {
    append: (record) => {
      if (failed !== null) return Promise.reject(failed)
      pending.push(record)
      const p = new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }))
      lastAppend = p
      kick()
      return p
    },
    sync: () => (failed !== null ? Promise.reject(failed) : lastAppend),
    onBatch: (listener) => void listeners.push(listener),
    close: drain,
    position: () => position,
    fail
  }
}
