// The history store's disk fills while the service runs (issue 31): the real process (`src/main.ts`)
// with DATA_DIR on the usual disk and `history.duckdb` (and its WAL) on a small tmpfs of its own,
// which the test fills up. What an operator must see: one clear line naming the file, the errno
// and what the service does (not a generic "internal error" every second); trading goes on;
// `/v1/ready` says the history store is not writing, without a server path; a periodic snapshot
// that cannot be taken says so; a SIGTERM in that state closes the journal whole, says which
// stop steps it skipped and exits 0; once space is back, a restart re-projects every trade.
// Mounting a tmpfs needs root (CI and this project's machines run as root).
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { processAlive } from "../../src/chain/anvil.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { HistoryStore } from "../../src/store/history-db.ts"
import { type ChildServer, startChildServer } from "../support/child-server.ts"

const ADMIN = "history-full-admin-token"
const MARKET = "g7-2027-prediction-markets"
const root = mkdtempSync(join(tmpdir(), "twinbook-history-full-"))
const small = join(root, "small")
const dataDir = join(root, "data")
const children: ChildServer[] = []
let mounted = false

afterAll(async () => {
  for (const c of children) if (processAlive(c.pid)) c.kill("SIGKILL")
  await Promise.all(children.map((c) => c.exited)) // a live process keeps the tmpfs busy
  if (mounted) execFileSync("umount", [small])
  rmSync(root, { recursive: true, force: true })
})

const until = async <A>(what: string, probe: () => Promise<A | null> | A | null, timeoutMs = 60_000): Promise<A> => {
  for (let waited = 0; ; waited += 50) {
    const value = await probe()
    if (value !== null) return value
    if (waited >= timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Writes zeros to a file on the tmpfs until the kernel refuses: no page is left for DuckDB. */
const fillUp = (path: string): void => {
  const chunk = Buffer.alloc(64 * 1024)
  let size = 64 * 1024
  for (;;) {
    try {
      writeFileSync(path, chunk, { flag: "a" })
    } catch (err) {
      if ((err as { code?: string }).code !== "ENOSPC") throw err
      if (size === 1) return
      size = 1
      chunk.fill(0, 0, 1)
      continue
    }
  }
}

const start = async (): Promise<{ child: ChildServer; events: () => Array<Record<string, unknown>> }> => {
  const child = await startChildServer({
    dataDir,
    startTimeoutMs: 120_000,
    env: { ADMIN_TOKEN: ADMIN, VERIFY_WORKERS: "0", SNAPSHOT_INTERVAL_SEC: "1", LOG_FORMAT: "json", LOG_LEVEL: "info" }
  })
  children.push(child)
  // Whole lines only: a line still being written arrives in pieces.
  const events = () =>
    child
      .stderr()
      .split("\n")
      .slice(0, -1)
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
  return { child, events }
}

describe("the history store's disk fills up", () => {
  it("one clear line, trading goes on, readiness says so, a stop skips what it must and says so; a restart re-projects", async () => {
    if (process.getuid?.() !== 0) throw new Error("this test mounts a tmpfs for the history store and must run as root")
    mkdirSync(small)
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", small])
    mounted = true
    mkdirSync(dataDir)
    // DuckDB opens `<path>` and `<path>.wal`: both live on the small disk.
    symlinkSync(join(small, "history.duckdb"), join(dataDir, "history.duckdb"))
    symlinkSync(join(small, "history.duckdb.wal"), join(dataDir, "history.duckdb.wal"))

    const { child, events } = await start()
    const alice = new ApiClient(child.url, keyFromLabel("full-alice"))
    const bob = new ApiClient(child.url, keyFromLabel("full-bob"))
    for (const c of [alice, bob]) {
      expect((await c.register("full")).status).toBe(200)
      const credit = await fetch(`${child.url}/v1/admin/credit`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        body: JSON.stringify({ user: c.user, amount_micro: 100_000_000 })
      })
      expect(credit.status).toBe(200)
    }
    let trades = 0
    const trade = async (): Promise<void> => {
      expect((await alice.placeOrder({ market_id: MARKET, side: "buy", outcome: "yes", price: 4000, size: 1 })).status).toBe(200)
      expect((await bob.placeOrder({ market_id: MARKET, side: "buy", outcome: "no", price: 6000, size: 1 })).status).toBe(200)
      trades++
    }
    await trade()
    await until("the first trade in the history store", async () => (events().some((e) => e.msg === "snapshot") ? true : null))

    fillUp(join(small, "filler"))
    // Trades go on; the history store cannot take them.
    const failed = await until("the history store's failure line", async () => {
      await trade()
      return events().find((e) => e.msg === "history write failed") ?? null
    })
    expect(failed).toMatchObject({ level: "error", task: "history", file: join(dataDir, "history.duckdb"), errno: "ENOSPC" })
    expect(String(failed.action)).toMatch(/trading goes on/)
    for (let i = 0; i < 5; i++) await trade()

    const ready = await fetch(`${child.url}/v1/ready`)
    const body = (await ready.json()) as { checks: Record<string, { ok: boolean; detail: string }>; detail: string }
    expect(ready.status).toBe(503)
    expect(body.checks.history).toMatchObject({ ok: false, detail: expect.stringMatching(/^not writing: ENOSPC \(\d+ failed attempts; /) })
    expect(body.checks.journal!.ok).toBe(true)
    expect(JSON.stringify(body)).not.toContain(root)

    // A periodic snapshot needs the history store flushed through it: it is skipped, and says so once.
    const skipped = await until("the snapshot's failure line", () => events().find((e) => e.msg === "snapshot write failed") ?? null)
    expect(skipped).toMatchObject({ task: "snapshot", errno: "ENOSPC", action: expect.stringMatching(/^no snapshot this pass: the journal keeps every record/) })
    // Failing every second, said once each (no line per pass, no "internal error").
    await until("more failed history passes", async () => (events().length > 0 && (await fetch(`${child.url}/v1/ready`).then((r) => r.json() as Promise<any>)).checks.history.detail.match(/\((\d+) failed/)?.[1] >= 3 ? true : null))
    expect(events().filter((e) => e.msg === "history write failed")).toHaveLength(1)
    expect(events().filter((e) => e.msg === "internal error")).toEqual([])

    child.kill("SIGTERM")
    expect((await child.exited).code).toBe(0)
    const stop = events()
    expect(stop).toContainEqual(expect.objectContaining({ msg: "stop: the stop snapshot skipped", level: "error", errno: "ENOSPC" }))
    expect(stop).toContainEqual(expect.objectContaining({ msg: "stop: the history store's last write skipped", level: "error", file: join(dataDir, "history.duckdb") }))
    expect(stop).toContainEqual(expect.objectContaining({ msg: "stop incomplete", skipped: expect.stringContaining("the stop snapshot") }))

    // Space is back: the next start re-projects every trade from the journal.
    rmSync(join(small, "filler"))
    const again = await start()
    await until("the restart's first snapshot", () => (again.events().some((e) => e.msg === "snapshot") ? true : null))
    again.child.kill("SIGTERM")
    expect((await again.child.exited).code).toBe(0)
    const store = await HistoryStore.open(join(dataDir, "history.duckdb"), { readOnly: true })
    try {
      expect((await store.trades()).length).toBe(trades)
    } finally {
      await store.close()
    }
  }, 240_000)
})
