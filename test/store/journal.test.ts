// The file journal's own promises: group commit (appends made while nothing or
// one batch is in flight share one durable write: O_DSYNC on the live disk, a write
// + fdatasync on a disk without it), an append resolves only
// once a fresh reader sees its record, and size-based rotation keeps the
// records in order across segments. Counting goes through the FileHandle
// prototype (every handle shares it), so nothing here depends on timing.
import { constants, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs"
import { type FileHandle, open } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import type { JournalRecord } from "../../src/service/commands.ts"
import { type Journal, listSegments, openJournal, readJournal, scanJournal, segmentName } from "../../src/store/file-journal.ts"
import { encodeRecord } from "../../src/store/journal-format.ts"
import { nodeStorage, type Storage, StorageError } from "../../src/store/storage.ts"

const dirs: string[] = []
const journals: Journal[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const j of journals.splice(0)) await j.close().catch(() => undefined)
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "twinbook-journal-"))
  dirs.push(d)
  return join(d, "journal")
}
const fatal = (err: unknown): void => {
  throw err
}
const openTracked = async (dir: string, nextSeq: number, opts?: { segmentMaxBytes?: number }): Promise<Journal> => {
  const j = await openJournal(dir, nextSeq, fatal, opts)
  journals.push(j)
  return j
}

/** A credit record; `pad` makes records of a chosen size. */
const record = (seq: number, pad = 0): JournalRecord => ({
  seq,
  tsSec: 1_795_305_600 + seq,
  cmd: { type: "credit", user: `user-${seq % 7}`, amountMicro: 1_000_000 + seq, ref: `ref-${seq}-${"x".repeat(pad)}` }
})

type Proto = { datasync: () => Promise<void>; writev: (buffers: Buffer[]) => Promise<unknown>; sync: () => Promise<void> }
let proto: Proto
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "twinbook-journal-proto-"))
  const fh: FileHandle = await open(join(dir, "probe"), "w")
  proto = Object.getPrototypeOf(fh) as Proto
  await fh.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("group commit", () => {
  it("appends made in one turn of the event loop go out as one write, durable as it returns (O_DSYNC: no separate fdatasync)", async () => {
    const j = await openTracked(freshDir(), 1)
    const datasync = vi.spyOn(proto, "datasync")
    const writev = vi.spyOn(proto, "writev")
    const done = Array.from({ length: 500 }, (_, i) => j.append(record(i + 1)))
    await Promise.all(done)
    expect(writev).toHaveBeenCalledTimes(1)
    expect(writev.mock.calls[0]![0]).toHaveLength(500)
    expect(datasync).not.toHaveBeenCalled()
  })

  it("the live journal's segment is open O_DSYNC, so a write that returns is on disk", async () => {
    if (process.platform !== "linux") return // the open flags are read from /proc (Linux); the CI runs Linux
    const dir = freshDir()
    const j = await openTracked(dir, 1)
    await j.append(record(1))
    const seg = join(dir, segmentName(1))
    const fds = readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === seg
      } catch {
        return false
      }
    })
    expect(fds).toHaveLength(1)
    const flags = parseInt(/^flags:\s+(\d+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fds[0]}`, "latin1"))![1]!, 8)
    expect(flags & constants.O_DSYNC).toBe(constants.O_DSYNC)
    // Not O_APPEND: writes go at offsets into the zeros written ahead (Linux ignores offsets under O_APPEND).
    expect(flags & constants.O_APPEND).toBe(0)
  })

  it("on a disk whose writes are not durable by themselves, each batch is one write and one fdatasync", async () => {
    // The live disk with its O_DSYNC left unsaid: the journal must then sync each batch itself.
    const plain: Storage = { ...nodeStorage, openAppend: async (path) => ({ ...(await nodeStorage.openAppend(path)), writesAreDurable: false }) }
    const j = await openJournal(freshDir(), 1, fatal, { storage: plain })
    journals.push(j)
    const datasync = vi.spyOn(proto, "datasync")
    const writev = vi.spyOn(proto, "writev")
    await Promise.all(Array.from({ length: 300 }, (_, i) => j.append(record(i + 1))))
    await j.append(record(301))
    expect(writev).toHaveBeenCalledTimes(2)
    expect(datasync).toHaveBeenCalledTimes(2)
  })

  it("appends made while a batch is being written form the next batch, and wait for its write", async () => {
    const dir = freshDir()
    const j = await openTracked(dir, 1)
    const order: string[] = []
    const later: Promise<void>[] = []
    const original = proto.writev
    const writev = vi.spyOn(proto, "writev").mockImplementation(function (this: FileHandle, buffers: Buffer[]) {
      const n = writev.mock.calls.length
      order.push(`write ${n}`)
      // While the first batch is in flight, 200 more appends arrive (in one turn).
      if (n === 1) for (let s = 2; s <= 201; s++) later.push(j.append(record(s)).then(() => void order.push(`ack ${s}`)))
      return original.call(this, buffers).then((r) => {
        order.push(`written ${n}`)
        return r
      })
    })
    await j.append(record(1)).then(() => void order.push("ack 1"))
    await Promise.all(later)
    expect(writev).toHaveBeenCalledTimes(2)
    // The first record is acknowledged once the first write returned; all 200 others only once the second did.
    expect(order.slice(0, 2)).toEqual(["write 1", "written 1"])
    expect(order.indexOf("ack 1")).toBeLessThan(order.indexOf("written 2"))
    expect(order.slice(order.indexOf("written 2") + 1)).toEqual(Array.from({ length: 200 }, (_, i) => `ack ${i + 2}`))
    expect(readJournal(dir, 1, { repair: false }).lastSeq).toBe(201)
  })

  it("sync() waits for everything appended so far; close() leaves a whole journal", async () => {
    const dir = freshDir()
    const j = await openTracked(dir, 1)
    for (let s = 1; s <= 50; s++) void j.append(record(s))
    await j.sync()
    expect(readJournal(dir, 1, { repair: false }).lastSeq).toBe(50)
    for (let s = 51; s <= 60; s++) void j.append(record(s))
    await j.close()
    const read = readJournal(dir, 1, { repair: false })
    expect(read.tornTail).toBeNull()
    expect(read.records.map((r) => r.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1))
  })
})

describe("acknowledgement", () => {
  it("an append never resolves before a fresh reader finds its record, intact", async () => {
    const dir = freshDir()
    const j = await openTracked(dir, 1)
    // Every write reaches the file a turn late: an acknowledgement that ran ahead of
    // its write would see nothing on disk, whatever the speed of the machine.
    const writev = proto.writev
    vi.spyOn(proto, "writev").mockImplementation(async function (this: FileHandle, buffers: Buffer[]) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      return writev.call(this, buffers)
    })
    const checked: number[] = []
    const problems: string[] = []
    const appendChecked = (r: JournalRecord): Promise<void> =>
      j.append(r).then(() => {
        // Read synchronously inside the resolution: nothing can have run in between.
        // A later batch may be mid-write (a torn tail to this reader), never this one.
        const read = readJournal(dir, r.seq, { repair: false })
        if (read.records[0]?.seq !== r.seq) problems.push(`seq ${r.seq} not readable when acknowledged (journal ends at ${read.lastSeq})`)
        else if (JSON.stringify(read.records[0]) !== JSON.stringify(r)) problems.push(`seq ${r.seq} reads back different`)
        checked.push(r.seq)
      })
    let seq = 0
    // Bursts of different sizes, some awaited, some overlapping the batch in flight.
    for (const burst of [1, 7, 1, 40, 3, 120, 2, 1, 60]) {
      const wave = Array.from({ length: burst }, () => {
        seq++
        return appendChecked(record(seq, seq % 13))
      })
      if (burst % 2 === 1) await Promise.all(wave)
      else await new Promise<void>((resolve) => setImmediate(resolve))
    }
    await j.sync()
    await new Promise<void>((resolve) => setImmediate(resolve))
    expect(problems).toEqual([])
    expect(checked.sort((a, b) => a - b)).toEqual(Array.from({ length: seq }, (_, i) => i + 1))
  })

  it("a short write is continued until the whole batch is on disk before anyone is told", async () => {
    const dir = freshDir()
    const j = await openTracked(dir, 1)
    // The disk takes at most 37 bytes per write (as a nearly full one or a signal might):
    // a real partial write to the real file, reported through bytesWritten.
    const writev = proto.writev
    const calls = vi.spyOn(proto, "writev").mockImplementation(async function (this: FileHandle, buffers: Buffer[]) {
      const first = Buffer.concat(buffers).subarray(0, 37)
      return writev.call(this, [first])
    })
    const records = Array.from({ length: 40 }, (_, i) => record(i + 1, i % 9))
    const problems: string[] = []
    await Promise.all(
      records.map((r) =>
        j.append(r).then(() => {
          const read = readJournal(dir, r.seq, { repair: false })
          if (JSON.stringify(read.records[0]) !== JSON.stringify(r)) problems.push(`seq ${r.seq} acknowledged but not whole on disk`)
        })
      )
    )
    expect(problems).toEqual([])
    expect(calls.mock.calls.length).toBeGreaterThan(40)
    calls.mockRestore()
    // And the journal goes on whole after it.
    await j.append(record(41))
    const read = readJournal(dir, 1, { repair: false })
    expect(read.tornTail).toBeNull()
    expect(read.records).toEqual([...records, record(41)])
  })

  it("a write cut short and then refused (a full disk) fails the whole batch: no waiter of it resolves", async () => {
    const dir = freshDir()
    const errors: unknown[] = []
    const j = await openJournal(dir, 1, (err) => void errors.push(err))
    journals.push(j)
    await j.append(record(1))
    const writev = proto.writev
    let n = 0
    vi.spyOn(proto, "writev").mockImplementation(async function (this: FileHandle, buffers: Buffer[], position?: number) {
      // Half of the batch fits; then the disk is full.
      if (n++ === 0) return (writev as (b: Buffer[], p?: number) => Promise<unknown>).call(this, [Buffer.concat(buffers).subarray(0, Math.floor(Buffer.concat(buffers).length / 2))], position)
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
    })
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => j.append(record(i + 2))))
    expect(outcomes.map((o) => o.status)).toEqual(Array.from({ length: 10 }, () => "rejected"))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(StorageError)
    expect((errors[0] as StorageError).code).toBe("ENOSPC")
    expect((errors[0] as Error).message).toMatch(new RegExp(`^write of ${dir}/seg-000000000001\\.log failed: ENOSPC`))
    // The failed journal takes nothing more (and never retries).
    await expect(j.append(record(12))).rejects.toThrow(/ENOSPC/)
    expect(n).toBe(2)
    // A restart keeps the acknowledged record and cuts the half-written batch as a torn tail.
    vi.restoreAllMocks()
    const read = readJournal(dir, 1, { repair: true })
    expect(read.records.map((r) => r.seq)[0]).toBe(1)
    expect(read.tornTail).not.toBeNull()
  })

  it("a failed write rejects the batch and every later append (fail-stop)", async () => {
    const dir = freshDir()
    const errors: unknown[] = []
    const j = await openJournal(dir, 1, (err) => void errors.push(err))
    journals.push(j)
    await j.append(record(1))
    // The durable (O_DSYNC) write fails as a failed fdatasync would: nothing of the batch is trusted.
    vi.spyOn(proto, "writev").mockRejectedValueOnce(Object.assign(new Error("EIO: simulated"), { code: "EIO" }))
    await expect(j.append(record(2))).rejects.toThrow(/EIO/)
    await expect(j.append(record(3))).rejects.toThrow(/EIO/)
    await expect(j.sync()).rejects.toThrow(/EIO/)
    expect(errors).toHaveLength(1)
    // Named as what failed, where, and with which errno; the failed write is never retried.
    expect((errors[0] as Error).message).toMatch(/^write of .*seg-000000000001\.log failed: EIO/)
    expect(proto.writev).toHaveBeenCalledTimes(1)
  })
})

describe("segments", () => {
  it("rotates by size between batches and reads the records back in order across segments", async () => {
    const dir = freshDir()
    const frameBytes = encodeRecord(record(1, 100)).length
    const max = frameBytes * 5
    const j = await openTracked(dir, 1, { segmentMaxBytes: max })
    const dirSyncs = vi.spyOn(proto, "sync")
    const written: JournalRecord[] = []
    let seq = 0
    // Batches of 3 records: a segment takes batches until it holds ≥ 5 records' bytes.
    for (let b = 0; b < 8; b++) {
      const batch = Array.from({ length: 3 }, () => record(++seq, 100))
      written.push(...batch)
      await Promise.all(batch.map((r) => j.append(r)))
    }
    // A single big batch stays whole in one segment, however large.
    const big = Array.from({ length: 12 }, () => record(++seq, 100))
    written.push(...big)
    await Promise.all(big.map((r) => j.append(r)))
    const last = record(++seq, 100)
    written.push(last)
    await j.append(last)
    await j.close()

    const segments = listSegments(dir)
    // 3+3 | 3+3 | 3+3 | 3+3 | 12 | 1
    expect(segments.map((s) => s.firstSeq)).toEqual([1, 7, 13, 19, 25, 37])
    expect(readdirSync(dir).sort()).toEqual(segments.map((s) => segmentName(s.firstSeq)))
    for (const s of segments.slice(0, 4)) expect(statSync(s.path).size).toBeGreaterThanOrEqual(max)
    // Each segment made by rotation had its directory entry made durable (fsync of the directory).
    expect(dirSyncs).toHaveBeenCalledTimes(segments.length - 1)

    const read = readJournal(dir, 1, { repair: false })
    expect(read.tornTail).toBeNull()
    expect(read.lastSeq).toBe(seq)
    expect(read.records).toEqual(written)
    // From the middle: earlier segments are skipped, order is kept.
    expect(readJournal(dir, 20, { repair: false }).records).toEqual(written.slice(19))
    const streamed: number[] = []
    expect(scanJournal(dir, 26, { repair: false }, (r) => void streamed.push(r.seq))).toEqual({ lastSeq: seq, tornTail: null, lastSegmentBytes: encodeRecord(last).length })
    expect(streamed).toEqual(written.slice(25).map((r) => r.seq))

    // Reopened, the journal continues its last segment and rotates again from there.
    const again = await openTracked(dir, seq + 1, { segmentMaxBytes: max })
    const more = Array.from({ length: 6 }, () => record(++seq, 100))
    for (const r of more) await again.append(r)
    await again.close()
    expect(listSegments(dir).map((s) => s.firstSeq)).toEqual([1, 7, 13, 19, 25, 37, 42])
    expect(readJournal(dir, 1, { repair: false }).records).toEqual([...written, ...more])
  })

  it("a new journal makes its first segment's and its own directory entries durable", async () => {
    const dirSyncs = vi.spyOn(proto, "sync")
    const j = await openTracked(freshDir(), 1)
    // The journal directory (holds the new segment) and its parent (holds the new directory).
    expect(dirSyncs).toHaveBeenCalledTimes(2)
    await j.append(record(1))
    expect(dirSyncs).toHaveBeenCalledTimes(2)
  })

  it("a gap in sequence numbers across segments is corruption", async () => {
    const dir = freshDir()
    const j = await openTracked(dir, 1, { segmentMaxBytes: 1 })
    for (let s = 1; s <= 4; s++) await j.append(record(s))
    await j.close()
    rmSync(join(dir, segmentName(3)))
    expect(() => readJournal(dir, 1, { repair: false })).toThrow(/journal gap .* expected seq 3, found 4/)
  })
})
