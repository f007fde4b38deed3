// `npm run sim:worker -- nats://host:4222[,nats://…] [--concurrency N]`: runs sweep jobs from the
// work queue until stopped (docs/simulation.md "Sweeps on a work queue"). One line per job on
// stdout. SIGTERM or SIGINT: the jobs in hand go back to the queue at once (nak) and it exits 0.
import { availableParallelism, hostname } from "node:os"
import { isQueueUrl, workerName } from "./queue/protocol.ts"
import { startWorker } from "./queue/worker.ts"

/** Each job thread's module: the queue's thread with this checkout's job kinds registered. */
const JOB_THREAD = new URL("./job-thread.mjs", import.meta.url)

const USAGE = "usage: npm run sim:worker -- nats://host:4222[,nats://host2:4222…] [--concurrency N]   (N: job threads, default 1)"

const parse = (argv: ReadonlyArray<string>): { servers: string; concurrency: number } => {
  let servers: string | null = null
  let concurrency = 1
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === "--concurrency") {
      const v = argv[++i] ?? ""
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > availableParallelism() * 4) throw new Error(`--concurrency ${v}: an integer from 1 to ${availableParallelism() * 4}`)
      concurrency = Number(v)
    } else if (a.startsWith("--")) throw new Error(`unknown option ${a}`)
    else if (servers !== null) throw new Error("give the queue's servers once (comma-separated)")
    else if (!isQueueUrl(a)) throw new Error(`${a}: expected nats://host:port[,nats://…]`)
    else servers = a
  }
  if (servers === null) throw new Error("give the work queue's NATS servers")
  return { servers, concurrency }
}

const main = async (): Promise<number> => {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  let opts
  try {
    opts = parse(process.argv.slice(2))
  } catch (err) {
    process.stderr.write(`sim:worker: ${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  const name = workerName(hostname(), process.pid)
  const log = (line: string): void => void process.stdout.write(`sim:worker ${name}: ${line}\n`)
  let w
  try {
    w = await startWorker({ ...opts, log, threadEntry: JOB_THREAD })
  } catch (err) {
    process.stderr.write(`sim:worker: ${(err as Error).message}\n`)
    return 2
  }
  const stop = (signal: string): void => {
    log(`${signal}: stopping`)
    void w!.stop()
  }
  process.once("SIGTERM", () => stop("SIGTERM"))
  process.once("SIGINT", () => stop("SIGINT"))
  await w.stopped
  log("stopped")
  return 0
}

process.exitCode = await main()
