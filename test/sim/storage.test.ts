// Storage faults in the simulator (issue 18): the real journal, snapshots and
// recovery on the simulated disk (sim/world/storage-disk.ts), and the storage-chaos
// scenario — many crashes and fail-stops under agent load, each recovery audited —
// with a planted bug (writes that ignore `bytesWritten`) the auditor must catch.
import { describe, expect, it } from "vitest"
import { runScenario } from "../../sim/scenario/run.ts"
import { Rng } from "../../sim/world/random.ts"
import { Scheduler } from "../../sim/world/scheduler.ts"
import { NO_DISK_FAULTS, SimDisk } from "../../sim/world/storage-disk.ts"
import { ignoreBytesWritten } from "../../sim/testing/ignore-bytes-written.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { describeRecovery, journalDir, openDurableExchange, snapshotDir } from "../../src/store/durable.ts"
import { openJournal, readJournal } from "../../src/store/file-journal.ts"
import { shippedScenarios } from "./support.ts"

const record = (seq: number): JournalRecord => ({ seq, tsSec: 1_767_225_600 + seq, cmd: { type: "credit", user: `u${seq % 5}`, amountMicro: 1_000 + seq, ref: `r${seq}` } })

/** Runs the scheduler until `p` settles (disk operations take virtual time). */
const settle = async <A>(scheduler: Scheduler, p: Promise<A>): Promise<A> => {
  let done = false
  const out = p.finally(() => void (done = true))
  while (!done) await scheduler.run(scheduler.nowMs() + 1)
  return out
}

const newDisk = (faults = NO_DISK_FAULTS, seed = "disk-test") => {
  const scheduler = new Scheduler(1_767_225_600_000)
  const disk = new SimDisk(new Rng(seed), faults, scheduler)
  disk.arm()
  return { scheduler, disk }
}

describe("the simulated disk under the real journal", () => {
  it("keeps what fdatasync covered across a crash, loses the rest, and refuses the dead process", async () => {
    const { scheduler, disk } = newDisk()
    const storage = disk.storageFor()
    const j = await openJournal("/d/journal", 1, () => {}, { storage, defer: (run) => void scheduler.after(0, run) })
    for (let s = 1; s <= 5; s++) await settle(scheduler, j.append(record(s)))
    // Written but not yet synced when the power goes.
    const file = await storage.openAppend("/d/journal/seg-000000000001.log")
    await file.writev([Buffer.from("unsynced bytes")])
    disk.crash()
    await expect(file.datasync()).rejects.toThrow(/EBADF/)
    const read = readJournal("/d/journal", 1, { repair: false, storage: disk.storageFor() })
    expect(read.records).toEqual([1, 2, 3, 4, 5].map(record))
    expect(read.tornTail).toBeNull()
  })

  it("the real journal finishes short writes on it: every acknowledged record reads back whole", async () => {
    const { scheduler, disk } = newDisk({ ...NO_DISK_FAULTS, shortWritePct: 60 })
    const storage = disk.storageFor()
    const j = await openJournal("/d/journal", 1, (err) => {
      throw err
    }, { storage, defer: (run) => void scheduler.after(0, run) })
    const all = Array.from({ length: 200 }, (_, i) => record(i + 1))
    // Twenty batches of ten.
    for (let i = 0; i < all.length; i += 10) await settle(scheduler, Promise.all(all.slice(i, i + 10).map((r) => j.append(r))))
    expect(disk.stats.shortWrites).toBeGreaterThan(10)
    expect(readJournal("/d/journal", 1, { repair: false, storage }).records).toEqual(all)
  })

  it("EIO on fdatasync fail-stops the journal: the batch is rejected, never acknowledged, and nothing is retried", async () => {
    const { scheduler, disk } = newDisk({ ...NO_DISK_FAULTS, syncEioPct: 100 })
    const fatal: unknown[] = []
    const j = await openJournal("/d/journal", 1, (err) => void fatal.push(err), { storage: disk.storageFor(), defer: (run) => void scheduler.after(0, run) })
    const outcome = await settle(scheduler, Promise.allSettled([j.append(record(1)), j.append(record(2))]))
    expect(outcome.map((o) => o.status)).toEqual(["rejected", "rejected"])
    expect(fatal).toHaveLength(1)
    expect(String(fatal[0])).toMatch(/fdatasync of \/d\/journal\/seg-000000000001\.log failed: EIO/)
    expect(disk.stats.syncEio).toBe(1)
    await expect(j.append(record(3))).rejects.toThrow(/EIO/)
    expect(disk.stats.syncEio).toBe(1)
  })

  it("real recovery on it: a flipped snapshot is skipped with its reason, moved aside, and the state equals a full replay", async () => {
    const { scheduler, disk } = newDisk({ ...NO_DISK_FAULTS, snapshotFlipPct: 100 })
    const open = () => openDurableExchange("/data", () => scheduler.nowMs(), { onFatal: (e) => { throw e }, storage: disk.storageFor(), defer: (run) => void scheduler.after(0, run) })
    const a = await open()
    for (let i = 0; i < 20; i++) void a.exchange.submit({ type: "credit", user: `u${i % 3}`, amountMicro: 1_000_000 + i, ref: `c${i}` })
    const snap = await settle(scheduler, a.snapshot())
    await settle(scheduler, Promise.all([1, 2, 3].map((i) => a.exchange.submit({ type: "credit", user: "u9", amountMicro: i, ref: `late${i}` }).durable)))
    const hash = exchangeHash(a.exchange)
    disk.crash()
    const b = await open()
    expect(b.recovery.snapshotSeq).toBeNull()
    expect(b.recovery.skippedSnapshots).toEqual([{ path: snap.path, reason: expect.stringMatching(/checksum mismatch|not a snapshot file|not JSON/), movedTo: `${snapshotDir("/data")}/damaged/${snap.path.split("/").at(-1)}` }])
    expect(describeRecovery(b.recovery).at(-1)).toMatch(/^recovery {10}no usable snapshot \(1 skipped\): full replay of the journal from seq 1 \(23 records\)$/)
    expect(exchangeHash(b.exchange)).toBe(hash)
    expect(disk.storageFor().list(`${snapshotDir("/data")}/damaged`)).toEqual([snap.path.split("/").at(-1)])
    expect(readJournal(journalDir("/data"), 1, { repair: false, storage: disk.storageFor() }).lastSeq).toBe(23)
  })
})

describe("storage-chaos", () => {
  const { scenario } = shippedScenarios().find((s) => s.scenario.name === "storage-chaos")!

  it("crashes and fail-stops many times under load; every recovery is audited clean", async () => {
    const s = await runScenario(scenario, { seed: 7 })
    expect(s.failures).toEqual([])
    const t = s.storage!
    expect(s.crashes).toBeGreaterThanOrEqual(5)
    expect(t.failStops).toBeGreaterThanOrEqual(1)
    // Every crash (fault or fail-stop) is followed by an audited recovery.
    expect(t.recoveries).toBe(s.crashes)
    expect(t.shortWrites).toBeGreaterThan(0)
    expect(t.snapshotsWritten).toBeGreaterThan(5)
    expect(s.ordersAcked).toBeGreaterThan(100)
  }, 120_000)

  it("a planted bug — writes that ignore bytesWritten — is caught by the auditor, with a reproduce command", async () => {
    const seed = 2
    const planted = await runScenario(scenario, { seed, tamperStorage: ignoreBytesWritten, expectations: false })
    const reproduce = `npm run sim -- scenarios/storage-chaos.json --seed ${seed} --plant ignore-bytes-written`
    console.log(`planted bug caught at seed ${seed}: ${planted.failures[0]?.split("\n")[0]}\n  reproduce: ${reproduce}`)
    expect(planted.ok, reproduce).toBe(false)
    expect(planted.failures.some((f) => /acknowledged record seq \d+ \(\w+\) lost|durable records are missing/.test(f)), reproduce).toBe(true)
    // The same seed replays the same failure; without the planted bug the run is clean.
    const again = await runScenario(scenario, { seed, tamperStorage: ignoreBytesWritten, expectations: false })
    const firstLines = (fs: ReadonlyArray<string>) => fs.map((f) => f.split("\n")[0])
    expect(firstLines(again.failures)).toEqual(firstLines(planted.failures))
    const clean = await runScenario(scenario, { seed, expectations: false })
    expect(clean.failures).toEqual([])
  }, 120_000)
})
