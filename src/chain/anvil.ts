// An embedded Anvil: the pinned binary from @foundry-rs/anvil's platform package, started
// directly (the node wrapper in node_modules/.bin would outlive a kill aimed at it) on a loopback
// port, with the deposit chain's id, mining one block per transaction. Stopped by PID.
// It never outlives this process: a watchdog (`sh`, reading a pipe only this process holds)
// stops it when the pipe closes — which the kernel does however this process ends, SIGKILL
// included. With a PID file, a start first clears an Anvil a dead service left behind.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { DEPOSIT_CHAIN_ID } from "./chain.ts"

/** Anvil's well-known development accounts (mnemonic "test test … junk"). Development only. */
export const ANVIL_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a"
] as const

export interface AnvilOptions {
  /** Port to listen on; a free loopback port when absent. */
  readonly port?: number
  readonly chainId?: number
  /** Extra command-line arguments. */
  readonly args?: ReadonlyArray<string>
  /** How long to wait for the first JSON-RPC answer. Default 15 s. */
  readonly startTimeoutMs?: number
  /**
   * Records `{ anvil_pid, service_pid, port }` here once started (removed on stop). A start finding
   * the file kills the Anvil it names when that Anvil's service is gone, and refuses to start
   * while the service is alive (two services on one chain state).
   */
  readonly pidFile?: string
  /** The line printed when a stale Anvil is cleared; stderr when absent. */
  readonly log?: (line: string) => void
}

export interface Anvil {
  readonly rpcUrl: string
  readonly port: number
  readonly pid: number
  /** Kills the process by PID and resolves once it has exited. Idempotent. */
  stop(): Promise<void>
}

/** Path of the anvil binary: ANVIL_BIN, else the @foundry-rs/anvil-<os>-<arch> package's. */
export const anvilBinary = (): string => {
  const fromEnv = process.env["ANVIL_BIN"]
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  const arch = process.arch === "x64" ? "amd64" : process.arch
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`
  let dir: string
  try {
    dir = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`))
  } catch {
    throw new Error(`anvil: package ${pkg} is not installed (run npm install, or set ANVIL_BIN)`)
  }
  const bin = join(dir, "bin", process.platform === "win32" ? "anvil.exe" : "anvil")
  if (!existsSync(bin)) throw new Error(`anvil: ${bin} is missing`)
  return bin
}

/** A port the OS reports free on 127.0.0.1 (it could be taken again before use: startAnvil retries). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))))
    })
  })

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves true when `p` settles within `ms`, false otherwise; the timer never outlives it. */
const settlesWithin = async (p: Promise<unknown>, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined
  const result = await Promise.race([
    p.then(
      () => true,
      () => true
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms)
    })
  ])
  clearTimeout(timer)
  return result
}

/** One eth_chainId call; the chain id, or null while nothing answers. */
const chainIdAt = async (rpcUrl: string): Promise<number | null> => {
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1_000)
    })
    if (!res.ok) return null
    const body = (await res.json()) as { result?: unknown }
    return typeof body.result === "string" ? Number.parseInt(body.result, 16) : null
  } catch {
    return null
  }
}

const POLL_MS = 20

const waitExit = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()))

let starts = 0

// One piece: one start attempt in its order (spawn, wait for the config file, probe, watchdog), sharing the child process.
const startOnce = async (bin: string, port: number, chainId: number, options: AnvilOptions): Promise<Anvil | { failed: string; portInUse: boolean }> => {
  // Anvil writes --config-out only once it has bound its port, so the file's appearance proves
  // that the JSON-RPC answers come from this process and not from another one on the same port.
  const configOut = join(tmpdir(), `twinbook-anvil-${process.pid}-${port}-${starts++}.json`)
  rmSync(configOut, { force: true })
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId), "--quiet", "--config-out", configOut, ...(options.args ?? [])]
  // Its own process group: a Ctrl-C (SIGINT to the terminal's foreground group) reaches the service
  // alone, which saves the chain's state and then stops Anvil; the watchdog covers the service dying.
  const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"], detached: true })
  let stderr = ""
  child.stderr?.setEncoding("utf8")
  child.stderr?.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000)
  })
  // "close" comes after "exit" once stderr is drained: failure messages are complete by then.
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()))
  let spawnError: Error | null = null
  child.once("error", (err) => {
    spawnError = err
  })
  const watchdog = child.pid === undefined ? null : startWatchdog(child.pid)
  // Never leave an anvil behind when this process exits without stopping it.
  const onExit = (): void => {
    watchdog?.kill("SIGKILL")
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  process.once("exit", onExit)

  const rpcUrl = `http://127.0.0.1:${port}`
  const attempts = Math.ceil((options.startTimeoutMs ?? 15_000) / POLL_MS)
  for (let i = 0; i < attempts; i++) {
    if (spawnError !== null || child.exitCode !== null || child.signalCode !== null) break
    const id = existsSync(configOut) ? await chainIdAt(rpcUrl) : null
    if (id !== null) {
      rmSync(configOut, { force: true })
      if (id !== chainId) {
        watchdog?.kill("SIGKILL")
        child.kill("SIGKILL")
        await waitExit(child)
        process.removeListener("exit", onExit)
        return { failed: `anvil on port ${port} answers with chain id ${id}`, portInUse: false }
      }
      const pid = child.pid
      if (pid === undefined) break
      let stopping: Promise<void> | null = null
      const stop = (): Promise<void> => {
        stopping ??= (async () => {
          process.removeListener("exit", onExit)
          // The watchdog goes first: it must never signal a PID that Anvil no longer holds.
          watchdog?.kill("SIGKILL")
          if (options.pidFile !== undefined) rmSync(options.pidFile, { force: true })
          if (child.exitCode !== null || child.signalCode !== null) return
          const exited = waitExit(child)
          try {
            process.kill(pid, "SIGTERM")
          } catch {
            return // already gone
          }
          if (!(await settlesWithin(exited, 5_000))) {
            try {
              process.kill(pid, "SIGKILL")
            } catch {
              // gone meanwhile
            }
            await exited
          }
        })()
        return stopping
      }
      if (options.pidFile !== undefined) {
        writeFileSync(options.pidFile, `${JSON.stringify({ anvil_pid: pid, service_pid: process.pid, port })}\n`)
      }
      return { rpcUrl, port, pid, stop }
    }
    await sleep(POLL_MS)
  }
  process.removeListener("exit", onExit)
  watchdog?.kill("SIGKILL")
  rmSync(configOut, { force: true })
  if (child.exitCode === null && child.signalCode === null && spawnError === null) {
    child.kill("SIGKILL")
    await waitExit(child)
    return { failed: `no JSON-RPC answer on ${rpcUrl} within ${options.startTimeoutMs ?? 15_000} ms; stderr: ${stderr.trim()}`, portInUse: false }
  }
  await settlesWithin(closed, 1_000)
  if (spawnError !== null) return { failed: `cannot run ${bin}: ${(spawnError as Error).message}`, portInUse: false }
  return { failed: `exited with code ${child.exitCode ?? child.signalCode}: ${stderr.trim()}`, portInUse: /address.*in use|os error 98/i.test(stderr) }
}

/**
 * Spawns Anvil on 127.0.0.1 (chain id 4663, automine) and resolves once it answers JSON-RPC.
 * Without an explicit port it picks a free one, retrying on a lost race for it.
 */
export const startAnvil = async (options: AnvilOptions = {}): Promise<Anvil> => {
  const bin = anvilBinary()
  if (options.pidFile !== undefined) {
    mkdirSync(dirname(options.pidFile), { recursive: true })
    await clearStaleAnvil(options.pidFile, options.log ?? ((line) => console.error(line)))
  }
  const chainId = options.chainId ?? DEPOSIT_CHAIN_ID
  let lastFailure = ""
  for (let attempt = 0; attempt < (options.port === undefined ? 5 : 1); attempt++) {
    const port = options.port ?? (await freePort())
    const result = await startOnce(bin, port, chainId, options)
    if ("rpcUrl" in result) return result
    lastFailure = result.portInUse && options.port !== undefined ? `port ${port} on 127.0.0.1 is already in use by another process` : result.failed
    if (!result.portInUse) break
  }
  throw new Error(`anvil failed to start: ${lastFailure}`)
}

/** True while a process with this PID exists (signal 0 probes without signalling). */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Stops Anvil `pid` when this process's end closes the watchdog's stdin (every process end does,
 * SIGKILL included: the kernel closes our end of the pipe). SIGTERM, then SIGKILL after 3 s. It
 * is killed first on a normal stop, so it never signals a PID Anvil no longer holds.
 */
const startWatchdog = (pid: number): ChildProcess | null => {
  if (process.platform === "win32") return null
  const script = 'read -r _; kill -TERM "$1" 2>/dev/null; i=0; while [ $i -lt 30 ] && kill -0 "$1" 2>/dev/null; do sleep 0.1; i=$((i+1)); done; kill -KILL "$1" 2>/dev/null'
  const watchdog = spawn("/bin/sh", ["-c", script, "twinbook-anvil-watchdog", String(pid)], { stdio: ["pipe", "ignore", "ignore"], detached: true })
  watchdog.on("error", () => {}) // no sh: the exit hook alone stops Anvil, as before
  watchdog.stdin?.on("error", () => {})
  // Neither the watchdog nor its pipe keeps this process alive.
  watchdog.unref()
  ;(watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return watchdog
}

/** The command line of a live process, or null (gone, a zombie, or no /proc). */
const commandLine = (pid: number): string[] | null => {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").charAt(0)
    if (state === "Z") return null
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
  } catch {
    return null
  }
}

/**
 * Before an embedded Anvil starts on a state file: an Anvil recorded in `pidFile` by a service
 * that is gone (SIGKILLed before the watchdog existed, or the watchdog killed with it) is stopped;
 * one whose service still runs is a second service on the same chain state, refused.
 */
export const clearStaleAnvil = async (pidFile: string, log: (line: string) => void): Promise<void> => {
  if (!existsSync(pidFile)) return
  let recorded: { anvil_pid?: unknown; service_pid?: unknown }
  try {
    recorded = JSON.parse(readFileSync(pidFile, "utf8")) as typeof recorded
  } catch {
    rmSync(pidFile, { force: true })
    return
  }
  const anvilPid = typeof recorded.anvil_pid === "number" ? recorded.anvil_pid : null
  const servicePid = typeof recorded.service_pid === "number" ? recorded.service_pid : null
  const cmd = anvilPid === null ? null : commandLine(anvilPid)
  const isAnvil = cmd !== null && /anvil(\.exe)?$/.test(cmd[0] ?? "")
  if (anvilPid !== null && isAnvil) {
    if (servicePid !== null && servicePid !== process.pid && processAlive(servicePid)) {
      throw new Error(`the embedded chain (${pidFile}) is in use by Anvil pid ${anvilPid} of a running service (pid ${servicePid}); stop that service first`)
    }
    log(`embedded chain: stopping Anvil pid ${anvilPid} left running by a service that is gone (pid ${servicePid ?? "unknown"})`)
    try {
      process.kill(anvilPid, "SIGTERM")
    } catch {
      // gone meanwhile
    }
    for (let i = 0; i < 250 && commandLine(anvilPid) !== null; i++) await sleep(POLL_MS)
    if (commandLine(anvilPid) !== null) {
      try {
        process.kill(anvilPid, "SIGKILL")
      } catch {
        // gone meanwhile
      }
      for (let i = 0; i < 250 && commandLine(anvilPid) !== null; i++) await sleep(POLL_MS)
    }
  }
  rmSync(pidFile, { force: true })
}
