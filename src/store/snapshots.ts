// Snapshot files `snap-<seq>.json` under DATA_DIR/snapshots, written atomically
// (temp file, fsync, rename, fsync of the directory) and carrying their own
// SHA-256, so a half-written or damaged snapshot is skipped, never trusted.
import { createHash } from "node:crypto"
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs"
import { join } from "node:path"
import type { ExchangeSnapshot } from "../service/exchange-snapshot.ts"

const SNAP = /^snap-(\d{12})\.json$/
const snapName = (seq: number): string => `snap-${String(seq).padStart(12, "0")}.json`

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

export const writeSnapshot = (dir: string, snapshot: ExchangeSnapshot): string => {
  mkdirSync(dir, { recursive: true })
  const body = JSON.stringify(snapshot)
  const text = JSON.stringify({ sha256: sha256(body), body })
  const path = join(dir, snapName(snapshot.seq))
  const tmp = `${path}.tmp`
  const fd = openSync(tmp, "w")
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, path)
  const dirFd = openSync(dir, "r")
  try {
    fsyncSync(dirFd)
  } finally {
    closeSync(dirFd)
  }
  return path
}

export interface LoadedSnapshot {
  readonly snapshot: ExchangeSnapshot
  readonly path: string
  /** Newer snapshot files that failed their checksum and were passed over. */
  readonly skipped: string[]
}

/** The newest snapshot whose checksum verifies, or null when there is none. */
export const loadLatestSnapshot = (dir: string): LoadedSnapshot | null => {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return null
  }
  const skipped: string[] = []
  const candidates = names.filter((n) => SNAP.test(n)).sort().reverse()
  for (const name of candidates) {
    const path = join(dir, name)
    try {
      const { sha256: sum, body } = JSON.parse(readFileSync(path, "utf8")) as { sha256: string; body: string }
      if (sha256(body) !== sum) throw new Error("checksum mismatch")
      return { snapshot: JSON.parse(body) as ExchangeSnapshot, path, skipped }
    } catch {
      skipped.push(path)
    }
  }
  return null
}

/** Keeps the newest `keep` snapshots (the journal itself is never pruned: it is the history of record). */
export const pruneSnapshots = (dir: string, keep: number): void => {
  const names = readdirSync(dir).filter((n) => SNAP.test(n)).sort()
  for (const name of names.slice(0, Math.max(0, names.length - keep))) unlinkSync(join(dir, name))
  for (const name of readdirSync(dir)) if (name.endsWith(".tmp")) unlinkSync(join(dir, name))
}
