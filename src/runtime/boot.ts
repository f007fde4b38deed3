// The composition root (docs/decisions.md § Composition root and use cases): assembles the service from its parts: exchange, feed hub, HTTP app and the
// node transport. Time comes in as `nowMs` (the Clock layer's reading), so
// tests and the simulator drive it with a test clock. In durable mode the
// journal, snapshots and the DuckDB history store live under `dataDir`.
import { join } from "node:path"
import { Cause, Effect, Exit, Scope } from "effect"
import { type App, makeApp, type OnError, type RequestObserver } from "../api/app.ts"
import { EdgeCache, invalidateBooksOnChange } from "../api/cache.ts"
import { abuseLimits, type AppConfig, type AppCtx } from "../api/context.ts"
import { listen, type RunningServer } from "../api/node-server.ts"
import { RateLimiter } from "../usecase/rate-limit.ts"
import type { FaucetAccess } from "../usecase/faucet.ts"
import { inlineVerifier, type Verifier } from "../auth/verifier.ts"
import { FeedHub } from "../feed/hub.ts"
import type { NewEvent } from "../service/catalog.ts"
import { type DurableExchange, openDurableExchange } from "../store/durable.ts"
import { LpBotRunner } from "../lp/bot-runner.ts"
import { HistoryStore } from "../store/history-db.ts"
import { historyPath, rebuildHistory } from "../store/history-rebuild.ts"
import { STORAGE_FAILURE_EXIT, type Storage, storageFailureLine } from "../store/storage.ts"
import type { Logger } from "../ops/log.ts"
import { attachOps, type OpsOptions, prepareOps } from "../ops/service-ops.ts"
import { dataDirLock } from "../store/data-dir-lock.ts"
import { type ChainServices, type ChainServicesOptions, makeChainServices } from "./chain-services.ts"
import { forkWorker, type Worker } from "./workers.ts"
import { fileCheckpointStore } from "../chain/guard.ts"
import { Exchange, memoryJournal } from "../service/exchange.ts"
import { ClockWatch, liveMonoClock } from "../time/clock.ts"

export interface ServiceOptions {
  readonly host: string
  /** Security events (src/api/context.ts AppCtx.log); one JSON line each live. */
  readonly log?: (event: Readonly<Record<string, unknown>>) => void
  readonly port: number
  /** The wall clock (see CoreOptions). */
  readonly nowMs: () => number
  /** The monotonic clock (see CoreOptions); the live one when absent. */
  readonly monoMs?: () => number
  readonly secret: Uint8Array
  readonly config: AppConfig
  /** Journal and snapshots live here when given; otherwise state is in memory only. */
  readonly dataDir?: string
  /** Seconds between periodic snapshots (durable mode); 0 disables them. */
  readonly snapshotIntervalSec?: number
  /** Called when the journal cannot write: memory is ahead of disk, so the process must stop. */
  readonly onFatal?: (err: unknown) => void
  /** Loaded when the exchange starts with no events (first start). */
  readonly catalog?: ReadonlyArray<NewEvent>
  readonly onError?: OnError
  /** Inline (synchronous, deterministic) unless the caller brings a worker pool. */
  readonly verifier?: Verifier
  /** Milliseconds between history-store flushes (durable mode; default 1000); 0 flushes only at snapshots and close. */
  readonly historyFlushMs?: number
  /** The deposit chain: starts the deposit service, the watcher and the payout worker. */
  readonly chain?: ChainServicesOptions
  /** Milliseconds between LP-bot runner ticks (default 1000); 0 leaves ticking to the caller. */
  readonly lpTickMs?: number
  /** Request and event lines (src/ops/log.ts); also takes `log` and `onError` when those are absent. Silent when absent. */
  readonly logger?: Logger
  /** /metrics protection and readiness bounds (src/ops/service-ops.ts). */
  readonly ops?: OpsOptions
  /** Told as each step of a stop begins, with what it waits for (src/main.ts names it when a drain times out). */
  readonly onStopStep?: (waitingFor: () => string) => void
  /** The development faucet or why there is none (see CoreOptions). */
  readonly faucet?: FaucetAccess
}

export interface HistoryStartup {
  /** The store's `projected_seq` when it was opened. */
  readonly projectedSeq: number
  /** Trades loaded from the store into the in-memory History. */
  readonly seededTrades: number
  /** Rows an interrupted write had left past `projected_seq`, deleted at open. */
  readonly discardedRows: number
  /** Why the store was rebuilt from the journal at start-up, when it was. */
  readonly rebuilt: string | null
}

/** The service while its Scope is open (`makeService`). */
export interface RunningService {
  readonly exchange: Exchange
  readonly hub: FeedHub
  readonly ctx: AppCtx
  readonly http: RunningServer
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

/**
 * Durable start-up with the history store. The in-memory History must end up with
 * every trade exactly once, though the snapshot (seq S) carries no trades:
 *  - the store holds the trades of records 1..P (P = its projected_seq);
 *  - when P ≥ S, `beforeReplay` seeds the History with them and marks P, so the replay
 *    of S+1.. skips the fills of records ≤ P (History.seed) and the store's listener
 *    projects only records > P;
 *  - when P < S (the store lags the snapshot: deleted, or older than the snapshot) or
 *    P > the journal's end (journal records lost), the store cannot line up: it is
 *    rebuilt from the whole journal and the History re-seeded from it.
 * Snapshots flush the store through S first (`beforeSnapshot`), so P ≥ S in normal
 * running; the store only ever receives records the journal has made durable.
 */
const openDurableWithHistory = async (
  dataDir: string,
  nowMs: () => number,
  onFatal: (err: unknown) => void,
  storage?: Storage
): Promise<{ durable: DurableExchange; store: () => HistoryStore; startup: HistoryStartup }> => {
  const path = historyPath(dataDir)
  let store = await HistoryStore.open(path)
  const opened = { projectedSeq: store.projectedSeq, discardedRows: store.openReport.discardedRows }
  const seed = await store.trades()
  let seededTrades = 0
  let attached = false
  const listen = (x: Exchange): void => {
    attached = true
    // Reads `store` when called: a start-up rebuild swaps it.
    x.onApply((record, result) => store.record(record, result, x))
  }
  let durable: DurableExchange
  try {
    durable = await openDurableExchange(dataDir, nowMs, {
      onFatal,
      ...(storage === undefined ? {} : { storage }),
      beforeSnapshot: (seq) => store.flush(seq),
      beforeReplay: (x) => {
        if (store.projectedSeq < x.lastSeq) return
        x.history.seed(seed, store.projectedSeq)
        seededTrades = seed.length
        listen(x)
      }
    })
  } catch (err) {
    await store.close()
    throw err
  }
  seed.length = 0
  const x = durable.exchange
  let rebuilt: string | null = null
  if (!attached) rebuilt = `store at seq ${store.projectedSeq} is behind snapshot ${durable.recovery.snapshotSeq ?? 0}`
  else if (store.projectedSeq > x.lastSeq) rebuilt = `store at seq ${store.projectedSeq} is ahead of the journal (seq ${x.lastSeq})`
  if (rebuilt !== null) {
    await store.close()
    try {
      await rebuildHistory(dataDir, { path })
      store = await HistoryStore.open(path)
    } catch (err) {
      await durable.close()
      throw err
    }
    const trades = await store.trades()
    x.history.clear()
    x.history.seed(trades, store.projectedSeq)
    seededTrades = trades.length
    if (!attached) listen(x)
  }
  return { durable, store: () => store, startup: { ...opened, seededTrades, rebuilt } }
}

export interface CoreOptions {
  /** The wall clock: it stamps commands (Exchange.journalMs) and checks signed timestamps, nothing else (docs/time.md). */
  readonly nowMs: () => number
  /** The monotonic clock for durations (limits, TTLs, schedules); the live one when absent. */
  readonly monoMs?: () => number
  /** Security events (src/api/context.ts AppCtx.log). */
  readonly log?: (event: Readonly<Record<string, unknown>>) => void
  readonly secret: Uint8Array
  readonly config: AppConfig
  readonly verifier?: Verifier
  readonly onError?: OnError
  /** `POST /v1/dev/faucet`: a faucet on the embedded chain with DEV_CREDIT on, else the refusal (src/usecase/faucet.ts). */
  readonly faucet?: FaucetAccess
  /** The request hook (metrics and request lines); none in the simulator. */
  readonly observe?: RequestObserver
}

/** The service without a transport: one exchange, its feed hub and the HTTP app. */
export interface Core {
  readonly hub: FeedHub
  readonly ctx: AppCtx
  readonly app: App
  /** No timer inside: the caller ticks it (a timer live, the scheduler in simulation). */
  readonly lpBots: LpBotRunner
}

/**
 * Wires the feed hub and the HTTP app around an exchange. Live, `startService` puts it
 * behind node:http; the simulator calls the app and the hub directly. The caller sets the
 * hub's flush scheduler (after journal sync live, a scheduler event in simulation).
 */
export const assembleCore = (exchange: Exchange, opts: CoreOptions): Core => {
  const limits = abuseLimits(opts.config)
  const monoMs = opts.monoMs ?? liveMonoClock.monoMs
  const hub = new FeedHub(exchange, opts.nowMs, {
    connectionsPerAddress: limits.wsConnectionsPerAddress,
    subscriptionsPerConnection: limits.wsSubscriptionsPerConnection
  })
  const ctx: AppCtx = {
    exchange,
    nowMs: opts.nowMs,
    monoMs,
    clockWatch: new ClockWatch(opts.nowMs, monoMs, opts.log),
    secret: opts.secret,
    config: opts.config,
    limiter: new RateLimiter(monoMs),
    cache: new EdgeCache(monoMs),
    verifier: opts.verifier ?? inlineVerifier(),
    binding: { withdraw: "up" },
    ...(opts.log === undefined ? {} : { log: opts.log }),
    ...(opts.faucet === undefined ? {} : { faucet: opts.faucet })
  }
  // Before the hub's frames go out: a client told of a book change never reads the book from before it.
  invalidateBooksOnChange(exchange, ctx.cache)
  return { hub, ctx, app: makeApp(ctx, opts.onError, opts.observe), lpBots: new LpBotRunner(ctx, opts.onError) }
}

/**
 * The live service as scoped resources, acquired in this order and released in reverse by the
 * Scope: the journal and history store (a last snapshot, then close, then the store flushed through
 * the journal's end), the verifier, the HTTP server, the chain services, then the workers (snapshots,
 * LP bots, history flushes) as fibers on a `Schedule`. Closing therefore stops the workers first (each
 * finishing its pass in flight), then the chain, the server, the verifier and last the journal.
 */
export const makeService = (opts: ServiceOptions): Effect.Effect<RunningService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const onFatal =
      opts.onFatal ??
      ((err: unknown) => {
        // Fail-stop (docs/durability.md): nothing unwritten was acknowledged; a restart recovers what was.
        console.error(storageFailureLine(opts.dataDir ?? "(none)", err))
        process.exit(STORAGE_FAILURE_EXIT)
      })
    // Metrics and the logger first: the journal's disk is measured from its first write (src/ops/service-ops.ts).
    const ops = prepareOps({ ...(opts.logger === undefined ? {} : { logger: opts.logger }), nowMs: opts.nowMs, monoMs: opts.monoMs ?? liveMonoClock.monoMs, secret: opts.secret })
    const reportError = opts.onError ?? (opts.logger === undefined ? undefined : ops.onError)
    const onError = (err: unknown): void => reportError?.(err)
    const dataDir = opts.dataDir
    // Finalizers run in reverse: one added right after a resource announces that resource's release.
    const stopStep = (waitingFor: () => string) => Effect.addFinalizer(() => Effect.sync(() => opts.onStopStep?.(waitingFor)))
    // One service per directory, refused before DuckDB or the journal open (src/main.ts takes it even earlier).
    if (dataDir !== undefined) yield* Effect.orDie(dataDirLock(dataDir))
    const opened =
      dataDir === undefined
        ? null
        : yield* Effect.acquireRelease(
            Effect.promise(() => openDurableWithHistory(dataDir, opts.nowMs, onFatal, ops.storage)),
            (o) => Effect.promise(() => closeDurable(o))
          )
    if (opened !== null) yield* stopStep(() => "the last snapshot, the journal's close and the history store's flush")
    const durable = opened?.durable ?? null
    const exchange = durable?.exchange ?? new Exchange(opts.nowMs, memoryJournal())
    if (opts.catalog !== undefined) {
      const catalog = opts.catalog
      yield* Effect.promise(() => loadCatalog(exchange, catalog))
    }
    const { hub, ctx, app, lpBots } = assembleCore(exchange, {
      ...opts,
      observe: ops.observe,
      ...(opts.log === undefined && opts.logger !== undefined ? { log: ops.log } : {}),
      ...(reportError === undefined ? {} : { onError: reportError })
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => ctx.verifier.close()))
    yield* stopStep(() => "the signature verifier to stop")
    let flushQueued = false
    hub.setFlushScheduler(() => {
      if (flushQueued) return
      flushQueued = true
      // Frames tell of fills and balances: they leave only once the journal holds them.
      const durableNow = durable === null ? Promise.resolve() : durable.journal.sync()
      void durableNow.then(() =>
        setImmediate(() => {
          flushQueued = false
          hub.flush()
        })
      )
    })
    const http = yield* Effect.acquireRelease(
      Effect.promise(() => listen({ app, hub, host: opts.host, port: opts.port, secret: opts.secret, nowMs: opts.nowMs, corsOrigins: opts.config.corsOrigins })),
      (h) => Effect.promise(() => h.close())
    )
    yield* stopStep(() => "the HTTP server to close")
    const chainServices =
      opts.chain === undefined
        ? null
        : yield* makeChainServices(
            exchange,
            {
              monoMs: ctx.monoMs,
              nowMs: opts.nowMs,
              // The chain guard's checkpoint is durable beside the journal (docs/decisions.md § Chain guard).
              ...(dataDir === undefined ? {} : { checkpoint: fileCheckpointStore(join(dataDir, "chain-checkpoint.json")) }),
              ...(opts.logger === undefined ? {} : { log: (line: string) => ops.logger.warn("chain guard", { detail: line }) }),
              ...opts.chain
            },
            onError
          )
    // The store takes records only once the journal holds them: capture the seq, sync, flush through it.
    const flushHistory = async (): Promise<void> => {
      if (durable === null || opened === null) return
      const upTo = exchange.lastSeq
      await durable.journal.sync()
      await opened.store().flush(upTo)
    }
    if (chainServices !== null) yield* stopStep(() => "the chain side to stop (deposit service; the watcher and payout pass in flight)")
    attachOps(
      ops,
      {
        ctx,
        exchange,
        hub,
        limiter: ctx.limiter,
        nowMs: opts.nowMs,
        journal: durable?.journal ?? null,
        ...(dataDir === undefined ? {} : { dataDir }),
        ...(durable === null ? {} : { recovery: durable.recovery }),
        ...(chainServices === null || opts.chain === undefined
          ? {}
          : { chain: { chain: opts.chain.chain, watcher: chainServices.watcher, guard: chainServices.guard, depositServer: chainServices.deposit.server } })
      },
      opts.ops
    )
    for (const w of serviceWorkers(opts, { durable, lpBots, monoMs: ctx.monoMs, flushHistory, logger: ops.logger })) yield* forkWorker(w, onError)
    yield* stopStep(() => "the workers' passes in flight (snapshot, LP bots, history)")
    // The first step of a stop (SIGTERM): no new connections, every request in flight answered,
    // WebSocket clients told; the journal, verifier and workers still run meanwhile.
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        const servers = [http, ...(chainServices === null ? [] : [chainServices.deposit])]
        opts.onStopStep?.(() => {
          const p = servers.map((s) => s.pending()).reduce((a, b) => ({ requests: a.requests + b.requests, sockets: a.sockets + b.sockets }))
          return `HTTP requests in flight to be answered (${p.requests} left) and WebSocket clients to close (${p.sockets} left)`
        })
        return Promise.all(servers.map((s) => s.drain()))
      })
    )
    return {
      exchange,
      hub,
      ctx,
      http,
      durable,
      history: () => opened?.store() ?? null,
      historyStartup: opened?.startup ?? null,
      chainServices,
      lpBots,
      flushHistory
    }
  })

/** The workers `opts` asks for (a period of 0 leaves that one to the caller). */
const serviceWorkers = (
  opts: ServiceOptions,
  s: { durable: DurableExchange | null; lpBots: LpBotRunner; monoMs: () => number; flushHistory: () => Promise<void>; logger: Logger }
): Worker[] => {
  const ws: Worker[] = []
  const snapshotSec = opts.snapshotIntervalSec ?? 0
  const durable = s.durable
  const snapshot = async (): Promise<void> => {
    const taken = await durable!.snapshot()
    s.logger.info("snapshot", { seq: taken.seq, path: taken.path })
  }
  if (durable !== null && snapshotSec > 0) ws.push({ name: "snapshot", step: snapshot, everyMs: snapshotSec * 1000 })
  const lpTickMs = opts.lpTickMs ?? 1000
  if (lpTickMs > 0) ws.push({ name: "lp", step: () => s.lpBots.tick(s.monoMs()), everyMs: lpTickMs })
  const historyMs = opts.historyFlushMs ?? 1000
  if (durable !== null && historyMs > 0) ws.push({ name: "history", step: s.flushHistory, everyMs: historyMs })
  return ws
}

/** A last snapshot, the journal closed, then every record it holds projected and the store closed. */
const closeDurable = async (o: { durable: DurableExchange; store: () => HistoryStore }): Promise<void> => {
  try {
    await o.durable.snapshot()
    await o.durable.close()
  } finally {
    try {
      // Projects every record the journal holds, then closes the file.
      const upTo = o.durable.exchange.lastSeq
      await o.durable.journal.sync()
      await o.store().flush(upTo)
    } finally {
      await o.store().close()
    }
  }
}

/** `makeService` in a Scope of its own, for callers outside Effect (tests, benches): `close()` closes the Scope. */
export const startService = async (opts: ServiceOptions): Promise<Service> => {
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(Scope.extend(makeService(opts), scope))
  if (Exit.isFailure(exit)) {
    // What was acquired before the failure is released; the caller sees the original error.
    await Effect.runPromise(Scope.close(scope, exit))
    throw Cause.squash(exit.cause)
  }
  return { ...exit.value, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
