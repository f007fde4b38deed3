// suite: mostly waits (NATS elections, catch-up, pull expiries): kept from starting beside another such file
// The replicated journal on JetStream (src/cluster/jetstream-log.ts, docs/cluster.md "The
// replicated journal"), against three real nats-server 2.10.27 nodes with `sync_interval: always`:
// the stream is created with the journal's settings and an unsafe one is refused; batches come
// back byte for byte, in order, once each, to readers started before and after; the fence lets
// exactly one of two writers append after a position and refuses a deposed one; a batch that
// does not decode and a hole in the log stop a reader with an error, never skipped; with a node
// SIGKILLed (the stream's leader) appends are still acknowledged and readers go on, and once the
// node is back and leads the stream nothing acknowledged is missing.
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream"
import { connect, headers } from "@nats-io/transport-node"
import { closeSync, openSync, readdirSync, statSync, truncateSync, writeSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest"
import { BatchUnreadable, encodeBatch, H_FIRST_SEQ, H_TERM } from "../../src/cluster/journal-batch.ts"
import { followStream, LogGap } from "../../src/cluster/jetstream-follow.ts"
import { type JetStreamLog, openJetStreamLog, streamConfigProblems, UnsafeStream } from "../../src/cluster/jetstream-log.ts"
import { type LogBatch, LogFenced } from "../../src/cluster/ports.ts"
import { batchOf, collect, type Collector, framesOf, moveLeaderTo, readAll, SETTLE_MS, streamLeader, waitCurrent } from "../support/log-batches.ts"
import { metaLeader, type NatsCluster, raftViews, restartHeard, startNatsCluster } from "../support/nats-cluster.ts"

let c: NatsCluster
beforeAll(async () => {
  c = await startNatsCluster(3)
}, 120_000)
afterAll(() => c?.close())

/** Appends `batches` one at a time from position `after`; returns the positions. */
const appendAll = async (log: JetStreamLog, batches: LogBatch[], after: number): Promise<number[]> => {
  const positions: number[] = []
  let last = after
  for (const b of batches) {
    last = await log.append(b, last)
    positions.push(last)
  }
  return positions
}

/** Every delivered batch equals the appended one at its position, records byte for byte. */
const expectSame = (got: Collector, appended: ReadonlyArray<LogBatch>, fromPosition: number): void => {
  expect(got.delivered.map((d) => d.position)).toEqual(appended.map((_, i) => fromPosition + i))
  got.delivered.forEach((d, i) => {
    const want = appended[i]!
    expect({ term: d.batch.term, holder: d.batch.holder, records: d.batch.records.length }).toEqual({ term: want.term, holder: want.holder, records: want.records.length })
    expect(d.batch.records).toEqual(want.records)
    expect(framesOf(d.batch).equals(framesOf(want))).toBe(true)
  })
}

describe("the replicated journal on JetStream", () => {
  it("creates its stream once with the journal's settings, and refuses a stream that would not keep it safe", async () => {
    const nc = await c.connect()
    const jsm = await jetstreamManager(nc)
    await openJetStreamLog(nc, { stream: "CFG", subject: "cfg.journal" })
    const again = await openJetStreamLog(nc, { stream: "CFG", subject: "cfg.journal" })
    expect(await again.lastPosition()).toBe(0)
    const config = (await jsm.streams.info("CFG")).config
    expect(config).toMatchObject({ storage: StorageType.File, num_replicas: 3, retention: RetentionPolicy.Limits, max_msgs: -1, max_bytes: -1, max_age: 0, deny_delete: true, deny_purge: true, allow_direct: false })
    expect(streamConfigProblems(config, "cfg.journal", 3)).toEqual([])

    await expect(openJetStreamLog(nc, { stream: "CFG", subject: "cfg.journal", replicas: 1 })).rejects.toThrow(/num_replicas is 3, not 1/)
    await jsm.streams.add({ name: "UNSAFE", subjects: ["unsafe.journal"], num_replicas: 3, storage: StorageType.Memory, retention: RetentionPolicy.Workqueue, max_age: 3_600e9 })
    const refused = await openJetStreamLog(nc, { stream: "UNSAFE", subject: "unsafe.journal" }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(UnsafeStream)
    expect((refused as UnsafeStream).problems.join("\n")).toMatch(/storage is memory[\s\S]*retention is workqueue[\s\S]*max_age is 3600000000000[\s\S]*deny_delete is off/)
  }, 60_000)

  it("gives back every batch byte for byte, term markers as empty batches, at contiguous positions, to readers started before and after", async () => {
    const nc = await c.connect()
    const log = await openJetStreamLog(nc, { stream: "ROUND", subject: "round.journal" })
    const early = collect(log, 1)
    const appended: LogBatch[] = [{ term: 7, holder: "seq-a", records: [] }]
    let seq = 1
    for (let i = 0; i < 24; i++) {
      if (i === 12) appended.push({ term: 9, holder: "seq-b", records: [] })
      const n = 1 + ((i * 7) % 40)
      appended.push(batchOf(i < 12 ? 7 : 9, i < 12 ? "seq-a" : "seq-b", seq, n))
      seq += n
    }
    // And one batch as large as the log takes (group commit under load).
    let count = Math.floor(log.maxBatchBytes / 60)
    while (framesOf(batchOf(9, "seq-b", seq, count)).length > log.maxBatchBytes) count = Math.floor(count * 0.95)
    appended.push(batchOf(9, "seq-b", seq, count))
    seq += count
    expect(framesOf(appended.at(-1)!).length).toBeGreaterThan(log.maxBatchBytes * 0.9)
    const positions = await appendAll(log, appended, 0)
    expect(positions).toEqual(appended.map((_, i) => i + 1))
    expect(await log.lastPosition()).toBe(appended.length)

    await early.until(appended.length)
    expectSame(early, appended, 1)
    expect(early.delivered[0]!.batch.records).toEqual([])
    expect(early.delivered[13]!.batch).toEqual({ term: 9, holder: "seq-b", records: [] })

    const late = collect(log, 0)
    const middle = collect(log, 10)
    await late.until(appended.length)
    await middle.until(appended.length - 9)
    expectSame(late, appended, 1)
    expectSame(middle, appended.slice(9), 10)

    // They go on with what is appended later, each batch once.
    const more = batchOf(9, "seq-b", seq, 3)
    expect(await log.append(more, appended.length)).toBe(appended.length + 1)
    await Promise.all([early.until(appended.length + 1), late.until(appended.length + 1), middle.until(appended.length - 8)])
    expectSame(early, [...appended, more], 1)
    expectSame(late, [...appended, more], 1)
    for (const r of [early, late, middle]) await r.stop()
    expect([early.error, late.error, middle.error]).toEqual([undefined, undefined, undefined])
  }, 120_000)

  it("fences: of two writers after the same position exactly one appends, the other is refused, and a deposed writer stays refused", async () => {
    const [a, b] = [await openJetStreamLog(await c.connect(), { stream: "FENCE", subject: "fence.journal" }), await openJetStreamLog(await c.connect(), { stream: "FENCE", subject: "fence.journal" })]
    for (let round = 0; round < 5; round++) {
      const after = await a.lastPosition()
      const results = await Promise.allSettled([a.append({ term: 1, holder: "a", records: [] }, after), b.append({ term: 2, holder: "b", records: [] }, after)])
      const won = results.filter((r) => r.status === "fulfilled")
      const lost = results.filter((r) => r.status === "rejected")
      expect(won.map((r) => r.value)).toEqual([after + 1])
      expect(lost).toHaveLength(1)
      expect(lost[0]!.reason).toBeInstanceOf(LogFenced)
      expect((lost[0]!.reason as LogFenced).expectedLast).toBe(after)
    }
    expect(await a.lastPosition()).toBe(5)

    // a leads for a while; b takes over after what it saw; a's next append is refused, and so is every later one.
    const p6 = await a.append(batchOf(3, "a", 1, 2), 5)
    const p7 = await a.append(batchOf(3, "a", 3, 2), p6)
    const marker = await b.append({ term: 4, holder: "b", records: [] }, await b.lastPosition())
    expect([p6, p7, marker]).toEqual([6, 7, 8])
    await expect(a.append(batchOf(3, "a", 5, 1), p7)).rejects.toBeInstanceOf(LogFenced)
    await expect(a.append(batchOf(3, "a", 5, 1), p7)).rejects.toThrow(/wrong last sequence: 8/)
    expect(await b.append(batchOf(4, "b", 5, 1), marker)).toBe(9)

    const all = collect(a, 1)
    await all.until(9)
    expect(all.delivered.slice(5).map((d) => `${d.batch.holder}:${d.batch.term}:${d.batch.records.map((r) => r.seq).join(",")}`)).toEqual(["a:3:1,2", "a:3:3,4", "b:4:", "b:4:5"])
    await all.stop()
  }, 60_000)

  it("takes one append at a time and refuses a batch over the size limit before sending it", async () => {
    const log = await openJetStreamLog(await c.connect(), { stream: "ONE", subject: "one.journal" })
    const first = log.append(batchOf(1, "a", 1, 5), 0)
    await expect(log.append(batchOf(1, "a", 6, 5), 1)).rejects.toThrow(/another append is in flight/)
    expect(await first).toBe(1)
    const huge = batchOf(1, "a", 6, Math.ceil(log.maxBatchBytes / 40) + 1)
    expect(framesOf(huge).length).toBeGreaterThan(log.maxBatchBytes)
    await expect(log.append(huge, 1)).rejects.toThrow(/exceeds the log's/)
    expect(await log.lastPosition()).toBe(1)
  }, 60_000)

  it("stops a reader at a batch that does not decode (bad CRC, bad headers), never skipping it", async () => {
    const nc = await c.connect()
    const log = await openJetStreamLog(nc, { stream: "BAD", subject: "bad.journal" })
    const js = jetstream(nc)
    const publishRaw = async (h: ReturnType<typeof headers>, payload: Uint8Array): Promise<number> => (await js.publish("bad.journal", payload, { headers: h })).seq
    const good = encodeBatch(batchOf(1, "a", 1, 3))
    expect(await publishRaw(good.headers, good.payload)).toBe(1)
    const flipped = encodeBatch(batchOf(1, "a", 4, 3))
    const damaged = Buffer.from(flipped.payload)
    damaged[damaged.length - 2]! ^= 0x40
    expect(await publishRaw(flipped.headers, damaged)).toBe(2)
    const fine = encodeBatch(batchOf(1, "a", 7, 1))
    expect(await publishRaw(fine.headers, fine.payload)).toBe(3)
    const noTerm = encodeBatch(batchOf(1, "a", 8, 1))
    noTerm.headers.delete(H_TERM)
    expect(await publishRaw(noTerm.headers, noTerm.payload)).toBe(4)
    const short = encodeBatch(batchOf(1, "a", 9, 2))
    short.headers.set(H_FIRST_SEQ, "8")
    expect(await publishRaw(short.headers, short.payload)).toBe(5)

    const cases: Array<[number, number, RegExp]> = [
      [1, 1, /position 2 is unreadable: checksum mismatch/],
      [3, 1, /position 4 is unreadable: no Twinbook-Term header/],
      [5, 0, /position 5 is unreadable: 2 records where the headers say 8..10/]
    ]
    for (const [from, before, why] of cases) {
      const r = collect(log, from)
      const err = await r.failed()
      expect(err).toBeInstanceOf(BatchUnreadable)
      expect(String(err)).toMatch(why)
      expect(r.delivered.map((d) => d.position)).toEqual(before === 0 ? [] : [from])
      await r.stop()
      expect(r.delivered).toHaveLength(before)
    }
  }, 60_000)

  it("stops a reader at a hole in the log, in the middle or at the end, never skipping it", async () => {
    // A stream without deny_delete (the journal's refuses deletes), holding journal batches.
    const nc = await c.connect()
    const jsm = await jetstreamManager(nc)
    const js = jetstream(nc)
    await jsm.streams.add({ name: "HOLE", subjects: ["hole.journal"], num_replicas: 3 })
    for (let i = 0; i < 5; i++) {
      const m = encodeBatch(batchOf(1, "a", 1 + i, 1))
      await js.publish("hole.journal", m.payload, { headers: m.headers })
    }
    await jsm.streams.deleteMessage("HOLE", 3)
    await jsm.streams.deleteMessage("HOLE", 5)
    const follow = (from: number): Collector => collect({ follow: (f, onBatch, onError) => followStream(nc, js, jsm, "HOLE", f, onBatch, onError, { pullExpiresMs: 1_000 }) } as JetStreamLog, from)
    const middle = follow(1)
    expect(String(await middle.failed())).toMatch(/cannot give position 3: neither the stream leader nor this reader's replica holds it \(the replica's next batch is at 4\)/)
    expect(middle.delivered.map((d) => d.position)).toEqual([1, 2])
    // Nothing after position 5 to show the hole: the stream leader's last position does.
    const end = follow(5)
    const err = await end.failed()
    expect(err).toBeInstanceOf(LogGap)
    expect(String(err)).toMatch(/the log's last position is 5, but it holds nothing at 5/)
    expect(end.delivered).toEqual([])
    await Promise.all([middle.stop(), end.stop()])
  }, 60_000)

  it("with a node SIGKILLed (the stream's leader) acknowledges appends and readers go on; back and leading, the node lost nothing", async () => {
    // Where it stood if it fails (a run beside two CPU hogs once hit the 240 s bound with no clue).
    let phase = "connecting"
    const readers: Collector[] = []
    onTestFailed(() => {
      console.error(`SIGKILL test stopped while ${phase}; appended ${appended.length}; readers at ${readers.map((r) => r.delivered.length).join(", ")}`)
      printNodeLogs(c)
    })
    const ncA = await c.connect()
    const jsm = await jetstreamManager(ncA)
    const log = await openJetStreamLog(ncA, { stream: "KILL", subject: "kill.journal" })
    const appended: LogBatch[] = []
    let last = 0
    let seq = 1
    const appendNext = async (): Promise<void> => {
      const b = batchOf(1, "w", seq, 1 + (appended.length % 9))
      last = await log.append(b, last)
      appended.push(b)
      seq += b.records.length
      expect(last).toBe(appended.length)
    }
    for (let i = 0; i < 20; i++) await appendNext()
    const leader = await streamLeader(jsm, "KILL")
    const victim = c.nodes.findIndex((n) => n.name === leader)
    // A reader whose client is connected to the node about to die: it must reconnect elsewhere.
    const ncB = await connect({ servers: [c.nodes[victim]!.url, ...c.nodes.filter((_, i) => i !== victim).map((n) => n.url)], noRandomize: true, maxReconnectAttempts: -1, reconnectTimeWait: 100 })
    const readerB = collect(await openJetStreamLog(ncB, { stream: "KILL", subject: "kill.journal" }), 1)
    const readerA = collect(log, 1)
    readers.push(readerA, readerB)
    phase = "reading the first 20"
    await Promise.all([readerA.until(20), readerB.until(20)])

    phase = "appending while the stream's leader dies"
    const killed = c.kill(victim)
    for (let i = 0; i < 20; i++) await appendNext()
    phase = "waiting for the node's exit"
    await killed
    phase = "appending with two nodes"
    for (let i = 0; i < 20; i++) await appendNext()
    phase = "reading 60"
    await Promise.all([readerA.until(60), readerB.until(60)])

    phase = "restarting the node"
    await restartHeard(c, victim, "SIGKILL")
    phase = "waiting for the node to be current"
    await waitCurrent(jsm, "KILL", leader, c.nodes[victim]!.startedAtMs)
    phase = "moving the stream's leadership back"
    await moveLeaderTo(ncA, jsm, "KILL", leader)
    phase = "appending 5 more"
    for (let i = 0; i < 5; i++) await appendNext()
    const fresh = collect(log, 1)
    readers.push(fresh)
    phase = "reading 65"
    await Promise.all([readerA.until(65), readerB.until(65), fresh.until(65)])
    for (const r of [readerA, readerB, fresh]) {
      expectSame(r, appended, 1)
      await r.stop()
      expect(r.error).toBeUndefined()
    }
    expect(await log.lastPosition()).toBe(65)
    await ncB.close()
  }, 4 * SETTLE_MS)
})

/** What each node said last (elections, catch-up, errors on damaged blocks), for a failed wait. */
const printNodeLogs = (cluster: NatsCluster): void => {
  for (const n of cluster.nodes) process.stderr.write(`--- ${n.name} (last 80 lines)\n${n.log.split("\n").slice(-80).join("\n")}\n`)
}

/** The stream's message blocks in a node's store (what a damaged disk would have damaged). */
const blockFiles = (storeDir: string, stream: string): string[] => {
  const dir = join(storeDir, "jetstream", "$G", "streams", stream, "msgs")
  return readdirSync(dir)
    .filter((f) => f.endsWith(".blk"))
    .map((f) => join(dir, f))
}

type Damage = "truncate" | "corrupt"

/** Cuts each block to half its length, or overwrites 16 bytes in its middle. */
const damage = (files: string[], how: Damage): void => {
  for (const f of files) {
    const bytes = statSync(f).size
    if (how === "truncate") truncateSync(f, Math.floor(bytes / 2))
    else {
      const fd = openSync(f, "r+")
      writeSync(fd, Buffer.alloc(16, 0x55), 0, 16, Math.floor(bytes / 2))
      closeSync(fd)
    }
  }
}

// Jepsen (NATS 2.12.1, December 2025): truncated or corrupt stream files on a minority of nodes
// lost acknowledged writes. Here on 2.10.27, one node's message blocks are damaged while it is
// down; it comes back, the healthy stream leader is SIGKILLed so every quorum needs the damaged
// node, and the damaged node is made to lead. What a reader gets then is recorded exactly:
//  - after a crash (SIGKILL), the node replays its Raft log over the damaged blocks: nothing lost;
//  - after a clean stop (SIGTERM), which snapshots the Raft state so there is nothing to replay,
//    the damaged node serves holes where the damaged records were: acknowledged batches missing
//    from the log as its leader tells it (truncated: the whole tail; overwritten: the batch there),
//    while its last position still counts them and it takes the next append. A twinbook reader whose consumer sits on
//    the damaged node stops at the first hole (LogGap), never skipping it; one on the intact node
//    reads every batch; and with the replica that never went down leading, every reader reads
//    every batch, the damaged replica's holes filled from the leader.
describe("a node whose stream files were damaged while it was down", () => {
  it.each([
    ["SIGKILL", "truncated to half", "truncate"],
    ["SIGTERM", "truncated to half", "truncate"],
    ["SIGTERM", "overwritten in the middle", "corrupt"]
  ] as Array<[NodeJS.Signals, string, Damage]>)("stopped by %s, its blocks %s, then leading a quorum with one healthy node", async (signal, _label, how) => {
    const cl = await startNatsCluster(3)
    try {
      const nc = await cl.connect()
      const jsm = await jetstreamManager(nc)
      const log = await openJetStreamLog(nc, { stream: "DAMAGE", subject: "damage.journal", follow: { pullExpiresMs: 2_000 } })
      const appended: LogBatch[] = []
      let seq = 1
      for (let i = 0; i < 60; i++) {
        appended.push(batchOf(1, "w", seq, 1 + ((i * 5) % 11)))
        seq += appended[i]!.records.length
      }
      expect(await appendAll(log, appended, 0)).toEqual(appended.map((_, i) => i + 1))
      const N = appended.length

      // Neither the damaged node nor the healthy leader killed later leads the JetStream meta group,
      // so the kill needs one election (the stream's), not two: the meta leader is the survivor.
      // A meta leader restarted within the meta election once never rejoined its stream (run 52); a
      // victim outside the meta leadership alone was not enough (run 54, the healthy leader's role
      // unrecorded), and CI's stop 44 found no stream leader for 5 minutes after the healthy
      // leader's kill (a fresh cluster's meta leader often leads its first stream too). That the
      // restarted node is heard at all is restartHeard's (runs 58 and 60: a restart NATS brought
      // back one way only); its place in the stream is judged by the stream leader's view.
      const meta = metaLeader(cl)
      const others = [0, 1, 2].filter((i) => cl.nodes[i]!.name !== meta)
      expect(others).toHaveLength(2)
      const [leaderIdx, victim] = others as [number, number]
      const healthyLeader = cl.nodes[leaderIdx]!.name
      await moveLeaderTo(nc, jsm, "DAMAGE", healthyLeader)
      const survivor = [0, 1, 2].find((i) => i !== leaderIdx && i !== victim)!
      const damaged = cl.nodes[victim]!.name
      await cl.kill(victim, signal)
      const files = blockFiles(cl.nodes[victim]!.storeDir, "DAMAGE")
      expect(files.length).toBeGreaterThan(0)
      damage(files, how)
      // The kill below would leave no quorum if the restart came back one way only (run 58).
      await restartHeard(cl, victim, signal)
      await waitCurrent(jsm, "DAMAGE", damaged)
      await cl.kill(leaderIdx)
      await moveLeaderTo(nc, jsm, "DAMAGE", damaged)

      // What the log holds now, position by position, as its leader (the damaged node) says.
      const lost: number[] = []
      for (let p = 1; p <= N; p++) if ((await jsm.streams.getMessage("DAMAGE", { seq: p })) === null) lost.push(p)
      expect(await log.lastPosition()).toBe(N)
      const contiguous = lost.every((p, i) => i === 0 || p === lost[i - 1]! + 1)
      if (signal === "SIGKILL") expect(lost).toEqual([])
      else if (how === "truncate") expect({ contiguous, from: lost[0]! > 1, toTheEnd: lost.at(-1) }).toEqual({ contiguous: true, from: true, toTheEnd: N })
      else expect({ contiguous, count: lost.length >= 1 && lost.length <= 2, beforeTheEnd: lost.at(-1)! < N }).toEqual({ contiguous: true, count: true, beforeTheEnd: true })

      // The damaged leader takes appends after its holes as if nothing were missing.
      const after = batchOf(2, "w2", seq, 3)
      expect(await log.append(after, N)).toBe(N + 1)
      appended.push(after)
      const total = appended.length

      // A reader's consumer sits on one live replica, chosen at random by JetStream: on the intact
      // one it reads every batch; on the damaged one it stops at the first hole (which the damaged
      // leader lacks too). Never a skip. Readers are started until one has met the damage (each
      // does with odds 1/2).
      let metDamage = lost.length === 0
      for (let attempt = 0; attempt < 40 && !(metDamage && attempt > 0); attempt++) {
        const r = await readAll(log, total)
        if (r.error === undefined) expectSame(r, appended, 1)
        else {
          expect(r.error).toBeInstanceOf(LogGap)
          const at = (r.error as LogGap).expected
          expect(lost).toContain(at)
          expectSame(r, appended.slice(0, at - 1), 1)
          metDamage = true
        }
      }
      expect(metDamage).toBe(true)

      // The replica that never went down still has every batch: leading, it gives them all back,
      // wherever a reader's consumer sits (what that replica lacks, the reader takes from the leader).
      await moveLeaderTo(nc, jsm, "DAMAGE", cl.nodes[survivor]!.name)
      const whole = collect(log, 1)
      await whole.until(total)
      expectSame(whole, appended, 1)
      await whole.stop()
    } catch (err) {
      printNodeLogs(cl)
      // CI prints only the run's tail: what each node said of the stream goes into the failure itself.
      const said = cl.nodes.map((n) => `${n.name}: ${n.log.split("\n").filter((l) => l.includes("DAMAGE")).slice(-12).join("\n    ")}`)
      const raft = await raftViews(cl)
      throw new Error(`${(err as Error).message}\n  what the nodes said of DAMAGE (last 12 lines each):\n  ${said.join("\n  ")}\n  each node's Raft groups:\n${raft}`, { cause: err })
    } finally {
      await cl.close()
    }
  }, 4 * SETTLE_MS)
})
