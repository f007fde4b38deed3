// Runs a command to completion without blocking the test worker's event loop. spawnSync would:
// a worker blocked for a minute misses vitest's own RPC deadline ("Timeout calling onTaskUpdate")
// and the run fails even though every test passed.
import { spawn } from "node:child_process"

export interface ProcessResult {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runProcess = (
  command: string,
  args: ReadonlyArray<string>,
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }
): Promise<ProcessResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => void (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => void (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000)
    child.once("error", (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.once("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
