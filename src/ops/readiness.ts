// GET /v1/ready's checks (docs/metrics.md "Health and readiness"): the journal takes writes,
// the history store's writes succeed, the chain answers with the watcher close to its head and
// the guard not halted, and the deposit service is listening. Each check says why it failed; a
// part that is not configured (no DATA_DIR, CHAIN=off) passes and says so. No check writes to
// disk: writability is asked of the kernel (access(2), statfs(2)), so concurrent probes cannot
// race each other and a flood of them costs no fsync. A detail never carries a server path.
import { constants } from "node:fs"
import { access, statfs } from "node:fs/promises"
import { join } from "node:path"
import type { ChainProbe } from "./chain-probe.ts"
import type { Logger } from "./log.ts"
import { errnoOf, type StorageHealth } from "./storage-health.ts"
import { within } from "./within.ts"

export interface Check {
  readonly ok: boolean
  readonly detail: string
}

export interface ReadyReport {
  readonly status: "ready" | "not_ready"
  readonly checks: { readonly journal: Check; readonly history: Check; readonly chain: Check; readonly deposit_service: Check }
}

export interface ReadinessOptions {
  /** The durable journal; null when state is in memory only. */
  readonly journal: { sync(): Promise<void> } | null
  /** DATA_DIR: it and its journal folder must take new files, with space left on the disk. */
  readonly dataDir?: string
  /** Slow durable writes and failing history writes (live); absent: not watched. */
  readonly storageHealth?: StorageHealth
  readonly chain?: ChainProbe
  /** The deposit service's listening socket. */
  readonly depositService?: { readonly listening: boolean }
  /** The watcher may be this many blocks behind the head and still be ready. */
  readonly maxLagBlocks: number
  /** How long the journal's sync may take. */
  readonly timeoutMs: number
}

/** Less free space than this on DATA_DIR's disk is not ready: the journal's next reserve (1 MiB) would not fit. */
export const MIN_FREE_BYTES = 1024 * 1024

/** An error as a response may show it: its errno name (EACCES, ENOSPC, …), or our own path-free sentence. */
const reasonOf = (err: unknown): string => {
  const errno = errnoOf(err)
  if (errno !== null) return errno
  if (err instanceof Error && err.message.endsWith(" ms")) return err.message
  return "write error"
}

const journalCheck = async (o: ReadinessOptions): Promise<Check> => {
  const journal = o.journal
  if (journal === null) return { ok: true, detail: "in memory (no DATA_DIR)" }
  try {
    // The journal has not failed and what was appended before this probe is durable;
    // the folders still take new files (a segment, a snapshot) and the disk has room.
    await within(() => journal.sync(), o.timeoutMs, () => new Error(`journal sync did not finish within ${o.timeoutMs} ms`))
    if (o.dataDir !== undefined) {
      for (const dir of [o.dataDir, join(o.dataDir, "journal")]) await access(dir, constants.W_OK)
      const fs = await statfs(o.dataDir)
      const freeBytes = fs.bavail * fs.bsize
      if (freeBytes < MIN_FREE_BYTES) return { ok: false, detail: `not writable: ENOSPC (${freeBytes} bytes free)` }
    }
  } catch (err) {
    return { ok: false, detail: `not writable: ${reasonOf(err)}` }
  }
  const slow = o.storageHealth?.recentSlowWrite() ?? null
  if (slow === null) return { ok: true, detail: "writable" }
  return { ok: true, detail: `writable; slow: a durable ${slow.what} write took ${slow.ms} ms in the last minute (threshold ${o.storageHealth!.slowWriteMs} ms)` }
}

const historyCheck = (o: ReadinessOptions): Check => {
  if (o.journal === null) return { ok: true, detail: "in memory (no DATA_DIR)" }
  // A journal without DATA_DIR is the cluster's replicated log: no history store is kept there.
  if (o.dataDir === undefined) return { ok: true, detail: "none (cluster mode: the replicated log is the journal, docs/cluster.md)" }
  const failing = o.storageHealth?.failure("history") ?? null
  if (failing === null) return { ok: true, detail: "writing" }
  const code = /^E[A-Z0-9]+$/.test(failing.code) ? failing.code : "write error"
  return { ok: false, detail: `not writing: ${code} (${failing.attempts} failed attempts; trading goes on, the store catches up from the journal)` }
}

const chainCheck = async (o: ReadinessOptions): Promise<Check> => {
  if (o.chain === undefined) return { ok: true, detail: "no chain configured" }
  const p = await o.chain.probe()
  if (p.head === null) return { ok: false, detail: `unreachable: ${p.error ?? "no answer"}` }
  if (p.halted) return { ok: false, detail: "chain guard halted crediting and payouts (GET /v1/admin/chain)" }
  // A restored or restarted service has not yet compared the chain with its checkpoint: ready now
  // could turn into a halt a pass later.
  if (p.deciding) return { ok: false, detail: `head ${p.head}; the chain guard's checkpoint block was missing on the last pass (a lagging node, or a chain that lost it): the next pass decides` }
  if (!p.checked) return { ok: false, detail: `head ${p.head}; the deposit watcher's first pass (the chain guard's first check) has not finished` }
  const lag = p.lagBlocks ?? 0
  if (lag > o.maxLagBlocks) return { ok: false, detail: `watcher ${lag} blocks behind head ${p.head} (max ${o.maxLagBlocks})` }
  return { ok: true, detail: `head ${p.head}, watcher ${lag} blocks behind` }
}

/** The checks as one function; calls made while one is running share its answer. */
export const readiness = (o: ReadinessOptions): (() => Promise<ReadyReport>) => {
  let running: Promise<ReadyReport> | null = null
  return () => {
    running ??= check(o).finally(() => {
      running = null
    })
    return running
  }
}

const check = async (o: ReadinessOptions): Promise<ReadyReport> => {
  const [journal, chain] = await Promise.all([journalCheck(o), chainCheck(o)])
  const deposit_service: Check =
    o.depositService === undefined
      ? { ok: true, detail: "no chain configured" }
      : o.depositService.listening
        ? { ok: true, detail: "listening" }
        : { ok: false, detail: "not listening" }
  const history = historyCheck(o)
  const ok = journal.ok && history.ok && chain.ok && deposit_service.ok
  return { status: ok ? "ready" : "not_ready", checks: { journal, history, chain, deposit_service } }
}

/** The checks that failed, as one line (the 503's `detail`). */
export const failedChecks = (r: ReadyReport): string =>
  Object.entries(r.checks)
    .filter(([, c]) => !c.ok)
    .map(([name, c]) => `${name}: ${c.detail}`)
    .join("; ")

/**
 * Logs readiness changing, not each probe: one `not ready` warn line when it turns failing (and
 * when a different set of checks fails), one `ready again` when it recovers. An orchestrator probes
 * every few seconds; a line per failing probe would bury the log (the probes' request lines are debug).
 */
export const loggedReadiness = (ready: () => Promise<ReadyReport>, log: Logger): (() => Promise<ReadyReport>) => {
  let failing: { readonly checks: string; readonly detail: string } | null = null
  let failedProbes = 0
  return async () => {
    const report = await ready()
    if (report.status === "not_ready") {
      failedProbes++
      const checks = Object.entries(report.checks).filter(([, c]) => !c.ok).map(([name]) => name).join(",")
      if (failing?.checks !== checks) {
        failing = { checks, detail: failedChecks(report) }
        log.warn("not ready", { failing: checks, detail: failing.detail })
      }
    } else if (failing !== null) {
      log.warn("ready again", { was_failing: failing.checks, failed_probes: failedProbes })
      failing = null
      failedProbes = 0
    }
    return report
  }
}
