// `npm run rebuild-history`: replays the entire journal under DATA_DIR (default ./data)
// through a fresh Exchange, no snapshots, into a new DATA_DIR/history.duckdb that
// atomically replaces the old one. Progress on stderr; one summary line on stdout.
// It takes DATA_DIR's lock first (src/store/data-dir-lock.ts), as the service does: a directory
// held by a running service is refused with the service's own message, exit code 75.
import { existsSync } from "node:fs"
import { performance } from "node:perf_hooks"
import { acquireDataDirLock, DATA_DIR_IN_USE_EXIT, DataDirInUse } from "../src/store/data-dir-lock.ts"
import { journalDir } from "../src/store/durable.ts"
import { listSegments } from "../src/store/file-journal.ts"
import { assertHistoryNotInUse, historyPath, rebuildHistory } from "../src/store/history-rebuild.ts"

const USAGE = "usage: [DATA_DIR=./data] npm run rebuild-history   (with the service stopped; replays the journal into a new history.duckdb)"

const main = async (): Promise<number> => {
  const args = process.argv.slice(2)
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (args.length > 0) {
    process.stderr.write(`rebuild-history: takes no arguments (got ${args.join(" ")})\n${USAGE}\n`)
    return 2
  }
  const dataDir = process.env["DATA_DIR"] ?? "./data"
  if (!existsSync(dataDir)) {
    process.stderr.write(`rebuild-history: DATA_DIR ${dataDir} does not exist\n`)
    return 1
  }
  if (listSegments(journalDir(dataDir)).length === 0) {
    process.stderr.write(`rebuild-history: no journal under ${journalDir(dataDir)}: nothing to rebuild from\n`)
    return 1
  }
  let lock
  try {
    lock = acquireDataDirLock(dataDir)
  } catch (err) {
    if (!(err instanceof DataDirInUse)) throw err
    process.stderr.write(`rebuild-history: ${err.message}\n`)
    return DATA_DIR_IN_USE_EXIT
  }
  try {
    return await rebuild(dataDir)
  } finally {
    lock.release()
  }
}

const rebuild = async (dataDir: string): Promise<number> => {
  const path = historyPath(dataDir)
  // Held by something other than a service (an open DuckDB shell): DuckDB's own lock still refuses.
  await assertHistoryNotInUse(path)
  const t0 = performance.now()
  let lastPct = -1
  const report = await rebuildHistory(dataDir, {
    path,
    onProgress: (p) => {
      if (p.phase === "read") {
        process.stderr.write(`rebuild-history: read ${p.totalRecords} journal records from ${journalDir(dataDir)} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
        return
      }
      if (p.phase === "done" && lastPct === 100) return
      const pct = Math.floor((100 * p.records) / Math.max(1, p.totalRecords))
      if (pct === lastPct) return
      lastPct = pct
      process.stderr.write(`rebuild-history: ${p.records}/${p.totalRecords} records (${pct}%), ${p.trades} trades\n`)
    }
  })
  const secs = (performance.now() - t0) / 1000
  if (report.tornTail !== null) process.stderr.write(`rebuild-history: ignored the journal's torn tail (${report.tornTail})\n`)
  process.stdout.write(
    `rebuilt ${path}: ${report.records} journal records through seq ${report.lastSeq}, ${report.trades} trades in ${secs.toFixed(2)} s (${Math.round(report.records / Math.max(secs, 1e-6))} records/s)\n`
  )
  return 0
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`rebuild-history: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  }
)
