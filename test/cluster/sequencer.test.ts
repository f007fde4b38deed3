// The sequencer pair's own logic on the in-memory ports (src/cluster/memory.ts), on a shared fake
// monotonic clock that moves only when someone sleeps: a standby follows the leader hot and holds
// its exact state; when the leader stops renewing, the standby takes the lease with a greater term,
// fences the log with its marker and continues from the last record; the deposed leader's next
// append is refused and acknowledges nothing; a leader paused past its lease acknowledges nothing
// even when its append landed (its batch is applied by the new leader, never lost); no term has two
// holders; the final state equals a replay of the log.
import { describe, expect, it } from "vitest"
import { keyFromLabel } from "../../src/client/keys.ts"
import { LeadershipLost } from "../../src/cluster/log-journal.ts"
import { MemoryLease, MemoryLog } from "../../src/cluster/memory.ts"
import { type Leading, type SequencerOptions, standby } from "../../src/cluster/sequencer.ts"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"

const T0_MS = 1_795_305_600_000
const TTL_MS = 3_000

/** A monotonic clock that moves only when a sleeper sleeps, then yields a macrotask. */
const fakeTime = () => {
  const t = { ms: 0 }
  return {
    t,
    monoMs: () => t.ms,
    nowMs: () => T0_MS + t.ms,
    sleep: (ms: number) => {
      t.ms += ms
      return new Promise<void>((r) => setImmediate(r))
    }
  }
}

const world = () => {
  const time = fakeTime()
  const log = new MemoryLog()
  const lease = new MemoryLease(time.monoMs, TTL_MS)
  const lost: Array<{ holder: string; err: LeadershipLost }> = []
  const opts = (holder: string): SequencerOptions => ({
    log,
    lease,
    holder,
    nowMs: time.nowMs,
    monoMs: time.monoMs,
    sleep: time.sleep,
    onLost: (err) => void lost.push({ holder, err })
  })
  return { time, log, lease, lost, opts }
}

const replay = (log: MemoryLog): Exchange => {
  const x = new Exchange(() => T0_MS, memoryJournal())
  for (const b of log.batches) for (const r of b.records) x.apply(r)
  return x
}

const credit = (i: number): ServiceCommand => ({ type: "credit", user: keyFromLabel(`seq-user-${i % 7}`).user, amountMicro: 1_000_000 + i, ref: `c-${i}` })

const submitAll = async (leader: Leading, from: number, n: number): Promise<number[]> => {
  const acked: number[] = []
  await Promise.allSettled(
    Array.from({ length: n }, async (_, k) => {
      const { durable } = leader.exchange.submit(credit(from + k))
      await durable
      acked.push(from + k)
    })
  )
  return acked
}

const ackedRefs = (log: MemoryLog): string[] => log.batches.flatMap((b) => b.records.map((r) => (r.cmd as { ref?: string }).ref ?? ""))

describe("the sequencer pair on in-memory ports", () => {
  it("the standby follows hot, takes over when the leader stops renewing, fences the old leader, and loses nothing acknowledged", async () => {
    const w = world()
    const a = standby(w.opts("a"))
    const leaderA = await a.lead()
    expect(leaderA.leadership.lease.term).toBe(1)
    for (const e of demoCatalog().slice(0, 2)) await leaderA.exchange.submit({ type: "create_event", event: e }).durable
    const b = standby(w.opts("b"))
    const takeover = b.lead()
    const ackedA = await submitAll(leaderA, 0, 50)
    expect(ackedA).toHaveLength(50)
    // The standby holds the leader's exact state, hot.
    await b.follower.waitFor(await w.log.lastPosition())
    expect(exchangeHash(b.exchange)).toBe(exchangeHash(leaderA.exchange))

    // The leader dies: it stops renewing. Time passes as the standby tries the lease.
    await leaderA.keeper.stop()
    const leaderB = await takeover
    expect(leaderB.leadership.lease.term).toBe(2)
    expect(w.log.batches.at(-1)).toEqual({ term: 2, holder: "b", records: [] })
    // The old leader's next append is refused: it acknowledges nothing more, and says why.
    const zombie = leaderA.exchange.submit(credit(1_000)).durable
    await expect(zombie).rejects.toMatchObject({ code: "not_leader", status: 503, detail: expect.stringMatching(/leadership of term 1 lost/), retryAfterSec: 2 })
    expect(w.lost.map((l) => [l.holder, l.err.reason])).toEqual([["a", "lease_lapsed"]])
    // The new leader continues from the last record; nothing acknowledged is lost or doubled.
    const ackedB = await submitAll(leaderB, 50, 50)
    expect(ackedB).toHaveLength(50)
    const refs = ackedRefs(w.log)
    for (const i of [...ackedA, ...ackedB]) expect(refs.filter((r) => r === `c-${i}`)).toHaveLength(1)
    expect(refs).not.toContain("c-1000")
    expect(exchangeHash(replay(w.log))).toBe(exchangeHash(leaderB.exchange))
    // One holder per term.
    const holders = new Map<number, Set<string>>()
    for (const batch of w.log.batches) holders.set(batch.term, (holders.get(batch.term) ?? new Set()).add(batch.holder))
    for (const [, set] of holders) expect(set.size).toBe(1)
    await leaderB.close()
  })

  it("a leader paused past its lease acknowledges nothing, even when its batch landed; the new leader applies that batch", async () => {
    const w = world()
    const a = standby(w.opts("a"))
    const leaderA = await a.lead()
    const b = standby(w.opts("b"))
    const takeover = b.lead()
    await submitAll(leaderA, 0, 3)
    // A pause: the append is stored, but the ack comes back after the lease lapsed.
    const slowLog = w.log
    const realAppend = slowLog.append.bind(slowLog)
    slowLog.append = async (batch, expected) => {
      const position = await realAppend(batch, expected)
      if (batch.holder === "a") w.time.t.ms += TTL_MS * 2
      return position
    }
    const paused = leaderA.exchange.submit(credit(7)).durable
    await expect(paused).rejects.toMatchObject({ code: "not_leader", detail: expect.stringMatching(/after the lease lapsed: not acknowledged/) })
    slowLog.append = realAppend
    expect(w.lost.map((l) => [l.holder, l.err.reason])).toEqual([["a", "lease_lapsed"]])
    const leaderB = await takeover
    // The landed batch was applied by the new leader before its marker: in the state, never acknowledged.
    expect(ackedRefs(w.log)).toContain("c-7")
    expect(exchangeHash(replay(w.log))).toBe(exchangeHash(leaderB.exchange))
    await leaderB.close()
  })

  it("a standby whose log does not answer (its stream re-electing) says so and keeps trying; a marker whose answer was lost is followed by another", async () => {
    const w = world()
    const leaderA = await standby(w.opts("a")).lead()
    await submitAll(leaderA, 0, 3)
    const notes: Array<[string, Readonly<Record<string, unknown>>]> = []
    const b = standby({ ...w.opts("b"), note: (msg, fields) => void notes.push([msg, fields]) })
    // A leader that stops renewing, and a log that cannot say where it ends, twice.
    await leaderA.keeper.stop()
    const realLast = w.log.lastPosition.bind(w.log)
    let refusals = 2
    w.log.lastPosition = () => (refusals-- > 0 ? Promise.reject(new Error("TIMEOUT: no stream leader")) : realLast())
    // Then the term marker's append lands but its answer is lost.
    const realAppend = w.log.append.bind(w.log)
    let lostAnswers = 1
    w.log.append = async (batch, expected) => {
      const position = await realAppend(batch, expected)
      if (batch.records.length === 0 && lostAnswers-- > 0) throw new Error("TIMEOUT: the append's answer was lost")
      return position
    }
    const leaderB = await b.lead()
    expect(notes.filter(([m]) => m === "log position request failed").map(([, f]) => f.detail)).toEqual(["TIMEOUT: no stream leader", "TIMEOUT: no stream leader"])
    expect(notes.filter(([m]) => m === "term marker append failed")).toHaveLength(1)
    // Two markers of b's term (the one whose answer was lost, then its successor), nothing of a's after them.
    const markers = w.log.batches.filter((x) => x.records.length === 0 && x.holder === "b")
    expect(markers.map((x) => x.term)).toEqual([leaderB.leadership.lease.term, leaderB.leadership.lease.term])
    expect(leaderB.leadership.after).toBe(w.log.batches.length)
    await submitAll(leaderB, 3, 2)
    expect(ackedRefs(w.log)).toEqual(["c-0", "c-1", "c-2", "c-3", "c-4"])
    expect(exchangeHash(replay(w.log))).toBe(exchangeHash(leaderB.exchange))
    await leaderB.close()
  })

  it("a clean stop releases the lease: the standby leads at once, without waiting for it to lapse", async () => {
    const w = world()
    const leaderA = await standby(w.opts("a")).lead()
    await submitAll(leaderA, 0, 5)
    const b = standby(w.opts("b"))
    await b.follower.waitFor(0)
    const before = w.time.t.ms
    await leaderA.close()
    const leaderB = await b.lead()
    expect(leaderB.leadership.lease.term).toBe(2)
    // At most one retry period passed, not a whole lease lifetime.
    expect(w.time.t.ms - before).toBeLessThan(TTL_MS)
    expect(w.lost).toEqual([])
    await leaderB.close()
  })
})
