// The simulated disk under the real journal, snapshot and recovery code (the
// Storage port of src/store/storage.ts). Each file holds what the process sees and
// how much of it is durable; fdatasync makes it all durable, a crash keeps the
// durable part plus, sometimes, a torn piece of the rest. Faults come from the
// world's seed: short writes, ENOSPC (after part of a write), EIO on fdatasync,
// torn tails at a crash, flipped bytes in snapshots. No real I/O and no real
// timers: writes resolve as microtasks, an fdatasync takes virtual time.
import { dirname } from "node:path"
import type { AppendFile, Storage } from "../../src/store/storage.ts"
import type { Rng } from "./random.ts"
import type { Scheduler } from "./scheduler.ts"

export interface DiskFaults {
  /** Chance (%) that a write takes only part of what it is given (the rest must be written again). */
  readonly shortWritePct: number
  /** Chance (%) that a write finds the disk full: part of it lands, the next write fails with ENOSPC. */
  readonly enospcPct: number
  /** Chance (%) that an fdatasync fails with EIO (nothing it covered is durable). */
  readonly syncEioPct: number
  /** Chance (%) that a crash leaves a torn piece of a file's unsynced bytes (else they vanish). */
  readonly tornTailPct: number
  /** Chance (%) that a snapshot is stored with one byte flipped. */
  readonly snapshotFlipPct: number
}

export const NO_DISK_FAULTS: DiskFaults = { shortWritePct: 0, enospcPct: 0, syncEioPct: 0, tornTailPct: 0, snapshotFlipPct: 0 }

/** What the disk did, for the run's report. */
export interface DiskStats {
  shortWrites: number
  enospc: number
  syncEio: number
  tornTails: number
  snapshotFlips: number
}

interface SimFile {
  data: Buffer
  /** Bytes [0, durable) survive a crash. */
  durable: number
}

const errno = (code: string, what: string): Error => Object.assign(new Error(`${code}: ${what} (simulated)`), { code })

export class SimDisk {
  private readonly files = new Map<string, SimFile>()
  private readonly dirs = new Set<string>(["/"])
  /** Bumped by every crash: storage handed to an older process refuses everything. */
  private epoch = 0
  /** The next write fails with ENOSPC (set by a write that filled the disk). */
  private full = false
  /** Faults start once the world's setup (markets) is done: a run's first requests are the operator's. */
  private armed = false
  readonly stats: DiskStats = { shortWrites: 0, enospc: 0, syncEio: 0, tornTails: 0, snapshotFlips: 0 }

  constructor(
    private readonly rng: Rng,
    private readonly faults: DiskFaults,
    private readonly scheduler: Scheduler,
    /** Virtual milliseconds an fdatasync takes. */
    private readonly syncMs: readonly [number, number] = [1, 4]
  ) {}

  arm(): void {
    this.armed = true
  }

  private chance(pct: number): boolean {
    return this.armed && pct > 0 && this.rng.chance(pct / 100)
  }

  /** Power loss / SIGKILL: unsynced bytes are lost, or (sometimes) a torn piece of them stays. */
  crash(): void {
    this.epoch++
    this.full = false
    for (const [path, f] of [...this.files].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const unsynced = f.data.length - f.durable
      if (unsynced <= 0) continue
      let keep = 0
      if (this.chance(this.faults.tornTailPct)) {
        keep = this.rng.int(1, unsynced)
        this.stats.tornTails++
      }
      f.data = f.data.subarray(0, f.durable + keep)
      f.durable = f.data.length
      this.files.set(path, f)
    }
  }

  // One piece: the Storage interface of one process's handle: each method a few lines sharing the handle's epoch.
  /** The disk as one process sees it: after a crash, that process's handle refuses everything. */
  storageFor(): Storage {
    const epoch = this.epoch
    const alive = (): void => {
      if (this.epoch !== epoch) throw errno("EBADF", "the process that opened this is gone")
    }
    const file = (path: string): SimFile => {
      const f = this.files.get(path)
      if (f === undefined) throw errno("ENOENT", `no such file ${path}`)
      return f
    }
    const disk = this
    const appendFile = (path: string): AppendFile => ({
      // A write lands in the page cache; only datasync makes it durable (the faults are there).
      writesAreDurable: false,
      async writev(buffers) {
        alive()
        const data = Buffer.concat(buffers)
        if (disk.full) {
          disk.full = false
          throw errno("ENOSPC", `no space left on device, write ${path}`)
        }
        let n = data.length
        if (n > 1 && disk.chance(disk.faults.enospcPct)) {
          // The disk fills mid-write: part lands, the next write is refused.
          n = disk.rng.int(1, n - 1)
          disk.full = true
          disk.stats.enospc++
        } else if (n > 1 && disk.chance(disk.faults.shortWritePct)) {
          n = disk.rng.int(1, n - 1)
          disk.stats.shortWrites++
        }
        const f = file(path)
        f.data = Buffer.concat([f.data, data.subarray(0, n)])
        return n
      },
      async datasync() {
        alive()
        const f = file(path)
        const upTo = f.data.length
        await disk.scheduler.sleep(disk.rng.int(disk.syncMs[0], disk.syncMs[1]))
        alive()
        if (disk.chance(disk.faults.syncEioPct)) {
          disk.stats.syncEio++
          throw errno("EIO", `i/o error, fdatasync ${path}`)
        }
        f.durable = Math.max(f.durable, upTo)
      },
      async size() {
        alive()
        return file(path).data.length
      },
      async close() {}
    })
    return {
      mkdirp: (dir) => {
        alive()
        let first: string | undefined
        const missing: string[] = []
        for (let d = dir; !this.dirs.has(d); d = dirname(d)) missing.push(d)
        for (const d of missing.reverse()) {
          first ??= d
          this.dirs.add(d)
        }
        return first
      },
      list: (dir) => {
        alive()
        if (!this.dirs.has(dir)) return []
        const prefix = dir.endsWith("/") ? dir : `${dir}/`
        const names = new Set<string>()
        for (const p of [...this.files.keys(), ...this.dirs]) if (p.startsWith(prefix) && p.length > prefix.length) names.add(p.slice(prefix.length).split("/")[0]!)
        return [...names].sort()
      },
      readFile: (path) => {
        alive()
        return Buffer.from(file(path).data)
      },
      truncate: (path, bytes) => {
        alive()
        const f = file(path)
        f.data = f.data.subarray(0, bytes)
        f.durable = Math.min(f.durable, f.data.length)
      },
      openAppend: async (path) => {
        alive()
        if (!this.dirs.has(dirname(path))) throw errno("ENOENT", `no directory for ${path}`)
        if (!this.files.has(path)) this.files.set(path, { data: Buffer.alloc(0), durable: 0 })
        return appendFile(path)
      },
      // Directory entries are durable at once here: the model's faults are in file contents.
      syncDir: async () => alive(),
      syncDirNow: () => alive(),
      writeFileSynced: (path, data) => {
        alive()
        const stored = Buffer.from(data)
        if (stored.length > 0 && this.chance(this.faults.snapshotFlipPct)) {
          // Bit rot the fsync cannot see: the snapshot's checksum must.
          const at = this.rng.int(0, stored.length - 1)
          stored[at] = stored[at]! ^ (1 << this.rng.int(0, 7))
          this.stats.snapshotFlips++
        }
        this.files.set(path, { data: stored, durable: stored.length })
      },
      rename: (from, to) => {
        alive()
        this.files.set(to, file(from))
        this.files.delete(from)
      },
      unlink: (path) => {
        alive()
        file(path)
        this.files.delete(path)
      }
    }
  }
}
