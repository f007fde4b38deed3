// The simulated world: the real service core (exchange, feed hub, HTTP apps,
// deposit watcher, payout worker) with its layers swapped — the scheduler's
// virtual clock, the in-process network, simulated sockets, the in-memory chain
// and an in-memory journal. A crash throws the process away and boots a new one
// from the journal, exactly as a restart would. With `storage` (a scenario's storage
// faults) the journal is the real one on a simulated disk (sim/world/storage-world.ts): each
// boot recovers through the real recovery path, and a storage error fail-stops the
// process, which the supervisor restarts. With `cluster` (a scenario's sequencer pair) two
// processes run the real sequencer role on a simulated replicated log and lease, behind a load
// balancer (sim/world/cluster-world.ts); the world's exchange and service are the current leader's.
import { type Clock, Effect, Layer, Scope } from "effect"
import type { AppConfig } from "../../src/api/context.ts"
import { SimChain } from "../../src/chain/sim.ts"
import type { PayoutWorker } from "../../src/chain/payouts.ts"
import type { DepositWatcher } from "../../src/chain/watcher.ts"
import { type ChainGuard, memoryCheckpointStore } from "../../src/chain/guard.ts"
import { makeService, type RunningService, type ServiceConfig } from "../../src/runtime/boot.ts"
import type { OpenedStore } from "../../src/runtime/store.ts"
import type { DurableExchange } from "../../src/store/durable.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { Exchange, type JournalSink } from "../../src/service/exchange.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { storageFailureLine } from "../../src/store/storage.ts"
import { schedulerClock } from "./clock.ts"
import { runInSim } from "./effect-scheduler.ts"
import { simProcessLayers } from "./layers.ts"
import { SignatureMemo, type SigningMode } from "./signatures.ts"
import { processRuntime } from "./process-runtime.ts"
import { DEFAULT_NETWORK, type NetworkParams, SimNetwork } from "./network.ts"
import { Rng } from "./random.ts"
import { type Scheduled, Scheduler } from "./scheduler.ts"
import { SimWs, type SimWsHandlers } from "./sockets.ts"
import { DiskHost, SIM_DATA_DIR, type StorageOptions } from "./storage-world.ts"
import { ClusterHost, type ClusterOptions } from "./cluster-world.ts"
import type { App } from "../../src/api/app.ts"

export const ADMIN_TOKEN = "sim-admin-token"
export const API = "http://api"
export const DEPOSIT = "http://deposit"

export interface WorldOptions {
  readonly seed: string
  readonly startSec: number
  readonly network?: NetworkParams
  readonly blockTimeSec?: number
  readonly confirmations?: number
  readonly pollSec?: number
  /** Test-only: wraps each booted exchange (e.g. a planted bug the auditor must catch). */
  readonly tamper?: (exchange: Exchange) => void
  readonly onError?: (err: unknown) => void
  /** Enables the operator credit route (model tests fund users without the chain). */
  readonly devCredit?: boolean
  /** The real journal and snapshots on a simulated disk with these faults (else an in-memory journal). */
  readonly storage?: StorageOptions
  /** How the agents sign their orders (sim/world/signatures.ts): world tokens (default) or Ed25519; the same journal either way. */
  readonly signing?: SigningMode
  /** The sequencer pair on a simulated replicated log and lease, with failover faults (else one process). */
  readonly cluster?: ClusterOptions
}

/** A process's journal view: once the process has crashed it can write nothing more. */
const processJournal = (records: JournalRecord[], alive: () => boolean): JournalSink => ({
  append: (record) => {
    if (!alive()) return Promise.reject(new Error("process crashed"))
    records.push(record)
    return Promise.resolve()
  }
})

export class World {
  readonly scheduler: Scheduler
  readonly rng: Rng
  readonly chain: SimChain
  readonly network: SimNetwork
  /** The journal: survives crashes. */
  readonly records: JournalRecord[] = []
  /** The chain guard's checkpoint: durable like DATA_DIR, so it survives crashes too. */
  readonly chainCheckpoint = memoryCheckpointStore()
  /** The current process's chain guard. */
  guard!: ChainGuard
  readonly config: AppConfig
  exchange!: Exchange
  /** The current process's service (its hub, routes, LP runner and chain side). */
  core!: RunningService
  watcher!: DepositWatcher
  payouts!: PayoutWorker
  /** Bumped by every boot; 0 before the first. */
  boots = 0
  crashes = 0
  down = false
  readonly errors: unknown[] = []
  /** The agents' order signatures (sim/world/signatures.ts) and the process's verifier for them. */
  readonly signatures: SignatureMemo
  private readonly sockets = new Set<SimWs>()
  private readonly bootListeners: Array<(x: Exchange) => void> = []
  private readonly secret: Uint8Array
  private readonly background: Scheduled[] = []
  /** Set by `quiesce`: no worker's timer fires any more. */
  private quiet = false
  private readonly pollMs: number
  readonly confirmations: number
  /** The simulated disk and the process's durable state, when the scenario asks for storage faults. */
  readonly host: DiskHost | null
  /** The sequencer pair, when the scenario has a `cluster` block. */
  readonly cluster: ClusterHost | null
  /** Resolves once the first process is up (at once without `storage`; its recovery is async). */
  readonly ready: Promise<void>
  /** Told of each recovery after a storage fail-stop (fault-injected crashes pass their own callback). */
  private readonly recoveryListeners: Array<(before: string, after: string) => void> = []
  /** The start-up and fail-stop lines the processes printed (recovery reports, storage failures). */
  readonly serviceLog: string[] = []

  constructor(readonly options: WorldOptions) {
    this.signatures = new SignatureMemo(options.signing ?? "token")
    this.rng = new Rng(options.seed)
    this.scheduler = new Scheduler(options.startSec * 1000)
    this.clock = schedulerClock(this.scheduler)
    const nowSec = (): number => this.scheduler.nowSec()
    this.chain = new SimChain({ seed: `${options.seed}/chain`, now: nowSec, genesisTimeSec: options.startSec })
    this.network = new SimNetwork(this.scheduler, this.rng.fork("network"), options.network ?? DEFAULT_NETWORK)
    this.secret = this.rng.bytes32("session-secret")
    this.confirmations = options.confirmations ?? 2
    this.config = {
      adminToken: ADMIN_TOKEN,
      corsOrigins: new Set(),
      secureCookies: false,
      devCredit: options.devCredit ?? false,
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
    }
    this.host = options.storage === undefined ? null : new DiskHost(this.rng.fork("disk"), this.scheduler, options.storage)
    this.pollMs = (options.pollSec ?? 2) * 1000
    // Blocks first: at an instant where a block and a chain pass meet, the pass sees the block (as the timers were armed before).
    const blockMs = (options.blockTimeSec ?? 2) * 1000
    this.background.push(this.scheduler.every(blockMs, () => void this.chain.mine(1), undefined, true))
    this.cluster = options.cluster === undefined ? null : new ClusterHost(this, options.cluster, (onError) => this.serviceConfig(onError))
    if (this.cluster !== null) {
      this.down = true
      this.ready = this.cluster.start()
    } else if (this.host === null) {
      this.boot()
      this.ready = Promise.resolve()
    } else this.ready = this.bootFromDisk()
  }

  /** The service reads time from this Clock, as `npm start` reads the live one. */
  readonly clock: Clock.Clock
  nowMs = (): number => this.clock.unsafeCurrentTimeMillis()
  /** The service's monotonic clock: virtual time, which wall-clock steps do not move (sim/world/clock.ts). */
  monoMs = (): number => this.scheduler.nowMs()

  /** Runs an Effect inside the world: on the scheduler's virtual time and its own Effect Scheduler, so no real timer fires (sim/world/effect-scheduler.ts). */
  runEffect<A, E>(effect: Effect.Effect<A, E>): Promise<A> {
    return runInSim(this.scheduler, effect)
  }

  /** Stops block production and every worker of the process (chain passes, LP runner, snapshots): the world goes quiet for the final checks. */
  quiesce(): void {
    this.quiet = true
    for (const b of this.background.splice(0)) b.cancel()
  }

  /** Whether the world went quiet (`quiesce`). */
  get quieted(): boolean {
    return this.quiet
  }

  /**
   * The cluster's leader changed (sim/world/cluster-world.ts): the world's exchange and service are the
   * new leader's (its exchange holds the log; what it applies from now on extends the world's
   * journal view), or none leads for now. Either way the feed's clients were the old leader's and
   * are dropped: they reconnect to whoever leads.
   */
  leaderChanged(leading: { service: RunningService; app: App } | null): void {
    for (const ws of [...this.sockets]) ws.drop(1006, "the sequencer stopped leading")
    if (leading === null) {
      this.down = true
      return
    }
    const { service } = leading
    const x = service.exchange
    this.down = false
    this.boots++
    this.records.length = 0
    for (const r of this.cluster!.logRecords) this.records.push(r)
    // Only while it leads: a deposed leader may still apply records the log never takes.
    x.onApply((record) => {
      if (this.exchange === x) this.records.push(record)
    })
    this.exchange = x
    this.core = { ...service, app: leading.app }
    const chainServices = service.chainServices!
    this.guard = chainServices.guard
    this.watcher = chainServices.watcher
    this.payouts = chainServices.payouts
    for (const l of this.bootListeners) l(x)
  }

  /** Called with each booted exchange (the first one and every one after a crash). */
  onBoot(listener: (x: Exchange) => void): void {
    this.bootListeners.push(listener)
    listener(this.exchange)
  }

  /** Boots a process: replays the journal into a fresh exchange and starts the service around it. */
  private boot(): void {
    const epoch = ++this.boots
    const x = new Exchange(this.nowMs, processJournal(this.records, () => this.boots === epoch && !this.down), this.monoMs)
    for (const record of this.records) x.apply(record)
    this.start(x, null, epoch)
  }

  /** Boots a process on the simulated disk: the real recovery (newest good snapshot + journal), then the real journal. */
  private async bootFromDisk(): Promise<void> {
    const host = this.host!
    const epoch = ++this.boots
    const { durable, records, lines } = await host.open(this.nowMs, this.monoMs, (err) => this.storageFailed(epoch, err))
    for (const line of lines) this.serviceLog.push(`t=${this.scheduler.nowSec()} ${line}`)
    // The lineage's journal is what the disk holds; the live process adds to it as it applies.
    this.records.length = 0
    for (const r of records) this.records.push(r)
    const x = durable.exchange
    x.onApply((record) => void this.records.push(record))
    this.down = false
    this.start(x, durable, epoch)
  }

  /** A write or fdatasync failed: the process stops (exit 70 live) and the supervisor restarts it. */
  private storageFailed(epoch: number, err: unknown): void {
    if (this.boots !== epoch || this.down) return
    this.host!.stats.failStops++
    this.serviceLog.push(`t=${this.scheduler.nowSec()} ${storageFailureLine(SIM_DATA_DIR, err)}`)
    this.crash(this.host!.options.restartAfterSec, (before, after) => {
      for (const l of this.recoveryListeners) l(before, after)
    })
  }

  /** Called after each restart that follows a storage fail-stop. */
  onFailStopRecovered(listener: (before: string, after: string) => void): void {
    this.recoveryListeners.push(listener)
  }

  /**
   * Starts the service around a booted exchange with `makeService`, as `npm start` does, on this
   * world's layers (sim/world/layers.ts). Synchronous: every sim layer is, and the store is already open.
   * The process's Scope is never closed: a crash abandons it (nothing of a dead process's
   * shutdown runs), and the world's scheduler drives the workers' passes (below).
   */
  private start(x: Exchange, durable: DurableExchange | null, epoch: number): void {
    this.options.tamper?.(x)
    const alive = (): boolean => this.boots === epoch && !this.down
    const onError = (err: unknown): void => {
      // A dead process's requests and passes fail as its journal goes: not errors of the service.
      if (!alive()) return
      this.errors.push(err)
      this.options.onError?.(err)
    }
    const opened: OpenedStore = {
      exchange: x,
      durable,
      history: () => null,
      historyStartup: null,
      dataDir: undefined,
      checkpoint: this.chainCheckpoint,
      flushHistory: () => Promise.resolve()
    }
    const host = this.host
    const layers = simProcessLayers({
      nowMs: this.nowMs,
      monoMs: this.monoMs,
      network: this.network,
      scheduler: this.scheduler,
      chain: this.chain,
      opened,
      alive,
      signatures: this.signatures,
      ...(host === null ? {} : { onSnapshot: () => void host.stats.snapshotsWritten++ })
    })
    const config = this.serviceConfig(onError)
    // Its fibers live on the process's runtime, which dies with it: a crash abandons the Scope.
    const runtime = processRuntime(this.scheduler, () => alive() && !this.quiet)
    const service = Effect.runSync(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.build(layers).pipe(Scope.extend(scope))
        return yield* makeService(config).pipe(Scope.extend(scope), Effect.provide(context))
      }).pipe(Effect.withClock(runtime.clock), Effect.withScheduler(runtime.scheduler))
    )
    const chainServices = service.chainServices!
    this.exchange = x
    this.core = service
    this.guard = chainServices.guard
    this.watcher = chainServices.watcher
    this.payouts = chainServices.payouts
    for (const l of this.bootListeners) l(x)
  }

  /** What every process of this world is told (the single process, or each sequencer of a cluster). */
  private serviceConfig(onError: (err: unknown) => void): ServiceConfig {
    return {
      host: "api",
      port: 80,
      secret: this.secret,
      config: this.config,
      onError,
      // The disk's fail-stop is the world's (storageFailed); the service never exits the process here.
      onFatal: (err) => onError(err),
      metrics: false,
      // The workers are the live ones, fibers on this process's runtime: LP runner every second, the chain pass, snapshots on the disk.
      lpTickMs: 1000,
      snapshotIntervalSec: this.host?.options.snapshotEverySec ?? 0,
      historyFlushMs: 0,
      chain: {
        host: "deposit",
        depositPort: 80,
        confirmations: this.confirmations,
        pollMs: this.pollMs,
        minUsdgMicro: 1_000_000,
        maxPerTxMicro: 100_000_000_000,
        corsOrigins: new Set(),
        // Guard lines are not printed by a world (the auditor reads its status).
        log: () => {},
        // RPC faults are the scenario's: a pass that meets one ends early and the next retries.
        onPassError: () => {}
      }
    }
  }

  /** Opens a simulated WebSocket to the feed hub; `cookieUser` as proven by a session cookie; `name` keys its latency draws. */
  connectWs(cookieUser: string | null, handlers: SimWsHandlers, name?: string): SimWs | null {
    if (this.down) return null
    const rng = name === undefined ? undefined : this.network.streamFor(`ws/${name}`)
    const ws = new SimWs(this.core.hub, this.scheduler, () => this.network.latencyMs(rng), cookieUser, {
      onFrame: handlers.onFrame,
      onClose: (code, reason) => {
        this.sockets.delete(ws)
        handlers.onClose(code, reason)
      }
    })
    this.sockets.add(ws)
    return ws
  }

  /** Drops a share of the open WebSocket connections (chosen by the fault stream). */
  dropSockets(fractionPct: number, rng: Rng): number {
    let n = 0
    for (const ws of [...this.sockets]) {
      if (rng.chance(fractionPct / 100)) {
        ws.drop(1006, "simulated disconnect")
        n++
      }
    }
    return n
  }

  /**
   * Kills the process: everything in flight is lost, sockets drop, nothing more is written.
   * After `downSec` a new process boots from the journal. Returns the state hash before the
   * crash and resolves with the recovered one, which the auditor compares.
   */
  crash(downSec: number, onRecovered: (before: string, after: string) => void): void {
    if (this.down) return
    const before = exchangeHash(this.exchange)
    this.crashes++
    this.down = true
    this.network.cut()
    this.network.route("api", unavailable)
    this.network.route("deposit", unavailable)
    for (const ws of [...this.sockets]) ws.drop(1006, "server crashed")
    if (this.host !== null) {
      this.host.crash(this.records)
      this.scheduler.after(downSec * 1000, () =>
        void this.bootFromDisk().then(
          () => onRecovered(before, exchangeHash(this.exchange)),
          (err) => this.errors.push(err)
        )
      )
      return
    }
    this.scheduler.after(downSec * 1000, () => {
      this.down = false
      this.boot()
      onRecovered(before, exchangeHash(this.exchange))
    })
  }
}

/** A dead process: connections are refused, which a client sees as a timeout-like failure. */
const unavailable = (): Promise<never> => new Promise(() => {})
