// A slow disk under steady load (issue 31): every journal write takes 500 ms while a command is
// appended every 20 ms, so a batch is always being written and another always gathering. What
// waits for the journal must wait for the records before it, not for a quiet moment that never
// comes: WebSocket frames, readiness, the periodic snapshot and the history store all keep moving
// while the appends go on, and the slow disk is a warning line and a readiness detail. The old
// `journal.sync()` (wait until nothing is pending) sent no frame, answered no readiness probe and
// took no snapshot until the appends stopped.
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { keyFromLabel } from "../../src/client/keys.ts"
import { makeLogger } from "../../src/ops/log.ts"
import { liveMonoClock } from "../../src/time/clock.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"
import { nodeStorage, type Storage } from "../../src/store/storage.ts"
import { startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"

const WRITE_MS = 500
const APPEND_EVERY_MS = 20
/** 5 s of appends at one every 20 ms: everything below must have happened while they went on. */
const MAX_APPENDS = 250

/** node:fs, but every journal write waits `ms` first (a disk that takes that long to make a batch durable). */
const slowDisk = (ms: number): Storage => ({
  ...nodeStorage,
  openAppend: async (path) => {
    const file = await nodeStorage.openAppend(path)
    return {
      ...file,
      writev: async (buffers) => {
        await new Promise((r) => setTimeout(r, ms))
        return file.writev(buffers)
      }
    }
  }
})

const snapshotFiles = (dataDir: string): string[] => {
  try {
    return readdirSync(join(dataDir, "snapshots"))
  } catch {
    return [] // no snapshot yet
  }
}

let t: TestServer | null = null
let dir: string | null = null
const sockets: WsClient[] = []
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.close()))
  await t?.close()
  t = null
  if (dir !== null) rmSync(dir, { recursive: true, force: true })
  dir = null
})

describe("a slow disk under steady appends", () => {
  it("frames, readiness, a snapshot and the history store keep moving while appends go on; the slow disk is a warning and a readiness detail", async () => {
    dir = mkdtempSync(join(tmpdir(), "twinbook-slow-disk-"))
    const lines: Array<Record<string, unknown>> = []
    t = await startTestServer({
      dataDir: dir,
      service: { snapshotIntervalSec: 1, historyFlushMs: 200 },
      parts: {
        // Real elapsed time: the slow write is measured on the monotonic clock, and it is real here.
        monoMs: liveMonoClock.monoMs,
        disk: slowDisk(WRITE_MS),
        logger: makeLogger({ level: "info", format: "json", nowMs: () => 0, write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) })
      }
    })
    const server = t
    const marketId = server.market("btc-above-120k-2027-03-31")
    const [alice, bob] = [keyFromLabel("slow-alice").user, keyFromLabel("slow-bob").user]
    const submit = (cmd: ServiceCommand): Promise<void> => server.service.exchange.submit(cmd).durable
    await Promise.all([alice, bob].map((user, i) => submit({ type: "credit", user, amountMicro: 1_000_000_000, ref: `slow-${i}` })))
    const ws = await WsClient.open(server.wsUrl)
    sockets.push(ws)
    await ws.subscribe(`book:${marketId}`)
    await ws.subscribe(`trades:${marketId}`)
    const historyAtStart = server.service.history()!.projectedSeq

    // One command every 20 ms, alternately a YES bid and a NO bid at 50¢: every second one mints a pair (a trade).
    let appended = 0
    let stop = false
    const acks: Array<Promise<void>> = []
    const appending = (async () => {
      while (!stop && appended < MAX_APPENDS) {
        const i = appended++
        acks.push(
          submit({
            type: "place_order",
            order: { user: i % 2 === 0 ? alice : bob, marketId, side: "buy", outcome: i % 2 === 0 ? "yes" : "no", priceBps: 5_000, size: 1, orderType: "gtc", nonce: i + 1 }
          })
        )
        await new Promise((r) => setTimeout(r, APPEND_EVERY_MS))
      }
      stop = true
    })()

    // Each thing is counted only if seen while the appends still went on (at which append it was).
    const seenAt: Record<"frames" | "ready" | "snapshot" | "history" | "warning", number | null> = { frames: null, ready: null, snapshot: null, history: null, warning: null }
    const see = (what: keyof typeof seenAt, yes: boolean): void => {
      if (yes && seenAt[what] === null && !stop) seenAt[what] = appended
    }
    const progress = async (): Promise<void> => {
      while (!stop && Object.values(seenAt).includes(null)) {
        see("frames", ws.frames.some((f) => f.type === "book_update") && ws.frames.some((f) => f.type === "trade"))
        if (seenAt.ready === null) {
          const res = await fetch(`${server.url}/v1/ready`)
          const body = (await res.json()) as { checks: { journal: { detail: string } } }
          see("ready", res.status === 200 && body.checks.journal.detail.startsWith("writable; slow: a durable journal write took "))
        }
        see("snapshot", snapshotFiles(dir!).some((n) => n.startsWith("snap-")) && lines.some((l) => l.msg === "snapshot"))
        see("history", server.service.history()!.projectedSeq > historyAtStart)
        see("warning", lines.some((l) => l.msg === "slow disk" && l.what === "journal" && (l.duration_ms as number) >= WRITE_MS && l.threshold_ms === 100))
        await new Promise((r) => setTimeout(r, 50))
      }
      stop = true
    }
    await Promise.all([appending, progress()])
    await Promise.all(acks)

    // Everything was seen before the 250th append (it takes about two batches: some 50 appends).
    for (const [what, at] of Object.entries(seenAt)) expect(at, `${what}: seen while appends went on`).not.toBeNull()
    expect(appended).toBeLessThan(MAX_APPENDS)
  }, 60_000)
})
