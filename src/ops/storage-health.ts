// What the operator is told about the disks (docs/durability.md "Slow and failing disks"): a
// durable write slower than a threshold is a warning line with the figure, and readiness says
// so; a background write that fails (the history store, a snapshot) is one clear line naming the
// file, the error and what the service does about it, then silence while it keeps failing (one
// reminder a minute, with the count), and one line when it works again. Readiness reads the
// same state, so `/v1/ready` and the log never disagree.
import { errorFields, type Logger } from "./log.ts"

/** The background writers watched: each has one file (or folder) and one fallback. */
export type StorageTask = "history" | "snapshot"

export interface TaskFailure {
  /** The file or folder the task writes (logged, never sent in a response). */
  readonly file: string
  /** What the service does while it fails: a sentence for the log. */
  readonly action: string
}

interface FailingState {
  readonly since: number
  attempts: number
  lastLineMonoMs: number
  code: string
}

export interface StorageHealthOptions {
  readonly logger: Logger
  /** The monotonic clock (durations only). */
  readonly monoMs: () => number
  /** A durable write slower than this is logged (SLOW_DISK_WARN_MS; default 100). */
  readonly slowWriteMs?: number
  /** A slow write is reported by readiness for this long after it happened. */
  readonly slowMemoryMs?: number
}

export const DEFAULT_SLOW_WRITE_MS = 100

/** What the kernel said, as its errno name; DuckDB's errors carry it only in their message. */
const ERRNO_BY_TEXT: ReadonlyArray<readonly [RegExp, string]> = [
  [/no space left on device/i, "ENOSPC"],
  [/file too large/i, "EFBIG"],
  [/disk quota exceeded/i, "EDQUOT"],
  [/read-only file system/i, "EROFS"],
  [/permission denied/i, "EACCES"],
  [/operation not permitted/i, "EPERM"],
  [/input\/output error/i, "EIO"]
]

/** A storage error as log fields: its name and message, and its errno name where one is known. */
export const storageErrorFields = (err: unknown): Record<string, unknown> & { errno?: string } => {
  const errno = errnoOf(err)
  return { ...errorFields(err, false), ...(errno === null ? {} : { errno }) }
}

/** An error's errno name (its `code`, its cause's, or read from its message), or null. */
export const errnoOf = (err: unknown): string | null => {
  const e = err as { code?: unknown; cause?: { code?: unknown }; message?: unknown } | null
  for (const code of [e?.code, e?.cause?.code]) if (typeof code === "string" && /^E[A-Z0-9]+$/.test(code)) return code
  const text = typeof e?.message === "string" ? e.message : String(err)
  for (const [re, code] of ERRNO_BY_TEXT) if (re.test(text)) return code
  return null
}
/** At most one slow-write line, and one reminder of a failing task, per this period. */
const LINE_EVERY_MS = 60_000

export class StorageHealth {
  readonly slowWriteMs: number
  /** Durable writes over the threshold, ever (read by /metrics). */
  slowWrites = 0
  private readonly slowMemoryMs: number
  private slowest: { ms: number; what: string; atMonoMs: number } | null = null
  private slowSinceLine = 0
  private slowestSinceLine = 0
  private lastSlowLineMonoMs = -Infinity
  private readonly failing = new Map<StorageTask, FailingState>()

  constructor(private readonly o: StorageHealthOptions) {
    this.slowWriteMs = o.slowWriteMs ?? DEFAULT_SLOW_WRITE_MS
    this.slowMemoryMs = o.slowMemoryMs ?? LINE_EVERY_MS
  }

  /** A durable write (the journal's batch, a snapshot) took `ms`. */
  durableWrite(ms: number, what: string): void {
    if (ms <= this.slowWriteMs) return
    const now = this.o.monoMs()
    this.slowWrites++
    this.slowSinceLine++
    this.slowestSinceLine = Math.max(this.slowestSinceLine, ms)
    if (this.slowest === null || now - this.slowest.atMonoMs > this.slowMemoryMs || ms >= this.slowest.ms) this.slowest = { ms, what, atMonoMs: now }
    if (now - this.lastSlowLineMonoMs < LINE_EVERY_MS) return
    this.o.logger.warn("slow disk", {
      what,
      duration_ms: Math.round(ms),
      threshold_ms: this.slowWriteMs,
      slow_writes: this.slowSinceLine,
      slowest_ms: Math.round(this.slowestSinceLine),
      detail: `a durable ${what} write took ${Math.round(ms)} ms (threshold ${this.slowWriteMs} ms, SLOW_DISK_WARN_MS); every acknowledgement waits for it`
    })
    this.lastSlowLineMonoMs = now
    this.slowSinceLine = 0
    this.slowestSinceLine = 0
  }

  /** The slowest durable write of the last minute over the threshold, for readiness; null when none. */
  recentSlowWrite(): { ms: number; what: string } | null {
    const s = this.slowest
    if (s === null || this.o.monoMs() - s.atMonoMs > this.slowMemoryMs) return null
    return { ms: Math.round(s.ms), what: s.what }
  }

  /** A pass of `task` failed: the first failure (or a new error) is a line, repeats are counted. */
  failed(task: StorageTask, err: unknown, f: TaskFailure): void {
    const now = this.o.monoMs()
    const fields = storageErrorFields(err)
    const errno = fields.errno ?? null
    // Repeats of the same failure are counted, not logged: the same errno, or the same message.
    const code = errno ?? String(fields.error_message ?? "")
    const state = this.failing.get(task)
    if (state !== undefined && state.code === code) {
      state.attempts++
      if (now - state.lastLineMonoMs < LINE_EVERY_MS) return
      state.lastLineMonoMs = now
      this.o.logger.error(`${task} write still failing`, { task, file: f.file, attempts: state.attempts, ...fields, action: f.action })
      return
    }
    this.failing.set(task, { since: now, attempts: state === undefined ? 1 : state.attempts + 1, lastLineMonoMs: now, code })
    this.o.logger.error(`${task} write failed`, { task, file: f.file, ...fields, action: f.action })
  }

  /** A pass of `task` succeeded: a line if it had been failing. */
  succeeded(task: StorageTask, file: string): void {
    const state = this.failing.get(task)
    if (state === undefined) return
    this.failing.delete(task)
    this.o.logger.info(`${task} write works again`, { task, file, failed_attempts: state.attempts, failing_for_ms: Math.round(this.o.monoMs() - state.since) })
  }

  /** The task's error code while it fails (readiness), else null. */
  failure(task: StorageTask): { code: string; attempts: number } | null {
    const s = this.failing.get(task)
    return s === undefined ? null : { code: s.code, attempts: s.attempts }
  }
}
