// Logging never takes the service down (issue 31): the real process (`src/main.ts`) whose stderr
// cannot take its lines — a log file at a file-size limit (`ulimit -f`, no trap: the service
// itself must keep SIGXFSZ from killing it), and a pipe whose reader went away (EPIPE) — keeps
// answering, counts the lines it dropped in `twinbook_log_lines_dropped_total`, and stops cleanly.
// Before the fix the first failed write was an unheard 'error' event: exit 1, without a word.
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")
const LIMIT_KIB = 4096
const dirs: string[] = []
const children: ChildProcess[] = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const envFor = (dataDir: string): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "NODE_OPTIONS" && !k.startsWith("VITEST")) env[k] = v
  return Object.assign(env, { PORT: "0", WEB: "false", HOST: "127.0.0.1", DATA_DIR: dataDir, NODE_ENV: "test", CHAIN: "off", LOG_LEVEL: "debug", LOG_FORMAT: "json", METRICS_PUBLIC: "true", VERIFY_WORKERS: "0" })
}

/** Starts `src/main.ts` (through bash, so a `ulimit` can come first) and resolves with its API URL. */
const start = (
  dataDir: string,
  stderr: "pipe" | number,
  prefix = ""
): Promise<{ url: string; child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }> => {
  const child = spawn("bash", ["-c", `${prefix}exec "${process.execPath}" scripts/run-ts.mjs src/main.ts`], { cwd: ROOT, env: envFor(dataDir), stdio: ["ignore", "pipe", stderr] })
  children.push(child)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))
  let out = ""
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d
      const m = /twinbook API\s+(http:\/\/\S+?)\/v1\/markets/.exec(out)
      if (m !== null) resolve({ url: m[1]!, child, exited })
    })
    void exited.then(({ code, signal }) => reject(new Error(`server exited before it was ready (code ${code}, signal ${signal})\n${out}`)))
  })
}

const droppedLines = async (url: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text()
  const m = /^twinbook_log_lines_dropped_total (\d+)$/m.exec(text)
  if (m === null) throw new Error("no twinbook_log_lines_dropped_total in /metrics")
  return Number(m[1])
}

/** Requests that each write a debug line, until the service says it dropped some; it answers every one. */
const logUntilDropped = async (url: string): Promise<number> => {
  for (let round = 0; round < 200; round++) {
    const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(`${url}/v1/health`).then((r) => r.status)))
    expect(answers.every((s) => s === 200)).toBe(true)
    const dropped = await droppedLines(url)
    if (dropped > 0) return dropped
  }
  throw new Error("no log line was ever dropped")
}

describe("a log that cannot be written", () => {
  it("at a file-size limit: the service keeps answering, counts the dropped lines and stops cleanly", async () => {
    const dir = mkdtempSync(join(tmpdir(), "twinbook-log-limit-"))
    dirs.push(dir)
    // The log file starts a few KiB short of the limit: the service's own files stay far below it.
    const logPath = join(dir, "stderr.log")
    writeFileSync(logPath, Buffer.alloc(LIMIT_KIB * 1024 - 4096, 0x20))
    const fd = openSync(logPath, "a")
    try {
      const s = await start(join(dir, "data"), fd, `ulimit -f ${LIMIT_KIB}; `)
      const dropped = await logUntilDropped(s.url)
      expect(dropped).toBeGreaterThan(0)
      expect(statSync(logPath).size).toBe(LIMIT_KIB * 1024)
      // Still serving, and still counting.
      expect((await fetch(`${s.url}/v1/health`)).status).toBe(200)
      expect(await droppedLines(s.url)).toBeGreaterThanOrEqual(dropped)
      s.child.kill("SIGTERM")
      expect(await s.exited).toEqual({ code: 0, signal: null })
    } finally {
      closeSync(fd)
    }
  }, 180_000)

  it("to a pipe whose reader went away (EPIPE): the same", async () => {
    const dir = mkdtempSync(join(tmpdir(), "twinbook-log-pipe-"))
    dirs.push(dir)
    const s = await start(join(dir, "data"), "pipe")
    s.child.stderr!.destroy()
    expect(await logUntilDropped(s.url)).toBeGreaterThan(0)
    s.child.kill("SIGTERM")
    expect(await s.exited).toEqual({ code: 0, signal: null })
  }, 180_000)
})
