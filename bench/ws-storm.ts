// WebSocket storm suite (issue 31, item 8): how long `GET /v1/health` takes while a storm of
// WebSocket clients hits the service, and what the feed's caps did about it.
//
// The service runs as a child process (`src/main.ts`, CHAIN=off, WEB=false, its limits from the
// LIMIT_* variables), the storm in a second child (so its own event loop never delays the probes),
// and this process times health probes: each one a fresh loopback connection, as a load balancer
// probes. The storm, by default the issue's: 30 source addresses × 50 connections × 290 subscribe
// frames each, and 100 slow readers from two more addresses that never read and send 200 frames
// of 60 KB naming an invalid channel (the server echoed those back in full before the fix; now a
// frame over 16 KiB closes the connection, so `--slow-frame-bytes=160` is the costliest frame left:
// a channel as long as the echoed prefix). Probes run back to back (10 ms apart) from before the
// storm until 1 s after it has settled.
//
// Two probes run side by side: one on a fresh connection each time (it waits its turn in the
// kernel's accept queue, and Node accepts one connection per event-loop turn, so a burst of
// connects ahead of it costs a turn each), and one on a kept-alive connection (the event loop's
// own latency: its request is read in the next turn).
//
// Reported: health p50/p99/max during the storm (and idle, before it), the server's peak RSS, the
// kernel's TCP buffer memory (/proc/net/sockstat, both ends: all of it is on this machine), and
// /metrics' WebSocket counters afterwards (connections, subscriptions, refusals, slow consumers).
//
// Flags: --addresses=N (30) --per-address=N (50) --subs=N (290) --slow=N (100) --slow-frames=N (200)
//        --slow-frame-bytes=N (60000) --limit-connections=N --limit-subscriptions=N
//        --limit-buffered-mib=N (unset: the service's defaults) --url=… --pid=N (a running service)
import { type ChildProcess, fork } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { WebSocket } from "ws"
import { startChildServer } from "../test/support/child-server.ts"
import { mb, numberFlag, percentile, round, type Suite } from "./lib.ts"
import { RawConnection } from "./raw-http.ts"

interface StormConfig {
  readonly wsUrl: string
  readonly channels: ReadonlyArray<string>
  readonly addresses: number
  readonly perAddress: number
  readonly subs: number
  readonly slow: number
  readonly slowFrames: number
  readonly slowFrameBytes: number
}

interface StormReport {
  /** Storm connections that were opened and then answered their closing ping. */
  readonly served: number
  /** Storm connections the server closed (by close code), and connections that failed to open. */
  readonly closedBy: Record<string, number>
  readonly openFailed: number
  readonly subscribedAcks: number
  readonly slowOpened: number
  readonly slowBytesSent: number
  readonly stormMs: number
}

// ---- the storm (a child process) ----

const stormMain = async (cfg: StormConfig): Promise<StormReport> => {
  const t0 = performance.now()
  const closedBy: Record<string, number> = {}
  let served = 0
  let openFailed = 0
  let subscribedAcks = 0
  const open = (localAddress: string): Promise<WebSocket | null> =>
    new Promise((resolve) => {
      const ws = new WebSocket(cfg.wsUrl, { localAddress })
      ws.once("open", () => resolve(ws))
      ws.once("error", () => {
        openFailed++
        resolve(null)
      })
    })
  /** One storm connection: every subscribe frame at once, then a ping; done at its pong or its close. */
  const storm = async (localAddress: string): Promise<void> => {
    const ws = await open(localAddress)
    if (ws === null) return
    await new Promise<void>((done) => {
      ws.on("message", (data) => {
        const text = data.toString()
        if (text.startsWith('{"type":"subscribed"')) subscribedAcks++
        else if (text.startsWith('{"type":"pong"')) {
          served++
          done()
        }
      })
      ws.once("close", (code) => {
        closedBy[code] = (closedBy[code] ?? 0) + 1
        done()
      })
      for (let i = 0; i < cfg.subs; i++) ws.send(`{"type":"subscribe","channel":"${cfg.channels[i % cfg.channels.length]}"}`)
      ws.send('{"type":"ping"}')
    })
  }
  const big = JSON.stringify({ type: "subscribe", channel: "x".repeat(Math.max(1, cfg.slowFrameBytes - 32)) })
  let slowOpened = 0
  let slowBytesSent = 0
  const slowSockets: WebSocket[] = []
  /** A slow reader: reads nothing, sends frames whose replies fill the server's buffers. */
  const slow = async (localAddress: string): Promise<void> => {
    const ws = await open(localAddress)
    if (ws === null) return
    slowOpened++
    slowSockets.push(ws)
    ws.pause()
    ws.on("error", () => {})
    for (let i = 0; i < cfg.slowFrames && ws.readyState === WebSocket.OPEN; i++) {
      ws.send(big)
      slowBytesSent += big.length
      // The client's own buffer: wait while the server has not read what was sent (it reads slower than loopback writes).
      while (ws.bufferedAmount > 1024 * 1024 && ws.readyState === WebSocket.OPEN) await new Promise((r) => setTimeout(r, 5))
    }
    while (ws.bufferedAmount > 0 && ws.readyState === WebSocket.OPEN) await new Promise((r) => setTimeout(r, 5))
  }
  const jobs: Array<Promise<void>> = []
  for (let a = 0; a < cfg.addresses; a++) {
    for (let c = 0; c < cfg.perAddress; c++) jobs.push(storm(`127.0.1.${a + 1}`))
  }
  for (let s = 0; s < cfg.slow; s++) jobs.push(slow(`127.0.2.${(s % 2) + 1}`))
  await Promise.all(jobs)
  const stormMs = performance.now() - t0
  for (const ws of slowSockets) ws.terminate()
  return { served, closedBy, openFailed, subscribedAcks, slowOpened, slowBytesSent, stormMs: Math.round(stormMs) }
}

type StormMessage = { readonly kind: "done"; readonly report: StormReport }

const runStormChild = (cfg: StormConfig): { readonly done: Promise<StormReport>; readonly child: ChildProcess } => {
  const child = fork(fileURLToPath(import.meta.url), ["storm"], { execArgv: ["--max-semi-space-size=64", "--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const done = new Promise<StormReport>((resolve, reject) => {
    child.on("message", (m: StormMessage) => {
      if (m.kind === "done") resolve(m.report)
    })
    child.once("exit", (code) => reject(new Error(`ws-storm: the storm process exited (${code}) before reporting`)))
  })
  child.send(cfg)
  return { done, child }
}

// ---- probes and readings (this process) ----

/** One health probe on a fresh connection: milliseconds to the whole response, and its status. */
const probe = async (port: number, wire: Buffer): Promise<{ ms: number; status: number }> => {
  const t0 = performance.now()
  const conn = await RawConnection.open(port)
  const res = await conn.send(wire)
  conn.close()
  return { ms: performance.now() - t0, status: res.status }
}

/** One health request on a kept-alive connection. */
const timed = async (conn: RawConnection, wire: Buffer): Promise<{ ms: number; status: number }> => {
  const t0 = performance.now()
  const res = await conn.send(wire)
  return { ms: performance.now() - t0, status: res.status }
}

const rssBytes = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return m === null ? 0 : Number(m[1]) * 1024
}

/** Kernel memory in TCP buffers, machine-wide (pages of 4 KiB). */
const tcpBufferBytes = (): number => {
  const m = /TCP:.* mem (\d+)/.exec(readFileSync("/proc/net/sockstat", "utf8"))
  return m === null ? 0 : Number(m[1]) * 4096
}

const metric = (text: string, name: string): number | null => {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
  return line === undefined ? null : Number(line.slice(line.lastIndexOf(" ") + 1))
}

/** `twinbook_ws_limit_closes_total` by its `limit` label (absent before the caps existed). */
const limitCloses = (text: string): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const m of text.matchAll(/^twinbook_ws_limit_closes_total\{limit="([a-z_]+)"\} (\d+)/gm)) out[m[1]!] = Number(m[2])
  return out
}

const sorted = (xs: ReadonlyArray<number>): Float64Array => Float64Array.from(xs).sort()

export const wsStormSuite: Suite = async ({ args, report, log }) => {
  const addresses = numberFlag(args, "addresses", 30)
  const perAddress = numberFlag(args, "per-address", 50)
  const subs = numberFlag(args, "subs", 290)
  const slowReaders = numberFlag(args, "slow", 100)
  const slowFrames = numberFlag(args, "slow-frames", 200)
  const slowFrameBytes = numberFlag(args, "slow-frame-bytes", 60_000)
  const env: Record<string, string> = { METRICS_PUBLIC: "true", LOG_LEVEL: "warn" }
  const limit = (flag: string, variable: string, scale = 1): void => {
    const v = numberFlag(args, flag, Number.NaN)
    if (!Number.isNaN(v)) env[variable] = String(v * scale)
  }
  limit("limit-connections", "LIMIT_WS_CONNECTIONS")
  limit("limit-subscriptions", "LIMIT_WS_SUBSCRIPTIONS_TOTAL")
  limit("limit-buffered-mib", "LIMIT_WS_BUFFERED_MIB")
  const dataDir = mkdtempSync(join(tmpdir(), "twinbook-ws-storm-"))
  // --url=http://host:port --pid=N: a service already running (e.g. under --cpu-prof); its own limits apply.
  const givenUrl = args.find((a) => a.startsWith("--url="))?.slice("--url=".length)
  const server =
    givenUrl === undefined
      ? await startChildServer({ dataDir, env })
      : { url: givenUrl, pid: numberFlag(args, "pid", 0), kill: () => {}, exited: Promise.resolve() }
  try {
    const url = new URL(server.url)
    const port = Number(url.port)
    const markets = (await (await fetch(`${server.url}/v1/markets?limit=500`)).json()) as { markets: Array<{ outcomes: Array<{ market_id: string }> }> }
    const ids = markets.markets.flatMap((e) => e.outcomes.map((o) => o.market_id))
    const channels = ids.flatMap((id) => [`book:${id}`, `trades:${id}`])
    const wire = RawConnection.request("GET", "/v1/health", "")
    const idle: number[] = []
    for (let i = 0; i < 50; i++) idle.push((await probe(port, wire)).ms)
    const rss0 = rssBytes(server.pid)
    const tcp0 = tcpBufferBytes()
    log(`storm: ${addresses} addresses × ${perAddress} connections × ${subs} subscribes; ${slowReaders} slow readers × ${slowFrames} frames of ${slowFrameBytes} bytes`)
    const { done, child } = runStormChild({ wsUrl: `ws://127.0.0.1:${port}/v1/ws`, channels, addresses, perAddress, subs, slow: slowReaders, slowFrames, slowFrameBytes })
    let stormOver = false
    let rssPeak = rss0
    let tcpPeak = tcp0
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssBytes(server.pid))
      tcpPeak = Math.max(tcpPeak, tcpBufferBytes())
    }, 100)
    const during: number[] = []
    const duringKept: number[] = []
    let non200 = 0
    const probing = (fresh: boolean, into: number[]) => async () => {
      const kept = fresh ? null : await RawConnection.open(port)
      let settledAt: number | null = null
      while (settledAt === null || performance.now() - settledAt < 1_000) {
        const p = kept === null ? await probe(port, wire) : await timed(kept, wire)
        into.push(p.ms)
        if (p.status !== 200) non200++
        if (stormOver && settledAt === null) settledAt = performance.now()
        await new Promise((r) => setTimeout(r, 10))
      }
      kept?.close()
    }
    const probes = Promise.all([probing(true, during)(), probing(false, duringKept)()])
    const storm = await done
    stormOver = true
    await probes
    clearInterval(sampler)
    child.kill()
    const text = await (await fetch(`${server.url}/metrics`)).text()
    const d = sorted(during)
    const k = sorted(duringKept)
    const i = sorted(idle)
    report({
      name: "ws_storm.health",
      healthP50Ms: round(percentile(d, 50), 1),
      healthP99Ms: round(percentile(d, 99), 1),
      healthMaxMs: round(d[d.length - 1] ?? Number.NaN, 1),
      probes: d.length,
      keptAliveP50Ms: round(percentile(k, 50), 1),
      keptAliveP99Ms: round(percentile(k, 99), 1),
      keptAliveMaxMs: round(k[k.length - 1] ?? Number.NaN, 1),
      keptAliveProbes: k.length,
      non200,
      idleP50Ms: round(percentile(i, 50), 1),
      idleP99Ms: round(percentile(i, 99), 1),
      stormMs: storm.stormMs,
      rssBeforeMb: mb(rss0),
      rssPeakMb: mb(rssPeak),
      tcpBuffersBeforeMb: mb(tcp0),
      tcpBuffersPeakMb: mb(tcpPeak)
    })
    report({
      name: "ws_storm.caps",
      stormConnections: addresses * perAddress,
      served: storm.served,
      closedBy: JSON.stringify(storm.closedBy),
      openFailed: storm.openFailed,
      subscribedAcks: storm.subscribedAcks,
      slowOpened: storm.slowOpened,
      slowMbSent: mb(storm.slowBytesSent),
      limitCloses: JSON.stringify(limitCloses(text)),
      slowConsumerCloses: metric(text, "twinbook_ws_slow_consumer_closes_total"),
      framesSent: metric(text, "twinbook_ws_frames_sent_total"),
      limits: JSON.stringify(env)
    })
  } finally {
    server.kill("SIGKILL")
    await server.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "storm") {
  process.once("message", (cfg: StormConfig) => {
    void stormMain(cfg).then((r) => {
      process.send!({ kind: "done", report: r } satisfies StormMessage, () => process.exit(0))
    })
  })
}
