// `npm run backtest -- --sweep … --queue nats://…`: the combinations of sim/backtest/sweep.ts
// runSweep, run by queue workers (npm run sim:worker) instead of local threads. The data goes
// once as the sweep's shared input; each run's page comes back and is written where a local
// sweep writes it. Rows come back in combination order, so the table is the local one.
import { runOnQueue } from "../queue/caller.ts"
import type { QueueProgress } from "../queue/progress.ts"
import type { Dataset } from "./dataset.ts"
import type { BacktestConfig } from "./config.ts"
import type { Combination } from "./params.ts"
import { type BacktestJob, type BacktestReply, datasetBytes } from "./queue-job.ts"
import { pageFor, type SweepPages, type SweepRow, sweepConfigs } from "./sweep.ts"

export const runSweepOnQueue = async (
  servers: string,
  d: Dataset,
  base: BacktestConfig,
  combos: ReadonlyArray<Combination>,
  progress: QueueProgress,
  pages?: SweepPages
): Promise<{ rows: SweepRow[]; workers: ReadonlyArray<string>; conflicts: ReadonlyArray<string> }> => {
  const configs = sweepConfigs(base, combos, d)
  const { outcomes, workers, conflicts } = await runOnQueue({
    servers,
    kind: "backtest",
    shared: datasetBytes(d),
    jobs: configs.map((config, id) => {
      const page = pageFor(pages, id, configs.length, combos[id]!)
      return {
        label: `backtest ${Object.entries(combos[id]!).map(([k, v]) => `${k}=${v}`).join(" ")}`,
        payload: { id, config, page } satisfies BacktestJob,
        outputs: page === null ? [] : [page.path]
      }
    }),
    progress
  })
  const rows = outcomes.map((outcome, i): SweepRow => {
    const reply = outcome.ok ? (outcome.value as BacktestReply) : { id: i, error: outcome.error }
    // As a local sweep does: a combination that fails fails the sweep, by its number.
    if ("error" in reply) throw new Error(`sweep combination ${i + 1}: ${reply.error}`)
    return { values: combos[i]!, summary: reply.summary, assumptions: reply.assumptions ?? [] }
  })
  return { rows, workers, conflicts }
}
