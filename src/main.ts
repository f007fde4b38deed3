// Live entry point: configuration from the environment (Effect Config), the
// system clock, the node transport; Ctrl-C releases everything in order.
import { randomBytes } from "node:crypto"
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Option, Redacted } from "effect"
import { demoCatalog } from "../fixtures/catalog.ts"
import { DEFAULT_ABUSE_LIMITS } from "./api/context.ts"
import { inlineVerifier, workerVerifier } from "./auth/verifier.ts"
import { liveChainConfigFromEnv, makeLiveChain } from "./chain/live.ts"
import { makeService } from "./runtime/boot.ts"
import { ANVIL_KEYS } from "./chain/anvil.ts"
import { ensureBuilt } from "../web/build.ts"
import { startWebServer } from "../web/server.ts"
import { describeRecovery } from "./store/durable.ts"

/** The server's session secret lives in DATA_DIR so cookies survive restarts. */
const loadOrCreateSecret = (dataDir: string): Uint8Array => {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, "session-secret")
  if (existsSync(path)) return Buffer.from(readFileSync(path, "utf8").trim(), "hex")
  const secret = randomBytes(32) // live-only: a fresh server secret on first start
  // Durable before first use: cookies and api_keys issued with it must survive a crash.
  const tmp = `${path}.tmp`
  writeFileSync(tmp, secret.toString("hex"), { mode: 0o600 })
  const fd = openSync(tmp, "r")
  fsyncSync(fd)
  closeSync(fd)
  renameSync(tmp, path)
  return secret
}

const program = Effect.gen(function* () {
  const port = yield* Config.integer("PORT").pipe(Config.withDefault(8080))
  const host = yield* Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
  const dataDir = yield* Config.string("DATA_DIR").pipe(Config.withDefault("./data"))
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
    wsSubscriptionsPerConnection: yield* Config.integer("LIMIT_WS_SUBSCRIPTIONS").pipe(Config.withDefault(DEFAULT_ABUSE_LIMITS.wsSubscriptionsPerConnection))
  }
  const snapshotIntervalSec = yield* Config.integer("SNAPSHOT_INTERVAL_SEC").pipe(Config.withDefault(300))
  const chainMode = yield* Config.literal("embedded", "off")("CHAIN").pipe(Config.withDefault("embedded" as const))
  const depositPort = yield* Config.integer("DEPOSIT_PORT").pipe(Config.withDefault(8081))
  const confirmations = yield* Config.integer("DEPOSIT_CONFIRMATIONS").pipe(Config.withDefault(0))
  const chainPollMs = yield* Config.integer("CHAIN_POLL_MS").pipe(Config.withDefault(1000))
  const minUsdgMicro = yield* Config.integer("DEPOSIT_MIN_MICRO").pipe(Config.withDefault(1_000_000))
  const maxPerTxMicro = yield* Config.integer("DEPOSIT_MAX_PER_TX_MICRO").pipe(Config.withDefault(100_000_000))
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
  const clock = yield* Effect.clock

  const generated = Option.isNone(adminTokenOpt)
  const adminToken = Option.match(adminTokenOpt, {
    onNone: () => randomBytes(24).toString("hex"), // live-only: a one-off operator token for development
    onSome: Redacted.value
  })
  const secret = loadOrCreateSecret(dataDir)

  // Released last, after everything the service acquired (its Scope closes in reverse order).
  yield* Effect.addFinalizer(() => Console.log("twinbook stopped"))
  const service = yield* makeService({
    host,
    port,
    nowMs: () => clock.unsafeCurrentTimeMillis(), // live-only: the wall clock enters here; the exchange stamps commands with it (docs/time.md)
    secret,
    catalog: demoCatalog(),
    dataDir,
    snapshotIntervalSec,
    ...(chain === null
      ? {}
      : {
          chain: {
            chain,
            host,
            depositPort,
            confirmations,
            pollMs: chainPollMs,
            minUsdgMicro,
            maxPerTxMicro,
            corsOrigins: new Set(corsOrigins.split(",").map((s) => s.trim()).filter((s) => s !== ""))
          }
        }),
    verifier: verifyWorkers > 0 ? workerVerifier(verifyWorkers) : inlineVerifier(),
    config: {
      adminToken,
      corsOrigins: new Set(corsOrigins.split(",").map((s) => s.trim()).filter((s) => s !== "")),
      secureCookies,
      devCredit,
      rewards: { dailyBudgetMicro, bandSpreadBpsMax, perWalletCapPct: 40, minSizeContracts },
      limits
    },
    log: (event) => console.error(JSON.stringify({ ts_ms: clock.unsafeCurrentTimeMillis(), level: "warn", ...event })), // live-only: a log line's own wall time
    onError: (err, where) => console.error(where === undefined ? "internal error:" : `internal error in ${where.method} ${where.route} (request ${where.requestId}):`, err)
  })
  yield* Console.log(`twinbook API      ${service.http.url}/v1/markets`)
  yield* Console.log(`WebSocket         ${service.http.wsUrl}`)
  const deposit = service.chainServices?.deposit
  if (deposit !== undefined && chain !== null) {
    yield* Console.log(`deposit service   ${deposit.url}/v1/deposit/native-address/{0x…}`)
    yield* Console.log(`deposit chain     ${chain.rpcUrl} (chain ${chain.info.chainId}; USDG ${chain.info.token}; vault ${chain.info.vault})`)
  }
  yield* Console.log(`API docs          ${service.http.url}/v1/docs  (OpenAPI: /v1/openapi.json)`)
  // The web app (web/): built here when web/dist is missing or stale, then served at WEB_PORT.
  // The test-USDG faucet exists only on the embedded chain with DEV_CREDIT on (docs/api.md "Web app").
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
            token_address: chain?.info.token ?? null
          },
          ...(chain !== null && chainConfig.rpcUrl === undefined && devCredit
            ? { faucet: { rpcUrl: chain.rpcUrl, chainId: chain.info.chainId, operatorKey: chainConfig.operatorKey ?? ANVIL_KEYS[0], token: chain.info.token } }
            : {})
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
  if (generated) yield* Console.log(`operator token    ${adminToken}  (generated; set ADMIN_TOKEN to choose one)`)
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(program))
