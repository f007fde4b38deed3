// `npm run sim -- <scenario> --seeds A..B --queue nats://…`: the seed sweep of sim/sweep/sweep.ts
// runSweep, run by queue workers instead of local threads. Same results, same order of
// callbacks' contract (completion order), same logs at the same paths.
import { readFileSync } from "node:fs"
import { basename } from "node:path"
import { seedLogPath, type SweepResult } from "./sweep.ts"
import { runOnQueue } from "../queue/caller.ts"
import type { QueueProgress } from "../queue/progress.ts"
import type { SimJob } from "./queue-job.ts"

export interface SimQueueSweep {
  readonly servers: string
  readonly file: string
  readonly seeds: ReadonlyArray<number>
  readonly durationSec: number | undefined
  readonly plant: string | undefined
  /** Each seed's run log is written here by the caller (seedLogPath); null: no logs. */
  readonly logDir: string | null
  readonly onResult: (r: SweepResult, done: number) => void
  readonly progress: QueueProgress
  /** The code identity the jobs claim (tests only). */
  readonly code?: string
}

export const runSweepOnQueue = async (o: SimQueueSweep): Promise<{ results: SweepResult[]; conflicts: ReadonlyArray<string> }> => {
  const scenarioText = readFileSync(o.file, "utf8")
  const name = basename(o.file, ".json")
  let done = 0
  const { outcomes, conflicts } = await runOnQueue({
    servers: o.servers,
    kind: "sim",
    jobs: o.seeds.map((seed) => ({
      label: `${name} seed ${seed}`,
      payload: {
        file: o.file,
        scenarioText,
        seed,
        ...(o.durationSec === undefined ? {} : { durationSec: o.durationSec }),
        ...(o.plant === undefined ? {} : { plant: o.plant })
      } satisfies SimJob,
      outputs: o.logDir === null ? [] : [seedLogPath(o.logDir, o.file, seed)]
    })),
    onResult: (index, outcome) => o.onResult(outcome.ok ? (outcome.value as SweepResult) : { seed: o.seeds[index]!, error: outcome.error }, ++done),
    progress: o.progress,
    ...(o.code === undefined ? {} : { code: o.code })
  })
  const results = outcomes.map((outcome, i): SweepResult => (outcome.ok ? (outcome.value as SweepResult) : { seed: o.seeds[i]!, error: outcome.error }))
  return { results: results.sort((a, b) => a.seed - b.seed), conflicts }
}
