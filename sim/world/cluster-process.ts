// One simulated sequencer process of the cluster world (sim/world/cluster-world.ts): every event that
// reaches it — its timers, its Effect fibers' tasks, HTTP requests from the load balancer, answers
// from the replicated log and the lease — passes its gate. A running process takes them at once; a
// paused one (SIGSTOP: the zombie fault) holds them and takes them in order when it resumes, late,
// as a stopped process's timers and sockets do; a dead one (SIGKILL, or the exit after it lost its
// leadership) drops them, so nothing of it ever runs again. Its layers are the single process's
// (sim/world/layers.ts) but for the transport, which serves its apps on the process itself (the load
// balancer calls them through the gate), and the logger, whose lines the world reads.
import { type Clock, Duration, Effect, Layer, Scheduler as EffectScheduler } from "effect"
import type { App } from "../../src/api/app.ts"
import type { HttpRequest, HttpResponse } from "../../src/api/http.ts"
import { type Chain, ChainService } from "../../src/chain/chain.ts"
import type { LogFields, Logger } from "../../src/ops/log.ts"
import type { ServiceContext } from "../../src/runtime/boot.ts"
import type { StoreService } from "../../src/runtime/store.ts"
import { loggerLayer, monoClockLayer, type Served, TransportService, verifierLayer, wallClockLayer } from "../../src/runtime/services.ts"
import { schedulerClock } from "./clock.ts"
import type { ProcessRuntime } from "./process-runtime.ts"
import type { Scheduled, Scheduler } from "./scheduler.ts"
import type { SignatureMemo } from "./signatures.ts"

export class SimProcess {
  private state: "running" | "paused" | "dead" = "running"
  private held: Array<() => void> = []
  /** The apps it serves, by host ("api", "deposit"): what the load balancer reaches. */
  private readonly apps = new Map<string, App>()

  constructor(
    /** Its name on the lease and on every batch it appends (host:pid live): `seq-a.2` is slot a's second process. */
    readonly name: string,
    private readonly scheduler: Scheduler
  ) {}

  get alive(): boolean {
    return this.state !== "dead"
  }

  get paused(): boolean {
    return this.state === "paused"
  }

  /** Runs `f` in the process: now, at its resume, or never. */
  run(f: () => void): void {
    if (this.state === "running") f()
    else if (this.state === "paused") this.held.push(f)
  }

  /** A timer of the process. */
  after(delayMs: number, f: () => void, sync = false): Scheduled {
    return this.scheduler.after(delayMs, () => this.run(f), sync)
  }

  pause(): void {
    if (this.state === "running") this.state = "paused"
  }

  /** Takes what arrived meanwhile, in arrival order, at this instant. */
  resume(): void {
    if (this.state !== "paused") return
    this.state = "running"
    const held = this.held
    this.held = []
    for (let i = 0; i < held.length; i++) {
      if (this.state !== "running") {
        // Paused or killed again by what it just ran: the rest waits (or is dropped) likewise.
        if (this.state === "paused") this.held.unshift(...held.slice(i))
        return
      }
      held[i]!()
    }
  }

  kill(): void {
    this.state = "dead"
    this.held = []
    this.apps.clear()
  }

  serve(host: string, app: App): void {
    this.apps.set(host, app)
  }

  unserve(host: string, app: App): void {
    if (this.apps.get(host) === app) this.apps.delete(host)
  }

  /**
   * An HTTP request to one of its apps: null when refused (dead, or nothing served there: a
   * connection refused), else the answer — which never comes if the process dies first.
   */
  handle(host: string, req: HttpRequest): Promise<HttpResponse> | null {
    const app = this.apps.get(host)
    if (app === undefined || !this.alive) return null
    return new Promise((resolve) => this.run(() => void app(req).then((res) => this.run(() => resolve(res)))))
  }
}

/**
 * The process's Effect runtime (as sim/world/process-runtime.ts for the single process), through its
 * gate. `quiet` (the world's end-of-run quiet) stops its fibers' timers, so the service's
 * workers stop after their pass in flight; the election and the lease keeper wait on the
 * world's own sleep (`processSleep`), which goes on.
 */
export const clusterProcessRuntime = (s: Scheduler, proc: SimProcess, quiet: () => boolean): ProcessRuntime => {
  const clock: Clock.Clock = {
    ...schedulerClock(s),
    sleep: (duration) =>
      Effect.async<void>((resume) => {
        const timer = s.after(Duration.toMillis(duration), () => (quiet() ? undefined : proc.run(() => resume(Effect.void))))
        return Effect.sync(() => timer.cancel())
      })
  }
  // A trampoline, as the single process's: tasks scheduled while one runs wait for it, in order.
  const queue: Array<() => void> = []
  let running = false
  const drain = (): void => {
    if (running) return
    running = true
    try {
      for (;;) {
        if (!proc.alive) {
          queue.length = 0
          break
        }
        if (proc.paused) {
          proc.run(drain)
          break
        }
        const next = queue.shift()
        if (next === undefined) break
        next()
      }
    } finally {
      running = false
    }
  }
  const scheduler = EffectScheduler.make((task) => {
    if (!proc.alive) return
    queue.push(task)
    proc.run(drain)
  })
  return { clock, scheduler }
}

/** The process's wait on virtual time: through its gate, not stopped by the world's quiet. */
export const processSleep =
  (proc: SimProcess) =>
  (ms: number): Promise<void> =>
    new Promise((resolve) => void proc.after(ms, resolve))

/** A line the process logged: its time, who, the message and its fields. */
export interface ProcessLine {
  readonly atMs: number
  readonly holder: string
  readonly level: "info" | "warn" | "error"
  readonly msg: string
  readonly fields: LogFields
}

/** The process's event lines, handed to the world (nothing printed). */
const linesLogger = (holder: string, nowMs: () => number, onLine: (line: ProcessLine) => void): Logger => {
  const line =
    (level: ProcessLine["level"]) =>
    (msg: string, fields: LogFields = {}): void =>
      onLine({ atMs: nowMs(), holder, level, msg, fields })
  return {
    level: "info",
    enabled: (level) => level !== "debug",
    debug: () => {},
    info: line("info"),
    warn: line("warn"),
    error: line("error"),
    droppedLines: () => 0
  }
}

export interface ClusterProcessParts {
  readonly proc: SimProcess
  readonly nowMs: () => number
  readonly monoMs: () => number
  readonly chain: Chain
  readonly signatures: SignatureMemo
  readonly onLine: (line: ProcessLine) => void
}

/**
 * Every layer a sequencer process needs but the store (the role brings the log's): virtual
 * clocks, the inline verifier, its apps served on the process, its lines to the world, the chain.
 */
export const clusterProcessLayers = (p: ClusterProcessParts): Layer.Layer<Exclude<ServiceContext, StoreService> | ChainService> =>
  Layer.mergeAll(
    wallClockLayer(p.nowMs),
    monoClockLayer(p.monoMs),
    verifierLayer(p.signatures.verifier),
    Layer.succeed(TransportService, {
      serve: (o) =>
        Effect.acquireRelease(
          Effect.sync((): Served => {
            p.proc.serve(o.host, o.app)
            return {
              port: o.port,
              url: `http://${o.host}`,
              wsUrl: `ws://${o.host}`,
              listening: true,
              drain: () => Promise.resolve(),
              pending: () => ({ requests: 0, sockets: 0 }),
              close: () => Promise.resolve()
            }
          }),
          () => Effect.sync(() => p.proc.unserve(o.host, o.app))
        ),
      // The hub's frames leave at an event of this instant, through the gate (a paused process sends nothing).
      later: (f) => void p.proc.after(0, f, true)
    }),
    loggerLayer(linesLogger(p.proc.name, p.monoMs, p.onLine)),
    Layer.succeed(ChainService, p.chain)
  )
