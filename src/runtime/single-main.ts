// The single process's program (ROLE=single, `npm start`): one service per DATA_DIR, its secrets
// kept there, the deposit chain (embedded or external), the live layers, the service, the web app,
// and the lines an operator reads at start. Each step is one function below, in the order they run;
// what each acquires is released in reverse when the program's Scope closes (Ctrl-C, SIGTERM).
import { randomBytes } from "node:crypto"
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Console, Effect, Layer, Option, type Scope } from "effect"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { ensureBuilt } from "../../web/build.ts"
import { startWebServer } from "../../web/server.ts"
import { ANVIL_KEYS } from "../chain/anvil.ts"
import { type Chain, ChainService } from "../chain/chain.ts"
import { makeDevFaucet } from "../chain/faucet.ts"
import { type ChainStartError, type LiveChain, makeLiveChain } from "../chain/live.ts"
import type { Logger } from "../ops/log.ts"
import { DataDirInUse, dataDirLock } from "../store/data-dir-lock.ts"
import { describeRecovery } from "../store/durable.ts"
import type { FaucetAccess } from "../usecase/faucet.ts"
import { faucetRefusal } from "../usecase/faucet.ts"
import { makeService, type RunningService } from "./boot.ts"
import type { Configuration } from "./config.ts"
import { inlineVerifierLayer, liveMonoClockLayer, loggerLayer, nodeTransportLayer, wallClockLayer, workerVerifierLayer } from "./services.ts"
import { armStopDeadline, stderrLogger } from "./settings.ts"
import { durableStoreLayer } from "./store.ts"

export type SingleConfiguration = Extract<Configuration, { role: "single" }>

/** What the entry point decides for the process (src/main.ts): the runtime never exits it. */
export interface SingleProcess {
  /** The journal cannot write (src/runtime/boot.ts ServiceConfig.onFatal): src/main.ts prints the line and exits 70. */
  readonly onFatal: (err: unknown) => void
}

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

/** The step a stop is waiting for, named when the drain times out (DRAIN_TIMEOUT_SEC). */
class StopSteps {
  current: () => string = () => "the web app to close"
  readonly set = (waitingFor: () => string): void => void (this.current = waitingFor)
}

/**
 * The deposit chain: none with CHAIN=off; else CHAIN_RPC_URL's, or the embedded Anvil keeping its
 * state in DATA_DIR (balances and deposit addresses survive restarts).
 */
const startChain = (c: SingleConfiguration, stop: StopSteps): Effect.Effect<LiveChain | null, ChainStartError, Scope.Scope> =>
  Effect.gen(function* () {
    const mode = Option.getOrElse(c.chain.mode, () => "embedded" as const)
    if (mode === "off") return null
    const live = c.chain.live
    const chain = yield* makeLiveChain(live.rpcUrl === undefined && live.anvilStatePath === undefined ? { ...live, anvilStatePath: join(c.single.dataDir, "anvil-state.json") } : live)
    yield* Effect.addFinalizer(() => Effect.sync(() => stop.set(() => "the chain to stop (the embedded chain saves its state, then Anvil stops)")))
    return chain
  })

/** The development faucet (src/usecase/faucet.ts): built only for the embedded chain with DEV_CREDIT on. */
const faucetOf = (c: SingleConfiguration, chain: LiveChain | null): FaucetAccess => {
  const refused = faucetRefusal(c.common.app.devCredit, chain === null ? "off" : c.chain.live.rpcUrl === undefined ? "embedded" : "external")
  if (refused !== null || chain === null) return { refused: refused ?? "no chain" }
  return { faucet: makeDevFaucet({ rpcUrl: chain.rpcUrl, chainId: chain.info.chainId, operatorKey: c.chain.live.operatorKey ?? ANVIL_KEYS[0], token: chain.info.token }) }
}

interface Secrets {
  readonly adminToken: string
  /** Set when the token was generated (unset ADMIN_TOKEN): where it is kept, and whether just now. */
  readonly keptToken: { readonly path: string; readonly created: boolean } | null
  readonly sessionSecret: Uint8Array
}

/** The operator token (ADMIN_TOKEN, else generated once and kept in DATA_DIR) and the session secret (kept in DATA_DIR). */
const secretsOf = (c: SingleConfiguration): Secrets => {
  const dataDir = c.single.dataDir
  const kept = Option.isNone(c.single.adminToken) ? loadOrCreateSecret(dataDir, "admin-token", 24) : null
  return {
    adminToken: Option.getOrElse(c.single.adminToken, () => kept!.hex),
    keptToken: kept === null ? null : { path: kept.path, created: kept.created },
    sessionSecret: Buffer.from(loadOrCreateSecret(dataDir, "session-secret", 32).hex, "hex")
  }
}

/**
 * The live graph (docs/runtime.md "Tags and layers"), built in the program's Scope: what it
 * acquires (the verifier's worker threads) is released after the service itself.
 */
const liveLayers = (c: SingleConfiguration, chain: Chain | null, logger: Logger, wallMs: () => number) =>
  Layer.build(
    Layer.mergeAll(
      wallClockLayer(wallMs),
      liveMonoClockLayer,
      c.common.verifyWorkers > 0 ? workerVerifierLayer(c.common.verifyWorkers) : inlineVerifierLayer,
      durableStoreLayer(c.single.dataDir),
      nodeTransportLayer,
      // Security events, internal errors, requests and notable events all go through the logger.
      loggerLayer(logger),
      chain === null ? (Layer.empty as Layer.Layer<ChainService>) : Layer.succeed(ChainService, chain)
    )
  )

/**
 * The web app (web/): built here when web/dist is missing or stale, then served at WEB_PORT, its
 * requests logged like the API's. Its deposit page offers the API's faucet when the service has one.
 * A web app that cannot start is a line on stderr, never the service's end.
 */
const startWeb = (c: SingleConfiguration, service: RunningService, chain: LiveChain | null, faucet: FaucetAccess, logger: Logger) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      if (!c.single.web.enabled) return null
      try {
        if (await ensureBuilt()) console.log("web app          built into web/dist")
        return await startWebServer({
          host: c.common.host,
          port: c.single.web.port,
          config: {
            api_url: service.http.url,
            ws_url: service.http.wsUrl,
            deposit_url: service.chainServices?.deposit.url ?? null,
            chain_rpc_url: chain !== null && c.chain.live.rpcUrl === undefined ? chain.rpcUrl : null,
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

/** Where the API, the deposit service and the docs are. */
const printEndpoints = (service: RunningService, chain: LiveChain | null) =>
  Effect.gen(function* () {
    yield* Console.log(`twinbook API      ${service.http.url}/v1/markets`)
    yield* Console.log(`WebSocket         ${service.http.wsUrl}`)
    const deposit = service.chainServices?.deposit
    if (deposit !== undefined && chain !== null) {
      yield* Console.log(`deposit service   ${deposit.url}/v1/deposit/native-address/{0x…}`)
      yield* Console.log(`deposit chain     ${chain.rpcUrl} (chain ${chain.info.chainId}; USDG ${chain.info.token}; vault ${chain.info.vault})`)
    }
    yield* Console.log(`API docs          ${service.http.url}/v1/docs  (OpenAPI: /v1/openapi.json)`)
  })

/** What the start recovered (journal, snapshots, history store) and where the operator token is. */
const printState = (dataDir: string, service: RunningService, secrets: Secrets) =>
  Effect.gen(function* () {
    const r = service.durable?.recovery
    if (r !== undefined) {
      yield* Console.log(`data dir          ${dataDir}  (recovered to seq ${r.lastSeq}: snapshot ${r.snapshotSeq ?? "none"} + ${r.replayed} journal records)`)
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
    const kept = secrets.keptToken
    if (kept?.created === true) yield* Console.log(`operator token    ${secrets.adminToken}  (generated and kept in ${kept.path}; set ADMIN_TOKEN to choose one)`)
    else if (kept !== null) yield* Console.log(`operator token    kept in ${kept.path}  (set ADMIN_TOKEN to choose one)`)
  })

/** The single process, configured: runs until its Scope closes. */
export const singleProgram = (c: SingleConfiguration, proc: SingleProcess): Effect.Effect<never, DataDirInUse | ChainStartError, Scope.Scope> =>
  Effect.gen(function* () {
    const { common, single } = c
    const stop = new StopSteps()
    armStopDeadline(common.drainTimeoutSec, () => stop.current())
    // First of all: one service per DATA_DIR (released last, after the chain has saved its state there).
    yield* dataDirLock(single.dataDir)
    const chain = yield* startChain(c, stop)
    const clock = yield* Effect.clock
    const wallMs = (): number => clock.unsafeCurrentTimeMillis() // live-only: the wall clock enters here; the exchange stamps commands with it (docs/time.md)
    const logger = stderrLogger(common.log, wallMs)
    const faucet = faucetOf(c, chain)
    const secrets = secretsOf(c)
    // Released last, after everything the service acquired (its Scope closes in reverse order).
    yield* Effect.addFinalizer(() => Console.log("twinbook stopped"))
    const live = yield* liveLayers(c, chain, logger, wallMs)
    const service = yield* makeService({
      onStopStep: stop.set,
      onFatal: proc.onFatal,
      host: common.host,
      port: common.port,
      secret: secrets.sessionSecret,
      catalog: demoCatalog(),
      snapshotIntervalSec: single.snapshotIntervalSec,
      ...(chain === null ? {} : { chain: c.chain.side }),
      faucet,
      config: { ...common.app, adminToken: secrets.adminToken },
      ops: common.ops
    }).pipe(Effect.provide(live))
    yield* printEndpoints(service, chain)
    const web = yield* startWeb(c, service, chain, faucet, logger)
    if (web !== null) yield* Console.log(`web app           ${web.url}  (open this in a browser)`)
    yield* printState(single.dataDir, service, secrets)
    return yield* Effect.never
  })
