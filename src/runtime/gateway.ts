// The gateway role (ROLE=gateway; docs/cluster.md "Gateways"): stateless, as many as wanted. The
// same `makeService` — the same routes, OpenAPI document, signature checks, sessions, limits and
// WebSocket feed — on a read replica: an exchange that follows the replicated log and journals
// nothing itself. Use cases send their commands to the leader (src/cluster/commands.ts); reads and
// the feed come from the replica, whose records are durable by construction, so frames leave as
// soon as they are applied. No worker runs here (the chain side, LP bots, rewards and snapshots
// are the leader's).
//
// Read-your-writes: a use case is answered once the replica has applied its command, so the same
// gateway's next read sees it; every answer carries `x-twinbook-seq` (the replica's last applied
// record), and a request carrying `x-twinbook-min-seq` waits, bounded, until this gateway's replica
// has applied that much before it is served — the typed client sends back the highest it was told,
// so its reads through any gateway see its writes.
import { Effect, Layer, type Scope } from "effect"
import type { App } from "../api/app.ts"
import { API_TABLE } from "../api/declaration/table.ts"
import type { CommandBus } from "../cluster/command-bus.ts"
import { remoteCommands } from "../cluster/commands.ts"
import { LogFollower } from "../cluster/follower.ts"
import type { ReplicatedLog } from "../cluster/ports.ts"
import { notLeader } from "../cluster/sequencer.ts"
import { ApiError } from "../domain/errors.ts"
import { Exchange, type JournalSink } from "../service/exchange.ts"
import { makeService, type RunningService, type ServiceConfig, type ServiceContext } from "./boot.ts"
import { LoggerService, MonoClockService, WallClock } from "./services.ts"
import { StoreService, storeOf } from "./store.ts"

export interface GatewayRoleOptions {
  readonly log: ReplicatedLog
  readonly bus: CommandBus
  /** The service's configuration (no chain, no workers: those are the leader's). */
  readonly config: ServiceConfig
  /**
   * How long the leader may take to answer a command (default 5 s): a live leader answers in
   * milliseconds, so this bounds only what was in flight when it died (its client gets 503
   * not_leader, told to read before retrying).
   */
  readonly commandTimeoutMs?: number
  /** How long a request may wait for the replica to reach its `x-twinbook-min-seq`, or a command's own (default 20 s). */
  readonly replicaWaitMs?: number
}

export const MIN_SEQ_HEADER = "x-twinbook-min-seq"
export const SEQ_HEADER = "x-twinbook-seq"

/** `p`, or after `ms` a rejection with `err`: a replica that lags this much is answered for, not waited on forever. */
const within = <A>(p: Promise<A>, ms: number, err: () => unknown): Promise<A> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(err()), ms) // live-only: a bound on waiting for the replica (the simulator runs no gateway)
    p.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e: unknown) => {
        clearTimeout(timer)
        reject(e)
      }
    )
  })

/** The replica's store: its exchange, nothing durable here (the log is the journal, the leader's). */
const replicaStoreLayer = (exchange: Exchange): Layer.Layer<StoreService> =>
  Layer.succeed(StoreService, {
    dataDir: null,
    open: () => Effect.succeed(storeOf(exchange))
  })

/** Waits for a client's `x-twinbook-min-seq` before serving, and tells every answer how far the replica is. */
const readYourWrites =
  (follower: LogFollower, exchange: Exchange, waitMs: number) =>
  (app: App): App =>
  async (req) => {
    const asked = Number(req.headers[MIN_SEQ_HEADER])
    if (Number.isSafeInteger(asked) && asked > exchange.lastSeq) {
      // Bounded: past it the request is served from what the replica has (its answer says how far).
      await within(follower.waitForSeq(asked), waitMs, () => null).catch(() => {})
    }
    const res = await app(req)
    res.headers[SEQ_HEADER] = String(exchange.lastSeq)
    return res
  }

/** The gateway role in the enclosing Scope: caught up with the log first, then the service on the replica. */
export const gatewayRole = (o: GatewayRoleOptions): Effect.Effect<RunningService & { readonly follower: LogFollower }, never, Scope.Scope | Exclude<ServiceContext, StoreService>> =>
  Effect.gen(function* () {
    const { nowMs } = yield* WallClock
    const { monoMs } = yield* MonoClockService
    const logger = yield* LoggerService
    const refuse: JournalSink = { append: () => Promise.reject(new ApiError("internal_error", "a gateway journals nothing: commands go to the leader")) }
    const exchange = new Exchange(nowMs, refuse, monoMs)
    // Each newer term read answers the commands still waiting on an older term's leader.
    let termRead: (term: number) => void = () => {}
    const follower = new LogFollower(o.log, exchange, 0, ({ batch }) => termRead(batch.term))
    follower.start()
    yield* Effect.addFinalizer(() => Effect.promise(() => follower.stop()))
    // Served only once the replica holds the log as it was at start: no read from before a write the client saw.
    yield* Effect.promise(async () => follower.waitFor(await o.log.lastPosition()))
    logger.info("replica caught up", { position: follower.position, seq: exchange.lastSeq })
    // Long enough to ride out the replica's own recovery when the NATS node its reader sat on dies
    // (a new consumer on a live node, maybe after a meta-leader election): seen taking over 5 s.
    const waitMs = o.replicaWaitMs ?? 20_000
    const commands = remoteCommands({
      bus: o.bus,
      term: () => follower.term,
      timeoutMs: o.commandTimeoutMs ?? 5_000,
      applied: (seq) =>
        within(follower.waitForSeq(seq), waitMs, () => new ApiError("internal_error", `applied by the leader at seq ${seq}, but this gateway's replica is behind; read again shortly`))
    })
    termRead = (term) => commands.termRead(term)
    const { chain: _none, ...config } = o.config
    const service = yield* makeService({
      ...config,
      commands,
      wrapApp: readYourWrites(follower, exchange, waitMs),
      lpTickMs: 0,
      snapshotIntervalSec: 0,
      historyFlushMs: 0,
      faucet: { refused: "no faucet on a cluster gateway" },
      gate: (route) => (follower.failed === null || route === API_TABLE.ops.health.path ? null : notLeader("this gateway's replica stopped following the log"))
    }).pipe(Effect.provide(replicaStoreLayer(exchange)))
    return { ...service, follower }
  })
