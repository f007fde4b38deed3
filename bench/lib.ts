// Shared plumbing for bench suites: the result shape, the suite contract and
// small statistics helpers. Suites print nothing on stdout themselves, so that
// `--json` output stays one parseable object per line; progress goes to stderr.

/** One measured figure set. Flat, so it is one JSON line and one table column. */
import { PerformanceObserver, performance } from "node:perf_hooks"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

export interface BenchResult {
  readonly name: string
  readonly [metric: string]: string | number | boolean | null
}

export interface SuiteContext {
  /** Flags the dispatcher did not consume (e.g. `--seed=7`), for the suite to read. */
  readonly args: ReadonlyArray<string>
  /** Emit a result as soon as it is known, so a long suite shows progress. */
  readonly report: (result: BenchResult) => void
  /** Human progress notes: stderr, never stdout. */
  readonly log: (message: string) => void
}

export type Suite = (ctx: SuiteContext) => Promise<void>

/** `--name=value` lookup with a numeric default; benches take few knobs. */
export const numberFlag = (args: ReadonlyArray<string>, name: string, fallback: number): number => {
  const prefix = `--${name}=`
  const hit = args.find((a) => a.startsWith(prefix))
  if (hit === undefined) return fallback
  const value = Number(hit.slice(prefix.length).replaceAll("_", ""))
  if (!Number.isFinite(value)) throw new Error(`--${name} expects a number, got ${hit}`)
  return value
}

/** Nearest-rank percentile of an already sorted array. */
export const percentile = (sorted: Float64Array, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil((p / 100) * sorted.length) - 1
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!
}

/**
 * Cost of one `hrtime.bigint()` pair, measured back to back. Per-command
 * latencies are a few hundred ns, so this overhead is not negligible; it is
 * subtracted from each sample and reported alongside so nothing is hidden.
 */
export const timerOverheadNs = (): number => {
  const n = 200_000
  const samples = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    samples[i] = Number(process.hrtime.bigint() - t0)
  }
  samples.sort()
  return percentile(samples, 50)
}

export const round = (value: number, digits: number): number => {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

export const mb = (bytes: number): number => round(bytes / (1024 * 1024), 1)

/**
 * Share of a window's wall time spent in GC pauses. Entries arrive
 * asynchronously (a task after the pause), so `share` waits briefly first.
 */
export const gcMeter = (): { readonly now: () => number; share: (t0: number, t1: number) => Promise<number>; stop: () => void } => {
  const pauses: Array<[start: number, duration: number]> = []
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push([e.startTime, e.duration])
  })
  observer.observe({ entryTypes: ["gc"] })
  return {
    now: () => performance.now(),
    share: async (t0, t1) => {
      await new Promise((resolve) => setTimeout(resolve, 50))
      let ms = 0
      for (const [start, duration] of pauses) if (start >= t0 && start < t1) ms += duration
      return round(ms / (t1 - t0), 3)
    },
    stop: () => observer.disconnect()
  }
}

let gcFn: (() => void) | null | undefined

/**
 * Forces a full collection so one measurement does not pay for the previous
 * one's garbage. `npm run bench` runs plain tsx, so without --expose-gc the
 * flag is switched on at runtime and `gc` fetched from a fresh context.
 */
export const tryGc = (): boolean => {
  if (gcFn === undefined) {
    gcFn = (globalThis as { gc?: () => void }).gc ?? null
    if (gcFn === null) {
      try {
        setFlagsFromString("--expose-gc")
        gcFn = runInNewContext("gc") as () => void
      } catch {
        gcFn = null
      }
    }
  }
  if (gcFn === null) return false
  gcFn()
  gcFn()
  return true
}

/**
 * Results side by side: one column per result, one row per metric. Results with
 * mostly different metrics (a workload description next to a measurement) get
 * their own table rather than a column of blanks.
 */
export const formatTables = (results: ReadonlyArray<BenchResult>): string => {
  const groups: BenchResult[][] = []
  let keys = new Set<string>()
  for (const r of results) {
    const mine = Object.keys(r)
    const shared = mine.filter((k) => keys.has(k)).length
    if (groups.length === 0 || shared * 2 < mine.length) {
      groups.push([r])
      keys = new Set(mine)
    } else {
      groups.at(-1)!.push(r)
      for (const k of mine) keys.add(k)
    }
  }
  return groups.map(formatTable).join("\n\n")
}

/** Results side by side: one column per result, one row per metric, first-seen order. */
export const formatTable = (results: ReadonlyArray<BenchResult>): string => {
  const metrics: string[] = []
  for (const r of results) for (const k of Object.keys(r)) if (k !== "name" && !metrics.includes(k)) metrics.push(k)
  const cell = (v: unknown): string => {
    if (v === undefined) return ""
    if (typeof v === "number") return Number.isInteger(v) ? v.toLocaleString("en-US") : String(v)
    return String(v)
  }
  const rows = [["metric", ...results.map((r) => r.name)], ...metrics.map((m) => [m, ...results.map((r) => cell(r[m]))])]
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)))
  const line = (row: string[]): string =>
    row.map((text, c) => (c === 0 ? text.padEnd(widths[c]!) : text.padStart(widths[c]!))).join("  ")
  const rule = widths.map((w) => "-".repeat(w)).join("  ")
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join("\n")
}

/** Times `once` for each of `count` rounds, one after another: p50 and p99 in ms. */
export const timeEach = async (count: number, once: (i: number) => Promise<void>): Promise<{ p50Ms: number; p99Ms: number }> => {
  const samples = new Float64Array(count)
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    await once(i)
    samples[i] = performance.now() - t0
  }
  samples.sort()
  return { p50Ms: round(percentile(samples, 50), 2), p99Ms: round(percentile(samples, 99), 2) }
}
