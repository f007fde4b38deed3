// Parameter sweeps: every combination runs as its own backtest on a pool of worker threads
// (one per core by default) sharing one copy of the data. Results come back in combination
// order whatever finished first, so a sweep's table is deterministic too. With pages, each
// run also writes its own report page (runs/<run>/report.html under the sweep's out dir).
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { type BacktestConfig, marketParams } from "./config.ts"
import { type Dataset, shareDataset } from "./dataset.ts"
import { applyKnobs, type Combination } from "./params.ts"
import type { BacktestSummary } from "./report.ts"
import type { InputFile } from "./reproduce.ts"
import { runBacktest } from "./runner.ts"
import { type RunPage, writeRunPage } from "./report-html/run-page.ts"
import type { SweepJob } from "./sweep-worker.ts"
import { isQueueUrl } from "../queue/protocol.ts"

export interface SweepRow {
  readonly values: Combination
  readonly summary: BacktestSummary
  /** The run's NOTE lines (report.assumptions): what it assumed because the data did not say it. */
  readonly assumptions: ReadonlyArray<string>
}

type Reply = { readonly id: number; readonly summary: BacktestSummary; readonly assumptions: ReadonlyArray<string> } | { readonly id: number; readonly error: string }

/** A sweep's NOTE lines: those every run has (said once), and those only some runs have, with their 1-based run numbers. */
export interface SweepNotes {
  readonly common: ReadonlyArray<string>
  readonly some: ReadonlyArray<{ readonly note: string; readonly runs: ReadonlyArray<number> }>
}

export const sweepNotes = (rows: ReadonlyArray<Pick<SweepRow, "assumptions">>): SweepNotes => {
  const runsOf = new Map<string, number[]>()
  rows.forEach((r, i) => {
    for (const a of new Set(r.assumptions)) runsOf.set(a, [...(runsOf.get(a) ?? []), i + 1])
  })
  const all = [...runsOf.entries()]
  return {
    common: all.filter(([, runs]) => runs.length === rows.length).map(([note]) => note),
    some: all.filter(([, runs]) => runs.length < rows.length).map(([note, runs]) => ({ note, runs }))
  }
}

/** The notes as the console prints them (`NOTE  …`), a note of some runs naming them (up to ten). */
export const sweepNoteLines = (n: SweepNotes, total: number): string[] => [
  ...n.common.map((a) => `NOTE  ${a}`),
  ...n.some.map(({ note, runs }) => `NOTE  in run${runs.length === 1 ? "" : "s"} ${runs.slice(0, 10).join(", ")}${runs.length > 10 ? ", …" : ""} (${runs.length} of ${total}): ${note}`)
]

/** What each run's report page needs: where the sweep writes, the sweep's own command line, its inputs. */
export interface SweepPages {
  readonly outDir: string
  readonly argv: ReadonlyArray<string>
  readonly inputs: ReadonlyArray<InputFile>
}

/** A run's folder under <out>/runs: its number and its swept values, e.g. 03_spread=150_levels=3. */
export const runDirName = (index: number, total: number, values: Combination): string =>
  [String(index + 1).padStart(String(total).length, "0"), ...Object.entries(values).map(([k, v]) => `${k}=${v}`)].join("_")

export const runHref = (index: number, total: number, values: Combination): string => `runs/${runDirName(index, total, values)}/report.html`

/**
 * The command that runs one combination alone: the sweep's arguments without the sweep-only
 * flags (`--sweep`, `--workers`, `--heatmap`, `--out`, `--queue nats://…`), each swept value
 * as a --set (after any --set given, so it wins as it did in the sweep), and --out the run's
 * own folder.
 */
export const runArgv = (argv: ReadonlyArray<string>, values: Combination, outDir: string): string[] => {
  const drop = new Set(["--sweep", "--workers", "--heatmap", "--out"])
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const flag = a.startsWith("--") && a.includes("=") ? a.slice(0, a.indexOf("=")) : a
    // `--queue nats://…` (the sweep's work queue) is sweep-only too; `--queue MODEL` is a setting of the run.
    const workQueue = flag === "--queue" && isQueueUrl(flag === a ? (argv[i + 1] ?? "") : a.slice(a.indexOf("=") + 1))
    if (drop.has(flag) || workQueue) {
      if (flag === a) i++
      continue
    }
    out.push(a)
  }
  for (const [k, v] of Object.entries(values)) out.push("--set", `${k}=${v}`)
  return [...out, "--out", outDir]
}

export const pageFor = (pages: SweepPages | undefined, index: number, total: number, values: Combination): RunPage | null => {
  if (pages === undefined) return null
  const dir = join(pages.outDir, "runs", runDirName(index, total, values))
  const what = Object.entries(values).map(([k, v]) => `${k}=${v}`).join(", ")
  return { path: join(dir, "report.html"), title: `twinbook backtest: sweep run ${index + 1} of ${total} (${what})`, argv: runArgv(pages.argv, values, dir), inputs: pages.inputs }
}

/** Checks every combination's parameters before any work starts, so a bad one fails fast and by name. */
export const sweepConfigs = (base: BacktestConfig, combos: ReadonlyArray<Combination>, d: Dataset): BacktestConfig[] =>
  combos.map((values) => {
    const config = applyKnobs(base, values)
    try {
      marketParams(config, d)
    } catch (err) {
      const what = Object.entries(values).map(([k, v]) => `${k}=${v}`).join(" ")
      throw Object.assign(err as Error, { message: `sweep combination ${what}: ${(err as Error).message}` })
    }
    return config
  })

export const runSweep = async (
  d: Dataset,
  base: BacktestConfig,
  combos: ReadonlyArray<Combination>,
  workers: number,
  onDone?: (done: number, total: number) => void,
  pages?: SweepPages
): Promise<SweepRow[]> => {
  const configs = sweepConfigs(base, combos, d)
  const results = new Array<Omit<SweepRow, "values"> | undefined>(configs.length)
  const poolSize = Math.max(1, Math.min(workers, configs.length))
  if (poolSize === 1 && configs.length === 1) {
    const { report } = runBacktest(d, configs[0]!)
    const page = pageFor(pages, 0, 1, combos[0]!)
    if (page !== null) writeRunPage(page, configs[0]!, report)
    results[0] = { summary: report.summary, assumptions: report.assumptions }
    onDone?.(1, 1)
  } else {
    const shared = shareDataset(d)
    let next = 0
    let done = 0
    await new Promise<void>((resolve, reject) => {
      const pool: Worker[] = []
      let failed = false
      const stop = (err: Error | null): void => {
        if (failed) return
        if (err !== null) failed = true
        for (const w of pool) void w.terminate()
        if (err !== null) reject(err)
        else resolve()
      }
      const feed = (w: Worker): void => {
        if (next < configs.length) {
          const job: SweepJob = { id: next, config: configs[next]!, page: pageFor(pages, next, configs.length, combos[next]!) }
          next++
          w.postMessage(job)
        }
      }
      for (let i = 0; i < poolSize; i++) {
        const w = new Worker(new URL("./sweep-worker.mjs", import.meta.url), { workerData: { dataset: shared } })
        pool.push(w)
        w.on("message", (reply: Reply) => {
          if ("error" in reply) return stop(new Error(`sweep combination ${reply.id + 1}: ${reply.error}`))
          results[reply.id] = { summary: reply.summary, assumptions: reply.assumptions }
          done++
          onDone?.(done, configs.length)
          if (done === configs.length) stop(null)
          else feed(w)
        })
        w.on("error", (err) => stop(err))
        feed(w)
      }
    })
  }
  return combos.map((values, i) => ({ values, ...results[i]! }))
}

/** Flat rows for the results table and the DuckDB `sweep` table. */
export const sweepTable = (rows: ReadonlyArray<SweepRow>): Array<Record<string, number | string>> =>
  rows.map(({ values, summary: s }) => ({
    ...values,
    pnl_micro: s.pnl_micro,
    realised_pnl_micro: s.realised_pnl_micro,
    unrealised_pnl_micro: s.unrealised_pnl_micro,
    maker_rebates_micro: s.maker_rebates_micro,
    lp_rewards_micro: s.lp_rewards_micro,
    fills: s.fills,
    fill_ratio: s.fill_ratio,
    max_drawdown_micro: s.max_drawdown_micro,
    max_drawdown_pct: s.max_drawdown_pct,
    time_paused_sec: s.time_paused_sec,
    time_stopped_sec: s.time_stopped_sec
  }))

/** The figures of a run in the sweep table (sweepTable's columns after the parameters), and which way is better. */
export const SWEEP_FIGURES: ReadonlyArray<{ readonly key: string; readonly better: "high" | "low" }> = [
  { key: "pnl_micro", better: "high" }, { key: "realised_pnl_micro", better: "high" }, { key: "unrealised_pnl_micro", better: "high" },
  { key: "maker_rebates_micro", better: "high" }, { key: "lp_rewards_micro", better: "high" }, { key: "fills", better: "high" },
  { key: "fill_ratio", better: "high" }, { key: "max_drawdown_micro", better: "low" }, { key: "max_drawdown_pct", better: "low" },
  { key: "time_paused_sec", better: "low" }, { key: "time_stopped_sec", better: "low" }
]

/** The short name a user types: pnl for pnl_micro (pnl_usdc and pnl_micro work too). */
export const figureName = (key: string): string => key.replace(/_micro$/, "")

/** `--heatmap NAME` → the sweep table column, or null. */
export const resolveFigure = (name: string): string | null =>
  SWEEP_FIGURES.find((f) => [f.key, figureName(f.key), f.key.replace(/_micro$/, "_usdc")].includes(name))?.key ?? null

/** Header and formatted cells: USDC with two decimals, ratios as percentages. */
export const sweepCells = (table: ReadonlyArray<Record<string, number | string>>): { header: string[]; rows: string[][] } => {
  if (table.length === 0) return { header: [], rows: [] }
  const cols = Object.keys(table[0]!)
  const cell = (k: string, v: number | string): string =>
    typeof v !== "number" ? v : k.endsWith("_micro") ? (v / 1e6).toFixed(2) : k.endsWith("ratio") || k.endsWith("pct") ? `${(v * 100).toFixed(2)}%` : String(v)
  return { header: cols.map((c) => c.replace(/_micro$/, "_usdc")), rows: table.map((r) => cols.map((c) => cell(c, r[c]!))) }
}

export const formatSweep = (table: ReadonlyArray<Record<string, number | string>>): string => {
  if (table.length === 0) return "(no combinations)"
  const { header, rows } = sweepCells(table)
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((b) => b[i]!.length)))
  const line = (r: string[]): string => r.map((x, i) => x.padStart(widths[i]!)).join("  ")
  return [line(header), ...rows.map(line)].join("\n")
}
