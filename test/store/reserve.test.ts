// The live journal segment's reserve (src/store/reserved-file.ts): records are written
// into zeros written ahead, so a durable write changes no file size; a crash leaves the
// zeros, which the reader takes as the end of the records (not a torn tail), and the
// journal appends again right after the last record. Real files, real O_DSYNC.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { type FileHandle, open } from "node:fs/promises"
import { constants } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import type { JournalRecord } from "../../src/service/commands.ts"
import { openJournal, readJournal, segmentName } from "../../src/store/file-journal.ts"
import { decodeSegment, encodeRecord } from "../../src/store/journal-format.ts"
import { RESERVE_CHUNK_BYTES, reservedAppendFile } from "../../src/store/reserved-file.ts"

const dirs: string[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "twinbook-reserve-"))
  dirs.push(d)
  return d
}
const fatal = (err: unknown): void => {
  throw err
}
const record = (seq: number): JournalRecord => ({
  seq,
  tsSec: 1_795_305_600 + seq,
  cmd: { type: "credit", user: `user-${seq % 7}`, amountMicro: 1_000_000 + seq, ref: `ref-${seq}` }
})
const framesOf = (from: number, to: number): Buffer => Buffer.concat(Array.from({ length: to - from + 1 }, (_, i) => encodeRecord(record(from + i))))
const openDsync = (path: string): Promise<FileHandle> => open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC)

describe("the reader", () => {
  const frames = framesOf(1, 3)
  it("takes zeros from a record boundary to the end as the reserve: the records, no problem", () => {
    for (const zeros of [8, 4096, 100_000]) {
      const seg = decodeSegment(Buffer.concat([frames, Buffer.alloc(zeros)]))
      expect(seg.records.map((r) => r.seq)).toEqual([1, 2, 3])
      expect(seg).toMatchObject({ validBytes: frames.length, problem: null })
    }
  })
  it("takes zeros followed by anything, or fewer zeros than a header, as a torn tail", () => {
    const cases: Array<[Buffer, RegExp]> = [
      [Buffer.concat([frames, Buffer.alloc(4096), Buffer.from([1])]), /at byte/],
      [Buffer.concat([frames, Buffer.alloc(5000), encodeRecord(record(4))]), /at byte/],
      [Buffer.concat([frames, Buffer.alloc(7)]), /torn header/]
    ]
    for (const [buf, problem] of cases) {
      const seg = decodeSegment(buf)
      expect(seg.records.map((r) => r.seq)).toEqual([1, 2, 3])
      expect(seg.validBytes).toBe(frames.length)
      expect(seg.problem).toMatch(problem)
    }
  })
})

describe("the live segment", () => {
  it("is written into zeros written ahead, so a durable write leaves the file's size alone; close cuts the zeros off", async () => {
    const dir = join(freshDir(), "journal")
    const j = await openJournal(dir, 1, fatal)
    const seg = join(dir, segmentName(1))
    await j.append(record(1))
    expect(statSync(seg).size).toBe(RESERVE_CHUNK_BYTES)
    for (let seq = 2; seq <= 40; seq++) await j.append(record(seq))
    expect(statSync(seg).size).toBe(RESERVE_CHUNK_BYTES)
    const frames = framesOf(1, 40)
    const onDisk = readFileSync(seg)
    expect(onDisk.subarray(0, frames.length).equals(frames)).toBe(true)
    expect(onDisk.subarray(frames.length).every((b) => b === 0)).toBe(true)
    await j.close()
    expect(readFileSync(seg).equals(frames)).toBe(true)
  })

  it("after a crash, the zeros are the end of the records (no torn tail), and appends continue right after the last one", async () => {
    for (const hinted of [true, false]) {
      const dir = join(freshDir(), "journal")
      const j = await openJournal(dir, 1, fatal)
      for (let seq = 1; seq <= 20; seq++) await j.append(record(seq))
      // The crash image: the segment as the disk holds it while the journal is open.
      const crashed = join(freshDir(), "journal")
      mkdirSync(crashed)
      copyFileSync(join(dir, segmentName(1)), join(crashed, segmentName(1)))
      await j.close()
      expect(statSync(join(crashed, segmentName(1))).size).toBe(RESERVE_CHUNK_BYTES)

      const read = readJournal(crashed, 1, { repair: true })
      expect(read.records.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
      expect(read.tornTail).toBeNull()
      expect(read.lastSegmentBytes).toBe(framesOf(1, 20).length)
      const again = await openJournal(crashed, 21, fatal, hinted ? { lastSegmentBytes: read.lastSegmentBytes } : {})
      for (let seq = 21; seq <= 25; seq++) await again.append(record(seq))
      await again.close()
      const after = readJournal(crashed, 1, { repair: false })
      expect(after.records.map((r) => r.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
      expect(after.tornTail).toBeNull()
      expect(readFileSync(join(crashed, segmentName(1))).equals(framesOf(1, 25))).toBe(true)
    }
  })
})

describe("reservedAppendFile", () => {
  /** Deterministic bytes, never zero (a zero run could hide a misplaced write). */
  const payload = (seed: number, bytes: number): Buffer => Buffer.from(Array.from({ length: bytes }, (_, i) => 1 + ((seed * 131 + i * 7) % 251)))

  it("lands every write whole and in order, across batches larger than the reserve and writes racing its growth", async () => {
    const path = join(freshDir(), "seg")
    const file = await reservedAppendFile(await openDsync(path), 256)
    const expected: Buffer[] = []
    let seed = 7
    for (let i = 0; i < 400; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      // Mostly small writes (inside the reserve, while it grows), some past it (up to 4 chunks).
      const parts = Array.from({ length: 1 + (seed % 3) }, (_, k) => payload(seed + k, 1 + ((seed >> (4 + k)) % (i % 10 === 0 ? 1024 : 90))))
      let rest = parts
      let left = parts.reduce((n, b) => n + b.length, 0)
      while (left > 0) {
        const n = await file.writev(rest)
        left -= n
        rest = [Buffer.concat(rest).subarray(n)]
      }
      expected.push(...parts)
      expect(await file.size()).toBe(expected.reduce((n, b) => n + b.length, 0))
    }
    const onDisk = readFileSync(path)
    const want = Buffer.concat(expected)
    expect(onDisk.subarray(0, want.length).equals(want)).toBe(true)
    expect(onDisk.subarray(want.length).every((b) => b === 0)).toBe(true)
    await file.close()
    expect(readFileSync(path).equals(want)).toBe(true)
  })

  it("a write past the reserve waits for zeros still being written there, which would otherwise land on it", async () => {
    const path = join(freshDir(), "seg")
    const fh = await openDsync(path)
    const proto = Object.getPrototypeOf(fh) as { write: (...args: unknown[]) => Promise<unknown> }
    const realWrite = proto.write
    let release = (): void => {}
    const gate = new Promise<void>((r) => (release = r))
    // The reserve's zero write is held until released.
    vi.spyOn(proto, "write").mockImplementation(async function (this: FileHandle, ...args: unknown[]) {
      await gate
      return realWrite.apply(this, args)
    })
    const file = await reservedAppendFile(fh, 256)
    const data = payload(3, 300) // past the (still empty) reserve: it must not go out before the zeros
    let settled = false
    const written = file.writev([data]).finally(() => (settled = true))
    for (let i = 0; i < 40 && !settled; i++) await new Promise((r) => setTimeout(r, 5))
    expect(settled).toBe(false)
    release()
    expect(await written).toBe(300)
    expect(readFileSync(path).subarray(0, 300).equals(data)).toBe(true)
    await file.close()
    expect(readFileSync(path).equals(data)).toBe(true)
  })

  it("a disk that refuses the reserve (full) is no error: writes go on growing the file themselves", async () => {
    const path = join(freshDir(), "seg")
    const fh = await openDsync(path)
    const write = vi.spyOn(Object.getPrototypeOf(fh) as { write: () => Promise<unknown> }, "write").mockRejectedValue(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }))
    const file = await reservedAppendFile(fh, 256)
    const parts = Array.from({ length: 30 }, (_, i) => payload(i, 50))
    for (const p of parts) expect(await file.writev([p])).toBe(50)
    expect(write).toHaveBeenCalledTimes(1) // refused once, not asked again
    expect(readFileSync(path).equals(Buffer.concat(parts))).toBe(true)
    await file.close()
    expect(readFileSync(path).equals(Buffer.concat(parts))).toBe(true)
  })
})
