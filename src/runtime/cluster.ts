// The sequencer role (ROLE=sequencer; docs/cluster.md): the same `makeService` as the single
// process, on the replicated log instead of DATA_DIR's journal. Until it leads, the process is a
// standby: its exchange follows the log hot, and its port answers `/v1/health` (200) and nothing
// else (`/v1/ready` 503 "standby", every other route 503 `not_leader` with `retry_after`), so a
// load balancer or a gateway sends work only to the leader. Once it leads, the standby server
// closes and the service starts on the same exchange: HTTP, the feed, and the leader-only workers
// (the chain side, LP bots and rewards, which run inside `makeService`, so only on the leader).
// When the leadership ends (the lease lapses, or an append is refused), every route but the ops
// ones answers 503 `not_leader` at once and `onLost` is told: the process stops and comes back as
// a standby (its memory may hold commands the log does not: it never serves them).
import { Duration, Effect, Exit, Layer, Runtime, Scope } from "effect"
import type { App } from "../api/app.ts"
import { API } from "../api/declaration/api.ts"
import { API_TABLE } from "../api/declaration/table.ts"
import { errorResponse, json } from "../api/http.ts"
import { ApiError, errorBody } from "../domain/errors.ts"
import { type CheckpointStore, memoryCheckpointStore } from "../chain/guard.ts"
import type { LeadershipLost } from "../cluster/log-journal.ts"
import type { CommandBus } from "../cluster/command-bus.ts"
import { serveCommands } from "../cluster/commands.ts"
import type { LeasePort, ReplicatedLog } from "../cluster/ports.ts"
import { type Leading, notLeader, standby } from "../cluster/sequencer.ts"
import type { Logger } from "../ops/log.ts"
import type { DurableExchange } from "../store/durable.ts"
import { exchangeHash } from "../service/exchange-snapshot.ts"
import { makeService, type RunningService, type ServiceConfig, type ServiceContext } from "./boot.ts"
import { LoggerService, MonoClockService, TransportService, WallClock } from "./services.ts"
import { StoreService } from "./store.ts"

export interface SequencerRoleOptions {
  readonly log: ReplicatedLog
  readonly lease: LeasePort
  /** This process's name on the lease and every batch (NODE_NAME, or host:pid). */
  readonly holder: string
  /** The service's configuration, as for the single process (snapshots and the history store are off here). */
  readonly config: ServiceConfig
  /** Leadership ended (lease lapsed, append refused): told once; live, the process logs it and exits. */
  readonly onLost: (err: LeadershipLost) => void
  /** Where the gateways' commands arrive (src/cluster/command-bus.ts); served while this sequencer leads. */
  readonly bus?: CommandBus
  /** How often the standby asks for the lease (default a third of its TTL). */
  readonly electionRetryMs?: number
  /**
   * The election's and the lease keeper's waits: the Clock's sleep when absent. The simulator gives
   * its own, so stopping the service's workers at the end of a run (their sleeps) leaves the lease renewed.
   */
  readonly sleep?: (ms: number) => Promise<void>
  /** Runs the leader's journal writer after the current turn (setImmediate when absent; the scheduler in the simulator). */
  readonly defer?: (run: () => void) => void
  /**
   * The chain guard's checkpoint for one leadership (live: a JetStream KV key shared by every
   * sequencer, src/cluster/jetstream-checkpoint.ts), opened once leading, before the chain side
   * starts. In memory when absent (the guard then re-anchors on the newest credited deposit).
   */
  readonly checkpoint?: (term: number, holder: string) => Promise<CheckpointStore>
}

/** Routes a sequencer always answers itself, leader or not (declared `alwaysServed`: health, readiness, metrics). */
const OPS_ROUTES = new Set(Object.values(API).flatMap((group) => Object.values(group).filter((r) => "alwaysServed" in r && r.alwaysServed === true).map((r) => r.path)))
const OPS = API_TABLE.ops

/** The standby's whole API: alive, not ready, and "not the leader" for everything else. */
const standbyApp =
  (lastSeq: () => number, position: () => number): App =>
  (req) => {
    const headers = { "cache-control": "no-store", "x-twinbook-role": "standby" }
    if (req.path === OPS.health.path) return Promise.resolve(json(200, { status: "ok", ok: true, seq: lastSeq() }, headers))
    if (req.path === OPS.ready.path) {
      return Promise.resolve(json(503, errorBody("not_ready", `standby: following the leader's log (position ${position()}); takes over if the leader's lease lapses`), headers))
    }
    // The standby keeps no metrics registry of its own yet: /metrics says so in its declared way.
    const res = errorResponse(req.path === OPS.metrics.path ? new ApiError("not_found", "a standby sequencer exports no metrics; scrape the leader") : notLeader("this sequencer is the standby"))
    res.headers["x-twinbook-role"] = "standby"
    return Promise.resolve(res)
  }

/** The store of a leading sequencer: its exchange and log journal; closing it hands the lease over. */
const leadingStoreLayer = (leading: Leading, logger: Logger, checkpoint: CheckpointStore): Layer.Layer<StoreService> =>
  Layer.succeed(StoreService, {
    dataDir: null,
    open: () =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const exchange = leading.exchange
          const durable: DurableExchange = {
            exchange,
            journal: leading.journal,
            recovery: { snapshotSeq: null, skippedSnapshots: [], replayed: exchange.lastSeq, lastSeq: exchange.lastSeq, tornTail: null },
            snapshot: () => Promise.reject(new Error("no snapshots in cluster mode: the log is the state (docs/cluster.md)")),
            close: () => leading.close()
          }
          return {
            exchange,
            durable,
            history: () => null,
            historyStartup: null,
            dataDir: undefined,
            checkpoint,
            flushHistory: () => Promise.resolve()
          }
        }),
        () =>
          Effect.promise(() =>
            leading.close().then(
              // The state it stopped with, for an operator (or a test) to check against a replay of the log.
              () => logger.info("lease released", { term: leading.leadership.lease.term, seq: leading.exchange.lastSeq, state_hash: exchangeHash(leading.exchange) }),
              (err: unknown) => logger.warn("stop: the journal's last batches were not stored", { detail: err instanceof Error ? err.message : String(err) })
            )
          )
      )
  })

// One piece: the role's sequence in order (standby, lease, take over, serve), each a yield.
/**
 * The sequencer role in the enclosing Scope: a standby until it leads, then the service (its
 * `RunningService` is what this resolves with). Needs the same context as `makeService`, but for
 * the store, which is the log's.
 */
export const sequencerRole = (o: SequencerRoleOptions): Effect.Effect<RunningService, never, Scope.Scope | Exclude<ServiceContext, StoreService>> =>
  Effect.gen(function* () {
    const { nowMs } = yield* WallClock
    const { monoMs } = yield* MonoClockService
    const transport = yield* TransportService
    const logger = yield* LoggerService
    const runtime = yield* Effect.runtime<never>()
    // The Clock's sleep: real time live, the scheduler's in the simulator.
    const sleep = o.sleep ?? ((ms: number): Promise<void> => Runtime.runPromise(runtime)(Effect.sleep(Duration.millis(ms))))
    let lost: LeadershipLost | null = null
    const sb = standby({
      ...(o.electionRetryMs === undefined ? {} : { electionRetryMs: o.electionRetryMs }),
      log: o.log,
      lease: o.lease,
      holder: o.holder,
      nowMs,
      monoMs,
      sleep,
      ...(o.defer === undefined ? {} : { defer: o.defer }),
      note: (msg, fields) => logger.info(msg, fields),
      onLost: (err) => {
        if (lost !== null) return
        lost = err
        logger.error("leadership lost", { term: err.term, reason: err.reason, detail: err.message, action: "acknowledging nothing more; stopping to come back as a standby" })
        o.onLost(err)
      }
    })
    const standbyScope = yield* Scope.make()
    const c = o.config
    const standbyServer = yield* transport
      .serve({ app: standbyApp(() => sb.exchange.lastSeq, () => sb.follower.position), hub: null, host: c.host, port: c.port, secret: c.secret, nowMs, corsOrigins: c.config.corsOrigins, logger })
      .pipe(Scope.extend(standbyScope))
    logger.info("standby", { holder: o.holder, url: standbyServer.url })
    const leading = yield* Effect.promise(() => sb.lead())
    // The port is the leader's now.
    yield* Scope.close(standbyScope, Exit.void)
    const leads = (): boolean => lost === null && leading.keeper.valid()
    const gate = (route: string) => (OPS_ROUTES.has(route) || leads() ? null : notLeader("this sequencer lost its leadership"))
    const term = leading.leadership.lease.term
    const openCheckpoint = o.checkpoint
    // A key that cannot be read (NATS away at the takeover, a malformed value) is logged; the guard
    // then starts from memory and re-anchors on the newest credited deposit, as before the KV key.
    const checkpoint =
      openCheckpoint === undefined
        ? memoryCheckpointStore()
        : yield* Effect.promise(() =>
            openCheckpoint(term, o.holder).catch((err: unknown) => {
              logger.error("chain checkpoint unreadable", { term, detail: err instanceof Error ? err.message : String(err), action: "the chain guard re-anchors on the newest credited deposit" })
              return memoryCheckpointStore()
            })
          )
    if (openCheckpoint !== undefined) {
      const from = checkpoint.load()
      logger.info(
        "chain checkpoint",
        from === null
          ? { term, detail: "none yet: the chain guard anchors on the newest credited deposit" }
          : { term, block_number: Number(from.blockNumber), hash: from.hash, detail: "carried over from the previous leader" }
      )
    }
        const service = yield* makeService({ ...c, gate, snapshotIntervalSec: 0, historyFlushMs: 0 }).pipe(Effect.provide(leadingStoreLayer(leading, logger, checkpoint)))
    const bus = o.bus
    if (bus !== undefined) {
      // Released first at a stop: no gateway's command reaches a leader that is closing.
      yield* Effect.acquireRelease(
        Effect.sync(() => serveCommands(bus, leading.leadership.lease.term, service.ctx.commands, () => (leads() ? null : notLeader("this sequencer lost its leadership")))),
        (served) => Effect.promise(() => served.stop())
      )
    }
    return service
  })
