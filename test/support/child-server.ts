// The real service as a child process (`node scripts/run-ts.mjs src/main.ts`, as `npm start`) on the
// system clock, for tests that must kill it: PORT=0, the bound URL read from
// its start-up lines (never a fixed sleep), stdout and stderr kept for failure
// messages. Plus a fetch-like transport over node:http that can bind a chosen
// loopback source address (so per-IP rate limits see many clients) and follows
// the server across restarts.
import { type ChildProcess, spawn } from "node:child_process"
import { Agent, request } from "node:http"
import { join } from "node:path"
import type { FetchLike } from "../../src/client/api-client.ts"

const ROOT = join(import.meta.dirname, "..", "..")

export interface ChildServer {
  readonly pid: number
  readonly url: string
  /** Every stdout line so far (the start-up report included). */
  readonly lines: ReadonlyArray<string>
  /** The child's stderr so far. */
  stderr(): string
  /** Resolves when the process has exited, however. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  kill(signal: NodeJS.Signals): void
}

export interface ChildServerOptions {
  readonly dataDir: string
  readonly env?: Record<string, string>
  /**
   * Gives up (and kills the child) if it has not printed its URL by then (default 120 s): a hang
   * detector, not a speed check — a start took over 30 s beside two CPU hogs and other suites.
   */
  readonly startTimeoutMs?: number
  /** Its own process group, so a test can signal the group as a terminal's Ctrl-C does. */
  readonly detached?: boolean
}

const URL_LINE = /^twinbook API\s+(http:\/\/\S+?)\/v1\/markets/

export const startChildServer = (opts: ChildServerOptions): Promise<ChildServer> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "NODE_OPTIONS" && !k.startsWith("VITEST")) env[k] = v
  // CHAIN=off: a SIGKILLed child would orphan its embedded Anvil; these tests need no chain.
  Object.assign(env, { PORT: "0", HOST: "127.0.0.1", DATA_DIR: opts.dataDir, NODE_ENV: "test", CHAIN: "off", WEB: "false" }, opts.env ?? {})
  const child: ChildProcess = spawn(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "src/main.ts"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: opts.detached ?? false
  })
  const lines: string[] = []
  let err = ""
  let partial = ""
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  return new Promise<ChildServer>((resolve, reject) => {
    let settled = false
    const fail = (why: string): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.kill("SIGKILL")
      reject(new Error(`${why}\n--- stdout\n${lines.join("\n")}\n--- stderr\n${err}`))
    }
    const startTimeoutMs = opts.startTimeoutMs ?? 120_000
    const timer = setTimeout(() => fail(`server did not start within ${startTimeoutMs} ms`), startTimeoutMs)
    child.stderr!.setEncoding("utf8").on("data", (d: string) => void (err += d))
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      partial += d
      const parts = partial.split("\n")
      partial = parts.pop()!
      for (const line of parts) {
        lines.push(line)
        const m = URL_LINE.exec(line)
        if (m !== null && !settled) {
          settled = true
          clearTimeout(timer)
          resolve({
            pid: child.pid!,
            url: m[1]!,
            lines,
            stderr: () => err,
            exited,
            kill: (signal) => void child.kill(signal)
          })
        }
      }
    })
    child.once("error", (e) => fail(`spawn failed: ${String(e)}`))
    void exited.then(({ code, signal }) => fail(`server exited before it was ready (code ${code}, signal ${signal})`))
  })
}

/**
 * A FetchLike over node:http from `localAddress`, with its own keep-alive pool.
 * Request URLs name the placeholder origin `http://server`; each request goes to
 * `target()` at the time it is sent, so clients survive a restart on a new port.
 */
export const loopbackTransport = (localAddress: string, target: () => string): FetchLike & { reset(): void; close(): void } => {
  let agent = new Agent({ keepAlive: true, maxSockets: 4 })
  const fetchLike = ((url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) => {
    const real = new URL(url.replace(/^http:\/\/server/, target()))
    const body = init.body ?? ""
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: real.hostname,
          port: real.port,
          path: `${real.pathname}${real.search}`,
          method: init.method ?? "GET",
          localAddress,
          agent,
          headers: { ...(init.headers ?? {}), ...(body === "" ? {} : { "content-length": String(Buffer.byteLength(body)) }) }
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("error", reject)
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            resolve({
              status: res.statusCode ?? 0,
              headers: { get: (name: string) => { const v = res.headers[name.toLowerCase()]; return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v } },
              json: () => Promise.resolve(JSON.parse(text)),
              text: () => Promise.resolve(text)
            })
          })
        }
      )
      req.on("error", reject)
      req.end(body)
    })
  }) as FetchLike & { reset(): void; close(): void }
  /** Drops pooled connections (to a server that is gone). */
  fetchLike.reset = () => {
    agent.destroy()
    agent = new Agent({ keepAlive: true, maxSockets: 4 })
  }
  fetchLike.close = () => agent.destroy()
  return fetchLike
}
