// One seed of a simulator sweep as a queue job. The job carries everything that decides the run
// — the scenario file's text (a worker on another machine need not have the file, or may have
// another version of it), the seed, the duration, a planted bug — and the worker runs it exactly
// as a local sweep's worker thread does (sim/sweep/sweep-worker.ts), writing nothing itself: the log
// comes back as text for the caller to write where a local sweep would have.
import { createHash } from "node:crypto"
import { runScenario } from "../scenario/run.ts"
import { decodeScenario } from "../scenario/scenario.ts"
import { summaryLogText, type SweepResult } from "./sweep.ts"
import { plantOptions } from "../testing/plants.ts"
import type { JobOutput } from "../queue/protocol.ts"

export interface SimJob {
  /** The scenario file as the caller named it (error messages only). */
  readonly file: string
  readonly scenarioText: string
  readonly seed: number
  readonly durationSec?: number
  readonly plant?: string
}

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

/** Runs one seed; `outputs[0]`, when given, is the path the caller writes the run log to. */
export const runSimJob = async (job: SimJob, outputs: ReadonlyArray<string>): Promise<JobOutput> => {
  const log = outputs[0]
  try {
    const planted = plantOptions(job.plant)
    const scenario = decodeScenario(JSON.parse(job.scenarioText), job.file)
    const wallMs = (): number => performance.now() // live-only: wall time is reported, never used by the run
    const summary = await runScenario(scenario, {
      seed: job.seed,
      ...(job.durationSec === undefined ? {} : { durationSec: job.durationSec }),
      ...planted,
      wallMs
    })
    const text = log === undefined ? null : summaryLogText(summary)
    const { records: _records, ...rest } = summary
    const value: SweepResult = { seed: job.seed, summary: rest, ...(log === undefined ? {} : { log }) }
    return { value, files: text === null ? [] : [text], digest: sha256(`${JSON.stringify({ ...rest, wallMs: null })}\n${text ?? ""}`) }
  } catch (err) {
    const value: SweepResult = { seed: job.seed, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }
    // The stack names the worker's own paths: only the message must agree between runs.
    return { value, files: [], digest: sha256(err instanceof Error ? err.message : String(err)) }
  }
}
