// The composition root (docs/decisions.md § Composition root and use cases): assembles the service from its parts: exchange, feed hub, HTTP app and the
// node transport. Time comes in as `nowMs` (the Clock layer's reading), so
// tests and the simulator drive it with a test clock. In durable mode the
// journal, snapshots and the DuckDB history store live under `dataDir`.
import { Cause, Effect, Exit, Layer, Option, Scope } from "effect"
import { type App, makeApp, type OnError, type RequestObserver } from "../api/app.ts"
import type { ApiError } from "../domain/errors.ts"
import { EdgeCache, invalidateBooksOnChange } from "../api/cache.ts"
import { abuseLimits, type AppConfig, type AppCtx } from "../api/context.ts"
import { type CommandPort, localCommands } from "../usecase/commands.ts"
import { RateLimiter } from "../usecase/rate-limit.ts"
import type { FaucetAccess } from "../usecase/faucet.ts"
import type { Verifier } from "../auth/verifier.ts"
import { type Chain, ChainService } from "../chain/chain.ts"
import { SessionProofs } from "../auth/session-proofs.ts"
import { FeedHub, type RenderedFrames } from "../feed/hub.ts"
import type { NewEvent } from "../service/catalog.ts"
import { type DurableExchange, snapshotDir } from "../store/durable.ts"
import { historyPath } from "../store/history-rebuild.ts"
import { LpBotRunner } from "../workers/lp-bot-runner.ts"
import type { HistoryStore } from "../store/history-db.ts"
import type { Storage } from "../store/storage.ts"
import { type Logger, silentLogger } from "../ops/log.ts"
import { attachOps, type OpsOptions, type PreparedOps, prepareOps } from "../ops/service-ops.ts"
import type { StorageHealth, StorageTask, TaskFailure } from "../ops/storage-health.ts"
import { type ChainServices, type ChainServicesOptions, makeChainServices } from "./chain-services.ts"
import {
  inlineVerifierLayer,
  liveMonoClockLayer,
  LoggerService,
  loggerLayer,
  MonoClockService,
  monoClockLayer,
  nodeTransportLayer,
  type Served,
  silentLoggerLayer,
  type Transport,
  TransportService,
  VerifierService,
  verifierLayer,
  WallClock,
  wallClockLayer
} from "./services.ts"
import { durableStoreLayer, type HistoryStartup, memoryStoreLayer, type OpenedStore, StoreService } from "./store.ts"
import { forkWorker, stepWorker, type Worker } from "./workers.ts"
import type { Exchange } from "../service/exchange.ts"
import { ClockWatch } from "../time/clock.ts"

/** What the service is told, beside the services it takes from its context (./services.ts, ./store.ts). */
export interface ServiceConfig {
  readonly host: string
  /** Security events (src/api/context.ts AppCtx.log); the logger's warn lines when absent and a logger is given. */
  readonly log?: (event: Readonly<Record<string, unknown>>) => void
  readonly port: number
  readonly secret: Uint8Array
  readonly config: AppConfig
  /** Seconds between periodic snapshots (durable mode); 0 disables them. */
  readonly snapshotIntervalSec?: number
  /**
   * Called when the journal cannot write: memory is ahead of disk and the journal refuses every
   * later write (fail-stop, docs/durability.md). Whoever owns the process decides what follows
   * (src/main.ts prints the storage failure line and exits 70); the runtime never exits. Default:
   * reported like any other error (`onError`, else the logger's error line, else stderr).
   */
  readonly onFatal?: (err: unknown) => void
  /** Loaded when the exchange starts with no events (first start). */
  readonly catalog?: ReadonlyArray<NewEvent>
  readonly onError?: OnError
  /** Milliseconds between history-store flushes (durable mode; default 1000); 0 flushes only at snapshots and close. */
  readonly historyFlushMs?: number
  /** The chain side's settings: with a `ChainService` in the context, starts the deposit service, the watcher and the payout worker. */
  readonly chain?: ChainSideConfig
  /** Milliseconds between LP-bot runner ticks (default 1000); 0 leaves ticking to the caller. */
  readonly lpTickMs?: number
  /** /metrics protection and readiness bounds (src/ops/service-ops.ts). */
  readonly ops?: OpsOptions
  /** Told as each step of a stop begins, with what it waits for (src/main.ts names it when a drain times out). */
  readonly onStopStep?: (waitingFor: () => string) => void
  /** `POST /v1/dev/faucet`: a faucet on the embedded chain with DEV_CREDIT on, else the refusal (src/usecase/faucet.ts). */
  readonly faucet?: FaucetAccess
  /**
   * Metrics, request lines, readiness and the metered journal disk (src/ops/). Default true; the
   * simulator turns them off: millions of requests a simulated day, and nobody scrapes a world.
   */
  readonly metrics?: boolean
  /** Refuses routes before their handlers (cluster mode: once leadership is lost; src/runtime/cluster.ts). */
  readonly gate?: (route: string) => ApiError | null
  /** Where commands go: the exchange's own journal by default, the cluster's leader on a gateway. */
  readonly commands?: CommandPort
  /** Wraps the app before it is served (a cluster gateway's read-your-writes: src/runtime/gateway.ts). */
  readonly wrapApp?: (app: App) => App
}

export type ChainSideConfig = Omit<ChainServicesOptions, "chain">

/** Everything `makeService` takes from its context. */
export type ServiceContext = WallClock | MonoClockService | VerifierService | StoreService | TransportService | LoggerService

/**
 * The services `makeService` takes from its context, as plain values: `startService` builds the
 * layers from them (tests and benches; src/main.ts builds the live layers itself). Not settings:
 * those are all in `ServiceConfig`.
 */
export interface ServiceParts {
  /** The wall clock (WallClock). */
  readonly nowMs: () => number
  /** The monotonic clock (MonoClockService); the live one when absent. */
  readonly monoMs?: () => number
  /** Journal and snapshots live here when given (durableStoreLayer); otherwise state is in memory only. */
  readonly dataDir?: string
  /** The disk under `dataDir` (a slow or failing one in tests); node:fs when absent. */
  readonly disk?: Storage
  /** Inline (synchronous, deterministic) unless the caller brings a worker pool. */
  readonly verifier?: Verifier
  /** The deposit chain (ChainService): with `ServiceConfig.chain`, the chain side starts. */
  readonly chain?: Chain
  /** Request and event lines (LoggerService); also takes `log` and `onError` when those are absent. Silent when absent. */
  readonly logger?: Logger
}

/** The service while its Scope is open (`makeService`). */
export interface RunningService {
  readonly exchange: Exchange
  readonly hub: FeedHub
  readonly ctx: AppCtx
  /** The API's routes (what the transport serves). */
  readonly app: App
  readonly http: Served
  /** Set in durable mode. */
  readonly durable: DurableExchange | null
  /** The history store (durable mode): the current one, since a start-up rebuild replaces it. */
  history(): HistoryStore | null
  readonly historyStartup: HistoryStartup | null
  /** Set when a chain was configured. */
  readonly chainServices: ChainServices | null
  /** Server-managed LP bots and the rewards payout, ticked by a timer (`lpTickMs`). */
  readonly lpBots: LpBotRunner
  /** Writes every durable journal record's rows to the history store (durable mode). */
  flushHistory(): Promise<void>
}

/** A service started outside Effect (`startService`): `close` closes its Scope. */
export interface Service extends RunningService {
  close(): Promise<void>
}

/**
 * Adds each catalogue event whose slug is not there yet, and resolves once they are
 * durable. Per event rather than "only when empty", so a first start cut short part
 * way through completes the catalogue on the next start.
 */
export const loadCatalog = async (exchange: Exchange, events: ReadonlyArray<NewEvent>): Promise<void> => {
  const pending: Promise<void>[] = []
  for (const event of events) {
    if (exchange.catalog.event(event.slug) === undefined) pending.push(exchange.submit({ type: "create_event", event }).durable)
  }
  await Promise.all(pending)
}

/** What `makeService` adds to the config when it wires the core: the clocks and hooks from its context. */
interface CoreWiring {
  /** The wall clock: it stamps commands (Exchange.journalMs) and checks signed timestamps, nothing else (docs/time.md). */
  readonly nowMs: () => number
  /** The monotonic clock for durations (limits, TTLs, schedules). */
  readonly monoMs: () => number
  readonly verifier: Verifier
  /** Security events (src/api/context.ts AppCtx.log): the config's, else the ops logger's. */
  readonly log?: (event: Readonly<Record<string, unknown>>) => void
  readonly onError?: OnError
  /** The request hook (metrics and request lines); none in the simulator. */
  readonly observe?: RequestObserver
}

/** The service without a transport: one exchange, its feed hub and the HTTP app. */
interface Core {
  readonly hub: FeedHub
  readonly ctx: AppCtx
  readonly app: App
  /** No timer inside: the caller ticks it (a timer live, the scheduler in simulation). */
  readonly lpBots: LpBotRunner
}

/**
 * Wires the feed hub and the HTTP app around an exchange (a step of `makeService`, which then
 * serves them on its transport and sets the hub's flush scheduler).
 */
const assembleCore = (exchange: Exchange, config: ServiceConfig, w: CoreWiring): Core => {
  const limits = abuseLimits(config.config)
  const { nowMs, monoMs } = w
  // One set for both routes that take SPEC §5.1's proof: a proof accepted by either is refused by both.
  const sessionProofs = new SessionProofs(() => Math.floor(nowMs() / 1000)) // live-only: proofs' signed timestamps expire on the wall clock
  const hub = new FeedHub(
    exchange,
    nowMs,
    {
      connectionsPerAddress: limits.wsConnectionsPerAddress,
      subscriptionsPerConnection: limits.wsSubscriptionsPerConnection,
      connections: limits.wsConnections,
      subscriptions: limits.wsSubscriptions,
      bufferedBytes: limits.wsBufferedBytes
    },
    sessionProofs
  )
  const ctx: AppCtx = {
    exchange,
    commands: config.commands ?? localCommands(exchange),
    nowMs,
    monoMs,
    clockWatch: new ClockWatch(nowMs, monoMs, w.log),
    secret: config.secret,
    config: config.config,
    limiter: new RateLimiter(monoMs, { maxBuckets: limits.rateLimitBuckets }),
    cache: new EdgeCache(monoMs),
    verifier: w.verifier,
    binding: { withdraw: "up" },
    sessionProofs,
    ...(w.log === undefined ? {} : { log: w.log }),
    ...(config.faucet === undefined ? {} : { faucet: config.faucet }),
    ...(config.gate === undefined ? {} : { gate: config.gate })
  }
  // Before the hub's frames go out: a client told of a book change never reads the book from before it.
  invalidateBooksOnChange(exchange, ctx.cache)
  return { hub, ctx, app: makeApp(ctx, w.onError, w.observe), lpBots: new LpBotRunner(ctx, w.onError) }
}

// One piece: the service's acquisition sequence in order, each step one yield with its release (docs/runtime.md lists the graph).
/**
 * The service as scoped resources, acquired in this order and released in reverse by the Scope:
 * the journal and history store (StoreService: a last snapshot, then close, then the store flushed
 * through the journal's end), the HTTP server (TransportService), the chain side (with a
 * ChainService), then the workers (snapshots, LP bots, history flushes) as fibers on a `Schedule`;
 * last comes the drain, so closing first stops accepting and answers what is in flight, then stops
 * the workers (each finishing its pass in flight), the chain, the server and last the journal.
 * The same function runs live (src/main.ts), in tests (`startService`) and in every simulated
 * process (sim/world/world.ts); only the layers differ.
 */
export const makeService = (config: ServiceConfig): Effect.Effect<RunningService, never, Scope.Scope | ServiceContext> =>
  Effect.gen(function* () {
    const { nowMs } = yield* WallClock
    const { monoMs } = yield* MonoClockService
    const verifier = yield* VerifierService
    const store = yield* StoreService
    const transport = yield* TransportService
    const logger = yield* LoggerService
    const chain = Option.getOrNull(yield* Effect.serviceOption(ChainService))
    const logging = logger !== silentLogger
    // Metrics and the logger first: the journal's disk is measured from its first write (src/ops/service-ops.ts).
    const ops =
      config.metrics === false
        ? null
        : prepareOps({ logger, nowMs, monoMs, secret: config.secret, ...(config.ops?.slowWriteMs === undefined ? {} : { slowWriteMs: config.ops.slowWriteMs }) })
    const reportError = config.onError ?? (logging ? ops?.onError : undefined)
    const onError = (err: unknown): void => reportError?.(err)
    // The journal has already refused the write and every later one; the process is the caller's.
    const onFatal = config.onFatal ?? reportError ?? ((err: unknown) => console.error(`twinbook: the journal under ${store.dataDir ?? "(none)"} cannot write and refuses every later write:`, err))
    const stopStep = stopStepOf(config)
    const opened = yield* store.open({ nowMs, monoMs, onFatal, ...(ops === null ? {} : { meter: ops.meter }), logger })
    if (opened.durable !== null) yield* stopStep(() => "the last snapshot, the journal's close and the history store's flush")
    const { exchange, durable } = opened
    if (config.catalog !== undefined) {
      const catalog = config.catalog
      yield* Effect.promise(() => loadCatalog(exchange, catalog))
    }
    const log = config.log ?? (logging && ops !== null ? ops.log : undefined)
    const { hub, ctx, app, lpBots } = assembleCore(exchange, config, {
      nowMs,
      monoMs,
      verifier,
      ...(ops === null ? {} : { observe: ops.observe }),
      ...(log === undefined ? {} : { log }),
      ...(reportError === undefined ? {} : { onError: reportError })
    })
    flushAfterJournal(hub, durable, transport)
    const http = yield* transport.serve({ app: config.wrapApp?.(app) ?? app, hub, host: config.host, port: config.port, secret: config.secret, nowMs, corsOrigins: config.config.corsOrigins, logger })
    yield* stopStep(() => "the HTTP server to close")
    const chainServices =
      config.chain === undefined || chain === null
        ? null
        : yield* makeChainServices(
            exchange,
            {
              monoMs,
              nowMs,
              checkpoint: opened.checkpoint,
              ...(logging && ops !== null ? { log: (line: string) => logger.warn("chain guard", { detail: line }) } : {}),
              // Its requests metered and logged, its refusals counted with the API's (src/ops/requests.ts).
              ...(ops === null ? {} : { observe: ops.depositObserve }),
              limiter: ctx.limiter,
              ...config.chain,
              chain
            },
            onError
          )
    if (chainServices !== null) yield* stopStep(() => "the chain side to stop (deposit service; the watcher and payout pass in flight)")
    if (ops !== null) attachServiceOps(ops, config, { ctx, exchange, hub, nowMs, opened, chain, chainServices })
    const workers = serviceWorkers(config, {
      durable,
      lpBots,
      monoMs,
      flushHistory: opened.flushHistory,
      logger,
      health: ops?.storageHealth ?? null,
      dataDir: opened.dataDir
    })
    for (const w of workers) yield* forkWorker(w, onError, monoMs)
    yield* stopStep(() => "the workers' passes in flight (snapshot, LP bots, history)")
    yield* drainFirst(config, [http, ...(chainServices === null ? [] : [chainServices.deposit])])
    return {
      exchange,
      hub,
      ctx,
      app,
      http,
      durable,
      history: opened.history,
      historyStartup: opened.historyStartup,
      chainServices,
      lpBots,
      flushHistory: opened.flushHistory
    }
  })

/** Finalizers run in reverse: one added right after a resource announces that resource's release. */
const stopStepOf = (config: ServiceConfig) => (waitingFor: () => string) => Effect.addFinalizer(() => Effect.sync(() => config.onStopStep?.(waitingFor)))

/**
 * Frames tell of fills and balances: they leave only once the journal holds what they show. In
 * memory there is nothing to wait for: a flush per transport turn. Durable, the hub renders its
 * frames as each journal batch is cut (state is then exactly the batches so far) and they leave,
 * coalesced per transport turn, once that batch is durable: a steady stream of appends never holds
 * them back (a failed batch never becomes durable, so its frames never leave: the fail-stop).
 */
const flushAfterJournal = (hub: FeedHub, durable: DurableExchange | null, transport: Transport): void => {
  if (durable === null) {
    let flushQueued = false
    hub.setFlushScheduler(() => {
      if (flushQueued) return
      flushQueued = true
      transport.later(() => {
        flushQueued = false
        hub.flush()
      })
    })
    return
  }
  const rendered: Array<{ seq: number; frames: RenderedFrames }> = []
  let durableSeq = 0
  let deliveryQueued = false
  const deliver = (): void => {
    deliveryQueued = false
    while (rendered.length > 0 && rendered[0]!.seq <= durableSeq) hub.deliver(rendered.shift()!.frames)
  }
  durable.journal.onBatch({
    cut: (seq) => {
      if (hub.dirty) rendered.push({ seq, frames: hub.render() })
    },
    durable: (seq) => {
      durableSeq = seq
      if (deliveryQueued || rendered.length === 0 || rendered[0]!.seq > seq) return
      deliveryQueued = true
      transport.later(deliver)
    }
  })
}

/** /metrics, readiness and the journal's notable events, once the parts exist. */
const attachServiceOps = (
  ops: PreparedOps,
  config: ServiceConfig,
  p: { ctx: AppCtx; exchange: Exchange; hub: FeedHub; nowMs: () => number; opened: OpenedStore; chain: Chain | null; chainServices: ChainServices | null }
): void => {
  const durable = p.opened.durable
  attachOps(
    ops,
    {
      ctx: p.ctx,
      exchange: p.exchange,
      hub: p.hub,
      limiter: p.ctx.limiter,
      nowMs: p.nowMs,
      journal: durable?.journal ?? null,
      ...(p.opened.dataDir === undefined ? {} : { dataDir: p.opened.dataDir }),
      ...(durable === null ? {} : { recovery: durable.recovery }),
      ...(p.chainServices === null || p.chain === null
        ? {}
        : { chain: { chain: p.chain, watcher: p.chainServices.watcher, guard: p.chainServices.guard, depositServer: p.chainServices.deposit } })
    },
    config.ops
  )
}

/**
 * The first step of a stop (SIGTERM), added last so it runs first: no new connections, every
 * request in flight answered, WebSocket clients told; the journal, verifier and workers still run meanwhile.
 */
const drainFirst = (config: ServiceConfig, servers: ReadonlyArray<Served>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.addFinalizer(() =>
    Effect.promise(() => {
      config.onStopStep?.(() => {
        const p = servers.map((s) => s.pending()).reduce((a, b) => ({ requests: a.requests + b.requests, sockets: a.sockets + b.sockets }))
        return `HTTP requests in flight to be answered (${p.requests} left) and WebSocket clients to close (${p.sockets} left)`
      })
      return Promise.all(servers.map((s) => s.drain()))
    })
  )

/** The workers `opts` asks for (a period of 0 leaves that one to the caller). */
const serviceWorkers = (
  opts: ServiceConfig,
  s: {
    durable: DurableExchange | null
    lpBots: LpBotRunner
    monoMs: () => number
    flushHistory: () => Promise<void>
    logger: Logger
    /** Failing background writes as lines and readiness (live); absent in the simulator, whose errors go to onError. */
    health: StorageHealth | null
    dataDir: string | undefined
  }
): Worker[] => {
  const ws: Worker[] = []
  const snapshotSec = opts.snapshotIntervalSec ?? 0
  const durable = s.durable
  const historyMs = opts.historyFlushMs ?? 1000
  if (durable !== null && snapshotSec > 0) {
    const file = s.dataDir === undefined ? "snapshots" : snapshotDir(s.dataDir)
    const action = `no snapshot this pass: the journal keeps every record (a restart replays more of it); retried in ${snapshotSec} s`
    const snapshot = watched(s.health, "snapshot", { file, action }, async () => {
      const taken = await durable.snapshot()
      s.logger.info("snapshot", { seq: taken.seq, path: taken.path })
    })
    ws.push(stepWorker("snapshot", snapshotSec * 1000, snapshot))
  }
  const lpTickMs = opts.lpTickMs ?? 1000
  if (lpTickMs > 0) ws.push(stepWorker("lp", lpTickMs, () => s.lpBots.tick(s.monoMs())))
  if (durable !== null && historyMs > 0) {
    const file = s.dataDir === undefined ? "history store" : historyPath(s.dataDir)
    const action = `trading goes on and the journal keeps every record; the history store is retried every ${historyMs} ms and catches up from the journal (GET /v1/ready: not ready meanwhile)`
    ws.push(stepWorker("history", historyMs, watched(s.health, "history", { file, action }, s.flushHistory)))
  }
  return ws
}

/**
 * A background write whose failures are told once, clearly (StorageHealth), instead of as an
 * "internal error" line every pass; without a health (the simulator) a failure goes on to onError.
 */
const watched =
  (health: StorageHealth | null, task: StorageTask, failure: TaskFailure, step: () => Promise<void>) =>
  async (): Promise<void> => {
    if (health === null) return step()
    try {
      await step()
    } catch (err) {
      health.failed(task, err, failure)
      return
    }
    health.succeeded(task, failure.file)
  }

/** The context `startService` builds from plain values: the node transport, the rest as given. */
export const serviceLayer = (parts: ServiceParts): Layer.Layer<ServiceContext | ChainService> =>
  Layer.mergeAll(
    wallClockLayer(parts.nowMs),
    parts.monoMs === undefined ? liveMonoClockLayer : monoClockLayer(parts.monoMs),
    parts.verifier === undefined ? inlineVerifierLayer : verifierLayer(parts.verifier),
    parts.dataDir === undefined ? memoryStoreLayer : durableStoreLayer(parts.dataDir, parts.disk),
    nodeTransportLayer,
    parts.logger === undefined ? silentLoggerLayer : loggerLayer(parts.logger),
    parts.chain === undefined ? (Layer.empty as Layer.Layer<ChainService>) : Layer.succeed(ChainService, parts.chain)
  )

/**
 * `makeService` in a Scope of its own, for callers outside Effect (tests, benches): the same
 * `ServiceConfig`, its context built from `parts`; `close()` closes the Scope.
 */
export const startService = async (config: ServiceConfig, parts: ServiceParts): Promise<Service> => {
  const scope = Effect.runSync(Scope.make())
  const started = Effect.gen(function* () {
    // Built in the service's Scope: the verifier closes with the service, after everything makeService acquired.
    const context = yield* Layer.build(serviceLayer(parts))
    return yield* makeService(config).pipe(Effect.provide(context))
  })
  const exit = await Effect.runPromiseExit(Scope.extend(started, scope))
  if (Exit.isFailure(exit)) {
    // What was acquired before the failure is released; the caller sees the original error.
    await Effect.runPromise(Scope.close(scope, exit))
    throw Cause.squash(exit.cause)
  }
  return { ...exit.value, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
