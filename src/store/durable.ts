// Durable exchange state under DATA_DIR: recovery at start-up (newest valid
// snapshot + replay of the journal after it, torn tail truncated and reported)
// and snapshots that only ever contain durable records. Recovery says what it did
// (`describeRecovery`): each skipped snapshot and why, and a full replay when no
// snapshot could be used. Files go through the Storage port (node:fs, or sim's disk).
import { join } from "node:path"
import { type ExchangeSnapshot, restoreExchange, takeExchangeSnapshot } from "../service/exchange-snapshot.ts"
import { Exchange, type JournalSink } from "../service/exchange.ts"
import { type Journal, type JournalOptions, openJournal, scanJournal, type TornTail } from "./file-journal.ts"
import { pruneSnapshots, scanSnapshots, type SkippedSnapshot, writeSnapshot } from "./snapshots.ts"
import { nodeStorage, type Storage } from "./storage.ts"

export interface RecoveryReport {
  readonly snapshotSeq: number | null
  /** Snapshots passed over (newest first), each with why and where it was moved. */
  readonly skippedSnapshots: ReadonlyArray<SkippedSnapshot>
  readonly replayed: number
  readonly lastSeq: number
  readonly tornTail: TornTail | null
}

/** The start-up lines recovery prints: one per skipped snapshot, the fallback to a full replay, a cut tail. */
export const describeRecovery = (r: RecoveryReport): string[] => {
  const lines: string[] = []
  for (const s of r.skippedSnapshots) lines.push(`snapshot skipped  ${s.path}: ${s.reason}${s.movedTo === null ? "" : `; moved to ${s.movedTo}`}`)
  if (r.snapshotSeq === null && r.skippedSnapshots.length > 0) {
    lines.push(`recovery          no usable snapshot (${r.skippedSnapshots.length} skipped): full replay of the journal from seq 1 (${r.replayed} records)`)
  }
  if (r.tornTail !== null) lines.push(`journal tail      ${r.tornTail.problem}: truncated ${r.tornTail.droppedBytes} bytes of ${r.tornTail.segment}`)
  return lines
}

export interface DurableExchange {
  readonly exchange: Exchange
  readonly journal: Journal
  readonly recovery: RecoveryReport
  /** Captures the state now, waits until it is durable, then writes it as a snapshot. */
  snapshot(): Promise<{ seq: number; path: string }>
  close(): Promise<void>
}

export const journalDir = (dataDir: string): string => join(dataDir, "journal")
export const snapshotDir = (dataDir: string): string => join(dataDir, "snapshots")

/**
 * Rebuilds the exchange from disk without opening the journal for writing.
 * `beforeReplay` sees the exchange restored from the snapshot (`lastSeq` = the
 * snapshot's seq, 0 without one) before any journal record is applied: the place to
 * seed projections and register listeners that must see the replayed records.
 */
export const recoverExchange = (
  dataDir: string,
  nowMs: () => number,
  sink: JournalSink,
  opts: {
    repair: boolean
    beforeReplay?: (exchange: Exchange) => void
    storage?: Storage
    /** The process's monotonic clock, for business time (docs/time.md); the wall clock when absent (a replay, a tool). */
    monoMs?: () => number
  }
): { exchange: Exchange; recovery: RecoveryReport; lastSegmentBytes: number } => {
  const storage = opts.storage ?? nodeStorage
  // Repairing recovery (the service's own) moves damaged snapshots aside; a read-only one leaves them.
  const { loaded, skipped } = scanSnapshots(snapshotDir(dataDir), { quarantine: opts.repair, storage })
  const snapshotSeq = loaded?.snapshot.seq ?? null
  const monoMs = opts.monoMs ?? nowMs
  const exchange = loaded === null ? new Exchange(nowMs, sink, monoMs) : restoreExchange(loaded.snapshot, nowMs, sink, monoMs)
  opts.beforeReplay?.(exchange)
  // Records are applied as they are decoded: a long journal is never held in memory at once.
  let replayed = 0
  const journal = scanJournal(journalDir(dataDir), (snapshotSeq ?? 0) + 1, { repair: opts.repair, storage }, (record) => {
    exchange.apply(record)
    replayed++
  })
  if (snapshotSeq !== null && journal.lastSeq < snapshotSeq) {
    throw new Error(`journal ends at seq ${journal.lastSeq} but snapshot ${loaded!.path} is at ${snapshotSeq}: durable records are missing`)
  }
  return {
    exchange,
    recovery: {
      snapshotSeq,
      skippedSnapshots: skipped,
      replayed,
      lastSeq: exchange.lastSeq,
      tornTail: journal.tornTail
    },
    lastSegmentBytes: journal.lastSegmentBytes
  }
}

export const openDurableExchange = async (
  dataDir: string,
  nowMs: () => number,
  opts: {
    onFatal: (err: unknown) => void
    keepSnapshots?: number
    /** Runs once the snapshot's records (seq ≤ `seq`) are durable, before the snapshot is written. */
    beforeSnapshot?: (seq: number) => Promise<void>
    /** See `recoverExchange`. */
    beforeReplay?: (exchange: Exchange) => void
    /** The disk and the batch deferral (see JournalOptions); node:fs and setImmediate by default. */
    storage?: Storage
    defer?: JournalOptions["defer"]
    onDurable?: JournalOptions["onDurable"]
    /** See `recoverExchange`: the service passes its monotonic clock. */
    monoMs?: () => number
  }
): Promise<DurableExchange> => {
  const storage = opts.storage ?? nodeStorage
  // Records are applied before the journal is open for appending; the sink forwards once it is.
  let target: Journal | null = null
  const sink: JournalSink = {
    append: (record) => (target === null ? Promise.reject(new Error("journal not open")) : target.append(record))
  }
  const { exchange, recovery, lastSegmentBytes } = recoverExchange(dataDir, nowMs, sink, {
    repair: true,
    storage,
    ...(opts.beforeReplay === undefined ? {} : { beforeReplay: opts.beforeReplay }),
    ...(opts.monoMs === undefined ? {} : { monoMs: opts.monoMs })
  })
  const journal = await openJournal(journalDir(dataDir), exchange.lastSeq + 1, opts.onFatal, {
    storage,
    lastSegmentBytes,
    ...(opts.defer === undefined ? {} : { defer: opts.defer }),
    ...(opts.onDurable === undefined ? {} : { onDurable: opts.onDurable })
  })
  target = journal
  return {
    exchange,
    journal,
    recovery,
    snapshot: async () => {
      const snap: ExchangeSnapshot = takeExchangeSnapshot(exchange)
      await journal.sync()
      await opts.beforeSnapshot?.(snap.seq)
      const path = writeSnapshot(snapshotDir(dataDir), snap, storage)
      pruneSnapshots(snapshotDir(dataDir), opts.keepSnapshots ?? 3, storage)
      return { seq: snap.seq, path }
    },
    close: () => journal.close()
  }
}
