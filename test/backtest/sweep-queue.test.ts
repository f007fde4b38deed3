// The backtester's parameter sweep on the JetStream work queue (docs/backtesting.md "Sweeps on a
// work queue"), real processes on loopback: a nats-server, one `npm run sim:worker` and the
// `npm run backtest -- --sweep … --queue nats://…` caller. The data travels as the sweep's shared
// input (in more than one part here); the results table, the JSON rows and every run's page are
// those of the same sweep on local threads. `--queue MODEL` keeps meaning the queue-position model.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseArgs } from "../../sim/backtest/args.ts"
import { runArgv } from "../../sim/backtest/sweep.ts"
import { type NatsCluster, startNatsCluster } from "../support/nats-cluster.ts"
import { childEnv, type QueueWorker, startQueueWorker } from "../support/queue-worker.ts"
import { type ProcessResult, runProcess } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const cli = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
  runProcess(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/backtest/cli.ts", ...args], { cwd: root, env: childEnv(), timeoutMs: 240_000 })

// 150,000 synthetic trades: the dataset is about 700 KiB serialized, so it goes in two parts.
const SWEEP = ["--synthetic", "150000", "--seed", "3", "--queue", "prob", "--sweep", "spread=100,300"]

let nats: NatsCluster
let worker: QueueWorker | null = null
beforeAll(async () => {
  nats = await startNatsCluster(1)
}, 120_000)
afterAll(async () => {
  worker?.kill("SIGKILL")
  await worker?.exited
  await nats?.close()
})

/** Every file under a directory, by relative path. */
const filesUnder = (dir: string): Record<string, string> =>
  Object.fromEntries(readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => {
    const path = join(e.parentPath, e.name)
    return [path.slice(dir.length + 1), readFileSync(path, "utf8")]
  }).sort(([a], [b]) => a!.localeCompare(b!)))

/** The human output before its wall-time note: the runs' NOTE lines, then the table. */
const tableOf = (stdout: string): string => stdout.slice(0, stdout.search(/^\d+ runs on /m))
/** The table alone. */
const rowsOf = (stdout: string): string[] => tableOf(stdout).trim().split("\n").filter((l) => l !== "" && !l.startsWith("NOTE  "))

describe("backtest sweeps on the work queue", () => {
  it("a small sweep through the queue gives the same table, rows and run pages as on local threads", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "backtest-queue-")), "out")
    worker = startQueueWorker(nats.urls)
    const [local] = await Promise.all([cli([...SWEEP, "--workers", "2", "--out", out]), worker.waitFor(/: ready: /)])
    expect(local.status, local.stderr).toBe(0)
    const localPages = filesUnder(join(out, "runs"))
    expect(Object.keys(localPages)).toHaveLength(2)
    rmSync(out, { recursive: true })

    const queued = await cli([...SWEEP, "--queue", nats.urls, "--out", out])
    expect(queued.status, queued.stderr).toBe(0)
    expect(tableOf(queued.stdout)).toBe(tableOf(local.stdout))
    expect(rowsOf(queued.stdout)).toHaveLength(3)
    expect(tableOf(queued.stdout)).toMatch(/^NOTE {2}fee schedule assumed/m)
    expect(queued.stdout).toMatch(/^2 runs on the work queue nats:\/\/\S+ \(1 worker\(s\)\) in [\d.]+ s over synthetic/m)
    expect(filesUnder(join(out, "runs"))).toEqual(localPages)
    expect(queued.stderr).toMatch(/queue: sweep \w+: 2 jobs \(shared input \d+ KiB in 2 parts\)/)
    expect(queued.stderr).toMatch(/2\/2 jobs done, 0 running, 1 worker seen/)
    // Each logged once, after its acknowledgement (which can come after the caller is done).
    await Promise.all([100, 300].map((v) => worker!.waitFor(new RegExp(`finished job backtest spread=${v} `))))
    expect(worker.lines.filter((l) => l.includes("finished job backtest spread="))).toHaveLength(2)

    // The same with --json: the rows of the DuckDB table and the runs' notes, as local.
    const [localJson, queuedJson] = await Promise.all([cli([...SWEEP, "--json", "--no-html", "--out", `${out}-local`]), cli([...SWEEP, "--queue", nats.urls, "--json", "--no-html", "--out", `${out}-queue`])])
    const rows = (r: ProcessResult): unknown => {
      const { out: _out, ...rest } = JSON.parse(r.stdout) as { out: string }
      return rest
    }
    expect(rows(queuedJson)).toEqual(rows(localJson))
  }, 300_000)

  it("--queue is the work queue for a nats:// value and the queue model otherwise; neither reaches a run's own command", () => {
    const opts = parseArgs([...SWEEP, "--queue", "nats://127.0.0.1:4222,nats://127.0.0.1:4223"])
    expect(opts.workQueue).toBe("nats://127.0.0.1:4222,nats://127.0.0.1:4223")
    expect(opts.config.queueModel).toBe("prob")
    expect(parseArgs(SWEEP).workQueue).toBeNull()
    expect(() => parseArgs(["--queue", "nats://h:4222"])).toThrow(/the work queue runs sweeps; give --sweep/)
    expect(() => parseArgs([...SWEEP, "--queue", "nats://a:1", "--queue=nats://b:2"])).toThrow(/given more than once/)
    expect(runArgv([...SWEEP, "--queue=nats://a:1"], { spread: 100 }, "o")).toEqual(["--synthetic", "150000", "--seed", "3", "--queue", "prob", "--set", "spread=100", "--out", "o"])
  })
})
