// `GET /v1/ready` under a flood of concurrent probes (issue 31): anonymous and unthrottled, it
// must neither race itself (each call used to write and unlink the same `DATA_DIR/.ready-probe`,
// so parallel calls answered false 503s naming an ENOENT and the absolute data path) nor cost a
// disk write per call. Every one of 200 parallel probes answers 200; DATA_DIR sees no file made
// or removed by them (fs.watch, fenced by a file the test writes itself); and no answer, ready or
// not, carries a server path.
import { execFileSync } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync, watch, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.ts"

let t: TestServer | null = null
let dir: string | null = null
afterEach(async () => {
  await t?.close()
  t = null
  if (dir !== null) rmSync(dir, { recursive: true, force: true })
  dir = null
})

const probes = (server: TestServer, n: number) =>
  Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(`${server.url}/v1/ready`)
      return { status: res.status, text: await res.text() }
    })
  )

describe("GET /v1/ready under concurrent probes", () => {
  it("200 parallel probes all answer 200, write nothing to DATA_DIR, and name no server path", async () => {
    dir = mkdtempSync(join(tmpdir(), "twinbook-ready-flood-"))
    // No background writers (history flushes, snapshots): whatever touches DATA_DIR now is a probe.
    t = await startTestServer({ dataDir: dir, service: { historyFlushMs: 0, snapshotIntervalSec: 0 } })
    const seen: string[] = []
    const watcher = watch(dir, (_event, name) => void seen.push(String(name)))
    try {
      const answers = await probes(t, 200)
      expect(answers.filter((a) => a.status !== 200).map((a) => a.text)).toEqual([])
      for (const a of answers) expect(a.text).not.toContain(dir)
      // A file of the test's own: once its event is in, any event the probes caused is in too.
      const fence = join(dir, "fence")
      writeFileSync(fence, "x")
      await new Promise<void>((resolve) => {
        const check = (): void => (seen.includes("fence") ? resolve() : void setTimeout(check, 10))
        check()
      })
      expect(seen.filter((n) => n !== "fence")).toEqual([])
    } finally {
      watcher.close()
    }
  })

  it("a DATA_DIR that takes no new file is 503 for every probe, naming the errno and no path", async () => {
    dir = mkdtempSync(join(tmpdir(), "twinbook-ready-flood-"))
    t = await startTestServer({ dataDir: dir })
    const root = process.getuid?.() === 0
    if (root) execFileSync("chattr", ["+i", dir])
    else chmodSync(dir, 0o555)
    try {
      const answers = await probes(t, 50)
      for (const a of answers) {
        expect(a.status).toBe(503)
        const body = JSON.parse(a.text) as { checks: { journal: { detail: string } } }
        expect(body.checks.journal.detail).toMatch(/^not writable: E(PERM|ACCES)$/)
        expect(a.text).not.toContain(dir)
      }
    } finally {
      if (root) execFileSync("chattr", ["-i", dir])
      else chmodSync(dir, 0o755)
    }
    expect((await fetch(`${t.url}/v1/ready`)).status).toBe(200)
  })
})
