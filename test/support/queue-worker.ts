// `npm run sim:worker` as a real child process for the work-queue tests: its stdout lines kept,
// a wait for a line (an event, never a sleep), kill by signal, and the exit awaited.
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"

const ROOT = join(import.meta.dirname, "..", "..")

export interface QueueWorker {
  readonly pid: number
  readonly lines: ReadonlyArray<string>
  /** The first line (so far or to come) matching `re`; rejects if the worker exits first. */
  waitFor(re: RegExp): Promise<string>
  kill(signal: NodeJS.Signals): void
  /** Not exited yet. */
  running(): boolean
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Everything it wrote, for failure messages. */
  output(): string
}

export const childEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "NODE_OPTIONS" && !k.startsWith("VITEST")) env[k] = v
  return env
}

export const startQueueWorker = (servers: string, extra: ReadonlyArray<string> = []): QueueWorker => {
  const child: ChildProcess = spawn(process.execPath, ["--max-semi-space-size=64", "scripts/run-ts.mjs", "sim/worker-cli.ts", servers, ...extra], {
    cwd: ROOT,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"]
  })
  const lines: string[] = []
  let all = ""
  let partial = ""
  const waiters: Array<{ re: RegExp; resolve: (line: string) => void }> = []
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    all += d
    partial += d
    const parts = partial.split("\n")
    partial = parts.pop()!
    for (const line of parts) {
      lines.push(line)
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.re.test(line)) {
          waiters[i]!.resolve(line)
          waiters.splice(i, 1)
        }
      }
    }
  })
  child.stderr!.setEncoding("utf8").on("data", (d: string) => void (all += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))
  return {
    pid: child.pid!,
    lines,
    waitFor: (re) => {
      const seen = lines.find((l) => re.test(l))
      if (seen !== undefined) return Promise.resolve(seen)
      return Promise.race([
        new Promise<string>((resolve) => waiters.push({ re, resolve })),
        exited.then((e) => Promise.reject(new Error(`sim:worker exited (${e.code ?? e.signal}) before a line matching ${re}:\n${all}`)))
      ])
    },
    kill: (signal) => void child.kill(signal),
    running: () => child.exitCode === null && child.signalCode === null,
    exited,
    output: () => all
  }
}
