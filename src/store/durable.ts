// Durable exchange state under DATA_DIR: recovery at start-up (newest valid
// snapshot + replay of the journal after it, torn tail truncated and reported)
// and snapshots that only ever contain durable records.
import { join } from "node:path"
import { type ExchangeSnapshot, restoreExchange, takeExchangeSnapshot } from "../service/exchange-snapshot.ts"
import { Exchange, type JournalSink } from "../service/exchange.ts"
import { type Journal, openJournal, readJournal, type TornTail } from "./file-journal.ts"
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

/** Rebuilds the exchange from disk without opening the journal for writing. */
export const recoverExchange = (
  dataDir: string,
  nowMs: () => number,
  sink: JournalSink,
  opts: { repair: boolean }
): { exchange: Exchange; recovery: RecoveryReport } => {
  const loaded = loadLatestSnapshot(snapshotDir(dataDir))
  const snapshotSeq = loaded?.snapshot.seq ?? null
  const journal = readJournal(journalDir(dataDir), (snapshotSeq ?? 0) + 1, opts)
  if (snapshotSeq !== null && journal.lastSeq < snapshotSeq) {
    throw new Error(`journal ends at seq ${journal.lastSeq} but snapshot ${loaded!.path} is at ${snapshotSeq}: durable records are missing`)
  }
  const exchange = loaded === null ? new Exchange(nowMs, sink) : restoreExchange(loaded.snapshot, nowMs, sink)
  for (const record of journal.records) exchange.apply(record)
  return {
    exchange,
    recovery: {
      snapshotSeq,
      skippedSnapshots: loaded?.skipped ?? [],
      replayed: journal.records.length,
      lastSeq: exchange.lastSeq,
      tornTail: journal.tornTail
    }
  }
}

export const openDurableExchange = async (
  dataDir: string,
  nowMs: () => number,
  opts: { onFatal: (err: unknown) => void; keepSnapshots?: number; beforeSnapshot?: () => Promise<void> }
): Promise<DurableExchange> => {
  // Records are applied before the journal is open for appending; the sink forwards once it is.
  let target: Journal | null = null
  const sink: JournalSink = {
    append: (record) => (target === null ? Promise.reject(new Error("journal not open")) : target.append(record))
  }
  const { exchange, recovery } = recoverExchange(dataDir, nowMs, sink, { repair: true })
  const journal = await openJournal(journalDir(dataDir), exchange.lastSeq + 1, opts.onFatal)
  target = journal
  return {
    exchange,
    journal,
    recovery,
    snapshot: async () => {
      const snap: ExchangeSnapshot = takeExchangeSnapshot(exchange)
      await journal.sync()
      await opts.beforeSnapshot?.()
      const path = writeSnapshot(snapshotDir(dataDir), snap)
      pruneSnapshots(snapshotDir(dataDir), opts.keepSnapshots ?? 3)
      return { seq: snap.seq, path }
    },
    close: () => journal.close()
  }
}
