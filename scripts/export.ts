// `npm run export -- --format parquet|csv [--out DIR]`: writes trades, fills and
// candles_<interval> (1m, 5m, 1h, 1d) from DATA_DIR/history.duckdb (DATA_DIR default
// ./data) into DIR (default ./export) with DuckDB's COPY … TO, and the market tape
// (trades in YES terms and book snapshots, the backtester's input) into DIR/tape.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { EXPORT_FORMATS, exportHistory, exportTape, isExportFormat } from "../src/store/history-export.ts"
import { historyPath } from "../src/store/history-rebuild.ts"

const USAGE = `usage: npm run export -- --format ${EXPORT_FORMATS.join("|")} [--out DIR]   (reads $DATA_DIR/history.duckdb, DATA_DIR default ./data)`

const parseArgs = (argv: ReadonlyArray<string>): { format: string; out: string } | string => {
  let format = "parquet"
  let out = "./export"
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined]
    if (flag !== "--format" && flag !== "--out") return `unknown argument ${arg}`
    const value = inline ?? argv[++i]
    if (value === undefined || value === "") return `${flag} needs a value`
    if (flag === "--format") format = value
    else out = value
  }
  return { format, out }
}

const main = async (): Promise<number> => {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const args = parseArgs(process.argv.slice(2))
  if (typeof args === "string") {
    process.stderr.write(`export: ${args}\n${USAGE}\n`)
    return 2
  }
  if (!isExportFormat(args.format)) {
    process.stderr.write(`export: unknown format "${args.format}"; known: ${EXPORT_FORMATS.join(", ")}\n${USAGE}\n`)
    return 2
  }
  const dataDir = process.env["DATA_DIR"] ?? "./data"
  if (!existsSync(dataDir)) {
    process.stderr.write(`export: DATA_DIR ${dataDir} does not exist\n`)
    return 1
  }
  const report = await exportHistory(historyPath(dataDir), args.out, args.format)
  if (report.fromCopy) process.stderr.write(`export: the running service holds ${historyPath(dataDir)}; exported a copy taken now\n`)
  for (const f of report.files) process.stdout.write(`${f.file}  ${f.rows} rows\n`)
  process.stdout.write(`exported ${report.files.length} ${args.format} files through journal seq ${report.projectedSeq}\n`)
  const tape = await exportTape(dataDir, join(args.out, "tape"), args.format)
  for (const f of tape.files) process.stdout.write(`${f.file}  ${f.rows} rows\n`)
  process.stdout.write(`tape for npm run backtest -- --data ${join(args.out, "tape")}\n`)
  return 0
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`export: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  }
)
