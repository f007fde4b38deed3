// Analyst exports of the history store: trades, per-user fills and candles for every
// interval, written by DuckDB's COPY … TO (Parquet or CSV). Works while the service
// runs: DuckDB lets one process hold a file, so a held file is exported from a copy.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { INTERVALS } from "../service/history.ts"
import { journalDir } from "./durable.ts"
import { readJournal } from "./file-journal.ts"
import { HistoryStore } from "./history-db.ts"
import { tapeFromRecords, writeTape } from "./tape.ts"

export const EXPORT_FORMATS = ["parquet", "csv"] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

export const isExportFormat = (s: string): s is ExportFormat => (EXPORT_FORMATS as ReadonlyArray<string>).includes(s)

export interface ExportedFile {
  readonly file: string
  readonly rows: number
}

export interface ExportReport {
  readonly files: ExportedFile[]
  /** The journal seq the exported data is projected through. */
  readonly projectedSeq: number
  /** Set when the service held the file and a copy was exported instead. */
  readonly fromCopy: boolean
}

const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`

/** The queries behind each exported file, by base name. */
export const exportQueries = (): Array<{ name: string; sql: string }> => [
  { name: "trades", sql: "SELECT * FROM trades ORDER BY id" },
  { name: "fills", sql: "SELECT * FROM fills ORDER BY trade_id, role DESC" },
  { name: "deposits", sql: "SELECT * FROM deposits_latest ORDER BY seq" },
  { name: "withdrawals", sql: "SELECT * FROM withdrawals_latest ORDER BY seq" },
  ...Object.entries(INTERVALS).map(([name, width]) => ({ name: `candles_${name}`, sql: `SELECT * FROM candles(${width})` }))
]

const openForExport = async (path: string): Promise<{ store: HistoryStore; cleanup: () => void; fromCopy: boolean }> => {
  try {
    return { store: await HistoryStore.open(path, { readOnly: true }), cleanup: () => undefined, fromCopy: false }
  } catch (err) {
    if (!/lock/i.test(err instanceof Error ? err.message : String(err))) throw err
  }
  // Held by the running service: export a copy (main file, then its write-ahead log).
  const dir = mkdtempSync(join(tmpdir(), "twinbook-export-"))
  const copy = join(dir, "history.duckdb")
  copyFileSync(path, copy)
  if (existsSync(`${path}.wal`)) copyFileSync(`${path}.wal`, `${copy}.wal`)
  try {
    return { store: await HistoryStore.open(copy), cleanup: () => rmSync(dir, { recursive: true, force: true }), fromCopy: true }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`${path} is held by another process and a copy of it could not be opened (retry): ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** Writes trades, fills and candles_<interval> for every interval into `outDir`. */
export const exportHistory = async (historyFile: string, outDir: string, format: ExportFormat): Promise<ExportReport> => {
  if (!existsSync(historyFile) || !statSync(historyFile).isFile()) {
    throw new Error(`no history store at ${historyFile} (start the service with this DATA_DIR, or run npm run rebuild-history)`)
  }
  mkdirSync(outDir, { recursive: true })
  const { store, cleanup, fromCopy } = await openForExport(historyFile)
  const files: ExportedFile[] = []
  try {
    const options = format === "parquet" ? "(FORMAT parquet, COMPRESSION zstd)" : "(FORMAT csv, HEADER true)"
    for (const { name, sql } of exportQueries()) {
      const file = resolve(outDir, `${name}.${format}`)
      const rows = await store.run(`COPY (${sql}) TO ${sqlString(file)} ${options}`)
      files.push({ file, rows: Number(rows[0]?.[0] ?? 0) })
    }
    return { files, projectedSeq: store.projectedSeq, fromCopy }
  } finally {
    await store.close()
    cleanup()
  }
}

/** Book snapshots in an exported tape: every second where a book changed (docs/backtesting.md "Tape format"). */
export const DEFAULT_TAPE_INTERVAL_SEC = 1

/**
 * The market tape of a DATA_DIR (src/store/tape.ts): the whole journal replayed, as
 * `npm run sim -- --tape` writes it, so `npm run backtest -- --data <dir>` reads it as is.
 * A torn tail is ignored (a live writer may own it), as the rebuild does.
 */
export const exportTape = async (dataDir: string, outDir: string, format: ExportFormat, intervalSec: number | null = DEFAULT_TAPE_INTERVAL_SEC): Promise<ExportReport> => {
  const journal = readJournal(journalDir(dataDir), 1, { repair: false })
  const tape = tapeFromRecords(journal.records, { intervalSec, source: `export of ${resolve(dataDir)}` })
  const files = await writeTape(outDir, tape, format)
  return { files: files.map((file) => ({ file, rows: file.includes("trades.") ? tape.trades.length : file.includes("book.") ? tape.levels.length : 1 })), projectedSeq: journal.lastSeq, fromCopy: false }
}
