// Live entry point: configuration from the environment (Effect Config), the
// system clock, the node transport; Ctrl-C releases everything in order.
import { randomBytes } from "node:crypto"
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option, Redacted, type Scope } from "effect"
import { demoCatalog } from "../fixtures/catalog.ts"
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
import { clusterProgram } from "./runtime/cluster-main.ts"
import { armStopDeadline, chainMode as settingsChainMode, chainSideSettings, commonSettings, stderrLogger } from "./runtime/settings.ts"
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

// One piece: the program's steps in order (settings, data dir, secrets, chain, service), each a yield with its own release.
const program = Effect.gen(function* () {
  const settings = yield* commonSettings
  const { host, port } = settings
  const dataDir = yield* Config.string("DATA_DIR").pipe(Config.withDefault("./data"))
  let stopStep: () => string = () => "the web app to close"
  armStopDeadline(settings.drainTimeoutSec, () => stopStep())
  // First of all: one service per DATA_DIR (released last, after the chain has saved its state there).
  yield* dataDirLock(dataDir)
  const adminTokenOpt = yield* Config.option(Config.redacted("ADMIN_TOKEN"))
  const devCredit = settings.app.devCredit
  const verifyWorkers = yield* Config.integer("VERIFY_WORKERS").pipe(Config.withDefault(1))
  const snapshotIntervalSec = yield* Config.integer("SNAPSHOT_INTERVAL_SEC").pipe(Config.withDefault(300))
  const chainMode = yield* settingsChainMode.pipe(Config.withDefault("embedded" as const))
  const chainSide = yield* chainSideSettings(host, settings.app.corsOrigins)
  const webPort = yield* Config.integer("WEB_PORT").pipe(Config.withDefault(3000))
  // WEB=false runs the service without the web app (tests that restart the process many times).
  const webEnabled = yield* Config.boolean("WEB").pipe(Config.withDefault(true))
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
  const logger = stderrLogger(settings.log, () => clock.unsafeCurrentTimeMillis()) // live-only: a log line's own wall time
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
      : { chain: chainSide }),
    faucet,
    config: { ...settings.app, adminToken },
    ops: settings.ops
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

// ROLE: the single process (default) or one role of a cluster on NATS (docs/cluster.md).
const role = Config.literal("single", "sequencer", "gateway")("ROLE").pipe(Config.withDefault("single" as const))

NodeRuntime.runMain(
  Effect.scoped(Effect.flatMap(role, (r): Effect.Effect<never, Effect.Effect.Error<typeof program> | Effect.Effect.Error<ReturnType<typeof clusterProgram>>, Scope.Scope> => (r === "single" ? program : clusterProgram(r)))).pipe(
    // Another service holds DATA_DIR: one line naming it and its PID, and a distinct exit code.
    Effect.catchTag("DataDirInUse", (e) => Console.error(`twinbook: ${e.message}`).pipe(Effect.andThen(Effect.sync(() => process.exit(DATA_DIR_IN_USE_EXIT))))),
    // A cluster role that cannot start as configured (an embedded chain, say): its one line.
    Effect.catchTag("ClusterStartRefused", (e) => Console.error(`twinbook: ${e.message}`).pipe(Effect.andThen(Effect.sync(() => process.exit(1)))))
  )
)
