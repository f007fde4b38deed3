// `npm run backtest -- [options]` (see USAGE in args.ts and docs/backtesting.md).
// One run: console summary, DuckDB file and HTML page under --out; with --json stdout is one
// JSON object and nothing else (the summary goes to stderr), the same bytes for the same run
// (wall-clock figures only with --timings, under `timings`). With --sweep: every combination on
// worker threads and a results table instead, after the runs' NOTE lines; with --queue nats://…
// the combinations run on the work queue (npm run sim:worker).
// Exit codes: 0 ok, 2 bad input (or a work queue that cannot be reached or whose worker refuses the job), 1 anything else.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs, USAGE } from "./args.ts"
import { BacktestInputError, type Dataset } from "./dataset.ts"
import { renderHtml } from "./html.ts"
import { renderSweepIndex } from "./report-html/sweep-index.ts"
import { withTapeMeta } from "./config.ts"
import { isTapeDir, loadDataset, loadTape } from "./load.ts"
import { writeReportDb, writeSweepDb } from "./output-db.ts"
import { combinations } from "./params.ts"
import { progressBar } from "./progress.ts"
import { commandOf, inputFiles, type Reproduction, settingsOf } from "./reproduce.ts"
import { formatSummary } from "./report.ts"
import { runBacktest, startWarnings } from "./runner.ts"
import { withInterval } from "./interval-run.ts"
import { calibratedRangeOf } from "./interval-calibration.ts"
import { pointOf } from "./interval.ts"
import { formatSweep, runHref, runSweep, sweepNoteLines, sweepNotes, type SweepPages, type SweepRow, sweepTable } from "./sweep.ts"
import { runSweepOnQueue } from "./queue-sweep.ts"
import { queueProgress } from "../queue/progress.ts"
import { QueueInterrupted, QueueRefused, QueueUnreachable } from "../queue/caller.ts"
import { syntheticDataset } from "./synthetic.ts"
import { fitResponseCli } from "./response/fit-cli.ts"

// One piece: the CLI's steps in order (parse, load, run or sweep, write, print), each a few lines with its exit code.
const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  if (argv[0] === "fit-response") return fitResponseCli(argv.slice(1))
  let opts = parseArgs(argv)
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const t0 = performance.now() // live-only: wall time reported by the CLI
  let data: Dataset
  if (opts.synthetic !== null) data = syntheticDataset({ seed: opts.config.seed, trades: opts.synthetic })
  else if (isTapeDir(opts.data!)) {
    const tape = await loadTape(opts.data!, opts.snapshots, opts.ordersMode)
    data = tape.dataset
    opts = { ...opts, config: withTapeMeta(opts.config, tape.meta) }
  } else data = await loadDataset(opts.data!, opts.snapshots)
  const loadedMs = performance.now() - t0 // live-only: wall time reported by the CLI
  for (const w of [...data.warnings, ...startWarnings(data, opts.config)]) process.stderr.write(`backtest: WARNING ${data.source}: ${w}\n`)
  // With --json, stdout carries only the JSON object (so `| jq` works); the human text goes to stderr.
  const human = (text: string): void => void (opts.json ? process.stderr : process.stdout).write(text)
  mkdirSync(opts.out, { recursive: true })

  if (opts.sweeps.length > 0) {
    const combos = combinations(opts.sweeps)
    const bar = progressBar(`sweep ${combos.length} runs`)
    // Each run writes its own report page (runs/<run>/report.html), with the command that reruns it alone.
    const pages: SweepPages | undefined = opts.html ? { outDir: opts.out, argv, inputs: opts.synthetic !== null ? [] : inputFiles([opts.data!, ...(opts.snapshots === null ? [] : [opts.snapshots])]) } : undefined
    let rows: SweepRow[]
    let ranOn = `${Math.min(opts.workers, combos.length)} worker(s)`
    let conflicts: ReadonlyArray<string> = []
    if (opts.workQueue === null) {
      rows = await runSweep(data, opts.config, combos, opts.workers, (d, t) => bar.update(d, t), pages)
      bar.done()
    } else {
      const queued = await runSweepOnQueue(opts.workQueue, data, opts.config, combos, queueProgress(`sweep ${combos.length} runs`), pages)
      ;({ rows, conflicts } = queued)
      ranOn = `the work queue ${opts.workQueue} (${queued.workers.length} worker(s))`
    }
    const table = sweepTable(rows)
    const dbPath = join(opts.out, "sweep.duckdb")
    await writeSweepDb(dbPath, table)
    const wallMs = Math.round(performance.now() - t0) // live-only: wall time reported by the CLI
    const note = `${combos.length} runs on ${ranOn} in ${(wallMs / 1000).toFixed(1)} s over ${data.source}`
    // What the runs assumed (fees, rewards, synthetic depth …): once for all, then those of some runs by number.
    const notes = sweepNotes(rows)
    const noteLines = sweepNoteLines(notes, rows.length)
    const htmlPath = join(opts.out, "sweep.html")
    if (opts.html) {
      const runs = rows.map((r, i) => ({ values: r.values, row: table[i]!, href: runHref(i, rows.length, r.values) }))
      writeFileSync(htmlPath, renderSweepIndex({ axes: opts.sweeps, runs, figure: opts.heatmap, note, notes: noteLines.map((l) => l.replace(/^NOTE {2}/, "")) }))
    }
    human(`${noteLines.length === 0 ? "" : `${noteLines.join("\n")}\n\n`}${formatSweep(table)}\n\n${note}\nwrote ${dbPath}${opts.html ? ` and ${htmlPath} (each run's page in ${join(opts.out, "runs")})` : ""}\n`)
    if (opts.json) {
      const assumed = { assumptions: notes.common, run_assumptions: notes.some }
      process.stdout.write(`${JSON.stringify({ sweep: table, ...assumed, out: dbPath, ...(opts.timings ? { timings: { wall_ms: wallMs } } : {}) })}\n`)
    }
    // Two runs of one combination that disagree (a determinism bug): said on stderr, and the sweep fails.
    for (const c of conflicts) process.stderr.write(`backtest: queue: CONFLICT ${c}\n`)
    return conflicts.length === 0 ? 0 : 1
  }

  const inputs = inputFiles([
    ...(opts.synthetic !== null ? [] : [opts.data!]), ...(opts.snapshots === null ? [] : [opts.snapshots]), ...(opts.responsePath === null ? [] : [opts.responsePath]),
    ...(opts.intervalCalibration === null ? [] : [opts.intervalCalibration.path])
  ])
  const bar = progressBar(`backtest ${data.count.toLocaleString("en-US")} events`)
  const runStart = performance.now() // live-only: wall time reported by the CLI
  const run = runBacktest(data, opts.config, { onProgress: (d, t) => bar.update(d, t) })
  const runMs = performance.now() - runStart // live-only: wall time reported by the CLI
  bar.done()
  const drawBar = progressBar(`interval: ${opts.interval.draws} response draws`)
  const withRange = withInterval(data, opts.config, run, opts.interval, { onDraw: (d, t) => drawBar.update(d, t) }).report
  const cal = opts.intervalCalibration
  const report = { ...withRange, calibrated_interval: cal === null ? null : calibratedRangeOf(cal.path, cal.calibration, pointOf(withRange.outcome_path)) }
  drawBar.done()
  const intervalMs = performance.now() - runStart - runMs // live-only: wall time reported by the CLI
  const dbPath = join(opts.out, "backtest.duckdb")
  await writeReportDb(dbPath, report, JSON.stringify(opts.config))
  const htmlPath = join(opts.out, "report.html")
  const reproduce: Reproduction = { command: commandOf(argv), inputs, settings: settingsOf(opts.config, report.markets[0]?.params) }
  if (opts.html) writeFileSync(htmlPath, renderHtml(report, undefined, reproduce))
  const wallMs = Math.round(performance.now() - t0) // live-only: wall time reported by the CLI
  const eventsPerSec = Math.round(data.count / Math.max(runMs / 1000, 1e-9))
  human(`${formatSummary(report)}\n\n`)
  human(`replayed ${data.count.toLocaleString("en-US")} events in ${(runMs / 1000).toFixed(2)} s (${eventsPerSec.toLocaleString("en-US")}/s); interval ${(intervalMs / 1000).toFixed(2)} s; load ${(loadedMs / 1000).toFixed(2)} s, wall ${(wallMs / 1000).toFixed(2)} s\n`)
  human(`wrote ${dbPath}${opts.html ? ` and ${htmlPath}` : ""}\n`)
  if (opts.json) {
    const { series: _series, fills: _fills, fill_markouts_bps: _markouts, outcome_path: _path, ...rest } = report
    // Wall-clock figures only when asked (--timings), all under one key: two identical runs print identical JSON.
    const timings = { load_ms: Math.round(loadedMs), replay_ms: Math.round(runMs), interval_ms: Math.round(intervalMs), wall_ms: wallMs, events_per_sec: eventsPerSec }
    process.stdout.write(`${JSON.stringify({ ...rest, reproduce, out: { duckdb: dbPath, html: opts.html ? htmlPath : null }, ...(opts.timings ? { timings } : {}) })}\n`)
  }
  return 0
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    if (err instanceof BacktestInputError || err instanceof QueueRefused || err instanceof QueueUnreachable) {
      process.stderr.write(`backtest: ${err.message}\n`)
      process.exitCode = 2
    } else if (err instanceof QueueInterrupted) {
      process.stderr.write("backtest: queue: interrupted\n")
      process.exitCode = 130
    } else {
      process.stderr.write(`backtest: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
      process.exitCode = 1
    }
  }
)
