// Live entry point: configuration from the environment (Effect Config), the
// system clock, the node transport; Ctrl-C releases everything in order.
import { randomBytes } from "node:crypto"
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option, Redacted } from "effect"
import { demoCatalog } from "../fixtures/catalog.ts"
import { DEFAULT_ABUSE_LIMITS } from "./api/context.ts"
import { ChainService } from "./chain/chain.ts"
import { liveChainConfigFromEnv, makeLiveChain } from "./chain/live.ts"
import { makeService } from "./runtime/boot.ts"
import { inlineVerifierLayer, liveMonoClockLayer, loggerLayer, nodeTransportLayer, wallClockLayer, workerVerifierLayer } from "./runtime/services.ts"
import { durableStoreLayer } from "./runtime/store.ts"
import { ANVIL_KEYS } from "./chain/anvil.ts"
import { makeDevFaucet } from "./chain/faucet.ts"
import { faucetRefusal } from "./usecase/faucet.ts"
import { ensureBuilt } from "../web/build.ts"
import { startWebServer } from "../web/server.ts"
import { describeRecovery } from "./store/durable.ts"
import { batchedSink, makeLogger } from "./ops/log.ts"
import { DEFAULT_SLOW_WRITE_MS } from "./ops/storage-health.ts"
import { DATA_DIR_IN_USE_EXIT, dataDirLock } from "./store/data-dir-lock.ts"

/**
 * A secret kept in DATA_DIR (hex, mode 0600), generated on first start: the session secret (so
 * cookies survive restarts) and the operator token when ADMIN_TOKEN is unset.
 */
const loadOrCreateSecret = (dataDir: string, name: string, bytes: number): { hex: string; path: string; created: boolean } => {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, name)
  if (existsSync(path)) return { hex: readFileSync(path, "utf8").trim(), path, created: false }
  const secret = randomBytes(bytes).toString("hex") // live-only: a fresh secret on first start
  // Durable before first use: cookies, api_keys and the operator token issued with it must survive a crash.
  const tmp = `${path}.tmp`
  writeFileSync(tmp, secret, { mode: 0o600 })
  const fd = openSync(tmp, "r")
  fsyncSync(fd)
  closeSync(fd)
  renameSync(tmp, path)
  return { hex: secret, path, created: true }
}

/**
 * The bound on a stop: from the first SIGTERM/SIGINT, the drain and every release after it have
 * `timeoutSec` seconds; past that the process exits DRAIN_TIMEOUT_EXIT naming the step it was
 * waiting for (the embedded Anvil is still stopped by its exit hook and watchdog).
 */
const DRAIN_TIMEOUT_EXIT = 124
const armStopDeadline = (timeoutSec: number, waitingFor: () => string): void => {
  const arm = (): void => {
    process.removeListener("SIGTERM", arm)
    process.removeListener("SIGINT", arm)
    setTimeout(() => {
      console.error(`twinbook: stop timed out after ${timeoutSec} s (DRAIN_TIMEOUT_SEC), still waiting for ${waitingFor()}; exiting ${DRAIN_TIMEOUT_EXIT}`)
      process.exit(DRAIN_TIMEOUT_EXIT)
    }, timeoutSec * 1000).unref()
  }
  process.once("SIGTERM", arm)
  process.once("SIGINT", arm)
}

const program = Effect.gen(function* () {
  const port = yield* Config.integer("PORT").pipe(Config.withDefault(8080))
  const host = yield* Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
  const dataDir = yield* Config.string("DATA_DIR").pipe(Config.withDefault("./data"))
  const drainTimeoutSec = yield* Config.integer("DRAIN_TIMEOUT_SEC").pipe(Config.withDefault(30))
  let stopStep: () => string = () => "the web app to close"
  armStopDeadline(drainTimeoutSec, () => stopStep())
  // First of all: one service per DATA_DIR (released last, after the chain has saved its state there).
  yield* dataDirLock(dataDir)
  const adminTokenOpt = yield* Config.option(Config.redacted("ADMIN_TOKEN"))
  const corsOrigins = yield* Config.string("CORS_ORIGINS").pipe(Config.withDefault("http://localhost:3000,http://127.0.0.1:3000"))
  const devCredit = yield* Config.boolean("DEV_CREDIT").pipe(Config.withDefault(true))
  const secureCookies = yield* Config.boolean("SECURE_COOKIES").pipe(Config.withDefault(false))
  const dailyBudgetMicro = yield* Config.integer("REWARDS_DAILY_BUDGET_MICRO").pipe(Config.withDefault(1_000_000_000))
  const bandSpreadBpsMax = yield* Config.integer("REWARDS_BAND_SPREAD_BPS_MAX").pipe(Config.withDefault(300))
  const minSizeContracts = yield* Config.integer("REWARDS_MIN_SIZE_CONTRACTS").pipe(Config.withDefault(10))
  const verifyWorkers = yield* Config.integer("VERIFY_WORKERS").pipe(Config.withDefault(1))
  const limits = {
    registrationsPerMinute: yield* Config.integer("LIMIT_REGISTRATIONS_PER_MIN").pipe(Config.withDefault(DEFAULT_ABUSE_LIMITS.registrationsPerMinute)),
    wsConnectionsPerAddress: yield* Config.integer("LIMIT_WS_CONNECTIONS_PER_IP").pipe(Config.withDefault(DEFAULT_ABUSE_LIMITS.wsConnectionsPerAddress)),
    wsSubscriptionsPerConnection: yield* Config.integer("LIMIT_WS_SUBSCRIPTIONS").pipe(Config.withDefault(DEFAULT_ABUSE_LIMITS.wsSubscriptionsPerConnection)),
    wsConnections: yield* Config.integer("LIMIT_WS_CONNECTIONS").pipe(Config.withDefault(DEFAULT_ABUSE_LIMITS.wsConnections)),
    wsSubscriptions: yield* Config.integer("LIMIT_WS_SUBSCRIPTIONS_TOTAL").pipe(Config.withDefault(DEFAULT_ABUSE_LIMITS.wsSubscriptions)),
    wsBufferedBytes: (yield* Config.integer("LIMIT_WS_BUFFERED_MIB").pipe(Config.withDefault(DEFAULT_ABUSE_LIMITS.wsBufferedBytes / (1024 * 1024)))) * 1024 * 1024,
    rateLimitBuckets: yield* Config.integer("LIMIT_RATE_BUCKETS").pipe(Config.withDefault(DEFAULT_ABUSE_LIMITS.rateLimitBuckets))
  }
  const snapshotIntervalSec = yield* Config.integer("SNAPSHOT_INTERVAL_SEC").pipe(Config.withDefault(300))
  const chainMode = yield* Config.literal("embedded", "off")("CHAIN").pipe(Config.withDefault("embedded" as const))
  const depositPort = yield* Config.integer("DEPOSIT_PORT").pipe(Config.withDefault(8081))
  const confirmations = yield* Config.integer("DEPOSIT_CONFIRMATIONS").pipe(Config.withDefault(0))
  const chainPollMs = yield* Config.integer("CHAIN_POLL_MS").pipe(Config.withDefault(1000))
  const chainHeadPollMs = yield* Config.integer("CHAIN_HEAD_POLL_MS").pipe(Config.withDefault(100))
  const minUsdgMicro = yield* Config.integer("DEPOSIT_MIN_MICRO").pipe(Config.withDefault(1_000_000))
  const maxPerTxMicro = yield* Config.integer("DEPOSIT_MAX_PER_TX_MICRO").pipe(Config.withDefault(100_000_000))
  const webPort = yield* Config.integer("WEB_PORT").pipe(Config.withDefault(3000))
  // WEB=false runs the service without the web app (tests that restart the process many times).
  const webEnabled = yield* Config.boolean("WEB").pipe(Config.withDefault(true))
  // Logs on stderr, JSON unless stderr is a terminal; /metrics behind the operator token unless public (docs/metrics.md).
  const logLevel = yield* Config.literal("debug", "info", "warn", "error")("LOG_LEVEL").pipe(Config.withDefault("info" as const))
  const logFormat = yield* Config.literal("json", "pretty")("LOG_FORMAT").pipe(Config.withDefault(process.stderr.isTTY ? ("pretty" as const) : ("json" as const)))
  const metricsPublic = yield* Config.boolean("METRICS_PUBLIC").pipe(Config.withDefault(false))
  const readyMaxLagBlocks = yield* Config.integer("READY_MAX_LAG_BLOCKS").pipe(Config.withDefault(20))
  const slowWriteMs = yield* Config.integer("SLOW_DISK_WARN_MS").pipe(Config.withDefault(DEFAULT_SLOW_WRITE_MS))
  // The embedded chain keeps its state in DATA_DIR, so balances and deposit addresses survive restarts.
  const chainConfig = yield* liveChainConfigFromEnv
  const chain =
    chainMode === "off"
      ? null
      : yield* makeLiveChain(
          chainConfig.rpcUrl === undefined && chainConfig.anvilStatePath === undefined
            ? { ...chainConfig, anvilStatePath: join(dataDir, "anvil-state.json") }
            : chainConfig
        )
  if (chain !== null) yield* Effect.addFinalizer(() => Effect.sync(() => void (stopStep = () => "the chain to stop (the embedded chain saves its state, then Anvil stops)")))
  const clock = yield* Effect.clock
  const logSink = batchedSink((text, failed) => {
    // A stream that failed once is destroyed: later lines are dropped (and counted) at once.
    if (process.stderr.destroyed) return failed(new Error("stderr is closed"))
    process.stderr.write(text, (err) => (err == null ? undefined : failed(err)))
  })
  process.once("exit", logSink.flush) // lines of the last turn still go out on any exit
  const logger = makeLogger({ level: logLevel, format: logFormat, nowMs: () => clock.unsafeCurrentTimeMillis(), write: logSink.write, droppedLines: logSink.droppedLines }) // live-only: a log line's own wall time
  // The development faucet (src/usecase/faucet.ts): built only for the embedded chain with DEV_CREDIT on.
  const faucetRefused = faucetRefusal(devCredit, chain === null ? "off" : chainConfig.rpcUrl === undefined ? "embedded" : "external")
  const faucet =
    faucetRefused !== null || chain === null
      ? { refused: faucetRefused ?? "no chain" }
      : { faucet: makeDevFaucet({ rpcUrl: chain.rpcUrl, chainId: chain.info.chainId, operatorKey: chainConfig.operatorKey ?? ANVIL_KEYS[0], token: chain.info.token }) }

  // Unset ADMIN_TOKEN: generated once and kept in DATA_DIR, like the session secret.
  const keptToken = Option.isNone(adminTokenOpt) ? loadOrCreateSecret(dataDir, "admin-token", 24) : null
  const adminToken = Option.match(adminTokenOpt, { onNone: () => keptToken!.hex, onSome: Redacted.value })
  const secret = Buffer.from(loadOrCreateSecret(dataDir, "session-secret", 32).hex, "hex")

  // Released last, after everything the service acquired (its Scope closes in reverse order).
  yield* Effect.addFinalizer(() => Console.log("twinbook stopped"))
  // The live graph (docs/runtime.md "Tags and layers"), built in the program's Scope: what it
  // acquires (the verifier's worker threads) is released after the service itself.
  const live = yield* Layer.build(
    Layer.mergeAll(
      wallClockLayer(() => clock.unsafeCurrentTimeMillis()), // live-only: the wall clock enters here; the exchange stamps commands with it (docs/time.md)
      liveMonoClockLayer,
      verifyWorkers > 0 ? workerVerifierLayer(verifyWorkers) : inlineVerifierLayer,
      durableStoreLayer(dataDir),
      nodeTransportLayer,
      // Security events, internal errors, requests and notable events all go through the logger.
      loggerLayer(logger),
      chain === null ? (Layer.empty as Layer.Layer<ChainService>) : Layer.succeed(ChainService, chain)
    )
  )
  const service = yield* makeService({
    onStopStep: (waitingFor) => void (stopStep = waitingFor),
    host,
    port,
    secret,
    catalog: demoCatalog(),
    snapshotIntervalSec,
    ...(chain === null
      ? {}
      : {
          chain: {
            host,
            depositPort,
            confirmations,
            pollMs: chainPollMs,
            headPollMs: chainHeadPollMs,
            minUsdgMicro,
            maxPerTxMicro,
            corsOrigins: new Set(corsOrigins.split(",").map((s) => s.trim()).filter((s) => s !== ""))
          }
        }),
    faucet,
    config: {
      adminToken,
      corsOrigins: new Set(corsOrigins.split(",").map((s) => s.trim()).filter((s) => s !== "")),
      secureCookies,
      devCredit,
      rewards: { dailyBudgetMicro, bandSpreadBpsMax, perWalletCapPct: 40, minSizeContracts },
      limits
    },
    ops: { metricsPublic, maxLagBlocks: readyMaxLagBlocks, slowWriteMs }
  }).pipe(Effect.provide(live))
  yield* Console.log(`twinbook API      ${service.http.url}/v1/markets`)
  yield* Console.log(`WebSocket         ${service.http.wsUrl}`)
  const deposit = service.chainServices?.deposit
  if (deposit !== undefined && chain !== null) {
    yield* Console.log(`deposit service   ${deposit.url}/v1/deposit/native-address/{0x…}`)
    yield* Console.log(`deposit chain     ${chain.rpcUrl} (chain ${chain.info.chainId}; USDG ${chain.info.token}; vault ${chain.info.vault})`)
  }
  yield* Console.log(`API docs          ${service.http.url}/v1/docs  (OpenAPI: /v1/openapi.json)`)
  // The web app (web/): built here when web/dist is missing or stale, then served at WEB_PORT, its
  // requests logged like the API's. Its deposit page offers the API's faucet when the service has one.
  const web = yield* Effect.acquireRelease(
    Effect.promise(async () => {
      if (!webEnabled) return null
      try {
        if (await ensureBuilt()) console.log("web app          built into web/dist")
        return await startWebServer({
          host,
          port: webPort,
          config: {
            api_url: service.http.url,
            ws_url: service.http.wsUrl,
            deposit_url: deposit?.url ?? null,
            chain_rpc_url: chain !== null && chainConfig.rpcUrl === undefined ? chain.rpcUrl : null,
            chain_id: chain?.info.chainId ?? null,
            token_address: chain?.info.token ?? null,
            faucet: "faucet" in faucet
          },
          logger
        })
      } catch (err) {
        console.error(`web app not started: ${err instanceof Error ? err.message : String(err)}`)
        return null
      }
    }),
    (w) => Effect.promise(() => w?.close() ?? Promise.resolve())
  )
  if (web !== null) yield* Console.log(`web app           ${web.url}  (open this in a browser)`)
  const r = service.durable?.recovery
  if (r !== undefined) {
    yield* Console.log(
      `data dir          ${dataDir}  (recovered to seq ${r.lastSeq}: snapshot ${r.snapshotSeq ?? "none"} + ${r.replayed} journal records)`
    )
    // One line per skipped snapshot and why, the fallback to a full replay, a cut tail.
    for (const line of describeRecovery(r)) yield* Console.log(line)
  }
  const h = service.historyStartup
  if (h !== null) {
    yield* Console.log(`history store     ${join(dataDir, "history.duckdb")}  (${h.seededTrades} trades loaded, projected through seq ${h.projectedSeq})`)
    if (h.discardedRows > 0) yield* Console.log(`history store     dropped ${h.discardedRows} rows past its projected seq (an interrupted write); re-projected from the journal`)
    if (h.rebuilt !== null) yield* Console.log(`history store     rebuilt from the journal: ${h.rebuilt}`)
  }
  // Printed once, when generated; later starts say where it is kept.
  if (keptToken?.created === true) yield* Console.log(`operator token    ${adminToken}  (generated and kept in ${keptToken.path}; set ADMIN_TOKEN to choose one)`)
  else if (keptToken !== null) yield* Console.log(`operator token    kept in ${keptToken.path}  (set ADMIN_TOKEN to choose one)`)
  return yield* Effect.never
})

// Logging never takes the service down (docs/metrics.md "Logs"): a failed write to stderr or stdout
// (a full disk, a file-size limit, a closed pipe) arrives as the stream's 'error' event, which
// unheard would end the process; the logger counts the lines it dropped. A file-size limit's
// signal would kill the process outright: heard and ignored, writes past the limit fail with EFBIG
// where they are handled (the journal's fail-stop with its line, dropped log lines).
process.stderr.on("error", () => {})
process.stdout.on("error", () => {})
process.on("SIGXFSZ", () => {})

NodeRuntime.runMain(
  Effect.scoped(program).pipe(
    // Another service holds DATA_DIR: one line naming it and its PID, and a distinct exit code.
    Effect.catchTag("DataDirInUse", (e) => Console.error(`twinbook: ${e.message}`).pipe(Effect.andThen(Effect.sync(() => process.exit(DATA_DIR_IN_USE_EXIT)))))
  )
)
