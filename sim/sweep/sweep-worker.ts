// One worker thread of a seed sweep: runs the seeds it is sent, one at a time.
import { parentPort, workerData } from "node:worker_threads"
import { runScenario } from "../scenario/run.ts"
import { loadScenario } from "../scenario/scenario.ts"
import { seedLogPath, writeSummaryLog } from "./sweep.ts"
import { plantOptions } from "../testing/plants.ts"

const { file, durationSec, logDir, plant } = workerData as { file: string; durationSec: number | undefined; logDir: string | null; plant: string | undefined }
const scenario = loadScenario(file)

parentPort!.on("message", async (seed: number | null) => {
  if (seed === null) return process.exit(0)
  try {
    const wallMs = (): number => performance.now() // live-only: wall time is reported, never used by the run
    const summary = await runScenario(scenario, {
      seed,
      ...(durationSec === undefined ? {} : { durationSec }),
      ...plantOptions(plant),
      wallMs
    })
    const log = logDir === null || logDir === undefined ? undefined : seedLogPath(logDir, file, seed)
    if (log !== undefined) writeSummaryLog(log, summary)
    const { records: _records, ...rest } = summary
    parentPort!.postMessage({ seed, summary: rest, ...(log === undefined ? {} : { log }) })
  } catch (err) {
    parentPort!.postMessage({ seed, error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
  }
})
