// API suite: signed POST /v1/orders over loopback HTTP with keep-alive from many
// users (server in a child process), then book_update fan-out to 1,000 sockets.
// Orders/s is also given as a share of the verifier's capacity measured in the same
// run (issue 15: figures vary from machine to machine, a ratio does not).
// Flags: --orders=N  --users=N  --concurrency=N  --subscribers=N  --updates=N  --verify-samples=N
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createPrivateKey, createPublicKey, sign as edSign } from "node:crypto"
import { Agent, request } from "node:http"
import bs58 from "bs58"
import { createHash } from "node:crypto"
import WebSocket from "ws"
import { orderMessage, sessionMessage } from "../src/auth/messages.ts"
import { inlineVerifier, workerVerifier } from "../src/auth/verifier.ts"
import { mulberry32 } from "./engine-workload.ts"
import { RawConnection } from "./raw-http.ts"
import { type BenchResult, numberFlag, percentile, round, type Suite } from "./lib.ts"

const TARGET_ORDERS_PER_SEC = 5_000
const TARGET_P99_MS = 20
const TARGET_WS_P99_MS = 50
/** Issue 15: signed orders/s over HTTP at least this share of the verifier's own capacity. */
const TARGET_RATIO_TO_VERIFY = 0.6
const ADMIN = "bench-admin-token"
// PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")
const SPKI_PREFIX_LEN = 12

interface BenchUser {
  readonly user: string
  readonly key: ReturnType<typeof createPrivateKey>
  cookie: string
}

const makeUser = (i: number): BenchUser => {
  const seed = createHash("sha256").update(`api-bench-user-${i}`).digest()
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" })
  const spki = createPublicKey(key).export({ format: "der", type: "spki" })
  // node:crypto signs fast (~20k/s) so pre-signing the whole run stays short.
  return { user: bs58.encode(spki.subarray(SPKI_PREFIX_LEN)), key, cookie: "" }
}

interface SignedSample {
  readonly user: string
  readonly message: Uint8Array
  readonly signature: Uint8Array
}

/**
 * Signatures/s the configured verifier sustains (VERIFY_WORKERS workers, 0 = inline, as the
 * server is given) on the bench's own signed order messages, all in flight at once, so the
 * workers are never idle: the ceiling on orders/s. Key objects are made in a first pass (the
 * server has them too after its first orders); the best of three timed rounds is reported.
 */
const verifyCapacity = async (workers: number, samples: ReadonlyArray<SignedSample>): Promise<number> => {
  const verifier = workers > 0 ? workerVerifier(workers) : inlineVerifier()
  const timedRound = async (): Promise<number> => {
    const t0 = process.hrtime.bigint()
    const ok = await Promise.all(samples.map((s) => verifier.verify(s.user, s.message, s.signature)))
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    if (!ok.every((v) => v)) throw new Error("verify capacity: a bench signature did not verify")
    return samples.length / seconds
  }
  try {
    await timedRound()
    return Math.round(Math.max(await timedRound(), await timedRound(), await timedRound()))
  } finally {
    await verifier.close()
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 })

const call = (port: number, method: string, path: string, body: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers } },
      (res) => {
        const chunks: Buffer[] = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      }
    )
    req.on("error", reject)
    req.end(body)
  })

/**
 * Sum and count of the server's own time on accepted POST /v1/orders (its request histogram,
 * from the body read to the answer ready: verification, matching, the journal's durable write).
 */
const serverOrderTime = async (port: number): Promise<{ seconds: number; count: number }> => {
  const text = (await call(port, "GET", "/metrics", "", { authorization: `Bearer ${ADMIN}` })).body
  const pick = (suffix: string): number => {
    const line = text
      .split("\n")
      .find((l) => l.startsWith(`twinbook_http_request_duration_seconds_${suffix}{`) && l.includes('method="POST"') && l.includes('route="/v1/orders"') && l.includes('status="200"'))
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
  }
  return { seconds: pick("sum"), count: pick("count") }
}

/**
 * CPU time of each thread of process `pid` in µs (Linux /proc, 10 ms ticks), keyed by thread id;
 * empty elsewhere. The main thread's id is the pid.
 */
const threadCpuMicros = (pid: number): Map<number, number> => {
  const out = new Map<number, number>()
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      // Fields after the parenthesised name: state is [0], utime [11], stime [12].
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "latin1")
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) * 10_000)
    }
  } catch {
    // not Linux, or the thread ended between the listing and the read
  }
  return out
}

/** The server's CPU per order over the timed loop: its main thread, its busiest other thread (the verify worker), and the rest. */
const serverCpuPerOrder = (before: Map<number, number>, after: Map<number, number>, pid: number, orders: number) => {
  if (after.size === 0) return {} // no /proc: say nothing rather than zeros
  const used = [...after].map(([tid, us]) => ({ tid, us: us - (before.get(tid) ?? 0) }))
  const main = used.find((t) => t.tid === pid)?.us ?? 0
  const others = used.filter((t) => t.tid !== pid).sort((a, b) => b.us - a.us)
  const busiest = others[0]?.us ?? 0
  const rest = others.slice(1).reduce((n, t) => n + t.us, 0)
  return { mainCpuUsPerOrder: Math.round(main / orders), verifyWorkerCpuUsPerOrder: Math.round(busiest / orders), otherThreadsCpuUsPerOrder: Math.round(rest / orders) }
}

const startServer = (): Promise<{ port: number; pid: number; stop: () => void }> =>
  new Promise((resolve, reject) => {
    // BENCH_SERVER_FLAGS (e.g. --cpu-prof) profiles the server process.
    const extra = (process.env.BENCH_SERVER_FLAGS ?? "").split(" ").filter((f) => f !== "")
    // The server runs with the young generation `npm start` gives the service (package.json).
    // The flags of `npm start` (docs/decisions.md: the young generation, V8's helper pool).
    const child = spawn(process.execPath, [...extra, "--max-semi-space-size=64", "--v8-pool-size=1", "--import", "tsx", "bench/api-server.ts"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout.once("data", (d: Buffer) => resolve({ port: Number(d.toString().trim()), pid: child.pid ?? 0, stop: () => child.kill("SIGTERM") }))
    child.once("error", reject)
  })

export const apiSuite: Suite = async ({ args, report, log }) => {
  const orders = numberFlag(args, "orders", 30_000)
  const userCount = numberFlag(args, "users", 200)
  const concurrency = numberFlag(args, "concurrency", 32)
  const subscribers = numberFlag(args, "subscribers", 1_000)
  const updates = numberFlag(args, "updates", 40)
  const verifySamples = numberFlag(args, "verify-samples", 6_000)
  const verifyWorkers = Number(process.env.VERIFY_WORKERS ?? 1)
  const server = await startServer()
  const port = server.port
  try {
    log(`server on port ${port}; registering and funding ${userCount} users…`)
    const markets = JSON.parse((await call(port, "GET", "/v1/markets?limit=500", "")).body).markets.flatMap((e: any) =>
      e.outcomes.map((o: any) => o.market_id as string)
    ) as string[]
    const users = Array.from({ length: userCount }, (_, i) => makeUser(i))
    const nowSec = Math.floor(Date.now() / 1000) // live-only: the server runs on the system clock
    for (const u of users) {
      const sig = edSign(null, sessionMessage(u.user, nowSec), u.key).toString("hex")
      const res = await call(port, "POST", "/v1/builders/register", JSON.stringify({ user: u.user, name: "bench", signature: sig, timestamp: nowSec }))
      u.cookie = String(res.headers["set-cookie"]).split(";")[0]!
      await call(port, "POST", "/v1/admin/credit", JSON.stringify({ user: u.user, amount_micro: 1_000_000_000_000 }), { authorization: `Bearer ${ADMIN}` })
    }

    // Pre-signed bodies: buy YES at 45..55% and buy NO at 45..55% → roughly a third cross (mints).
    log(`signing ${orders} orders…`)
    const bodies: Array<{ cookie: string; body: string }> = []
    const samples: SignedSample[] = []
    const nonces = new Array<number>(userCount).fill(0)
    const random = mulberry32(numberFlag(args, "seed", 42))
    const rnd = (n: number): number => Math.floor(random() * n)
    for (let i = 0; i < orders; i++) {
      const ui = i % userCount
      const u = users[ui]!
      const o = { market_id: markets[rnd(4)]!, side: "buy" as const, outcome: (rnd(2) === 0 ? "yes" : "no") as "yes" | "no", price: 4500 + rnd(1000), size: 1 + rnd(20), nonce: ++nonces[ui]! }
      const message = orderMessage({ marketId: o.market_id, user: u.user, outcome: o.outcome, side: o.side, priceBps: o.price, size: o.size, nonce: o.nonce })
      const signed = edSign(null, message, u.key)
      if (samples.length < verifySamples) samples.push({ user: u.user, message, signature: signed })
      bodies.push({ cookie: u.cookie, body: JSON.stringify({ ...o, user: u.user, order_type: "gtc", signature: signed.toString("hex") }) })
    }

    // Measured while the server idles, before and after the load (the better one counts): the
    // verifier gets the cores the server would use, and a shared machine's drift is bracketed.
    log(`verifier capacity: ${samples.length} signatures, ${verifyWorkers} worker(s)…`)
    const capacityBefore = await verifyCapacity(verifyWorkers, samples)

    // Orders from one user stay in sequence (nonces), so each worker owns a slice of users.
    log(`placing ${orders} orders with ${concurrency} connections…`)
    const latencies = new Float64Array(orders)
    let statusErrors = 0
    let fills = 0
    const queues: number[][] = Array.from({ length: concurrency }, () => [])
    for (let i = 0; i < orders; i++) queues[(i % userCount) % concurrency]!.push(i)
    const conns = await Promise.all(queues.map(() => RawConnection.open(port)))
    const wire = bodies.map((b) => RawConnection.request("POST", "/v1/orders", b.body, { cookie: b.cookie }))
    const server0 = await serverOrderTime(port)
    const threads0 = threadCpuMicros(server.pid)
    const t0 = process.hrtime.bigint()
    const cpu0 = process.cpuUsage()
    await Promise.all(
      queues.map(async (queue, w) => {
        const conn = conns[w]!
        for (const i of queue) {
          const s = process.hrtime.bigint()
          const res = await conn.send(wire[i]!)
          latencies[i] = Number(process.hrtime.bigint() - s) / 1e6
          if (res.status !== 200) statusErrors++
          else fills += JSON.parse(res.body).fills.length
        }
      })
    )
    for (const c of conns) c.close()
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    const cpu = process.cpuUsage(cpu0)
    const threads1 = threadCpuMicros(server.pid)
    const server1 = await serverOrderTime(port)
    // The load generator shares the machine's cores with the server: its cost per order bounds what is left.
    log(`load generator CPU: ${Math.round((cpu.user + cpu.system) / orders)} µs per order`)
    const verifyCapacityPerSec = Math.max(capacityBefore, await verifyCapacity(verifyWorkers, samples))
    let latencySumMs = 0
    for (const l of latencies) latencySumMs += l
    const clientMeanMs = latencySumMs / orders
    const serverMeanMs = (1000 * (server1.seconds - server0.seconds)) / Math.max(1, server1.count - server0.count)
    latencies.sort()
    const ordersPerSec = Math.round(orders / seconds)
    const p99Ms = round(percentile(latencies, 99), 2)
    const ratioToVerifyCapacity = round(ordersPerSec / verifyCapacityPerSec, 3)
    report({
      name: "api.orders",
      ordersPerSec,
      p50Ms: round(percentile(latencies, 50), 2),
      p99Ms,
      // Where a round trip goes: inside the server's handler, and the rest (HTTP framing, loopback,
      // the load generator's own turn on the same cores) before the connection sends its next order.
      meanMs: round(clientMeanMs, 2),
      serverMeanMs: round(serverMeanMs, 2),
      outsideServerShare: round(1 - serverMeanMs / clientMeanMs, 3),
      ...serverCpuPerOrder(threads0, threads1, server.pid, orders),
      loadGeneratorCpuUsPerOrder: Math.round((cpu.user + cpu.system) / orders),
      orders,
      users: userCount,
      concurrency,
      non200: statusErrors,
      fills,
      targetOrdersPerSec: TARGET_ORDERS_PER_SEC,
      targetP99Ms: TARGET_P99_MS,
      verifyWorkers,
      durable: process.env.BENCH_DURABLE !== "0",
      verifyCapacityPerSec,
      ratioToVerifyCapacity,
      targetRatio: TARGET_RATIO_TO_VERIFY,
      meetsTarget: statusErrors === 0 && ordersPerSec >= TARGET_ORDERS_PER_SEC && p99Ms < TARGET_P99_MS && ratioToVerifyCapacity >= TARGET_RATIO_TO_VERIFY
    })

    report(await fanOut(port, markets[5]!, users[0]!, subscribers, updates, log))
  } finally {
    server.stop()
    agent.destroy()
  }
}

/** book_update delivery latency: server snapshot `ts` to arrival, over every subscriber and update. */
const fanOut = async (port: number, market: string, u: BenchUser, subscribers: number, updates: number, log: (m: string) => void): Promise<BenchResult> => {
  log(`opening ${subscribers} WebSocket subscribers…`)
  const delays: number[] = []
  const sockets: WebSocket[] = []
  let received = 0
  await Promise.all(
    Array.from({ length: subscribers }, () =>
      new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ws`)
        ws.on("open", () => ws.send(JSON.stringify({ type: "subscribe", channel: `book:${market}` })))
        ws.on("message", (data) => {
          const f = JSON.parse(data.toString())
          if (f.type === "subscribed") resolve()
          else if (f.type === "book_update") {
            delays.push(Date.now() - f.snapshot.ts) // live-only: same-machine wall clock on both ends
            received++
          }
        })
        ws.on("error", reject)
        sockets.push(ws)
      })
    )
  )
  log(`sending ${updates} book changes…`)
  let nonce = 1_000_000
  for (let i = 0; i < updates; i++) {
    const o = { market_id: market, side: "buy" as const, outcome: "yes" as const, price: 1000 + i, size: 100, nonce: ++nonce }
    const signature = edSign(null, orderMessage({ marketId: market, user: u.user, outcome: "yes", side: "buy", priceBps: o.price, size: o.size, nonce: o.nonce }), u.key).toString("hex")
    await call(port, "POST", "/v1/orders", JSON.stringify({ ...o, user: u.user, signature }), { cookie: u.cookie })
    const want = (i + 1) * subscribers
    const deadline = Date.now() + 10_000 // live-only: a bench timeout
    while (received < want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1))
  }
  for (const s of sockets) s.terminate()
  const sorted = Float64Array.from(delays).sort()
  const p99 = percentile(sorted, 99)
  return {
    name: "api.ws_fanout",
    subscribers,
    updates,
    framesExpected: subscribers * updates,
    framesReceived: received,
    p50Ms: percentile(sorted, 50),
    p99Ms: p99,
    maxMs: sorted[sorted.length - 1] ?? null,
    targetP99Ms: TARGET_WS_P99_MS,
    meetsTarget: p99 < TARGET_WS_P99_MS && received === subscribers * updates
  }
}
