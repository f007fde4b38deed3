// The storage port under the journal and the snapshots: the few file operations
// they need, so the same write/batch/ack and recovery code runs on node:fs (live)
// or on the simulator's disk (sim/world/storage-disk.ts), which injects short writes,
// ENOSPC, EIO on sync, torn tails at a crash and flipped bytes.
import {
  constants as fsConstants,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  truncateSync,
  unlinkSync,
  writeSync
} from "node:fs"
import { type FileHandle, open } from "node:fs/promises"
import { reservedAppendFile } from "./reserved-file.ts"

/** A file open for appending (the live one may hold zeros past its records: reserved-file.ts). */
export interface AppendFile {
  /** One write attempt at the end of the file: resolves with the bytes written, which may be fewer than given. */
  writev(buffers: Buffer[]): Promise<number>
  /**
   * True when the bytes a write reports are durable as it resolves (the live journal file is
   * opened O_DSYNC: the write and its fdatasync are one system call), so `datasync` has nothing
   * left to do; false when durability takes a `datasync` (the simulator's disk).
   */
  readonly writesAreDurable: boolean
  datasync(): Promise<void>
  /** Bytes appended so far (the end of the records, not of a reserve after them). */
  size(): Promise<number>
  close(): Promise<void>
}

export interface Storage {
  /** mkdir -p; returns the first directory it created (as node's mkdirSync), if any. */
  mkdirp(dir: string): string | undefined
  /** Entry names of a directory; [] when it does not exist. */
  list(dir: string): string[]
  readFile(path: string): Buffer
  truncate(path: string, bytes: number): void
  openAppend(path: string): Promise<AppendFile>
  /** Makes a directory's entries (new files, renames) durable. */
  syncDir(dir: string): Promise<void>
  syncDirNow(dir: string): void
  /** Creates or replaces `path` with `data`, written whole and fsync'd (not yet renamed anywhere). */
  writeFileSynced(path: string, data: Buffer): void
  rename(from: string, to: string): void
  unlink(path: string): void
}

/** A plainly appended file (no O_DSYNC): durable once `datasync` returns. */
const fileOf = (fh: FileHandle): AppendFile => ({
  writev: async (buffers) => (await fh.writev(buffers)).bytesWritten,
  writesAreDurable: false,
  datasync: () => fh.datasync(),
  size: async () => (await fh.stat()).size,
  close: () => fh.close()
})

const DSYNC: number | undefined = fsConstants.O_DSYNC

/** The live disk. */
export const nodeStorage: Storage = {
  mkdirp: (dir) => mkdirSync(dir, { recursive: true }),
  list: (dir) => {
    try {
      return readdirSync(dir)
    } catch {
      return []
    }
  },
  readFile: (path) => readFileSync(path),
  truncate: (path, bytes) => truncateSync(path, bytes),
  // O_DSYNC: a batch costs one trip to the thread pool, not two (writev, then fdatasync), which
  // was +3% signed orders/s and -0.3 ms per order in the API bench (docs/decisions.md); its writes
  // go into zeros written ahead (reserved-file.ts). Where the platform has no O_DSYNC the file is
  // opened plainly for appending and synced with fdatasync.
  openAppend: async (path) =>
    DSYNC === undefined
      ? fileOf(await open(path, "a"))
      : reservedAppendFile(await open(path, fsConstants.O_WRONLY | fsConstants.O_CREAT | DSYNC)),
  syncDir: async (dir) => {
    const d = await open(dir, "r")
    try {
      await d.sync()
    } finally {
      await d.close()
    }
  },
  syncDirNow: (dir) => {
    const fd = openSync(dir, "r")
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  },
  writeFileSynced: (path, data) => {
    const fd = openSync(path, "w")
    try {
      // writeSync may write less than asked (a full disk): continue until all is written or it throws.
      for (let off = 0; off < data.length; ) {
        const n = writeSync(fd, data, off, data.length - off)
        if (n <= 0) throw Object.assign(new Error(`write to ${path} made no progress`), { code: "EIO" })
        off += n
      }
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  },
  rename: (from, to) => renameSync(from, to),
  unlink: (path) => unlinkSync(path)
}

/** A storage failure, naming the operation, the file and the errno code (EIO, ENOSPC, EFBIG…). */
export class StorageError extends Error {
  override readonly name = "StorageError"
  readonly code: string
  constructor(
    readonly op: string,
    readonly path: string,
    cause: unknown
  ) {
    const code = (cause as { code?: unknown } | null)?.code
    const c = typeof code === "string" ? code : "EIO"
    super(`${op} of ${path} failed: ${c}${cause instanceof Error ? ` (${cause.message})` : ""}`, { cause })
    this.code = c
  }
}

/** The exit code of a fail-stop on a storage failure (EX_SOFTWARE, as before; docs/durability.md). */
export const STORAGE_FAILURE_EXIT = 70

/** The one line the service prints before it stops on a storage failure. */
export const storageFailureLine = (dataDir: string, err: unknown): string => {
  const code = err instanceof StorageError ? err.code : ((err as { code?: unknown } | null)?.code ?? "unknown")
  const what = err instanceof Error ? err.message : String(err)
  return `twinbook: storage failure under DATA_DIR=${dataDir} (${String(code)}): ${what}; stopping with exit code ${STORAGE_FAILURE_EXIT}. Every acknowledged write is on disk; free space or fix the disk, then restart.`
}
