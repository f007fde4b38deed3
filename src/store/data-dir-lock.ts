// One service per DATA_DIR. The lock is a file, `DATA_DIR/service.lock`, naming its holder: PID,
// the process's start time where the OS tells it (Linux: /proc/<pid>/stat), the host and the
// directory's real path (a lock copied with a backup into another directory locks nothing). It is
// created atomically (a complete temp file hard-linked into place: never seen half-written), and a
// lock whose holder is gone is taken over, so a kill -9 never blocks the next start. "Gone" is
// checked by PID *and* start time: a recycled PID belongs to a process that started later. Taken
// before DuckDB or the journal open, so the refusal names the directory and the holder instead of
// DuckDB's raw lock error (docs/operations.md § The DATA_DIR lock).
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { linkSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Data, Effect, type Scope } from "effect"

export const LOCK_FILE = "service.lock"
/** The exit code of a start refused by the lock (EX_TEMPFAIL: the directory is busy, try later). */
export const DATA_DIR_IN_USE_EXIT = 75

export interface LockHolder {
  readonly pid: number
  /** Start time in clock ticks since boot (/proc/<pid>/stat field 22); null where there is no /proc. */
  readonly start: string | null
  readonly host: string
  /** The directory locked (real path): a lock file copied with a backup into another directory is not a lock there. */
  readonly dir: string
}

export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{ readonly dir: string; readonly holder: LockHolder; readonly message: string }> {}

export interface DataDirLock {
  readonly path: string
  /** Removes the lock file if this handle owns it and it still names this process. Idempotent. */
  release(): void
}

/** A process's start time (clock ticks since boot), or null (no such process, or no /proc). */
export const processStart = (pid: number): string | null => {
  try {
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
    return fields[19] ?? null // field 22 of the whole line
  } catch {
    return null
  }
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** This process as the holder of `dir`'s lock. */
export const selfHolder = (dir: string): LockHolder => ({ pid: process.pid, start: processStart(process.pid), host: hostname(), dir })

/**
 * Whether the recorded holder still runs. Another host's holder cannot be checked from here, so it
 * counts as alive (a shared network volume: the operator removes the file). A PID running now but
 * started at another time is a recycled PID: the holder is gone.
 */
export const holderAlive = (h: LockHolder): boolean => {
  if (h.host !== hostname()) return true
  if (!pidAlive(h.pid)) return false
  if (h.start === null) return true
  const now = processStart(h.pid)
  return now === null || now === h.start
}

const parseHolder = (text: string): LockHolder | null => {
  try {
    const j = JSON.parse(text) as Partial<LockHolder>
    if (typeof j.pid !== "number" || typeof j.host !== "string" || typeof j.dir !== "string" || !(typeof j.start === "string" || j.start === null)) return null
    return { pid: j.pid, start: j.start, host: j.host, dir: j.dir }
  } catch {
    return null
  }
}

const sameHolder = (a: LockHolder, b: LockHolder): boolean => a.pid === b.pid && a.start === b.start && a.host === b.host && a.dir === b.dir

const readText = (path: string): string | null => {
  try {
    return readFileSync(path, "utf8")
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null
    throw err
  }
}

const inUse = (dir: string, path: string, holder: LockHolder): DataDirInUse =>
  new DataDirInUse({
    dir,
    holder,
    message:
      holder.host === hostname()
        ? `DATA_DIR ${dir} is in use by another twinbook service (pid ${holder.pid}); stop it first, or set DATA_DIR to another directory. Lock file: ${path}`
        : `DATA_DIR ${dir} is in use by a twinbook service on host ${holder.host} (pid ${holder.pid}); if that service is gone, delete ${path}`
  })

/**
 * Takes `dir`'s lock or throws `DataDirInUse`. A lock this very process already holds (a second
 * service started in one process, as tests do) gives a handle that does not own the file: the first
 * holder removes it. A lock of a dead holder is moved aside and taken; two starts racing for the same
 * stale lock cannot both win, since only one rename finds the stale file and the loser, having moved a
 * fresh lock aside by mistake, links it back and looks again.
 */
export const acquireDataDirLock = (dataDir: string): DataDirLock => {
  mkdirSync(dataDir, { recursive: true })
  const dir = realpathSync(dataDir)
  const path = join(dir, LOCK_FILE)
  const me = selfHolder(dir)
  const text = `${JSON.stringify(me)}\n`
  const tag = `${process.pid}-${randomBytes(4).toString("hex")}`
  const tmp = `${path}.${tag}.tmp`
  writeFileSync(tmp, text, { mode: 0o644 })
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(tmp, path) // atomic: fails with EEXIST when a lock is there
        return ownedLock(path, me)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err
      }
      const found = readText(path)
      if (found === null) continue // released meanwhile
      const holder = parseHolder(found)
      if (holder !== null && sameHolder(holder, me)) return { path, release: () => {} }
      if (holder !== null && holder.dir === dir && holderAlive(holder)) throw inUse(dir, path, holder)
      // Stale, copied here from another directory, or unreadable (a file this module never writes half-way). Move it aside, then check
      // that what moved is what was judged stale; if another start replaced it meanwhile, put it back.
      const aside = `${path}.${tag}.stale`
      try {
        renameSync(path, aside)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue
        throw err
      }
      const moved = readText(aside)
      if (moved !== found) {
        try {
          linkSync(aside, path)
        } catch {
          // a third start got in: it holds the lock now; the loop reads it
        }
      }
      rmSync(aside, { force: true })
    }
    throw new Error(`DATA_DIR ${dir}: could not take the lock ${path} (it kept changing hands)`)
  } finally {
    rmSync(tmp, { force: true })
  }
}

const ownedLock = (path: string, me: LockHolder): DataDirLock => {
  let released = false
  return {
    path,
    release: () => {
      if (released) return
      released = true
      const found = readText(path)
      const holder = found === null ? null : parseHolder(found)
      if (holder !== null && sameHolder(holder, me)) rmSync(path, { force: true })
    }
  }
}

/** The lock as a scoped resource: taken now, released when the Scope closes (after everything acquired later). */
export const dataDirLock = (dataDir: string): Effect.Effect<DataDirLock, DataDirInUse, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      try {
        return Effect.succeed(acquireDataDirLock(dataDir))
      } catch (err) {
        return err instanceof DataDirInUse ? Effect.fail(err) : Effect.die(err)
      }
    }),
    (lock) => Effect.sync(() => lock.release())
  )
