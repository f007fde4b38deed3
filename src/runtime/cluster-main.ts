// The cluster roles' program (ROLE=sequencer or ROLE=gateway; docs/cluster.md "Roles"): the
// settings every role shares, then NATS — the journal on a replicated JetStream stream, the
// lease in a KV bucket, commands on a request/reply subject — and the role itself. A sequencer
// whose leadership ends goes back to being a standby in the same process: its exchange may hold
// commands the log does not, so it is dropped and a fresh one follows the log from the start.
import { Console, Data, Deferred, Effect, Layer, Option } from "effect"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { ChainService } from "../chain/chain.ts"
import { type LiveChainConfig, makeLiveChain } from "../chain/live.ts"
import { NatsCommandBus } from "../cluster/command-bus.ts"
import { type ChainCheckpoints, openJetStreamCheckpoints } from "../cluster/jetstream-checkpoint.ts"
import { openJetStreamLease } from "../cluster/jetstream-lease.ts"
import { openJetStreamLog } from "../cluster/jetstream-log.ts"
import type { LeadershipLost } from "../cluster/log-journal.ts"
import { connectNats } from "../cluster/nats-connection.ts"
import type { ReplicatedLog } from "../cluster/ports.ts"
import type { Logger } from "../ops/log.ts"
import type { ServiceConfig } from "./boot.ts"
import { sequencerRole } from "./cluster.ts"
import { gatewayRole } from "./gateway.ts"
import { inlineVerifierLayer, liveMonoClockLayer, loggerLayer, nodeTransportLayer, wallClockLayer, workerVerifierLayer } from "./services.ts"
import { liveMonoClock } from "../time/clock.ts"
import type { ChainSettings, Configuration } from "./config.ts"
import { armStopDeadline, stderrLogger } from "./settings.ts"

/**
 * How often a standby asks for the lease: a KV create, cheap for NATS; asked often, the standby
 * takes over within this much of the lease's lapse (a third of the TTL would add up to 0.7 s).
 */
const ELECTION_RETRY_MS = 200

export type ClusterRole = "sequencer" | "gateway"

/** The subject the leader serves commands on (src/cluster/command-bus.ts). */
export const COMMAND_SUBJECT = "twinbook.commands"

export type ClusterConfiguration = Extract<Configuration, { role: ClusterRole }>

/** A cluster role refused at start, with the one line that says why (src/main.ts prints it). */
export class ClusterStartRefused extends Data.TaggedError("ClusterStartRefused")<{ readonly message: string }> {}

/**
 * The chain a cluster uses: an external one only (docs/cluster.md "The chain side"). An embedded
 * Anvil would be each sequencer's own chain, and contracts deployed at start-up each sequencer's
 * own contracts: both refused. None unless CHAIN_RPC_URL is set (or with CHAIN=off).
 */
export const clusterChainConfig = (settings: ChainSettings): Effect.Effect<LiveChainConfig | null, ClusterStartRefused> => {
  const { mode, live } = settings
  if (Option.getOrNull(mode) === "off") return Effect.succeed(null)
  if (live.rpcUrl === undefined) {
    if (Option.isNone(mode)) return Effect.succeed(null)
    return new ClusterStartRefused({
      message: "CHAIN=embedded cannot run in a cluster role: each sequencer would start its own chain. Set CHAIN_RPC_URL (with CHAIN_OPERATOR_KEY and the contract addresses) to one external chain, or CHAIN=off"
    })
  }
  if (live.info === undefined) {
    return new ClusterStartRefused({
      message: "CHAIN_RPC_URL in a cluster role needs CHAIN_TOKEN_ADDRESS, CHAIN_VAULT_ADDRESS and CHAIN_FACTORY_ADDRESS: every sequencer must use the same deployed contracts (none are deployed at start-up)"
    })
  }
  return Effect.succeed(live)
}

/** A sequencer for ever: standby, leader, and back to standby (fresh) whenever a leadership ends. */
const sequencerLoop = (
  log: ReplicatedLog,
  lease: Parameters<typeof sequencerRole>[0]["lease"],
  bus: NatsCommandBus,
  holder: string,
  config: ServiceConfig,
  logger: Logger,
  checkpoints: ChainCheckpoints | null
) =>
  Effect.forever(
    Effect.scoped(
      Effect.gen(function* () {
        const lost = yield* Deferred.make<LeadershipLost>()
        const service = yield* sequencerRole({
          log,
          lease,
          bus,
          holder,
          config,
          electionRetryMs: ELECTION_RETRY_MS,
          ...(checkpoints === null ? {} : { checkpoint: (term, name) => checkpoints.forTerm(term, name) }),
          onLost: (err) => Deferred.unsafeDone(lost, Effect.succeed(err))
        })
        yield* Console.log(`twinbook leader    ${service.http.url}/v1/markets  (holder ${holder})`)
        const deposit = service.chainServices?.deposit
        if (deposit !== undefined) yield* Console.log(`deposit service    ${deposit.url}/v1/deposit/native-address/{0x…}`)
        const err = yield* Deferred.await(lost)
        logger.warn("back to standby", { term: err.term, reason: err.reason, detail: "this process's exchange is dropped; a fresh one follows the log" })
      })
    )
  )

/** A cluster role, configured (src/runtime/config.ts): runs until its Scope closes. */
export const clusterProgram = (configuration: ClusterConfiguration) =>
  Effect.gen(function* () {
    const { role, common: settings, cluster: c } = configuration
    // Checked before anything starts: a refused chain is one line and an exit.
    const chainConfig = yield* clusterChainConfig(configuration.chain)
    let stopStep: () => string = () => `the ${role} to stop`
    armStopDeadline(settings.drainTimeoutSec, () => stopStep())
    const clock = yield* Effect.clock
    const logger = stderrLogger(settings.log, () => clock.unsafeCurrentTimeMillis()) // live-only: a log line's own wall time
    yield* Effect.addFinalizer(() => Console.log(`twinbook ${role} stopped`))
    // The client waits for a first node for ever (NATS_URL may list nodes still starting): say so.
    logger.info("connecting to NATS", { servers: c.natsUrl, node: c.nodeName })
    const nc = yield* Effect.acquireRelease(
      Effect.promise(() => connectNats(c.natsUrl, `twinbook-${role}-${c.nodeName}`)),
      (conn) => Effect.promise(() => conn.drain().catch(() => conn.close()))
    )
    logger.info("connected to NATS", { server: nc.getServer() })
    const log = yield* Effect.promise(() => openJetStreamLog(nc, { replicas: c.replicas }))
    const bus = new NatsCommandBus(nc, COMMAND_SUBJECT)
    const live = yield* Layer.build(
      Layer.mergeAll(
        wallClockLayer(() => clock.unsafeCurrentTimeMillis()), // live-only: the wall clock enters here (docs/time.md)
        liveMonoClockLayer,
        settings.verifyWorkers > 0 ? workerVerifierLayer(settings.verifyWorkers) : inlineVerifierLayer,
        nodeTransportLayer,
        loggerLayer(logger)
      )
    )
    const config: ServiceConfig = {
      host: settings.host,
      port: settings.port,
      secret: Buffer.from(c.sessionSecret, "hex"),
      config: { ...settings.app, adminToken: c.adminToken },
      ops: settings.ops,
      onStopStep: (waitingFor) => void (stopStep = waitingFor),
      // The leader adds what the catalogue lacks; a gateway never writes it (its commands go to the leader).
      ...(role === "sequencer" ? { catalog: demoCatalog() } : {})
    }
    yield* Console.log(`twinbook ${role}  ${c.nodeName} on NATS ${c.natsUrl} (journal R${c.replicas}${role === "sequencer" ? `, lease TTL ${c.leaseTtlMs} ms` : ""})`)
    if (role === "gateway") {
      const gw = yield* gatewayRole({ log, bus, config, commandTimeoutMs: c.commandTimeoutMs }).pipe(Effect.provide(live))
      yield* Console.log(`twinbook API       ${gw.http.url}/v1/markets`)
      yield* Console.log(`WebSocket          ${gw.http.wsUrl}`)
      return yield* Effect.never
    }
    const lease = yield* Effect.promise(() => openJetStreamLease(nc, liveMonoClock.monoMs, { ttlMs: c.leaseTtlMs, replicas: c.replicas }))
    if (chainConfig === null) return yield* sequencerLoop(log, lease, bus, c.nodeName, config, logger, null).pipe(Effect.provide(live))
    // The chain side runs only on the leader (inside makeService): connected here once, checked
    // against the configured contracts; the workers and the deposit port start when this process leads.
    const chain = yield* makeLiveChain(chainConfig)
    const checkpoints = yield* Effect.promise(() => openJetStreamCheckpoints(nc, { replicas: c.replicas }))
    const chainSide = configuration.chain.side
    yield* Console.log(`deposit chain      ${chain.rpcUrl} (chain ${chain.info.chainId}; USDG ${chain.info.token}; vault ${chain.info.vault}; runs on the leader)`)
    return yield* sequencerLoop(log, lease, bus, c.nodeName, { ...config, chain: chainSide }, logger, checkpoints).pipe(
      Effect.provide(live),
      Effect.provideService(ChainService, chain)
    )
  })
