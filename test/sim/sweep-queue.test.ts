// Seed sweeps on the JetStream work queue (docs/simulation.md "Sweeps on a work queue"), with
// real processes on loopback: a nats-server, `npm run sim:worker` children and the `npm run sim`
// caller. A worker SIGKILLed mid-job has its job redelivered to the other; every seed is
// reported once; stdout, the Markdown table and every seed's log are byte for byte what
// `--seeds` writes on one machine. A worker on other code refuses the job and the caller says
// why; a job no worker finishes within max_deliver deliveries is reported with its reproduce command.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueProgress } from "../../sim/queue/progress.ts"
import { MAX_DELIVER } from "../../sim/queue/protocol.ts"
import { runSweepOnQueue } from "../../sim/queue/sim-sweep.ts"
import { type NatsCluster, startNatsCluster } from "../support/nats-cluster.ts"
import { childEnv, type QueueWorker, startQueueWorker } from "../support/queue-worker.ts"
import { type ProcessResult, runProcess } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const sim = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
  runProcess(process.execPath, ["--max-semi-space-size=64", "--import", "tsx", "sim/cli.ts", ...args], { cwd: root, env: childEnv(), timeoutMs: 240_000 })

// The fastest shipped scenario, long enough that a job is still running when its worker is killed.
const SWEEP = ["scenarios/deposit-then-trade.json", "--duration", "30m", "--seeds", "1..4"]

let nats: NatsCluster
const workers: QueueWorker[] = []
/** A worker left running by the first test, for the next. */
let idle: QueueWorker | null = null
const worker = (): QueueWorker => {
  const w = startQueueWorker(nats.urls)
  workers.push(w)
  return w
}

beforeAll(async () => {
  nats = await startNatsCluster(1)
}, 120_000)
afterAll(async () => {
  for (const w of workers) w.kill("SIGKILL")
  await Promise.all(workers.map((w) => w.exited))
  await nats?.close()
})

/** Every file of a directory, by name. */
const filesOf = (dir: string): Record<string, string> => Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f), "utf8")]))

describe("sweeps on the work queue", () => {
  it("Sweep queue: 2 workers, one killed mid-job: every seed reported once, the table identical to `--seeds` on one machine", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sim-queue-")), "out")
    const a = worker()
    const b = worker()
    // The single-machine sweep (worker threads) while the workers start.
    const [local] = await Promise.all([sim([...SWEEP, "--log", dir]), a.waitFor(/: ready: /), b.waitFor(/: ready: /)])
    expect(local.status, local.stderr).toBe(0)
    const localFiles = filesOf(dir)
    expect(Object.keys(localFiles)).toHaveLength(5) // four logs and the table
    rmSync(dir, { recursive: true })

    // The same sweep on the queue, into the same directory.
    const queued = sim([...SWEEP, "--log", dir, "--queue", nats.urls])
    const first = await Promise.race([a, b].map((w) => w.waitFor(/started job/).then((line) => ({ w, line }))))
    first.w.kill("SIGKILL")
    const victim = first.w
    const survivor = victim === a ? b : a
    const killedSeed = /seed (\d+) \(sweep (\w+)/.exec(first.line)!
    const r = await queued
    expect(r.status, r.stderr).toBe(0)
    expect((await victim.exited).signal).toBe("SIGKILL")

    // Killed mid-job: it never finished that seed; the other worker ran it on a later delivery.
    expect(victim.lines.filter((l) => l.includes("finished job") && l.includes(`seed ${killedSeed[1]} (sweep ${killedSeed[2]}`))).toEqual([])
    expect(survivor.lines.some((l) => new RegExp(`started job .* seed ${killedSeed[1]} \\(sweep ${killedSeed[2]}, job \\d+, delivery [2-9]\\)`).test(l)), survivor.output()).toBe(true)

    // Every seed reported once, in order; stdout, the table and each log exactly as on one machine.
    const seedLines = r.stdout.split("\n").filter((l) => l.startsWith("seed "))
    expect(seedLines.map((l) => l.split(" ")[1])).toEqual(["1", "2", "3", "4"])
    expect(r.stdout).toBe(local.stdout)
    expect(filesOf(dir)).toEqual(localFiles)
    // Progress on stderr: jobs done of total, workers seen.
    expect(r.stderr).toMatch(/4\/4 jobs done, 0 running, 2 workers seen/)
    idle = survivor
  }, 300_000)

  it("a worker on other code refuses the job, and the caller stops with the reason", async () => {
    const w = idle ?? worker()
    await w.waitFor(/: ready: /)
    const other = "0".repeat(64)
    await expect(
      runSweepOnQueue({ servers: nats.urls, file: join(root, SWEEP[0]!), seeds: [1], durationSec: 60, plant: undefined, logDir: null, onResult: () => undefined, progress: queueProgress("test"), code: other })
    ).rejects.toThrow(/refused deposit-then-trade seed 1: the job was made by twinbook code 000000000000, this worker runs [0-9a-f]{12}/)
    // Whichever worker took it (another may be left running if the test before failed).
    const { refuser, line } = await Promise.race(workers.filter((x) => x.running()).map((x) => x.waitFor(/refused job deposit-then-trade seed 1 \(sweep \w+/).then((l) => ({ refuser: x, line: l }))))
    // It ran nothing of that sweep, and stops cleanly.
    const sweep = /\(sweep (\w+)/.exec(line)![1]!
    expect(refuser.lines.filter((l) => l.includes("started job") && l.includes(`(sweep ${sweep},`))).toEqual([])
    refuser.kill("SIGTERM")
    expect((await refuser.exited).code).toBe(0)
  }, 120_000)

  it(`a job no worker finishes in ${MAX_DELIVER} deliveries is reported with its reproduce command; SIGTERM hands a job back at once`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-queue-max-"))
    // Each worker is stopped as soon as it starts the job: it hands the job back (nak) and exits 0,
    // and another takes it at once. JetStream gives the job up when it would deliver it a fourth
    // time, i.e. to the next worker that asks: that one never starts it.
    const pool = Array.from({ length: MAX_DELIVER + 1 }, worker)
    await Promise.all(pool.map((w) => w.waitFor(/: ready: /)))
    const queued = sim(["scenarios/deposit-then-trade.json", "--duration", "2h", "--seeds", "7", "--log", dir, "--queue", nats.urls])
    for (let i = 1; i <= MAX_DELIVER; i++) {
      const started = new RegExp(`started job deposit-then-trade seed 7 \\(sweep \\w+, job 0, delivery ${i}\\)`)
      const w = await Promise.race(pool.map((p) => p.waitFor(started).then(() => p)))
      w.kill("SIGTERM")
      expect((await w.exited).code, w.output()).toBe(0)
      expect(w.lines.some((l) => /stopping: handed back job deposit-then-trade seed 7/.test(l)), w.output()).toBe(true)
      pool.splice(pool.indexOf(w), 1)
    }
    const r = await queued
    expect(pool[0]!.lines.filter((l) => l.includes("started job"))).toEqual([])
    pool[0]!.kill("SIGTERM")
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(new RegExp(`^seed 7 ERROR delivered ${MAX_DELIVER} times \\(max_deliver ${MAX_DELIVER}\\) and no worker finished it`, "m"))
    expect(r.stdout).toContain("    reproduce: npm run sim -- scenarios/deposit-then-trade.json --seed 7 --duration 7200s")
  }, 240_000)
})
