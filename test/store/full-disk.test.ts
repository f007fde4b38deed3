// Full disk (issue 18): the real server (`src/main.ts`) under a file-size limit with
// SIGXFSZ ignored (`ulimit -f`: no root needed), so the journal write that crosses
// the limit is cut short (a partial write) and the next one fails with EFBIG, as on a
// full filesystem. 16 clients place signed orders until the server stops; every 200
// is kept. Then the server restarts without the limit and:
//  - it stopped by itself, with exit code 70 and one line naming DATA_DIR and the errno;
//  - every acknowledged order is in the journal under the id it was acknowledged with;
//  - no id of an acknowledged order is handed to another order after the restart.
// Before the fix (bytesWritten ignored) the batch that crossed the limit was acknowledged
// with part of it on disk, cut off as a torn tail at restart, and its ids reused.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { idFromSlug } from "../../src/service/catalog.ts"
import { Exchange } from "../../src/service/exchange.ts"
import { journalDir } from "../../src/store/durable.ts"
import { listSegments, readJournal } from "../../src/store/file-journal.ts"
import { type ChildServer, loopbackTransport, startChildServer } from "../support/child-server.ts"

const ROOT = join(import.meta.dirname, "..", "..")
const ADMIN_TOKEN = "full-disk-admin-token"
const CLIENTS = 16
/** The rate limiter allows 50 orders per wallet per process: stay under. */
const ORDERS_EACH = 40
/** Room left in the journal under the limit: a few dozen orders, well under the clients' budget. */
const HEADROOM_BYTES = 24 * 1024

const dirs: string[] = []
const children: ChildProcess[] = []
const servers: ChildServer[] = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
  for (const s of servers) s.kill("SIGKILL")
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** `src/main.ts` under `ulimit -f blocks` (1 KiB blocks in bash) with SIGXFSZ ignored: writes past the limit fail with EFBIG. */
const startLimited = (dataDir: string, blocks: number): Promise<{ url: string; child: ChildProcess; exited: Promise<number | null>; stderr: () => string }> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "NODE_OPTIONS" && !k.startsWith("VITEST")) env[k] = v
  Object.assign(env, { PORT: "0", WEB: "false", HOST: "127.0.0.1", DATA_DIR: dataDir, NODE_ENV: "test", CHAIN: "off", ADMIN_TOKEN, DEV_CREDIT: "true", SNAPSHOT_INTERVAL_SEC: "0" })
  const child = spawn("bash", ["-c", `trap "" XFSZ; ulimit -f ${blocks}; exec "${process.execPath}" --max-semi-space-size=64 scripts/run-ts.mjs src/main.ts`], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let err = ""
  let out = ""
  child.stderr!.setEncoding("utf8").on("data", (d: string) => void (err += d))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d
      const m = /twinbook API\s+(http:\/\/\S+?)\/v1\/markets/.exec(out)
      if (m !== null) resolve({ url: m[1]!, child, exited, stderr: () => err })
    })
    void exited.then((code) => reject(new Error(`limited server exited before it was ready (code ${code})\n${out}\n${err}`)))
  })
}

interface Ack {
  readonly user: string
  readonly nonce: number
  readonly orderId: number
}

describe("a full disk (file-size limit, SIGXFSZ ignored) on the real server", () => {
  it("stops with exit 70 and a clear line; every acknowledged order survives the restart and no acknowledged id is reused", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "twinbook-full-disk-"))
    dirs.push(dataDir)
    const target = { url: "http://127.0.0.1:9" }
    const markets = demoCatalog()
      .filter((e) => e.outcomes === undefined || e.outcomes.length === 0)
      .slice(0, 2)
      .map((e) => idFromSlug("market", e.slug))
    const clients = Array.from({ length: CLIENTS }, (_, i) => {
      const transport = loopbackTransport(`127.0.0.${40 + i}`, () => target.url)
      return { transport, api: new ApiClient("http://server", keyFromLabel(`full-disk-${i}`), transport, () => Math.floor(Date.now() / 1000)) } // live-only: the child runs on the system clock
    })

    // 1. Without a limit: sessions and deposits, then a clean stop.
    const setup = await startChildServer({ dataDir, env: { ADMIN_TOKEN, DEV_CREDIT: "true", SNAPSHOT_INTERVAL_SEC: "0", WEB: "false" }, startTimeoutMs: 120_000 })
    servers.push(setup)
    target.url = setup.url
    for (const [i, c] of clients.entries()) {
      expect((await c.api.register(`full-disk-${i}`)).status).toBe(200)
      const credit = await c.api.request("POST", "/v1/admin/credit", { user: c.api.user, amount_micro: 5_000_000_000 }, { authorization: `Bearer ${ADMIN_TOKEN}` })
      expect(credit.status).toBe(200)
    }
    setup.kill("SIGTERM")
    expect((await setup.exited).code).toBe(0)
    const segment = listSegments(journalDir(dataDir)).at(-1)!.path
    const before = statSync(segment).size

    // 2. Under the limit: orders until the journal cannot grow and the server stops.
    const blocks = Math.ceil((before + HEADROOM_BYTES) / 1024)
    const limited = await startLimited(dataDir, blocks)
    target.url = limited.url
    for (const c of clients) c.transport.reset()
    const acks: Ack[] = []
    let down = false
    void limited.exited.then(() => void (down = true))
    await Promise.all(
      clients.map(async (c, i) => {
        for (let nonce = 1; nonce <= ORDERS_EACH && !down; nonce++) {
          // Resting bids on both outcomes, some crossing: fills as well as rests.
          const outcome = (i + nonce) % 2 === 0 ? ("yes" as const) : ("no" as const)
          const price = nonce % 5 === 0 ? 5_200 : 3_000 + 10 * ((i * 7 + nonce) % 150)
          try {
            const res = await c.api.placeOrder({ market_id: markets[nonce % 2]!, side: "buy", outcome, price, size: 1 + ((i + nonce) % 9), nonce })
            if (res.status === 200) acks.push({ user: c.api.user, nonce, orderId: (res.body as { order_id: number }).order_id })
            else if (res.status >= 500) throw new Error(`unexpected ${res.status} ${JSON.stringify(res.body)}`)
          } catch (err) {
            if (err instanceof Error && err.message.startsWith("unexpected")) throw err
            // The connection died with the server: the outcome of this one is unknown.
          }
        }
      })
    )
    const code = await limited.exited
    expect(down, "the journal hit the file-size limit and the server stopped").toBe(true)
    expect(code).toBe(70)
    expect(acks.length).toBeGreaterThan(20)
    expect(statSync(segment).size).toBeGreaterThan(before + HEADROOM_BYTES - 2_048)

    // 3. Restart without the limit: the torn tail is cut, every acknowledged order is there.
    const again = await startChildServer({ dataDir, env: { ADMIN_TOKEN, DEV_CREDIT: "true", SNAPSHOT_INTERVAL_SEC: "0", WEB: "false" }, startTimeoutMs: 120_000 })
    servers.push(again)
    target.url = again.url
    for (const c of clients) c.transport.reset()
    // More orders after the restart: none may be given an acknowledged id.
    const after: Ack[] = []
    for (const c of clients.slice(0, 4)) {
      const res = await c.api.placeOrder({ market_id: markets[0]!, side: "buy", outcome: "yes", price: 2_000, size: 1, nonce: 1_000 })
      expect(res.status).toBe(200)
      after.push({ user: c.api.user, nonce: 1_000, orderId: (res.body as { order_id: number }).order_id })
    }
    again.kill("SIGTERM")
    await again.exited
    for (const c of clients) c.transport.close()

    // The journal replayed from genesis: each placement (user:nonce) and the id it got.
    const placements = new Map<string, number>()
    const x = new Exchange(() => 0, { append: () => Promise.resolve() })
    x.onApply((record, result) => {
      const first = result.events[0]
      if (record.cmd.type === "place_order" && first?.type === "order_accepted") placements.set(`${record.cmd.order.user}:${record.cmd.order.nonce}`, first.orderId)
    })
    const read = readJournal(journalDir(dataDir), 1, { repair: false })
    for (const r of read.records) x.apply(r)
    expect(read.tornTail).toBeNull()
    const lost = acks.filter((a) => placements.get(`${a.user}:${a.nonce}`) !== a.orderId).map((a) => `order ${a.orderId} (${a.user.slice(0, 6)} nonce ${a.nonce}) is ${placements.get(`${a.user}:${a.nonce}`) ?? "missing"}`)
    expect(lost, "acknowledged orders missing or renumbered after the restart").toEqual([])
    const ackedIds = new Set(acks.map((a) => a.orderId))
    const reused = after.filter((a) => ackedIds.has(a.orderId)).map((a) => a.orderId)
    expect(reused, "ids of acknowledged orders handed to new orders").toEqual([])
    for (const a of after) expect(placements.get(`${a.user}:${a.nonce}`)).toBe(a.orderId)
    // Fail-stop said so, once: what failed, under which DATA_DIR, the errno, the exit code.
    const failureLines = limited.stderr().split("\n").filter((l) => l.startsWith("twinbook: storage failure"))
    expect(failureLines).toHaveLength(1)
    expect(failureLines[0]).toContain(`DATA_DIR=${dataDir} (EFBIG)`)
    expect(failureLines[0]).toContain("exit code 70")
    console.log(`full disk: ${acks.length} orders acknowledged under the limit; journal ${before} → ${statSync(segment).size} bytes; ${failureLines[0]}`)
  }, 480_000)
})
