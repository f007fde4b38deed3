// Durable exchange state under DATA_DIR: recovery at start-up (newest valid
// snapshot + replay of the journal after it, torn tail truncated and reported)
// and snapshots that only ever contain durable records.
import { join } from "node:path"
import { type ExchangeSnapshot, restoreExchange, takeExchangeSnapshot } from "../service/exchange-snapshot.ts"
import { Exchange, type JournalSink } from "../service/exchange.ts"
import { type Journal, openJournal, scanJournal, type TornTail } from "./file-journal.ts"
import { loadLatestSnapshot, pruneSnapshots, writeSnapshot } from "./snapshots.ts"

export interface RecoveryReport {
  readonly snapshotSeq: number | null
  readonly skippedSnapshots: ReadonlyArray<string>
  readonly replayed: number
  readonly lastSeq: number
  readonly tornTail: TornTail | null
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
  opts: { repair: boolean; beforeReplay?: (exchange: Exchange) => void }
): { exchange: Exchange; recovery: RecoveryReport } => {
  const loaded = loadLatestSnapshot(snapshotDir(dataDir))
  const snapshotSeq = loaded?.snapshot.seq ?? null
  const exchange = loaded === null ? new Exchange(nowMs, sink) : restoreExchange(loaded.snapshot, nowMs, sink)
  opts.beforeReplay?.(exchange)
  // Records are applied as they are decoded: a long journal is never held in memory at once.
  let replayed = 0
  const journal = scanJournal(journalDir(dataDir), (snapshotSeq ?? 0) + 1, opts, (record) => {
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
      skippedSnapshots: loaded?.skipped ?? [],
      replayed,
      lastSeq: exchange.lastSeq,
      tornTail: journal.tornTail
    }
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
  }
): Promise<DurableExchange> => {
  // Records are applied before the journal is open for appending; the sink forwards once it is.
  let target: Journal | null = null
  const sink: JournalSink = {
    append: (record) => (target === null ? Promise.reject(new Error("journal not open")) : target.append(record))
  }
  const { exchange, recovery } = recoverExchange(dataDir, nowMs, sink, {
    repair: true,
    ...(opts.beforeReplay === undefined ? {} : { beforeReplay: opts.beforeReplay })
  })
  const journal = await openJournal(journalDir(dataDir), exchange.lastSeq + 1, opts.onFatal)
  target = journal
  return {
    exchange,
    journal,
    recovery,
    snapshot: async () => {
      const snap: ExchangeSnapshot = takeExchangeSnapshot(exchange)
      await journal.sync()
      await opts.beforeSnapshot?.(snap.seq)
      const path = writeSnapshot(snapshotDir(dataDir), snap)
      pruneSnapshots(snapshotDir(dataDir), opts.keepSnapshots ?? 3)
      return { seq: snap.seq, path }
    },
    close: () => journal.close()
  }
}
