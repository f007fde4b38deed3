// The append-only journal on disk: segment files `seg-<firstSeq>.log` under
// DATA_DIR/journal. Appends are group-committed: everything appended while one
// write+fdatasync is in flight goes out in the next batch, and each append's
// promise resolves only once its batch is durable. A failed write is fatal:
// memory is ahead of disk, so the process must stop (fail-stop).
import { mkdirSync, readdirSync, readFileSync, truncateSync } from "node:fs"
import { type FileHandle, open } from "node:fs/promises"
import { dirname, join } from "node:path"
import type { JournalRecord } from "../service/commands.ts"
import { decodeFrames, encodeRecord } from "./journal-format.ts"

export interface Journal {
  /** Resolves once the record is on disk (fdatasync'd). */
  append(record: JournalRecord): Promise<void>
  /** Resolves once everything appended so far is durable. */
  sync(): Promise<void>
  close(): Promise<void>
}

/** A segment past this size is closed and the next batch starts a new one. */
export const SEGMENT_MAX_BYTES = 64 * 1024 * 1024

const SEGMENT = /^seg-(\d{12})\.log$/
export const segmentName = (firstSeq: number): string => `seg-${String(firstSeq).padStart(12, "0")}.log`

export const listSegments = (dir: string): Array<{ firstSeq: number; path: string }> => {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names
    .flatMap((name) => {
      const m = SEGMENT.exec(name)
      return m === null ? [] : [{ firstSeq: Number(m[1]), path: join(dir, name) }]
    })
    .sort((a, b) => a.firstSeq - b.firstSeq)
}

export interface TornTail {
  readonly segment: string
  readonly atByte: number
  readonly droppedBytes: number
  readonly problem: string
}

export interface RecoveredJournal {
  /** Records with seq ≥ fromSeq, in order, contiguous. */
  readonly records: JournalRecord[]
  /** The last valid sequence number in the journal (0 when empty). */
  readonly lastSeq: number
  /** A torn or corrupt tail found (and, with `repair`, truncated away). */
  readonly tornTail: TornTail | null
}

/**
 * Reads the journal from `fromSeq`. A bad frame in the last segment is a torn tail:
 * reported, and with `repair` truncated to the last whole record. A bad frame in an
 * earlier segment, or a gap in sequence numbers, is corruption: it throws.
 */
export const readJournal = (dir: string, fromSeq: number, opts: { repair: boolean }): RecoveredJournal => {
  const records: JournalRecord[] = []
  const { lastSeq, tornTail } = scanJournal(dir, fromSeq, opts, (r) => void records.push(r))
  return { records, lastSeq, tornTail }
}

/**
 * `readJournal` without holding the records: each record with seq ≥ fromSeq goes to
 * `onRecord` as its segment is decoded (recovery applies them at once, so a long
 * journal is never all in memory). Checks, repair and errors are readJournal's; on
 * an error some records may already have been handed over, and the caller must
 * discard what it built from them.
 */
export const scanJournal = (
  dir: string,
  fromSeq: number,
  opts: { repair: boolean },
  onRecord: (record: JournalRecord) => void
): Omit<RecoveredJournal, "records"> => {
  const segments = listSegments(dir)
  let tornTail: TornTail | null = null
  let expected = 0
  let lastSeq = 0
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!
    const next = segments[i + 1]
    const isLast = next === undefined
    // A whole segment before fromSeq need not be decoded, only its successor's start checked.
    if (!isLast && next.firstSeq <= fromSeq) {
      expected = next.firstSeq
      continue
    }
    const buf = readFileSync(seg.path)
    // A gap found mid-segment is raised only once the segment's framing is judged,
    // so a bad frame takes precedence and a torn tail is still repaired first.
    let gap: Error | null = null
    let count = 0
    const decoded = decodeFrames(buf, (r) => {
      count++
      if (gap !== null) return
      if (expected !== 0 && r.seq !== expected) {
        gap = new Error(`journal gap in ${seg.path}: expected seq ${expected}, found ${r.seq}`)
        return
      }
      expected = r.seq + 1
      lastSeq = r.seq
      if (r.seq >= fromSeq) onRecord(r)
    })
    if (decoded.problem !== null) {
      if (!isLast) throw new Error(`journal corrupt in ${seg.path}: ${decoded.problem} (not the last segment: refusing to guess)`)
      tornTail = { segment: seg.path, atByte: decoded.validBytes, droppedBytes: buf.length - decoded.validBytes, problem: decoded.problem }
      if (opts.repair) truncateSync(seg.path, decoded.validBytes)
    }
    if (gap !== null) throw gap
    if (count === 0) expected = Math.max(expected, seg.firstSeq)
  }
  return { lastSeq, tornTail }
}

/** Makes a new segment's directory entry durable: fdatasync of the file alone does not. */
const syncDir = async (dir: string): Promise<void> => {
  const d = await open(dir, "r")
  try {
    await d.sync()
  } finally {
    await d.close()
  }
}

export interface JournalOptions {
  /** Rotation threshold; SEGMENT_MAX_BYTES unless a test wants small segments. */
  readonly segmentMaxBytes?: number
}

/**
 * Opens the journal for appending, continuing the last segment. The single writer
 * loop owns the file handle, so size-based rotation between batches cannot race appends.
 */
export const openJournal = async (
  dir: string,
  nextSeq: number,
  onFatal: (err: unknown) => void,
  opts: JournalOptions = {}
): Promise<Journal> => {
  const segmentMaxBytes = opts.segmentMaxBytes ?? SEGMENT_MAX_BYTES
  const created = mkdirSync(dir, { recursive: true })
  const last = listSegments(dir).at(-1)
  let fh: FileHandle = await open(join(dir, last === undefined ? segmentName(nextSeq) : segmentName(last.firstSeq)), "a")
  if (last === undefined) {
    await syncDir(dir)
    // Directories made just now hold each other's entries: those must last too.
    if (created !== undefined) for (let d = dir; d !== dirname(created); d = dirname(d)) await syncDir(dirname(d))
  }
  let segmentBytes = (await fh.stat()).size
  let pending: Array<{ seq: number; frame: Buffer }> = []
  let waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = []
  let inFlight: Promise<void> | null = null
  let failed: unknown = null

  const writeBatches = async (): Promise<void> => {
    while (pending.length > 0) {
      const batch = pending
      const batchWaiters = waiters
      pending = []
      waiters = []
      try {
        if (segmentBytes >= segmentMaxBytes) {
          await fh.close()
          fh = await open(join(dir, segmentName(batch[0]!.seq)), "a")
          segmentBytes = 0
          await syncDir(dir)
        }
        const frames = batch.map((p) => p.frame)
        await fh.writev(frames)
        await fh.datasync()
        for (const f of frames) segmentBytes += f.length
      } catch (err) {
        failed = err
        for (const w of batchWaiters) w.reject(err)
        for (const w of waiters) w.reject(err)
        waiters = []
        pending = []
        onFatal(err)
        return
      }
      for (const w of batchWaiters) w.resolve()
    }
  }
  const kick = (): void => {
    if (inFlight !== null) return
    // Appends made in this turn of the event loop join the same batch.
    inFlight = new Promise<void>((done) =>
      setImmediate(() =>
        void writeBatches().finally(() => {
          inFlight = null
          done()
          if (pending.length > 0) kick()
        })
      )
    )
  }
  const drain = async (): Promise<void> => {
    while (inFlight !== null || pending.length > 0) {
      if (inFlight === null) kick()
      await inFlight
    }
    if (failed !== null) throw failed
  }

  return {
    append: (record) => {
      if (failed !== null) return Promise.reject(failed)
      pending.push({ seq: record.seq, frame: encodeRecord(record) })
      const p = new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }))
      kick()
      return p
    },
    sync: drain,
    close: async () => {
      await drain()
      await fh.close()
    }
  }
}
