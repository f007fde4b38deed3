// The append-only journal on disk: segment files `seg-<firstSeq>.log` under
// DATA_DIR/journal. Appends are group-committed: everything appended while one
// write+fdatasync is in flight goes out in the next batch, and each append's
// promise resolves only once its whole batch is written and fdatasync'd: a short
// write is continued until every byte is out. A failed write or fdatasync is fatal
// for the journal (after a failed fsync the page cache cannot be trusted, so it is
// never retried): memory is ahead of disk, so the process must stop (fail-stop), and
// no waiter of the failed batch or any later one is told it is durable.
// File access goes through a Storage port (node:fs live, a simulated disk in sim).
import { dirname, join } from "node:path"
import type { JournalRecord } from "../service/commands.ts"
import { decodeFrames, encodeRecord } from "./journal-format.ts"
import { type AppendFile, nodeStorage, type Storage, StorageError } from "./storage.ts"

export interface Journal {
  /** Resolves once the record is on disk (fdatasync'd). */
  append(record: JournalRecord): Promise<void>
  /**
   * Resolves once every record appended before the call is durable; records appended after
   * it are not waited for, so a steady stream of appends cannot starve it (rejects once the
   * journal failed).
   */
  sync(): Promise<void>
  /** Tells `listener` of each batch as it is cut (nothing appended since is in it) and once it is durable. */
  onBatch(listener: BatchListener): void
  /** Waits until nothing is pending or in flight, then closes the segment. */
  close(): Promise<void>
}

/**
 * A batch's two moments. At `cut(lastSeq)` the records applied so far are exactly the batch and
 * those before it, so state read then is the state of a prefix that `durable(lastSeq)` later
 * confirms: the feed renders its frames at the cut and sends them once durable (src/runtime/boot.ts).
 */
export interface BatchListener {
  cut(lastSeq: number): void
  durable(lastSeq: number): void
}

/** A segment past this size is closed and the next batch starts a new one. */
export const SEGMENT_MAX_BYTES = 64 * 1024 * 1024

const SEGMENT = /^seg-(\d{12})\.log$/
export const segmentName = (firstSeq: number): string => `seg-${String(firstSeq).padStart(12, "0")}.log`

export const listSegments = (dir: string, storage: Storage = nodeStorage): Array<{ firstSeq: number; path: string }> =>
  storage
    .list(dir)
    .flatMap((name) => {
      const m = SEGMENT.exec(name)
      return m === null ? [] : [{ firstSeq: Number(m[1]), path: join(dir, name) }]
    })
    .sort((a, b) => a.firstSeq - b.firstSeq)

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
  /** Where the last segment's valid records end (0 without segments): appends continue there. */
  readonly lastSegmentBytes: number
}

/**
 * Reads the journal from `fromSeq`. A bad frame in the last segment is a torn tail:
 * reported, and with `repair` truncated to the last whole record. A bad frame in an
 * earlier segment, or a gap in sequence numbers, is corruption: it throws.
 */
export const readJournal = (dir: string, fromSeq: number, opts: ScanOptions): RecoveredJournal => {
  const records: JournalRecord[] = []
  const { lastSeq, tornTail, lastSegmentBytes } = scanJournal(dir, fromSeq, opts, (r) => void records.push(r))
  return { records, lastSeq, tornTail, lastSegmentBytes }
}

/**
 * `readJournal` without holding the records: each record with seq ≥ fromSeq goes to
 * `onRecord` as its segment is decoded (recovery applies them at once, so a long
 * journal is never all in memory). Checks, repair and errors are readJournal's; on
 * an error some records may already have been handed over, and the caller must
 * discard what it built from them.
 */
export interface ScanOptions {
  readonly repair: boolean
  readonly storage?: Storage
}

export const scanJournal = (
  dir: string,
  fromSeq: number,
  opts: ScanOptions,
  onRecord: (record: JournalRecord) => void
): Omit<RecoveredJournal, "records"> => {
  const storage = opts.storage ?? nodeStorage
  const segments = listSegments(dir, storage)
  let tornTail: TornTail | null = null
  let lastSegmentBytes = 0
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
    const buf = storage.readFile(seg.path)
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
      if (opts.repair) storage.truncate(seg.path, decoded.validBytes)
    }
    if (gap !== null) throw gap
    if (count === 0) expected = Math.max(expected, seg.firstSeq)
    lastSegmentBytes = decoded.validBytes
  }
  return { lastSeq, tornTail, lastSegmentBytes }
}

export interface JournalOptions {
  /** Rotation threshold; SEGMENT_MAX_BYTES unless a test wants small segments. */
  readonly segmentMaxBytes?: number
  /** The disk; node:fs unless the simulator gives its own. */
  readonly storage?: Storage
  /**
   * Runs the writer after the current turn, so appends made in this turn join one batch:
   * setImmediate live; the simulator's scheduler in sim (no real timers in the world).
   */
  readonly defer?: (run: () => void) => void
  /** Told the last seq of each batch once it is durable, before its waiters are (the simulator's auditor counts acknowledgements). */
  readonly onDurable?: (lastSeq: number) => void
  /**
   * Where the last segment's records end, as the recovery just run found it (`scanJournal`);
   * without it the segment is read to find out. Anything after (a reserve, a torn tail) is cut.
   */
  readonly lastSegmentBytes?: number
}

/** The buffers left to write after `written` bytes of `buffers` went out. */
const unwritten = (buffers: Buffer[], written: number): Buffer[] => {
  let skip = written
  let i = 0
  while (i < buffers.length && skip >= buffers[i]!.length) skip -= buffers[i++]!.length
  const rest = buffers.slice(i)
  if (skip > 0) rest[0] = rest[0]!.subarray(skip)
  return rest
}

/** Writes every byte of `buffers` at the end of `file`, continuing short writes; a write that makes no progress fails. */
export const writeAll = async (file: AppendFile, buffers: Buffer[], path: string): Promise<number> => {
  let total = 0
  for (const b of buffers) total += b.length
  let written = 0
  let rest = buffers
  while (written < total) {
    let n: number
    try {
      n = await file.writev(rest)
    } catch (err) {
      throw new StorageError("write", path, err)
    }
    if (n <= 0) throw new StorageError("write", path, Object.assign(new Error(`wrote 0 of ${total - written} bytes`), { code: "EIO" }))
    written += n
    if (written < total) rest = unwritten(rest, n)
  }
  return total
}

// One piece: a factory whose single writer loop, rotation and sync share the file handle (so rotation cannot race appends).
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
  const storage = opts.storage ?? nodeStorage
  const defer = opts.defer ?? setImmediate
  const created = storage.mkdirp(dir)
  const last = listSegments(dir, storage).at(-1)
  let path = join(dir, last === undefined ? segmentName(nextSeq) : segmentName(last.firstSeq))
  // Appends continue right after the last record, not after zeros a crash left behind it.
  if (last !== undefined) storage.truncate(path, opts.lastSegmentBytes ?? decodeFrames(storage.readFile(path), () => {}).validBytes)
  let fh: AppendFile = await storage.openAppend(path)
  if (last === undefined) {
    await storage.syncDir(dir)
    // Directories made just now hold each other's entries: those must last too.
    if (created !== undefined) for (let d = dir; d !== dirname(created); d = dirname(d)) await storage.syncDir(dirname(d))
  }
  let segmentBytes = await fh.size()
  let pending: Array<{ seq: number; frame: Buffer }> = []
  let waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = []
  let inFlight: Promise<void> | null = null
  let failed: unknown = null
  // The promise of the newest append: `sync()` waits for it and for nothing appended later.
  let lastAppend: Promise<void> = Promise.resolve()
  const listeners: BatchListener[] = []

  const writeBatches = async (): Promise<void> => {
    while (pending.length > 0) {
      const batch = pending
      const batchWaiters = waiters
      pending = []
      waiters = []
      const lastSeq = batch[batch.length - 1]!.seq
      for (const l of listeners) l.cut(lastSeq)
      try {
        if (segmentBytes >= segmentMaxBytes) {
          await fh.close()
          path = join(dir, segmentName(batch[0]!.seq))
          fh = await storage.openAppend(path)
          segmentBytes = 0
          await storage.syncDir(dir)
        }
        segmentBytes += await writeAll(
          fh,
          batch.map((p) => p.frame),
          path
        )
        // An O_DSYNC file's writes were durable as they returned.
        if (!fh.writesAreDurable) {
          try {
            await fh.datasync()
          } catch (err) {
            throw new StorageError("fdatasync", path, err)
          }
        }
      } catch (err) {
        failed = err
        for (const w of batchWaiters) w.reject(err)
        for (const w of waiters) w.reject(err)
        waiters = []
        pending = []
        onFatal(err)
        return
      }
      opts.onDurable?.(lastSeq)
      for (const l of listeners) l.durable(lastSeq)
      for (const w of batchWaiters) w.resolve()
    }
  }
  const kick = (): void => {
    if (inFlight !== null) return
    // Appends made in this turn of the event loop join the same batch.
    inFlight = new Promise<void>((done) =>
      defer(() =>
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
      lastAppend = p
      kick()
      return p
    },
    sync: () => (failed !== null ? Promise.reject(failed) : lastAppend),
    onBatch: (listener) => void listeners.push(listener),
    close: async () => {
      await drain()
      await fh.close()
    }
  }
}
