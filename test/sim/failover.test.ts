// The sequencer pair in the simulator (issue 32, docs/simulation.md "Failover"): the simulated
// replicated log and lease (fencing, outages, a paused process's held append, the lease's TTL on
// the world's clock), the auditor's cluster checks on logs built to break each one, the failover
// scenario with every fault kind, and a planted bug — appends without the expected position —
// caught with the command that reproduces it.
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ClusterAudit } from "../../sim/scenario/cluster-audit.ts"
import { SimLease } from "../../sim/world/cluster-lease.ts"
import { LogUnreachable, SimLog } from "../../sim/world/cluster-log.ts"
import { SimProcess } from "../../sim/world/cluster-process.ts"
import type { ClusterHost } from "../../sim/world/cluster-world.ts"
import { Rng } from "../../sim/world/random.ts"
import { runScenario } from "../../sim/scenario/run.ts"
import { Scheduler } from "../../sim/world/scheduler.ts"
import type { World } from "../../sim/world/world.ts"
import { RunStats } from "../../sim/world/stats.ts"
import { noExpectedPosition } from "../../sim/testing/no-expected-position.ts"
import { LogFenced, type LogBatch } from "../../src/cluster/ports.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { runProcess } from "../support/run-process.ts"
import { ciDurationSec, shippedScenarios } from "./support.ts"

const T0_MS = 1_767_310_200_000
const LINK = { latencyMs: [1, 3] as const, timeoutMs: 100 }

const record = (seq: number, ref = `r${seq}`): JournalRecord => ({ seq, tsSec: 1_767_310_200 + seq, cmd: { type: "credit", user: "u1", amountMicro: seq, ref } })
const batch = (term: number, holder: string, seqs: number[] = []): LogBatch => ({ term, holder, records: seqs.map((s) => record(s)) })

/** Moves virtual time on until `p` settles. */
const settle = async <A>(s: Scheduler, p: Promise<A>): Promise<A> => {
  let done = false
  const out = p.finally(() => void (done = true))
  while (!done) await s.run(s.nowMs() + 1)
  return out
}

const newLog = () => {
  const s = new Scheduler(T0_MS)
  const rng = new Rng("failover-test")
  const log = new SimLog(s, rng.fork("log"), LINK, () => {})
  const client = (name: string) => {
    const proc = new SimProcess(name, s)
    return { proc, log: log.clientFor(proc, rng.fork(name)) }
  }
  return { s, log, client }
}

describe("the simulated replicated log", () => {
  it("fences an append after anything but the last position, loses nothing acknowledged, and feeds each follower every batch once, in order", async () => {
    const { s, log, client } = newLog()
    const a = client("a")
    expect(await settle(s, a.log.append(batch(1, "a", [1, 2]), 0))).toBe(1)
    await expect(settle(s, a.log.append(batch(1, "a", [3]), 0))).rejects.toBeInstanceOf(LogFenced)
    expect(await settle(s, a.log.append(batch(1, "a", [3]), 1))).toBe(2)
    const seen: number[] = []
    const f = client("f")
    const reader = f.log.follow(1, (p) => void seen.push(p), () => {})
    await s.run(s.nowMs() + 10)
    expect(seen).toEqual([1, 2])
    expect(await settle(s, a.log.append(batch(1, "a", [4]), 2))).toBe(3)
    await s.run(s.nowMs() + 10)
    expect(seen).toEqual([1, 2, 3])
    await reader.stop()
    await settle(s, a.log.append(batch(1, "a", [5]), 3))
    await s.run(s.nowMs() + 10)
    expect(seen).toEqual([1, 2, 3])
    expect(log.batches.map((b) => b.records.map((r) => r.seq))).toEqual([[1, 2], [3], [4], [5]])
    expect(await settle(s, a.log.lastPosition())).toBe(4)
  })

  it("a process paused before its append leaves sends it only when it resumes: the other's marker is in first, and the held append is fenced", async () => {
    const { s, log, client } = newLog()
    const zombie = client("zombie")
    const next = client("next")
    log.onSend = (proc) => {
      if (proc === zombie.proc) {
        log.onSend = null
        proc.pause()
      }
    }
    const held = zombie.log.append(batch(1, "zombie", [1]), 0).then(
      (p) => ({ ok: p }),
      (err: unknown) => ({ err })
    )
    await s.run(s.nowMs() + 500)
    expect(log.batches).toEqual([])
    expect(await settle(s, next.log.append(batch(2, "next"), 0))).toBe(1)
    zombie.proc.resume()
    const out = await settle(s, held)
    expect("err" in out && out.err).toBeInstanceOf(LogFenced)
    expect(log.batches).toEqual([batch(2, "next")])
    expect(log.stats.fenced).toBe(1)
  })

  it("an outage answers nothing (the request times out, outcome unknown) and commits the appends that reached it when it ends, each fenced then", async () => {
    const { s, log, client } = newLog()
    const a = client("a")
    const b = client("b")
    log.outage(1_000, 100)
    await expect(settle(s, a.log.append(batch(1, "a", [1]), 0))).rejects.toBeInstanceOf(LogUnreachable)
    await expect(settle(s, a.log.lastPosition())).rejects.toThrow(/no answer in 100 ms/)
    await expect(settle(s, b.log.append(batch(2, "b"), 0))).rejects.toBeInstanceOf(LogUnreachable)
    expect(log.batches).toEqual([])
    await s.run(T0_MS + 1_000)
    // The first committed late; the second, checked after it, is fenced: nothing landed twice at one position.
    expect(log.batches).toEqual([batch(1, "a", [1])])
    expect(log.stats).toMatchObject({ landedLate: 2, fenced: 1, outages: 1 })
    expect(await settle(s, b.log.append(batch(2, "b"), 1))).toBe(2)
  })

  it("a process killed before its append left never sends it; once it left, it lands but nobody is told; a dead follower gets nothing", async () => {
    const { s, log, client } = newLog()
    const a = client("a")
    const f = client("f")
    const seen: number[] = []
    f.log.follow(1, (p) => void seen.push(p), () => {})
    let answered = false
    void a.log.append(batch(1, "a", [1]), 0).then(() => void (answered = true))
    // Still in the client's buffer (it flushes at the process's next turn): gone with the process.
    a.proc.kill()
    await s.run(s.nowMs() + 1_000)
    expect(log.batches).toEqual([])
    const b = client("b")
    void b.log.append(batch(2, "b", [1]), 0).then(() => void (answered = true))
    await s.run(s.nowMs())
    // Sent (this instant's turn ran): it lands, but the dead process hears nothing.
    b.proc.kill()
    f.proc.kill()
    await s.run(s.nowMs() + 1_000)
    expect(log.batches).toEqual([batch(2, "b", [1])])
    expect(answered).toBe(false)
    expect(seen).toEqual([])
  })
})

describe("the simulated lease", () => {
  it("terms only grow; a holder stops believing before the server lets go; lost renewals let it lapse and another takes it with a greater term", async () => {
    const s = new Scheduler(T0_MS)
    const rng = new Rng("lease-test")
    const lease = new SimLease(s, 3_000, LINK)
    const a = lease.clientFor(new SimProcess("a", s), rng.fork("a"))
    const b = lease.clientFor(new SimProcess("b", s), rng.fork("b"))
    const sentMs = s.nowMs()
    const held = (await settle(s, a.acquire("a")))!
    expect(held).toMatchObject({ holder: "a", term: 1, validUntilMonoMs: sentMs + 3_000 })
    expect(await settle(s, b.acquire("b"))).toBeNull()
    const renewed = (await settle(s, a.renew(held)))!
    expect(renewed.term).toBe(1)
    // Measured from the send, so never past the server's own deadline.
    await s.run(renewed.validUntilMonoMs - 1)
    expect(lease.holder()).toEqual({ holder: "a", term: 1 })
    // Renewals lost or delayed: the lease lapses on the server while its holder runs.
    lease.disturb("a", 60_000)
    let current = renewed
    for (let i = 0; i < 4; i++) {
      const r = await settle(s, a.renew(current).catch(() => null))
      if (r !== null) current = r
    }
    expect(lease.stats.lostRenewals + lease.stats.delayedRenewals).toBe(4)
    await s.run(s.nowMs() + 6_000)
    expect(lease.holder()).toBeNull()
    const taken = (await settle(s, b.acquire("b")))!
    expect(taken.term).toBe(2)
    lease.disturb("a", 0)
    expect(await settle(s, a.renew(current))).toBeNull()
    await settle(s, b.release(taken))
    expect(lease.holder()).toBeNull()
    expect((await settle(s, a.acquire("a")))!.term).toBe(3)
  })
})

/** A cluster as the audit reads it: the log's batches and each process's term and acknowledged records. */
const fakeCluster = (batches: LogBatch[], procs: Array<{ name: string; term: number | null; acked: JournalRecord[] }>): ClusterHost =>
  ({
    log: { batches },
    all: procs.map((p) => ({ proc: { name: p.name }, term: p.term, acked: p.acked.map((r) => ({ seq: r.seq, json: JSON.stringify(r) })) }))
  }) as unknown as ClusterHost

const audit = (batches: LogBatch[], procs: Array<{ name: string; term: number | null; acked: JournalRecord[] }>): string[] => {
  const stats = new RunStats()
  new ClusterAudit(fakeCluster(batches, procs), stats).end("end:")
  return stats.failures
}

describe("the auditor's cluster checks", () => {
  const good = [batch(1, "a"), batch(1, "a", [1, 2]), batch(2, "b"), batch(2, "b", [3])]

  it("a sound log passes", () => {
    expect(audit(good, [{ name: "a", term: 1, acked: [record(1), record(2)] }, { name: "b", term: 2, acked: [record(3)] }])).toEqual([])
  })

  it("a deposed leader's batch past the fence: an older term after a newer one, and a sequence number twice", () => {
    const failures = audit([...good, batch(1, "a", [3])], [{ name: "b", term: 2, acked: [record(3)] }])
    expect(failures).toEqual([
      expect.stringMatching(/log position 5: a batch of term 1 \(a\) after term 2's: a deposed leader's append got past the fence/),
      expect.stringMatching(/record seq 3 appears twice in the log \(positions 4 and 5\)/),
      expect.stringMatching(/b acknowledged record seq 3 \(credit\), and the log holds that number 2 times/)
    ])
  })

  it("an acknowledged record lost, or another under its number", () => {
    expect(audit(good, [{ name: "b", term: 2, acked: [record(4)] }])).toEqual([expect.stringMatching(/b acknowledged record seq 4 \(credit\), which the log does not hold: an acknowledged command lost/)])
    expect(audit(good, [{ name: "b", term: 2, acked: [record(3, "other")] }])).toEqual([expect.stringMatching(/b acknowledged record seq 3 \(credit\), but the log holds another record under that number \(position 4\)/)])
  })

  it("two holders in one term, two processes acknowledging in one term, a gap", () => {
    expect(audit([batch(1, "a", [1]), batch(1, "b", [2])], [])).toEqual([expect.stringMatching(/term 1 has two holders in the log: a \(position 1\) and b \(position 2\)/)])
    expect(audit([batch(1, "a", [1, 2])], [{ name: "a", term: 1, acked: [record(1)] }, { name: "b", term: 1, acked: [record(2)] }])).toEqual([
      expect.stringMatching(/term 1: a and b both acknowledged commands/)
    ])
    expect(audit([batch(1, "a", [1]), batch(1, "a", [3])], [])).toEqual([expect.stringMatching(/log position 2: record seq 3 after 1 \(a gap\)/)])
  })
})

describe("failover", () => {
  const { scenario } = shippedScenarios().find((s) => s.scenario.name === "failover")!
  const durationSec = ciDurationSec(scenario)

  it("every fault kind, many takeovers, zombies' appends fenced: every check holds", async () => {
    let world: World | null = null
    const s = await runScenario(scenario, { seed: scenario.seed, durationSec, expectations: false, onWorld: (w) => void (world = w) })
    expect(s.failures, `reproduce: npm run sim -- scenarios/failover.json --seed ${scenario.seed} --duration ${durationSec}s`).toEqual([])
    const c = s.cluster!
    expect(c.leaderCrashes).toBeGreaterThanOrEqual(2)
    expect(c.zombies).toBeGreaterThanOrEqual(2)
    // The zombie resumed at the takeover landed its held batch between the new leader's catch-up and its marker: marker refused, caught up, tried again.
    expect(c.zombieRaces).toBe(1)
    expect(c.markersRefused).toBeGreaterThanOrEqual(1)
    expect(c.leaseExpiries).toBeGreaterThanOrEqual(1)
    expect(c.logOutages).toBeGreaterThanOrEqual(1)
    expect(c.leaderships).toBeGreaterThanOrEqual(8)
    // A zombie's held append reached the log after the new leader's marker, and was refused.
    expect(c.stream.fenced).toBeGreaterThanOrEqual(1)
    expect(c.lost.lease_lapsed).toBeGreaterThanOrEqual(1)
    expect(c.longestNoLeaderMs).toBeLessThan(15_000)
    expect(s.ordersAcked).toBeGreaterThan(500)
    expect(s.errorCodes.not_leader).toBeGreaterThan(0)
    // The world's quiet at the end stopped the service's workers, not the lease keeper: the last leader still holds it.
    const cluster = (world as World | null)!.cluster!
    expect(cluster.lease.holder()).toEqual({ holder: cluster.leader!.proc.name, term: cluster.leader!.term })
  }, 180_000)

  it("a planted bug — appends without the expected position — is caught by the auditor, with a reproduce command that works", async () => {
    const seed = 1
    const shortSec = 1_200
    const planted = await runScenario(scenario, { seed, durationSec: shortSec, tamperLog: noExpectedPosition, expectations: false })
    const reproduce = `npm run sim -- scenarios/failover.json --seed ${seed} --duration ${shortSec}s --plant no-expected-position`
    console.log(`planted bug caught at seed ${seed}: ${planted.failures[0]?.split("\n")[0]}\n  reproduce: ${reproduce}`)
    expect(planted.ok, reproduce).toBe(false)
    expect(planted.failures.some((f) => /a deposed leader's append got past the fence/.test(f)), reproduce).toBe(true)
    expect(planted.failures.some((f) => /record seq \d+ appears twice in the log/.test(f)), reproduce).toBe(true)
    // The same seed fails the same way; the CLI's reproduce command too; without the bug the run is clean.
    const again = await runScenario(scenario, { seed, durationSec: shortSec, tamperLog: noExpectedPosition, expectations: false })
    expect(again.failures).toEqual(planted.failures)
    const root = join(import.meta.dirname, "..", "..")
    const cli = await runProcess(
      process.execPath,
      ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/cli.ts", "scenarios/failover.json", "--seed", String(seed), "--duration", `${shortSec}s`, "--plant", "no-expected-position", "--no-log", "--json"],
      { cwd: root, timeoutMs: 170_000 }
    )
    expect(cli.status).toBe(1)
    const out = JSON.parse(cli.stdout) as { failures: string[]; reproduce?: string }
    // The failed run names the command that reruns it: this very command, seed, scenario and plant included.
    expect(out.reproduce).toBe(reproduce)
    // The CLI also judges the scenario's `expect` bounds, sized for the full hour.
    expect(out.failures.filter((f) => !f.startsWith("expect:"))).toEqual(planted.failures)
    const clean = await runScenario(scenario, { seed, durationSec: shortSec, expectations: false })
    expect(clean.failures).toEqual([])
  }, 300_000)

  it("the CLI refuses a planted log bug where it would change nothing: a scenario without a cluster block", async () => {
    const root = join(import.meta.dirname, "..", "..")
    const sim = (args: string[]) => runProcess(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/cli.ts", ...args, "--no-log"], { cwd: root, timeoutMs: 120_000 })
    const single = await sim(["scenarios/busy-day.json", "--seed", "1", "--plant", "no-expected-position"])
    expect(single.status).toBe(2)
    expect(single.stderr).toContain("--plant no-expected-position: busy-day has no cluster block to plant it in")
  }, 240_000)
})
