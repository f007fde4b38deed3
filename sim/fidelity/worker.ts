// One worker thread of `npm run fidelity`: runs the jobs it is sent, one at a time.
import { parentPort, workerData } from "node:worker_threads"
import { backtestBot, type Realised, runLive, runWithout } from "./fidelity.ts"
import { loadScenario } from "../scenario/scenario.ts"
import type { ResponseModel } from "../backtest/response/model.ts"
import { runCalibrationWorld } from "./calibrate.ts"
import type { IntervalSpec } from "../backtest/interval.ts"

export type FidelityJob =
  | { readonly kind: "live"; readonly seed: number; readonly out: string }
  | { readonly kind: "without"; readonly seed: number; readonly agent: string; readonly dir: string }
  | { readonly kind: "backtest"; readonly seed: number; readonly realised: Realised; readonly tape: { dir: string; trades: number; snapshots: number }; readonly replayDir: string; readonly response?: ResponseModel | null; readonly interval?: IntervalSpec }
  | { readonly kind: "calibrate"; readonly seed: number; readonly dir: string }

const { file, durationSec, snapshotSec } = workerData as { file: string; durationSec: number | undefined; snapshotSec: number }
const scenario = loadScenario(file)

parentPort!.on("message", async (job: FidelityJob | null) => {
  if (job === null) return process.exit(0)
  try {
    const result =
      job.kind === "live"
        ? await runLive(scenario, job.seed, job.out, snapshotSec, durationSec)
        : job.kind === "without"
          ? await runWithout(scenario, job.seed, job.agent, job.dir, snapshotSec, durationSec)
          : job.kind === "calibrate"
            ? await runCalibrationWorld(scenario, job.seed, job.dir, snapshotSec, durationSec)
            : await backtestBot(job.seed, job.realised, job.tape, job.replayDir, job.response ?? null, job.interval)
    parentPort!.postMessage({ job, result })
  } catch (err) {
    parentPort!.postMessage({ job, error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
  }
})
