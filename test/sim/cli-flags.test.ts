// Every flag of `npm run sim` either works in a seed sweep or is refused there (issue 34 item 13:
// a sweep once ran `--plant` seeds unplanted, reported them passed and left the flag out of the
// reproduce command). The walk takes the flags from the parser's own table (sim/cli-args.ts FLAGS),
// so a new flag is walked too: one the table marks refused must make a sweep exit 2 with a one-line
// reason; one a sweep honours must have its effect observed below — on a local sweep (worker
// threads) and on the work queue (a real nats-server and `npm run sim:worker`) alike.
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FLAGS } from "../../sim/cli-args.ts"
import { type NatsCluster, startNatsCluster } from "../support/nats-cluster.ts"
import { childEnv, type QueueWorker, startQueueWorker } from "../support/queue-worker.ts"
import { type ProcessResult, runProcess } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const sim = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
  runProcess(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/cli.ts", ...args], { cwd: root, env: childEnv(), timeoutMs: 240_000 })

// A planted disk bug in the storage scenario, cut to a minute: the plant fails each seed in seconds.
const SCENARIO = "scenarios/storage-chaos.json"
const PLANT = "ignore-bytes-written"
const RUN = ["--duration", "60s", "--plant", PLANT]

interface SweepJson {
  seeds: number
  passed: number
  failing: Array<{ seed: number; reason: string; reproduce: string }>
  results: Array<{ seed: number; ok: boolean; journalHash: string; stateHash: string; log: string | null }>
  table: string
}
interface SingleJson {
  ok: boolean
  journalHash: string
  reproduce?: string
}

const inSweep = (flag: string) => FLAGS[flag]!.inSweep.kind
const honoured = Object.keys(FLAGS).filter((f) => inSweep(f) !== "refused")
const refused = Object.keys(FLAGS).filter((f) => inSweep(f) === "refused")

let nats: NatsCluster
let worker: QueueWorker
beforeAll(async () => {
  nats = await startNatsCluster(1)
  worker = startQueueWorker(nats.urls)
}, 120_000)
afterAll(async () => {
  worker?.kill("SIGKILL")
  await worker?.exited
  await nats?.close()
})

describe("every sim flag in a seed sweep", () => {
  it("the walk covers every flag of the parser's table", () => {
    expect(Object.keys(FLAGS)).toContain("--plant")
    expect([...honoured, ...refused].sort()).toEqual(Object.keys(FLAGS).sort())
  })

  it.each(refused)("%s is refused in a sweep: exit 2, one line saying why, nothing run", async (flag) => {
    const example = FLAGS[flag]!.example
    const r = await sim([SCENARIO, "--seeds", "2", flag, ...(example === undefined ? [] : [example]), "--no-log"])
    expect(r.status, r.stderr).toBe(2)
    expect(r.stdout).toBe("")
    const [reason, next] = r.stderr.split("\n")
    expect(reason).toContain(flag)
    expect(reason).toMatch(/^sim: .*(exclude each other|give one --seed)/)
    expect(next).toMatch(/^usage: /)
  }, 120_000)

  it("each flag a sweep honours reaches every seed's job (threads and queue) and each reproduce command", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-flags-"))
    const queuedDir = mkdtempSync(join(tmpdir(), "sim-flags-q-"))
    await worker.waitFor(/: ready: /)
    // The sweep with every value flag a sweep honours; the same seed as one run; the sweep unplanted and without logs; the sweep on the queue.
    const [local, single, unplanted, queued] = await Promise.all([
      sim([SCENARIO, "--seeds", "2..3", ...RUN, "--log", dir, "--json"]),
      sim([SCENARIO, "--seed", "2", ...RUN, "--json", "--no-log"]),
      sim([SCENARIO, "--seeds", "2", "--duration", "60s", "--no-log"]),
      sim([SCENARIO, "--seeds", "2..3", ...RUN, "--log", queuedDir, "--json", "--queue", nats.urls])
    ])
    for (const r of [local, single, queued]) expect(r.status, r.stderr).toBe(1) // the planted bug fails them
    expect([0, 1], unplanted.stderr).toContain(unplanted.status)
    const sweep = JSON.parse(local.stdout) as SweepJson
    const one = JSON.parse(single.stdout) as SingleJson
    const seed2 = sweep.results.find((r) => r.seed === 2)!
    const unplantedLine = unplanted.stdout.split("\n").find((l) => l.startsWith("seed 2 "))!

    const observed: Record<string, () => void> = {
      "--json": () => expect(sweep).toMatchObject({ seeds: 2, results: expect.any(Array), failing: expect.any(Array) }),
      "--seeds": () => expect(sweep.results.map((r) => r.seed)).toEqual([2, 3]),
      // The sweep's seed is the single run's: same duration, same plant, same journal; its reproduce command is the single run's.
      "--duration": () => {
        expect(seed2.journalHash).toBe(one.journalHash)
        expect(sweep.failing.find((f) => f.seed === 2)?.reproduce).toBe(one.reproduce)
        expect(one.reproduce).toContain("--duration 60s")
      },
      "--plant": () => {
        expect(seed2.ok).toBe(false)
        expect(seed2.journalHash).toBe(one.journalHash)
        expect(unplantedLine).not.toContain(seed2.journalHash)
        expect(sweep.failing.map((f) => f.reproduce)).toEqual(sweep.failing.map((f) => `npm run sim -- ${SCENARIO} --seed ${f.seed} --duration 60s --plant ${PLANT}`))
        expect(sweep.failing.find((f) => f.seed === 2)!.reason).toMatch(/acknowledged record seq \d+ \(\w+\) lost|durable records are missing|unknown to the exchange/)
      },
      "--log": () => {
        for (const r of sweep.results) {
          expect(r.log).toBe(join(dir, `storage-chaos-seed${r.seed}.log`))
          expect(JSON.parse(readFileSync(r.log!, "utf8").split("\n")[0]!)).toMatchObject({ seed: r.seed, journalHash: r.journalHash })
        }
        expect(sweep.table).toBe(join(dir, "storage-chaos-sweep-2-3.md"))
        expect(readFileSync(sweep.table, "utf8")).toContain(`\`npm run sim -- ${SCENARIO} --seed 3 --duration 60s --plant ${PLANT}\``)
      },
      "--no-log": () => {
        expect(unplantedLine).toMatch(/^seed 2 (ok    |FAILED) journalHash [0-9a-f]{64} stateHash [0-9a-f]{64}$/)
      },
      // On the queue every seed runs with the same flags: the same object, logs and table, in its own directory.
      "--queue": () => {
        expect(queued.stdout).toBe(local.stdout.replaceAll(dir, queuedDir))
        for (const r of sweep.results) expect(readFileSync(r.log!.replace(dir, queuedDir), "utf8")).toBe(readFileSync(r.log!, "utf8"))
        expect(readFileSync(join(queuedDir, "storage-chaos-sweep-2-3.md"), "utf8")).toBe(readFileSync(sweep.table, "utf8").replaceAll(dir, queuedDir))
      }
    }
    // A flag the table says a sweep honours, with no observation here, fails the walk.
    expect(Object.keys(observed).sort()).toEqual([...honoured].sort())
    for (const flag of honoured) observed[flag]!()
  }, 300_000)
})
