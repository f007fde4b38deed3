// twinbook's cluster roles as real processes (`ROLE=sequencer|gateway node scripts/run-ts.mjs src/main.ts`)
// on a real NATS cluster (./nats-cluster.ts), for the failover tests (docs/cluster.md). Each
// process keeps its stdout lines and its JSON log lines; tests wait for a line, never for time.
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import type { ReplicatedLog, LogBatch } from "../../src/cluster/ports.ts"
import { freePort } from "./free-port.ts"

const ROOT = join(import.meta.dirname, "..", "..")

export interface RoleProcess {
  readonly name: string
  readonly role: "sequencer" | "gateway"
  readonly port: number
  readonly url: string
  readonly child: ChildProcess
  readonly stdout: string[]
  /** Parsed JSON log lines (stderr), in order; non-JSON stderr text is kept in `stderrText`. */
  readonly logs: Array<Record<string, unknown>>
  stderrText: string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Resolves with the first log line (now or later) that `pred` accepts. */
  waitLog(what: string, pred: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>
  /** Resolves with the first stdout line (now or later) that `pred` accepts. */
  waitOut(what: string, pred: (line: string) => boolean, timeoutMs?: number): Promise<string>
  signal(sig: NodeJS.Signals): void
}

export interface ClusterEnv {
  readonly natsUrl: string
  readonly adminToken: string
  readonly sessionSecret: string
  readonly replicas: number
  readonly leaseTtlMs: number
}

export const clusterEnv = (natsUrl: string, replicas = 3, leaseTtlMs = 2_000): ClusterEnv => ({
  natsUrl,
  adminToken: `admin-${randomBytes(8).toString("hex")}`,
  sessionSecret: randomBytes(32).toString("hex"),
  replicas,
  leaseTtlMs
})

/** Starts one role; resolves once it is spawned (wait for its lines yourself). */
export const spawnRole = async (role: "sequencer" | "gateway", name: string, c: ClusterEnv, extra: Record<string, string> = {}): Promise<RoleProcess> => {
  const port = await freePort()
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "NODE_OPTIONS" && !k.startsWith("VITEST")) env[k] = v
  Object.assign(env, {
    ROLE: role,
    NODE_NAME: name,
    PORT: String(port),
    HOST: "127.0.0.1",
    NATS_URL: c.natsUrl,
    NATS_REPLICAS: String(c.replicas),
    LEASE_TTL_MS: String(c.leaseTtlMs),
    ADMIN_TOKEN: c.adminToken,
    SESSION_SECRET: c.sessionSecret,
    LOG_FORMAT: "json",
    VERIFY_WORKERS: "0",
    NODE_ENV: "test",
    ...extra
  })
  const child = spawn(process.execPath, ["scripts/run-ts.mjs", "src/main.ts"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] })
  const stdout: string[] = []
  const logs: Array<Record<string, unknown>> = []
  const waiters: Array<() => void> = []
  const wake = (): void => {
    for (const w of waiters.splice(0)) w()
  }
  // 'close', not 'exit': the process may exit before its last lines are read from the pipes.
  let closed = false
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => {
      closed = true
      resolve({ code, signal })
    })
  )
  void exited.then(wake)
  const p: RoleProcess = {
    name,
    role,
    port,
    url: `http://127.0.0.1:${port}`,
    child,
    stdout,
    logs,
    stderrText: "",
    exited,
    signal: (sig) => void child.kill(sig),
    waitLog: (what, pred, timeoutMs = 120_000) => waitFor(`${name}: ${what}`, () => logs.find(pred) ?? null, timeoutMs),
    waitOut: (what, pred, timeoutMs = 120_000) => waitFor(`${name}: ${what}`, () => stdout.find(pred) ?? null, timeoutMs)
  }
  // Whole lines only: a line still being written arrives in pieces.
  let outPart = ""
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    const parts = (outPart + d).split("\n")
    outPart = parts.pop()!
    stdout.push(...parts)
    wake()
  })
  let errPart = ""
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    const parts = (errPart + d).split("\n")
    errPart = parts.pop()!
    for (const line of parts) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>)
      } catch {
        p.stderrText += `${line}\n`
      }
    }
    wake()
  })
  const waitFor = <A>(what: string, probe: () => A | null, timeoutMs: number): Promise<A> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}\n--- stdout\n${stdout.join("\n")}\n--- logs\n${logs.map((l) => JSON.stringify(l)).join("\n")}\n--- stderr\n${p.stderrText}`)), timeoutMs)
      const check = (): void => {
        const v = probe()
        if (v !== null) {
          clearTimeout(timer)
          resolve(v)
        } else if (closed) {
          // Exited: nothing more will come (unless the line is already there, checked above).
          clearTimeout(timer)
          reject(new Error(`${what}: the process exited (${child.exitCode ?? child.signalCode})\n--- stdout\n${stdout.join("\n")}\n--- last logs\n${logs.slice(-12).map((l) => JSON.stringify(l)).join("\n")}\n--- stderr\n${p.stderrText}`))
        } else waiters.push(check)
      }
      check()
    })
  return p
}

export const stopRole = async (p: RoleProcess, sig: NodeJS.Signals = "SIGKILL"): Promise<void> => {
  if (p.child.exitCode === null && p.child.signalCode === null) {
    if (sig !== "SIGKILL") p.child.kill("SIGCONT")
    p.child.kill(sig)
  }
  await p.exited
}

/** Every batch of the log from position 1 to its end, in order. */
export const readWholeLog = async (log: ReplicatedLog): Promise<LogBatch[]> => {
  const last = await log.lastPosition()
  const batches: LogBatch[] = []
  if (last === 0) return batches
  await new Promise<void>((resolve, reject) => {
    const reader = log.follow(
      1,
      (position, batch) => {
        batches.push(batch)
        if (position === last) void reader.stop().then(resolve, resolve)
      },
      reject
    )
  })
  return batches
}

/** A fresh exchange that applied every record of `batches` (a full replay of the log). */
export const replay = (batches: ReadonlyArray<LogBatch>): Exchange => {
  const x = new Exchange(() => 0, memoryJournal())
  for (const b of batches) for (const r of b.records) x.apply(r)
  return x
}

/** term → the holders that wrote batches in it (one each, when fencing holds). */
export const holdersByTerm = (batches: ReadonlyArray<LogBatch>): Array<[number, string[]]> => {
  const m = new Map<number, Set<string>>()
  for (const b of batches) m.set(b.term, (m.get(b.term) ?? new Set()).add(b.holder))
  return [...m].map(([t, h]) => [t, [...h]])
}
