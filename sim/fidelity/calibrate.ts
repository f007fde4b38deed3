// Calibration kept apart from judgement (docs/backtesting.md "The market-response model"):
// `npm run fidelity -- --calibrate 201..206` runs the live worlds of the calibration seeds,
// writes their tapes (every agent in, the bots included: their quotes are what the takers
// there responded to), fits the market-response model on those tapes alone, and the judged
// seeds' backtests apply it. A seed is never judged by a model fitted on it.
import { join } from "node:path"
import type { ResponseModel } from "../backtest/response/model.ts"
import type { HorizonRule } from "../backtest/response/edge.ts"
import { fitTapes } from "../backtest/response/fit-cli.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { runScenario } from "../scenario/run.ts"
import { botAgents, type Realised, realisedOf, userOfAgent } from "./realised.ts"
import type { Scenario } from "../scenario/scenario.ts"
import { writeRunTape } from "../scenario/tape.ts"

/** What the fidelity summary reports of the calibration: its seeds, the model file and the model. */
export interface Calibration {
  readonly seeds: ReadonlyArray<number>
  readonly model_file: string
  readonly model: ResponseModel
}

export const calibrationDirOf = (outDir: string, seed: number): string => join(outDir, "calibration", `seed${seed}-live`)

/** The first judged seed that is also a calibration seed, as the one-line refusal; null when apart. */
export const overlapError = (judged: ReadonlyArray<number>, calibrate: ReadonlyArray<number>): string | null => {
  const both = judged.filter((s) => calibrate.includes(s))
  return both.length === 0 ? null : `--calibrate and --seeds share seed${both.length > 1 ? "s" : ""} ${both.join(",")}: a seed is never judged by a model fitted on it`
}

/** One calibration world, live (every agent in), its tape written to `dir`; its bots' realised outcomes, for the calibrated intervals. */
export const runCalibrationWorld = async (scenario: Scenario, seed: number, dir: string, snapshotSec: number, durationSec?: number): Promise<{ dir: string; realised: Realised[] }> => {
  const summary = await runScenario(scenario, { seed, expectations: false, ...(durationSec === undefined ? {} : { durationSec }) })
  await writeRunTape(summary, { dir, intervalSec: snapshotSec, format: "parquet" })
  const bots = botAgents(scenario).map((agent) => ({ agent, user: userOfAgent(seed, agent) }))
  return { dir, realised: realisedOf(summary.records as ReadonlyArray<JournalRecord>, bots) }
}

export const calibrationTapeDirOf = (outDir: string, seed: number, agent: string): string => join(outDir, "calibration", `seed${seed}-without-${agent}`)
/** The response model a calibration seed's own runs are backtested with: fitted on the other calibration seeds, never on it. */
export const leaveOutModelFileOf = (outDir: string, seed: number): string => join(outDir, "calibration", "leave-one-out", `response-model-without-seed${seed}.json`)

/** Fits the model on the calibration tapes of every seed but `seed` (its runs' errors are then out of sample). */
export const fitLeavingOut = (outDir: string, seeds: ReadonlyArray<number>, seed: number, horizon: HorizonRule): Promise<ResponseModel> =>
  fitTapes(seeds.filter((s) => s !== seed).map((s) => calibrationDirOf(outDir, s)), leaveOutModelFileOf(outDir, seed), horizon)

/** Fits the model on the calibration tapes, in seed order, and writes it beside them. */
export const fitCalibration = async (outDir: string, seeds: ReadonlyArray<number>, horizon: HorizonRule): Promise<Calibration> => {
  const file = join(outDir, "calibration", "response-model.json")
  const model = await fitTapes(seeds.map((s) => calibrationDirOf(outDir, s)), file, horizon)
  return { seeds, model_file: file, model }
}

/** The calibration's lines in the text table. */
export const calibrationLines = (c: Calibration | null, followMakers = false): string[] => {
  if (c === null) return ["market-response model: none (no --calibrate)"]
  const m = c.model
  const e = m.edge
  const mk = m.information.markouts.find((k) => k.horizon_sec === 30)
  const side = (s: NonNullable<typeof e>["buy"]): string =>
    s.buckets.filter((b, k) => k === 0 || b.rate_per_sec !== s.buckets[k - 1]!.rate_per_sec).map((b) => `${(b.rate_per_sec * 3600).toFixed(1)}/h from ${b.from_ticks}`).join(", ")
  return [
    `market-response model fitted on calibration seeds ${c.seeds.join(",")} (${c.model_file}), applied to every counterfactual backtest (not the replay):`,
    e === null
      ? `  ${m.arrival.arrivals} takers; buy a ${m.arrival.buy.a_per_sec.toPrecision(3)}/s b ${m.arrival.buy.b_per_tick.toPrecision(3)}/tick, sell a ${m.arrival.sell.a_per_sec.toPrecision(3)}/s b ${m.arrival.sell.b_per_tick.toPrecision(3)}/tick; informed share ${m.information.informed_share.toFixed(2)} at ${m.information.horizon_sec} s`
      : `  ${e.arrivals} takers; arrival by edge against the tape's mid ${e.horizon_sec} s later (ticks, buckets of ${e.bucket_ticks}): buy ${side(e.buy)}; sell ${side(e.sell)}; markout at 30 s ${mk?.mean_bps.toFixed(1) ?? "-"} bps`,
    ...(m.follow === null
      ? []
      : [`  makers follow the book: slope ${m.follow.slope.toFixed(3)} ± ${m.follow.slope_se.toFixed(3)} (R² ${m.follow.r_squared.toFixed(3)}, ${m.follow.pairs} re-quote pairs by ${m.follow.makers} makers); ${followMakers ? "applied (--follow-makers)" : "not applied (--follow-makers applies it)"}`])
  ]
}
