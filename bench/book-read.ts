// HTTP suite (issue 12's speed criterion): a cached book read through the real server against a
// bare node:http server answering the very same bytes. The real one is the service (startService,
// memory store) with a market whose book has levels on both sides, placed as signed orders; from
// its second read on, GET /v1/markets/<id>/book is an edge-cache HIT (src/api/cache.ts). The bare
// one replays the captured HIT response: status, headers and body (node:http adds date and
// keep-alive itself, as it does for the service). One keep-alive client (RawConnection) drives
// both in alternating A/B rounds of a fixed duration; the ratio is the median of the rounds'.
//
// Each server runs in a child process of its own by default (as bench/api.ts does), the client in
// this one: in one process the client's own cost per request is added to both servers' on the same
// thread, which pulls the ratio towards 1 and flatters the slower server. The servers' CPU per
// request (their own process.cpuUsage) is reported too: it depends far less than req/s on how the
// two cores are shared with the client and anything else running. --in-process runs all three here.
//
// Flags: --rounds=N (10, each A then B)  --round-ms=N (2000)  --connections=N (32)  --in-process
import { type ChildProcess, fork } from "node:child_process"
import { createHash, createPrivateKey, createPublicKey, sign as edSign } from "node:crypto"
import { createServer, type OutgoingHttpHeaders } from "node:http"
import { connect } from "node:net"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import bs58 from "bs58"
import { demoCatalog } from "../fixtures/catalog.ts"
import { orderMessage, sessionMessage } from "../src/auth/messages.ts"
import { startService } from "../src/runtime/boot.ts"
import { type BenchResult, numberFlag, round, type Suite } from "./lib.ts"
import { RawConnection } from "./raw-http.ts"

const TARGET_RATIO = 0.5
const ADMIN = "book-read-bench-admin"
// PKCS#8 DER prefix of an Ed25519 private key (the 32-byte seed follows); SPKI's key starts at byte 12.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")
const SPKI_PREFIX_LEN = 12
/** Added by node:http to every response of either server; the bare one must not send them twice. */
const NODE_ADDED = new Set(["date", "connection", "keep-alive"])

/** A server under test, wherever it runs: its port, its process's CPU so far, and a stop. */
interface Target {
  readonly port: number
  cpuMicros(): Promise<number>
  close(): Promise<void>
}

/** One whole HTTP/1.1 response as it came off the wire, and its parts. */
interface Captured {
  readonly raw: Buffer
  readonly status: number
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: Buffer
}

/** Reads one response's exact bytes on a fresh connection (RawConnection keeps only status and body). */
const captureRaw = (port: number, path: string): Promise<Captured> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`))
    let buf = Buffer.alloc(0)
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      const end = buf.indexOf("\r\n\r\n")
      if (end < 0) return
      const lines = buf.subarray(0, end).toString("latin1").split("\r\n")
      const headers = lines.slice(1).map((l) => {
        const i = l.indexOf(":")
        return [l.slice(0, i), l.slice(i + 1).trim()] as const
      })
      const length = Number(headers.find(([k]) => k.toLowerCase() === "content-length")?.[1])
      if (!Number.isInteger(length)) return void reject(new Error("book-read bench: response without content-length"))
      if (buf.length < end + 4 + length) return
      socket.destroy()
      resolve({ raw: buf.subarray(0, end + 4 + length), status: Number(lines[0]!.slice(9, 12)), headers, body: buf.subarray(end + 4, end + 4 + length) })
    })
    socket.once("error", reject)
  })

const headerOf = (c: Captured, name: string): string | undefined => c.headers.find(([k]) => k.toLowerCase() === name)?.[1]
/** The date line is the one part of a response that changes by itself (every second). */
const withoutDate = (raw: Buffer): string => raw.toString("latin1").replace(/\r\ndate: [^\r]*/i, "")

const cpuNow = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** The service, memory store, with one market's book holding five levels a side from signed orders. */
const startBookService = async (): Promise<Target & { readonly path: string }> => {
  const service = await startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(5),
    catalog: demoCatalog(),
    config: {
      adminToken: ADMIN,
      corsOrigins: new Set(),
      secureCookies: false,
      devCredit: true,
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
    }
  }, {
    nowMs: () => Date.now() // live-only: a live server for a wall-clock bench
  })
  const port = service.http.port
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
    if (res.status !== 200) throw new Error(`book-read bench setup: ${method} ${path} answered ${res.status}: ${await res.text()}`)
    return res
  }
  const marketsRes = await fetch(`http://127.0.0.1:${port}/v1/markets`)
  const marketId = ((await marketsRes.json()) as { markets: Array<{ outcomes: Array<{ market_id: string }> }> }).markets[0]!.outcomes[0]!.market_id
  const seed = createHash("sha256").update("book-read-bench-user").digest()
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" })
  const user = bs58.encode(createPublicKey(key).export({ format: "der", type: "spki" }).subarray(SPKI_PREFIX_LEN))
  const nowSec = Math.floor(Date.now() / 1000) // live-only: the server checks the session timestamp against its wall clock
  const reg = await call("POST", "/v1/builders/register", { user, name: "book-read", signature: edSign(null, sessionMessage(user, nowSec), key).toString("hex"), timestamp: nowSec })
  const cookie = String(reg.headers.get("set-cookie")).split(";")[0]!
  await call("POST", "/v1/admin/credit", { user, amount_micro: 1_000_000_000_000 }, { authorization: `Bearer ${ADMIN}` })
  // Buy YES at 40..44% (bids) and buy NO at 40..44% (asks at 56..60%): nothing crosses, five levels a side.
  let nonce = 0
  for (const outcome of ["yes", "no"] as const) {
    for (let level = 0; level < 5; level++) {
      const o = { market_id: marketId, side: "buy" as const, outcome, price: 4000 + level * 100, size: 10 + level, nonce: ++nonce }
      const msg = orderMessage({ marketId, user, outcome, side: "buy", priceBps: o.price, size: o.size, nonce: o.nonce })
      await call("POST", "/v1/orders", { ...o, user, order_type: "gtc", signature: edSign(null, msg, key).toString("hex") }, { cookie })
    }
  }
  return { port, path: `/v1/markets/${marketId}/book`, cpuMicros: async () => cpuNow(), close: () => service.close() }
}

/** A bare node:http server answering every request with the captured status, headers and body. */
const startBare = async (status: number, headers: ReadonlyArray<readonly [string, string]>, body: Buffer): Promise<Target> => {
  const flat: OutgoingHttpHeaders = {}
  for (const [k, v] of headers) if (!NODE_ADDED.has(k.toLowerCase())) flat[k] = v
  const server = createServer((_req, res) => {
    res.writeHead(status, flat)
    res.end(body)
  })
  server.keepAliveTimeout = 65_000 // as the service's (src/api/node-server.ts)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as AddressInfo).port,
    cpuMicros: async () => cpuNow(),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

// ---- child processes: one server each, driven over the IPC channel ----

type ChildMessage = { readonly kind: "ready"; readonly port: number; readonly path?: string } | { readonly kind: "cpu"; readonly micros: number }
type ParentMessage =
  | { readonly kind: "bare"; readonly status: number; readonly headers: ReadonlyArray<readonly [string, string]>; readonly bodyBase64: string }
  | { readonly kind: "cpu" }
  | { readonly kind: "stop" }

const childMain = async (): Promise<void> => {
  const send = (m: ChildMessage): void => void process.send!(m)
  let target: Target | null = null
  // The bench process gone (finished or crashed) leaves no server behind.
  process.once("disconnect", () => process.exit(0))
  process.on("message", (m: ParentMessage) => {
    if (m.kind === "cpu") send({ kind: "cpu", micros: cpuNow() })
    else if (m.kind === "stop") void (target?.close() ?? Promise.resolve()).then(() => process.exit(0))
    else if (m.kind === "bare") void startBare(m.status, m.headers, Buffer.from(m.bodyBase64, "base64")).then((t) => {
      target = t
      send({ kind: "ready", port: t.port })
    })
  })
  if (process.argv[2] === "service") {
    const t = await startBookService()
    target = t
    send({ kind: "ready", port: t.port, path: t.path })
  }
}

const inChild = async (mode: "service" | "bare", first?: ParentMessage): Promise<Target & { readonly path?: string }> => {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [mode], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const next = (kind: ChildMessage["kind"]): Promise<ChildMessage> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: ChildMessage): void => {
        if (m.kind !== kind) return
        child.off("message", onMessage)
        child.off("exit", onExit)
        resolve(m)
      }
      const onExit = (code: number | null): void => reject(new Error(`book-read bench: ${mode} server exited (${code})`))
      child.on("message", onMessage)
      child.once("exit", onExit)
    })
  const ready = next("ready")
  if (first !== undefined) child.send(first)
  const m = (await ready) as Extract<ChildMessage, { kind: "ready" }>
  return {
    port: m.port,
    ...(m.path === undefined ? {} : { path: m.path }),
    cpuMicros: async () => {
      const reply = next("cpu")
      child.send({ kind: "cpu" } satisfies ParentMessage)
      return ((await reply) as Extract<ChildMessage, { kind: "cpu" }>).micros
    },
    close: () => new Promise<void>((resolve) => {
      child.once("exit", () => resolve())
      child.send({ kind: "stop" } satisfies ParentMessage)
    })
  }
}

// ---- the suite ----

interface Tally {
  requests: number
  nanos: number
  cpuMicros: number
  non200: number
}

/** Every connection in a closed loop until `roundMs` has passed; CPU read from the server before and after. */
const runRound = async (target: Target, conns: ReadonlyArray<RawConnection>, wire: Buffer, roundMs: number, tally: Tally): Promise<number> => {
  const cpu0 = await target.cpuMicros()
  const t0 = process.hrtime.bigint()
  const until = t0 + BigInt(roundMs) * 1_000_000n
  let requests = 0
  await Promise.all(
    conns.map(async (conn) => {
      while (process.hrtime.bigint() < until) {
        const res = await conn.send(wire)
        requests++
        if (res.status !== 200) tally.non200++
      }
    })
  )
  const nanos = Number(process.hrtime.bigint() - t0)
  tally.cpuMicros += (await target.cpuMicros()) - cpu0
  tally.requests += requests
  tally.nanos += nanos
  return (requests / nanos) * 1e9
}

export const bookReadSuite: Suite = async ({ args, report, log }) => {
  const rounds = numberFlag(args, "rounds", 10)
  const roundMs = numberFlag(args, "round-ms", 2000)
  const connections = numberFlag(args, "connections", 32)
  const inProcess = args.includes("--in-process")
  log(`starting the service (${inProcess ? "in this process" : "child process"}) and placing 10 signed orders…`)
  const service = inProcess ? await startBookService() : await inChild("service")
  const path = service.path!
  const first = await captureRaw(service.port, path)
  const hit = await captureRaw(service.port, path)
  if (first.status !== 200 || hit.status !== 200) throw new Error(`book-read bench: the book answered ${first.status}/${hit.status}`)
  if (headerOf(hit, "x-cache") !== "HIT") throw new Error(`book-read bench: the second read was not an edge-cache HIT (x-cache: ${headerOf(hit, "x-cache")})`)
  const book = JSON.parse(hit.body.toString("utf8")) as { bids: unknown[]; asks: unknown[] }
  log(`book ${path}: ${book.bids.length} bid and ${book.asks.length} ask levels, ${hit.body.length} body bytes, x-cache ${headerOf(hit, "x-cache")}`)

  const bareMsg: ParentMessage = { kind: "bare", status: hit.status, headers: hit.headers, bodyBase64: hit.body.toString("base64") }
  const bare = inProcess ? await startBare(hit.status, hit.headers, hit.body) : await inChild("bare", bareMsg)
  const sameBytes = withoutDate((await captureRaw(bare.port, path)).raw) === withoutDate(hit.raw)
  if (!sameBytes) throw new Error("book-read bench: the bare server's response differs from the captured one (date aside)")

  const wire = RawConnection.request("GET", path, "")
  const serviceConns = await Promise.all(Array.from({ length: connections }, () => RawConnection.open(service.port)))
  const bareConns = await Promise.all(Array.from({ length: connections }, () => RawConnection.open(bare.port)))
  const a: Tally = { requests: 0, nanos: 0, cpuMicros: 0, non200: 0 }
  const b: Tally = { requests: 0, nanos: 0, cpuMicros: 0, non200: 0 }
  const roundRatios: number[] = []
  try {
    // One short round each first: both JITs warm before anything counts.
    await runRound(service, serviceConns, wire, Math.min(roundMs, 1000), { requests: 0, nanos: 0, cpuMicros: 0, non200: 0 })
    await runRound(bare, bareConns, wire, Math.min(roundMs, 1000), { requests: 0, nanos: 0, cpuMicros: 0, non200: 0 })
    for (let r = 0; r < rounds; r++) {
      const sa = await runRound(service, serviceConns, wire, roundMs, a)
      const sb = await runRound(bare, bareConns, wire, roundMs, b)
      roundRatios.push(sa / sb)
      log(`round ${r + 1}/${rounds}: service ${Math.round(sa)}/s, bare ${Math.round(sb)}/s, ratio ${round(sa / sb, 3)}`)
    }
    // Still cached at the end: the book's TTL is 1 s, so a read after the bare round refills it and the next one hits.
    await captureRaw(service.port, path)
    const last = await captureRaw(service.port, path)
    if (headerOf(last, "x-cache") !== "HIT") throw new Error(`book-read bench: the last read was not a HIT (x-cache: ${headerOf(last, "x-cache")})`)
  } finally {
    for (const c of [...serviceConns, ...bareConns]) c.close()
    await Promise.all([service.close(), bare.close()])
  }
  const serviceReqPerSec = (a.requests / a.nanos) * 1e9
  const bareReqPerSec = (b.requests / b.nanos) * 1e9
  const serviceCpuUsPerReq = a.cpuMicros / a.requests
  const bareCpuUsPerReq = b.cpuMicros / b.requests
  // The median of the rounds' ratios: each round's pair ran back to back, so a drift in the
  // machine's speed (other processes come and go) moves both sides of a pair alike.
  roundRatios.sort((x, y) => x - y)
  const mid = roundRatios.length >> 1
  const ratio = roundRatios.length % 2 === 1 ? roundRatios[mid]! : (roundRatios[mid - 1]! + roundRatios[mid]!) / 2
  const result: BenchResult = {
    name: "http.cached_book",
    serviceReqPerSec: Math.round(serviceReqPerSec),
    bareReqPerSec: Math.round(bareReqPerSec),
    ratio: round(ratio, 3),
    totalsRatio: round(serviceReqPerSec / bareReqPerSec, 3),
    roundRatioMin: round(roundRatios[0]!, 3),
    roundRatioMax: round(roundRatios.at(-1)!, 3),
    // Server CPU per request (the process's user + system): the ratio that needs no idle core.
    serviceCpuUsPerReq: round(serviceCpuUsPerReq, 1),
    bareCpuUsPerReq: round(bareCpuUsPerReq, 1),
    cpuRatio: inProcess ? null : round(bareCpuUsPerReq / serviceCpuUsPerReq, 3),
    targetRatio: TARGET_RATIO,
    meetsTarget: a.non200 === 0 && b.non200 === 0 && ratio >= TARGET_RATIO,
    non200: a.non200 + b.non200,
    xCache: "HIT",
    // The client sees no headers; the TTL bounds the MISSes: one per round start and one a second after.
    hitShareAtLeast: round(1 - (rounds * (1 + Math.ceil(roundMs / 1000))) / a.requests, 4),
    sameBytes,
    bodyBytes: hit.body.length,
    responseBytes: hit.raw.length,
    connections,
    rounds,
    roundMs,
    // Where each part ran: the machine has 2 cores, shared with whatever else runs.
    layout: inProcess ? "one process: client + both servers" : "a child process per server, client apart"
  }
  report(result)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await childMain()
