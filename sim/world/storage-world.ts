// The world's durable storage when a scenario asks for storage faults: the real
// journal, snapshots and recovery (src/store/durable.ts) on the simulated disk.
// Each process opens DATA_DIR through recovery as `npm start` does; a crash loses
// what the disk had not made durable; the auditor compares each recovery with a
// full replay of the disk's journal and with every acknowledged record.
import type { JournalRecord } from "../../src/service/commands.ts"
import { Exchange } from "../../src/service/exchange.ts"
import { type DurableExchange, describeRecovery, journalDir, openDurableExchange, type RecoveryReport } from "../../src/store/durable.ts"
import { readJournal } from "../../src/store/file-journal.ts"
import type { Storage } from "../../src/store/storage.ts"
import type { Rng } from "./random.ts"
import type { Scheduler } from "./scheduler.ts"
import { type DiskFaults, SimDisk } from "./storage-disk.ts"

export const SIM_DATA_DIR = "/data"

export interface StorageOptions {
  readonly faults: DiskFaults
  /** Virtual seconds between snapshots (as SNAPSHOT_INTERVAL_SEC live). */
  readonly snapshotEverySec: number
  /** After a fail-stop on a storage error, the supervisor restarts the process this much later. */
  readonly restartAfterSec: number
  /** Test-only: wraps the disk each process sees (e.g. a planted bug the auditor must catch). */
  readonly tamper?: (storage: Storage) => Storage
}

export interface StorageRunStats {
  failStops: number
  recoveries: number
  snapshotsWritten: number
  snapshotsSkipped: number
  fullReplays: number
  tornTailsCut: number
  shortWrites: number
  enospc: number
  syncEio: number
  tornTails: number
  snapshotFlips: number
}

/** Counters summed over a sweep's seeds. */
export const sumStorageStats = (all: ReadonlyArray<StorageRunStats>): StorageRunStats => {
  const total: StorageRunStats = { failStops: 0, recoveries: 0, snapshotsWritten: 0, snapshotsSkipped: 0, fullReplays: 0, tornTailsCut: 0, shortWrites: 0, enospc: 0, syncEio: 0, tornTails: 0, snapshotFlips: 0 }
  for (const s of all) for (const k of Object.keys(total) as Array<keyof StorageRunStats>) total[k] += s[k]
  return total
}

export class DiskHost {
  readonly disk: SimDisk
  /** The current process's durable exchange. */
  durable: DurableExchange | null = null
  /** Highest seq the current process was told is durable (acknowledged). */
  private ackedSeq = 0
  /** The records acknowledged as durable by the process that just died: recovery must hold each, unchanged. */
  acknowledged: JournalRecord[] = []
  lastRecovery: RecoveryReport | null = null
  private opened = 0
  readonly stats: Omit<StorageRunStats, "shortWrites" | "enospc" | "syncEio" | "tornTails" | "snapshotFlips"> = {
    failStops: 0,
    recoveries: 0,
    snapshotsWritten: 0,
    snapshotsSkipped: 0,
    fullReplays: 0,
    tornTailsCut: 0
  }

  constructor(
    rng: Rng,
    private readonly scheduler: Scheduler,
    readonly options: StorageOptions
  ) {
    this.disk = new SimDisk(rng, options.faults, scheduler)
  }

  private storage(): Storage {
    const s = this.disk.storageFor()
    return this.options.tamper?.(s) ?? s
  }

  /** Recovers DATA_DIR and opens the journal, as a process start does. Returns the recovery's lines. */
  async open(nowMs: () => number, monoMs: () => number, onFatal: (err: unknown) => void): Promise<{ durable: DurableExchange; records: JournalRecord[]; lines: string[] }> {
    const storage = this.storage()
    const durable = await openDurableExchange(SIM_DATA_DIR, nowMs, {
      onFatal,
      monoMs,
      storage,
      // Appends in one scheduler instant form one batch (setImmediate's role live).
      defer: (run) => void this.scheduler.after(0, run),
      onDurable: (seq) => void (this.ackedSeq = Math.max(this.ackedSeq, seq))
    })
    const r = durable.recovery
    this.durable = durable
    this.ackedSeq = r.lastSeq
    this.lastRecovery = r
    if (this.opened++ > 0) {
      this.stats.recoveries++
      this.stats.snapshotsSkipped += r.skippedSnapshots.length
      if (r.snapshotSeq === null && r.skippedSnapshots.length > 0) this.stats.fullReplays++
      if (r.tornTail !== null) this.stats.tornTailsCut++
    }
    const records = readJournal(journalDir(SIM_DATA_DIR), 1, { repair: false, storage }).records
    return { durable, records, lines: describeRecovery(r) }
  }

  /** The process dies: remembers what it acknowledged, then the disk loses what was not durable. */
  crash(records: ReadonlyArray<JournalRecord>): void {
    this.acknowledged = records.slice(0, this.ackedSeq)
    this.durable = null
    this.disk.crash()
  }

  /** The disk's journal replayed from seq 1 into a fresh exchange, no snapshot: what a recovery must equal. */
  replay(observe?: (x: Exchange) => void): { exchange: Exchange; records: JournalRecord[] } {
    const exchange = new Exchange(() => 0, { append: () => Promise.reject(new Error("a replay journals nothing")) })
    observe?.(exchange)
    const { records } = readJournal(journalDir(SIM_DATA_DIR), 1, { repair: false, storage: this.disk.storageFor() })
    for (const r of records) exchange.apply(r)
    return { exchange, records }
  }

  runStats(): StorageRunStats {
    return { ...this.stats, ...this.disk.stats }
  }
}
