// Snapshot files `snap-<seq>.json` under DATA_DIR/snapshots, written atomically
// (temp file, fsync, rename, fsync of the directory) and carrying their own
// SHA-256, so a half-written or damaged snapshot is skipped, never trusted. A
// damaged one is moved aside to snapshots/damaged/ (kept for a post-mortem, never
// pruned), and each skip says why. File access goes through the Storage port.
import { createHash } from "node:crypto"
import { join } from "node:path"
import type { ExchangeSnapshot } from "../service/exchange-snapshot.ts"
import { nodeStorage, type Storage } from "./storage.ts"

const SNAP = /^snap-(\d{12})\.json$/
const snapName = (seq: number): string => `snap-${String(seq).padStart(12, "0")}.json`
/** Where damaged snapshots go: out of the loader's and the pruner's way. */
export const DAMAGED_DIR = "damaged"

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

export const writeSnapshot = (dir: string, snapshot: ExchangeSnapshot, storage: Storage = nodeStorage): string => {
  storage.mkdirp(dir)
  const body = JSON.stringify(snapshot)
  const text = JSON.stringify({ sha256: sha256(body), body })
  const path = join(dir, snapName(snapshot.seq))
  const tmp = `${path}.tmp`
  storage.writeFileSynced(tmp, Buffer.from(text, "utf8"))
  storage.rename(tmp, path)
  storage.syncDirNow(dir)
  return path
}

export interface SkippedSnapshot {
  readonly path: string
  /** Why it was not used: "checksum mismatch", "not a snapshot file (…)", "unreadable (…)". */
  readonly reason: string
  /** Where it was moved (with `quarantine`), or null when it was left in place. */
  readonly movedTo: string | null
}

export interface LoadedSnapshot {
  readonly snapshot: ExchangeSnapshot
  readonly path: string
}

export interface SnapshotScan {
  /** The newest snapshot whose checksum verifies, or null when there is none. */
  readonly loaded: LoadedSnapshot | null
  /** Newer snapshot files that failed and were passed over, newest first. */
  readonly skipped: SkippedSnapshot[]
}

/** Why a snapshot file cannot be used, or its content when it can. */
const check = (storage: Storage, path: string): { snapshot: ExchangeSnapshot } | { reason: string } => {
  let text: string
  try {
    text = storage.readFile(path).toString("utf8")
  } catch (err) {
    return { reason: `unreadable (${(err as { code?: string }).code ?? String(err)})` }
  }
  let outer: { sha256?: unknown; body?: unknown }
  try {
    outer = JSON.parse(text) as typeof outer
  } catch {
    return { reason: "not a snapshot file (unparseable JSON)" }
  }
  if (typeof outer.body !== "string" || typeof outer.sha256 !== "string") return { reason: "not a snapshot file (no body or checksum)" }
  if (sha256(outer.body) !== outer.sha256) return { reason: "checksum mismatch" }
  try {
    return { snapshot: JSON.parse(outer.body) as ExchangeSnapshot }
  } catch {
    return { reason: "checksummed body is not JSON" }
  }
}

/**
 * The newest snapshot that verifies. With `quarantine`, each damaged newer one is moved
 * to `dir/damaged/` (a read-only caller leaves the directory untouched).
 */
export const scanSnapshots = (dir: string, opts: { quarantine: boolean; storage?: Storage }): SnapshotScan => {
  const storage = opts.storage ?? nodeStorage
  const skipped: SkippedSnapshot[] = []
  const candidates = storage
    .list(dir)
    .filter((n) => SNAP.test(n))
    .sort()
    .reverse()
  for (const name of candidates) {
    const path = join(dir, name)
    const c = check(storage, path)
    if ("snapshot" in c) return { loaded: { snapshot: c.snapshot, path }, skipped }
    let movedTo: string | null = null
    if (opts.quarantine) {
      const aside = join(dir, DAMAGED_DIR)
      storage.mkdirp(aside)
      movedTo = join(aside, name)
      storage.rename(path, movedTo)
      storage.syncDirNow(dir)
    }
    skipped.push({ path, reason: c.reason, movedTo })
  }
  return { loaded: null, skipped }
}

/** The newest snapshot whose checksum verifies, or null when there is none (read-only). */
export const loadLatestSnapshot = (dir: string, storage: Storage = nodeStorage): LoadedSnapshot | null =>
  scanSnapshots(dir, { quarantine: false, storage }).loaded

/** Keeps the newest `keep` snapshots (the journal itself is never pruned: it is the history of record; damaged/ is left alone). */
export const pruneSnapshots = (dir: string, keep: number, storage: Storage = nodeStorage): void => {
  const names = storage
    .list(dir)
    .filter((n) => SNAP.test(n))
    .sort()
  for (const name of names.slice(0, Math.max(0, names.length - keep))) storage.unlink(join(dir, name))
  for (const name of storage.list(dir)) if (name.endsWith(".tmp")) storage.unlink(join(dir, name))
}
