// One combination of a backtest sweep as a queue job (docs/backtesting.md "Sweeps on a work
// queue"). The data goes once per sweep as the sweep's shared input: the loaded Dataset's columns
// themselves, serialized, so a worker replays exactly the events the caller loaded whatever files
// it has (none are needed). The job carries the combination's whole config and its run page's
// title and command; the page's HTML comes back for the caller to write.
import { createHash } from "node:crypto"
import type { JobOutput } from "../queue/protocol.ts"
import { decode, encode } from "../queue/protocol.ts"
import type { BacktestConfig } from "./config.ts"
import type { Dataset } from "./dataset.ts"
import { type RunPage, runPageHtml } from "./report-html/run-page.ts"
import type { BacktestSummary } from "./report.ts"
import { runBacktest } from "./runner.ts"

export interface BacktestJob {
  readonly id: number
  readonly config: BacktestConfig
  /** The run's page, when the sweep writes pages (its path is the caller's, where it writes the HTML). */
  readonly page: RunPage | null
}

/** The value a backtest job hands back: what a local sweep worker posts (sim/backtest/sweep-worker.ts). */
export type BacktestReply =
  | { readonly id: number; readonly summary: BacktestSummary; readonly assumptions?: ReadonlyArray<string> }
  | { readonly id: number; readonly error: string }

/** A dataset as the sweep's shared input (columns on SharedArrayBuffers are copied: those do not serialize). */
export const datasetBytes = (d: Dataset): Uint8Array =>
  encode(Object.fromEntries(Object.entries(d).map(([k, v]) => [k, ArrayBuffer.isView(v) && v.buffer instanceof SharedArrayBuffer ? (v as Uint8Array).slice() : v])))

let cached: { sha256: string; dataset: Dataset } | null = null

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

export const runBacktestJob = (job: BacktestJob, shared: { sha256: string; bytes: Uint8Array } | null): JobOutput => {
  if (shared === null) throw new Error("a backtest job needs its sweep's dataset")
  // One sweep's jobs share the data: decoded once per thread.
  if (cached?.sha256 !== shared.sha256) cached = { sha256: shared.sha256, dataset: decode<Dataset>(shared.bytes) }
  try {
    const { report } = runBacktest(cached.dataset, job.config)
    const html = job.page === null ? null : runPageHtml(job.page, job.config, report)
    const value: BacktestReply = { id: job.id, summary: report.summary, assumptions: report.assumptions }
    return { value, files: html === null ? [] : [html], digest: sha256(`${JSON.stringify(report.summary)}\n${html ?? ""}`) }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    return { value: { id: job.id, error: message } satisfies BacktestReply, files: [], digest: sha256(message) }
  }
}
