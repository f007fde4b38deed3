// Seed sweeps on the JetStream work queue (docs/simulation.md "Sweeps on a work queue"), with
// real processes on loopback: a nats-server, `npm run sim:worker` children and the `npm run sim`
// caller. A worker SIGKILLed mid-job has its job redelivered to the other; every seed is
// reported once; stdout, the Markdown table and every seed's log are byte for byte what
// `--seeds` writes on one machine, and no job outlasting ack_wait on a live worker is redelivered.
// `--json` is the local object; a job whose run fails in the worker is reported once, not retried.
// A worker on other code refuses the job and the caller says why; a job no worker finishes within
// max_deliver deliveries is reported with its reproduce command; an unreachable queue is one line.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueProgress } from "../../sim/queue/progress.ts"
import { MAX_DELIVER } from "../../sim/queue/protocol.ts"
import { runSweepOnQueue } from "../../sim/sweep/queue-sweep.ts"
import { ensureQueue } from "../../sim/queue/streams.ts"
import type { SweepResult } from "../../sim/sweep/sweep.ts"
import { type NatsCluster, startNatsCluster } from "../support/nats-cluster.ts"
import { childEnv, type QueueWorker, startQueueWorker } from "../support/queue-worker.ts"
import { type ProcessResult, runProcess } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const sim = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
  runProcess(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/cli.ts", ...args], { cwd: root, env: childEnv(), timeoutMs: 600_000 })

// The fastest shipped scenario, long enough that a job is still running when its worker is killed.
const SWEEP = ["scenarios/deposit-then-trade.json", "--duration", "30m", "--seeds", "1..4"]
/** The workers' consumer is made here first, with this ack_wait (production: 15 s): a killed worker's job comes back sooner, and a job outlasts it many times over. */
const ACK_WAIT_MS = 3_000

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
  const made = await ensureQueue(await nats.connect(), ACK_WAIT_MS)
  expect(made.ackWaitMs).toBe(ACK_WAIT_MS)
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
    expect(survivor.lines.find((l) => l.includes(": ready: "))).toContain(`ack_wait ${ACK_WAIT_MS / 1000} s, in-progress acks every ${ACK_WAIT_MS / 5} ms`)

    // Only the killed worker's job was delivered twice: every other job ran once, so the caller had no duplicate to drop.
    const starts = [...victim.lines, ...survivor.lines].filter((l) => l.includes("started job") && l.includes(`(sweep ${killedSeed[2]},`))
    const deliveries = starts.map((l) => /seed (\d+) \(sweep \w+, job \d+, delivery (\d+)\)/.exec(l)!.slice(1).join("@")).sort()
    expect(deliveries, `${victim.output()}\n${survivor.output()}`).toEqual(["1", "2", "3", "4"].flatMap((seed) => (seed === killedSeed[1] ? [`${seed}@1`, `${seed}@2`] : [`${seed}@1`])))
    expect(r.stderr).not.toMatch(/ran twice|CONFLICT/)

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
  }, 600_000)

  it("--json prints the object `--seeds` prints on one machine", async () => {
    const w = idle ?? worker()
    await w.waitFor(/: ready: /)
    const args = ["scenarios/deposit-then-trade.json", "--duration", "5m", "--seeds", "5..6", "--json", "--no-log"]
    const [local, queued] = await Promise.all([sim(args), sim([...args, "--queue", nats.urls])])
    expect(local.status, local.stderr).toBe(0)
    expect(queued.status, queued.stderr).toBe(0)
    expect(JSON.parse(queued.stdout)).toMatchObject({ seeds: 2, passed: 2 })
    expect(queued.stdout).toBe(local.stdout)
  }, 240_000)

  it("a job outlasting ack_wait on a live worker is not redelivered to an idle one (in-progress acks)", async () => {
    const busy = idle ?? worker()
    const spare = worker()
    await Promise.all([busy.waitFor(/: ready: /), spare.waitFor(/: ready: /)])
    // Half a day of the scenario: one job of several times ack_wait (the scenario's own two hours took
    // 1.5 s on a fast machine; a whole day took over 240 s beside two CPU hogs and a fidelity run),
    // while the other worker keeps asking for work.
    const r = await sim(["scenarios/deposit-then-trade.json", "--duration", "12h", "--seeds", "8", "--no-log", "--queue", nats.urls])
    expect(r.stdout, r.stderr).toMatch(/^seed 8 (ok    |FAILED) journalHash /m)
    const sweep = /queue: sweep (\w+):/.exec(r.stderr)![1]!
    // The worker logs "finished" after acknowledging, which can be after the caller is done.
    await Promise.race([busy, spare].map((w) => w.waitFor(new RegExp(`finished job .*\\(sweep ${sweep},`))))
    const lines = [busy, spare].flatMap((w) => w.lines).filter((l) => l.includes(`(sweep ${sweep},`))
    expect(lines.filter((l) => l.includes("started job")), `${busy.output()}\n${spare.output()}`).toEqual([expect.stringMatching(/started job deposit-then-trade seed 8 \(sweep \w+, job 0, delivery 1\)$/)])
    // What makes the test mean something: the job did outlast ack_wait.
    const finished = lines.filter((l) => l.includes("finished job"))
    expect(finished).toHaveLength(1)
    expect(Number(/ in ([\d.]+) s$/.exec(finished[0]!)![1])).toBeGreaterThan(ACK_WAIT_MS / 1000)
    expect(r.stderr).not.toMatch(/ran twice|CONFLICT/)
    // Back to one idle worker for the tests below.
    spare.kill("SIGTERM")
    expect((await spare.exited).code).toBe(0)
    idle = busy
  }, 600_000)

  it("a job whose run fails in the worker is reported once as that seed's error, not retried", async () => {
    const w = idle ?? worker()
    await w.waitFor(/: ready: /)
    // The caller's CLI checks a scenario before sweeping; here the file turns bad on the way, so the run throws in the worker.
    const file = join(mkdtempSync(join(tmpdir(), "sim-queue-bad-")), "broken.json")
    writeFileSync(file, "{ not json")
    const seen: SweepResult[] = []
    const { results } = await runSweepOnQueue({ servers: nats.urls, file, seeds: [9], durationSec: 60, plant: undefined, logDir: null, onResult: (r) => void seen.push(r), progress: queueProgress("test") })
    expect(seen).toHaveLength(1)
    expect(results).toHaveLength(1)
    expect(results[0]!.seed).toBe(9)
    expect(results[0]!.summary).toBeUndefined()
    expect(results[0]!.error).toMatch(/JSON/)
    // The worker logs "finished" after acknowledging, which can be after the caller is done; only a
    // running worker can still log it (the first test's SIGKILLed one would reject the race at once).
    await Promise.race(workers.filter((x) => x.running()).map((x) => x.waitFor(/finished job broken seed 9 /)))
    const ran = workers.flatMap((x) => x.lines).filter((l) => /(started|finished) job broken seed 9 /.test(l))
    expect(ran).toHaveLength(2)
    expect(ran.every((l) => / delivery 1\)/.test(l))).toBe(true)
  }, 120_000)

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
    // Only this test's workers may take the job (one left running by a failed test before would
    // take a delivery nobody here watches).
    const others = workers.filter((w) => w.running())
    for (const w of others) w.kill("SIGTERM")
    await Promise.all(others.map((w) => w.exited))
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
    // (Of this sweep's job: a job stranded by a test that failed before may still be in the queue.)
    expect(pool[0]!.lines.filter((l) => l.includes("started job deposit-then-trade seed 7 "))).toEqual([])
    pool[0]!.kill("SIGTERM")
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(new RegExp(`^seed 7 ERROR delivered ${MAX_DELIVER} times \\(max_deliver ${MAX_DELIVER}\\) and no worker finished it`, "m"))
    expect(r.stdout).toContain("    reproduce: npm run sim -- scenarios/deposit-then-trade.json --seed 7 --duration 7200s")
  }, 240_000)
})

/** A loopback port nothing listens on. */
const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })

describe("a work queue nobody answers", () => {
  it("the caller, the worker and the backtester each say so in one line and exit 2", async () => {
    const url = `nats://127.0.0.1:${await closedPort()}`
    const node = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
      runProcess(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", ...args], { cwd: root, env: childEnv(), timeoutMs: 240_000 })
    const [caller, lone, backtest] = await Promise.all([
      sim(["scenarios/deposit-then-trade.json", "--seeds", "1..2", "--no-log", "--queue", url]),
      node(["sim/worker-cli.ts", url]),
      node(["sim/backtest/cli.ts", "--synthetic", "1000", "--sweep", "spread=100,200", "--no-html", "--out", mkdtempSync(join(tmpdir(), "bt-unreachable-")), "--queue", url])
    ])
    const line = `cannot reach the work queue at ${url}: `
    for (const [r, prefix] of [[caller, "sim: queue: "], [lone, "sim:worker: "], [backtest, "backtest: "]] as const) {
      expect(r.status, r.stderr).toBe(2)
      expect(r.stderr.split("\n").filter((l) => l !== ""), r.stderr).toEqual([expect.stringContaining(`${prefix}${line}`)])
    }
    expect(caller.stdout).toBe("")
  }, 240_000)
})
