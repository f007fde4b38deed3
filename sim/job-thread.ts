// The queue worker's job thread with the job kinds it runs (sim/queue/job-thread.ts serves them):
// one seed of a simulator sweep, one backtest of a parameter sweep. The table lives here, above
// both and above the queue, so the queue's generic part imports no job kind. `npm run sim:worker`
// (sim/worker-cli.ts) starts each of its threads on this module, through sim/job-thread.mjs.
import { type BacktestJob, runBacktestJob } from "./backtest/queue-job.ts"
import { serveJobs } from "./queue/job-thread.ts"
import { runSimJob, type SimJob } from "./sweep/queue-job.ts"

serveJobs({
  sim: (payload, outputs) => runSimJob(payload as SimJob, outputs),
  backtest: (payload, _outputs, shared) => runBacktestJob(payload as BacktestJob, shared)
})
