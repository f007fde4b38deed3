// GET /v1/ready's checks (docs/metrics.md "Health and readiness"): the journal takes writes,
// the chain answers with the watcher close to its head and the guard not halted, and the
// deposit service is listening. Each check says why it failed; a part that is not configured
// (no DATA_DIR, CHAIN=off) passes and says so.
import { unlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import type { ChainProbe } from "./chain-probe.ts"

export interface Check {
  readonly ok: boolean
  readonly detail: string
}

export interface ReadyReport {
  readonly status: "ready" | "not_ready"
  readonly checks: { readonly journal: Check; readonly chain: Check; readonly deposit_service: Check }
}

export interface ReadinessOptions {
  /** The durable journal; null when state is in memory only. */
  readonly journal: { sync(): Promise<void> } | null
  /** Where a probe file is written and removed (DATA_DIR). */
  readonly dataDir?: string
  readonly chain?: ChainProbe
  /** The deposit service's listening socket. */
  readonly depositService?: { readonly listening: boolean }
  /** The watcher may be this many blocks behind the head and still be ready. */
  readonly maxLagBlocks: number
  /** How long the journal's sync and probe write may take. */
  readonly timeoutMs: number
}

const within = async <A>(p: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)))])
  } finally {
    clearTimeout(timer)
  }
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split("\n")[0]!.slice(0, 160)

const journalCheck = async (o: ReadinessOptions): Promise<Check> => {
  const journal = o.journal
  if (journal === null) return { ok: true, detail: "in memory (no DATA_DIR)" }
  try {
    // Everything appended so far is durable, and the directory still takes a new file.
    await within(journal.sync(), o.timeoutMs, "journal sync")
    if (o.dataDir !== undefined) {
      const probe = join(o.dataDir, ".ready-probe")
      await within(writeFile(probe, "ready\n"), o.timeoutMs, "probe write")
      await unlink(probe)
    }
    return { ok: true, detail: "writable" }
  } catch (err) {
    return { ok: false, detail: `not writable: ${message(err)}` }
  }
}

const chainCheck = async (o: ReadinessOptions): Promise<Check> => {
  if (o.chain === undefined) return { ok: true, detail: "no chain configured" }
  const p = await o.chain.probe()
  if (p.head === null) return { ok: false, detail: `unreachable: ${p.error ?? "no answer"}` }
  if (p.halted) return { ok: false, detail: "chain guard halted crediting and payouts (GET /v1/admin/chain)" }
  const lag = p.lagBlocks ?? 0
  if (lag > o.maxLagBlocks) return { ok: false, detail: `watcher ${lag} blocks behind head ${p.head} (max ${o.maxLagBlocks})` }
  return { ok: true, detail: `head ${p.head}, watcher ${lag} blocks behind` }
}

export const readiness =
  (o: ReadinessOptions) =>
  async (): Promise<ReadyReport> => {
    const [journal, chain] = await Promise.all([journalCheck(o), chainCheck(o)])
    const deposit_service: Check =
      o.depositService === undefined
        ? { ok: true, detail: "no chain configured" }
        : o.depositService.listening
          ? { ok: true, detail: "listening" }
          : { ok: false, detail: "not listening" }
    const ok = journal.ok && chain.ok && deposit_service.ok
    return { status: ok ? "ready" : "not_ready", checks: { journal, chain, deposit_service } }
  }

/** The checks that failed, as one line (the 503's `detail`). */
export const failedChecks = (r: ReadyReport): string =>
  Object.entries(r.checks)
    .filter(([, c]) => !c.ok)
    .map(([name, c]) => `${name}: ${c.detail}`)
    .join("; ")
