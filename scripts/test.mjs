// `npm test [-- vitest arguments]`: the type check (both projects) and the test files at once, not
// one after the other (issue 35 item 6): the type check is ~35 s of one core, and the suite's first
// files wait on NATS, a browser and chains more than they compute. The type check's output comes
// after the suite's, under its own heading; the exit code is non-zero when either failed.
import { spawn } from "node:child_process"
import { setPriority } from "node:os"
import { join } from "node:path"

const ROOT = join(import.meta.dirname, "..")
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc")

/** Runs a command (niced by `nice`); resolves with its exit code and, when `capture`, its output. */
const run = (args, capture, nice = 0) =>
  new Promise((resolve) => {
    const startedMs = performance.now()
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit" })
    // The type check takes what the suite leaves idle, not the CPU its NATS nodes and chains wait for.
    if (nice > 0 && child.pid !== undefined) setPriority(child.pid, nice)
    let output = ""
    child.stdout?.on("data", (d) => (output += d))
    child.stderr?.on("data", (d) => (output += d))
    child.on("close", (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), output, secs: (performance.now() - startedMs) / 1000 }))
  })

const typecheck = Promise.all([run([TSC, "--noEmit"], true, 10), run([TSC, "--noEmit", "-p", "web"], true, 10)])
const suite = await run([join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", ...process.argv.slice(2)], false)
const checks = await typecheck
const failed = checks.filter((c) => c.code !== 0)
process.stdout.write(`\ntypecheck (tsc --noEmit; tsc --noEmit -p web): ${failed.length === 0 ? "ok" : "FAILED"} in ${Math.max(...checks.map((c) => c.secs)).toFixed(0)} s\n`)
for (const c of failed) process.stdout.write(c.output)
process.exitCode = suite.code !== 0 ? suite.code : failed.length > 0 ? 1 : 0
