// Rebuilding the history store from the journal alone: the whole journal, from seq 1,
// replayed through a fresh Exchange (no snapshot) into a fresh DuckDB file, which then
// atomically replaces DATA_DIR/history.duckdb. Used by `npm run rebuild-history` and
// by start-up when the store cannot be trusted to line up with the snapshot.
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import type { DuckDBInstance } from "@duckdb/node-api"
import { duckdb } from "./duckdb.ts"
import { Exchange, type JournalSink } from "../service/exchange.ts"
import { journalDir } from "./durable.ts"
import { readJournal } from "./file-journal.ts"
import { HistoryStore } from "./history-db.ts"

export const HISTORY_FILE = "history.duckdb"
export const historyPath = (dataDir: string): string => join(dataDir, HISTORY_FILE)

export interface RebuildProgress {
  readonly phase: "read" | "replay" | "done"
  readonly records: number
  readonly totalRecords: number
  readonly trades: number
}

export interface RebuildReport {
  readonly records: number
  readonly trades: number
  /** The journal seq the new file is projected through. */
  readonly lastSeq: number
  /** The journal's torn tail, ignored (never repaired here: a live writer may own it). */
  readonly tornTail: string | null
}

const refusingSink: JournalSink = { append: () => Promise.reject(new Error("rebuild replays; it never appends")) }

/** Throws a clear error when another process (the running service) holds the file. */
export const assertHistoryNotInUse = async (path: string): Promise<void> => {
  if (!existsSync(path)) return
  let instance: DuckDBInstance
  try {
    instance = await duckdb().DuckDBInstance.create(path, { access_mode: "READ_ONLY" })
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err)
    if (/lock/i.test(msg)) throw new Error(`${path} is in use by another process (the running service?): stop it first.\n  ${msg}`)
    throw err
  }
  instance.closeSync()
}

/**
 * Replays the journal of `dataDir` into a new history file and renames it over `path`
 * (default DATA_DIR/history.duckdb). The file at `path` must not be open.
 */
export const rebuildHistory = async (
  dataDir: string,
  opts: { path?: string; flushEveryRecords?: number; onProgress?: (p: RebuildProgress) => void } = {}
): Promise<RebuildReport> => {
  const path = opts.path ?? historyPath(dataDir)
  const every = opts.flushEveryRecords ?? 50_000
  const journal = readJournal(journalDir(dataDir), 1, { repair: false })
  const total = journal.records.length
  opts.onProgress?.({ phase: "read", records: 0, totalRecords: total, trades: 0 })

  const tmp = `${path}.rebuild.tmp`
  rmSync(tmp, { force: true })
  rmSync(`${tmp}.wal`, { force: true })
  const store = await HistoryStore.open(tmp)
  let trades = 0
  try {
    const exchange = new Exchange(() => 0, refusingSink)
    // Projection only: the rebuild needs no in-memory trade lists.
    exchange.history.seed([], Number.POSITIVE_INFINITY)
    exchange.onApply((record, result) => {
      store.record(record, result, exchange)
      for (const ev of result.events) if (ev.type === "fill") trades++
    })
    let done = 0
    for (const record of journal.records) {
      exchange.apply(record)
      if (++done % every === 0) {
        await store.flush()
        opts.onProgress?.({ phase: "replay", records: done, totalRecords: total, trades })
      }
    }
    await store.flush()
    await store.run("CHECKPOINT")
  } finally {
    await store.close()
  }
  // The old file's write-ahead log belongs to the old file: it must not be replayed into the new one.
  rmSync(`${path}.wal`, { force: true })
  rmSync(`${tmp}.wal`, { force: true })
  renameSync(tmp, path)
  const dirFd = openSync(dirname(path), "r")
  try {
    fsyncSync(dirFd)
  } finally {
    closeSync(dirFd)
  }
  opts.onProgress?.({ phase: "done", records: total, totalRecords: total, trades })
  return {
    records: total,
    trades,
    lastSeq: journal.lastSeq,
    tornTail: journal.tornTail?.problem ?? null
  }
}
