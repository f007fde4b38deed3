// One worker thread of `npm run fidelity`: runs the jobs it is sent, one at a time.
import type { HorizonRule } from "../backtest/response/edge.ts"
import { parentPort, workerData } from "node:worker_threads"
import { backtestBot, backtestHeadline, runLive, runWithout } from "./fidelity.ts"
import type { Realised } from "./realised.ts"
import { loadScenario } from "../scenario/scenario.ts"
import type { ResponseModel } from "../backtest/response/model.ts"
import { fitLeavingOut, runCalibrationWorld } from "./calibrate.ts"
import type { IntervalSpec } from "../backtest/interval.ts"
import { runPerturbed } from "./noise-floor.ts"
import { BacktestInputError } from "../backtest/dataset.ts"

export type FidelityJob =
  | { readonly kind: "live"; readonly seed: number; readonly out: string }
  | { readonly kind: "without"; readonly seed: number; readonly agent: string; readonly dir: string }
  | { readonly kind: "backtest"; readonly seed: number; readonly realised: Realised; readonly tape: { dir: string; trades: number; snapshots: number }; readonly replayDir: string; readonly response?: ResponseModel | null; readonly interval?: IntervalSpec }
  | { readonly kind: "calibrate"; readonly seed: number; readonly dir: string }
  /** The response model for one calibration seed's own runs: fitted on the other calibration seeds. */
  | { readonly kind: "fit-leaving-out"; readonly seed: number; readonly out: string; readonly seeds: ReadonlyArray<number>; readonly horizon: HorizonRule }
  /** One calibration bot-run, headline model only (the calibrated intervals' errors). */
  | { readonly kind: "calibration-backtest"; readonly seed: number; readonly realised: Realised; readonly dir: string; readonly response: ResponseModel | null }
  /** The noise floor: the live world once more without one (non-bot) agent. */
  | { readonly kind: "perturbed"; readonly seed: number; readonly without: string }

/** A worker's answer to one job: its result, or its failure (`input`: a BacktestInputError, given as its message alone). */
export interface JobReply {
  readonly job: FidelityJob
  readonly result?: unknown
  readonly error?: string
  readonly input?: boolean
}

const { file, durationSec, snapshotSec } = workerData as { file: string; durationSec: number | undefined; snapshotSec: number }
const scenario = loadScenario(file)

const run = (job: FidelityJob): Promise<unknown> => {
  switch (job.kind) {
    case "live": return runLive(scenario, job.seed, job.out, snapshotSec, durationSec)
    case "without": return runWithout(scenario, job.seed, job.agent, job.dir, snapshotSec, durationSec)
    case "calibrate": return runCalibrationWorld(scenario, job.seed, job.dir, snapshotSec, durationSec)
    case "fit-leaving-out": return fitLeavingOut(job.out, job.seeds, job.seed, job.horizon)
    case "calibration-backtest": return backtestHeadline(job.seed, job.realised, job.dir, job.response)
    case "perturbed": return runPerturbed(scenario, job.seed, job.without, durationSec)
    case "backtest": return backtestBot(job.seed, job.realised, job.tape, job.replayDir, job.response ?? null, job.interval)
  }
}

parentPort!.on("message", async (job: FidelityJob | null) => {
  if (job === null) return process.exit(0)
  let reply: JobReply
  try {
    reply = { job, result: await run(job) }
  } catch (err) {
    // An error's class does not cross the thread: say which kind it was.
    reply = err instanceof BacktestInputError ? { job, error: err.message, input: true } : { job, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }
  }
  parentPort!.postMessage(reply)
})
