// The service's configuration, declared once (issue 35 item 3): every environment variable any
// role reads, each with its Effect `Config` (parsing, validation, default), the default as the
// docs show it, its unit and its doc line. `configuration` reads them for the ROLE; README's
// variable table and docs/cluster.md's are generated from here (`npm run docs:config`), and
// test/docs/config-table.test.ts fails when a table differs or a variable read in src/ is missing.
import { hostname } from "node:os"
import { Config, ConfigError, Effect, Either, Option, Redacted } from "effect"
import type { Hex } from "viem"
import { type AppConfig, DEFAULT_ABUSE_LIMITS } from "../api/context.ts"
import { type ChainInfo, DEPOSIT_CHAIN_ID, normalizeAddress, type Address } from "../chain/chain.ts"
import type { LiveChainConfig } from "../chain/live.ts"
import type { OpsOptions } from "../ops/service-ops.ts"
import { DEFAULT_SLOW_WRITE_MS } from "../ops/storage-health.ts"
import type { ChainSideConfig } from "./boot.ts"

/** One variable as its table shows it. */
export interface VariableDoc {
  readonly name: string
  /** The default cell: generated from the value the `Config` falls back to, or a sentence when there is none to show. */
  readonly shownDefault: string
  /** What the number counts, when it is a quantity (README shows it beside the default); null for a port, a count, a flag or a string. */
  readonly unit: string | null
  /** The meaning cell: what it does, and the doc or test that proves it. */
  readonly doc: string
  /** README's table (the single process, and what every role shares) or docs/cluster.md's (the cluster roles' own). */
  readonly table: "readme" | "cluster"
  /** Read outside this module (a tool locator); the path says where. */
  readonly readIn?: string
}

/** A declared variable: its doc entry and the `Config` that reads it. */
export interface Variable<A> extends VariableDoc {
  readonly config: Config.Config<A>
}

type Table = VariableDoc["table"]

const declare = <A>(name: string, config: Config.Config<A>, shownDefault: string, unit: string | null, doc: string, table: Table = "readme"): Variable<A> => ({
  name,
  config: config.pipe(Config.withDescription(doc)),
  shownDefault,
  unit,
  doc,
  table
})

const code = (v: string | number | boolean): string => `\`${v}\``

const integer = (name: string, fallback: number, unit: string | null, doc: string, table?: Table): Variable<number> =>
  declare(name, Config.integer(name).pipe(Config.withDefault(fallback)), code(fallback), unit, doc, table)

const boolean = (name: string, fallback: boolean, doc: string): Variable<boolean> => declare(name, Config.boolean(name).pipe(Config.withDefault(fallback)), code(fallback), null, doc)

const string = (name: string, fallback: string, doc: string): Variable<string> => declare(name, Config.string(name).pipe(Config.withDefault(fallback)), code(fallback), null, doc)

/** Absent is a value of its own (the Config yields `Option.none()`); `shown` says what absent means. */
const optional = <A>(name: string, config: Config.Config<A>, shown: string, doc: string, table?: Table): Variable<Option.Option<A>> =>
  declare(name, Config.option(config), shown, null, doc, table)

const invalid = (name: string, message: string) => ConfigError.InvalidData([name], message)

// ---------------------------------------------------------------------------------------------
// ROLE and what every role shares (src/runtime/cluster-main.ts reads these too; docs/cluster.md)

export const ROLE = declare(
  "ROLE",
  Config.literal("single", "sequencer", "gateway")("ROLE").pipe(Config.withDefault("single" as const)),
  code("single"),
  null,
  "`single`: this one process; `sequencer` / `gateway`: a role of the cluster on NATS JetStream, with its own variables (`NATS_URL`, `NODE_NAME`, `SESSION_SECRET`, `LEASE_TTL_MS`, …: docs/cluster.md, `test/cluster/failover.test.ts`)"
)

const originsOf = (list: string): ReadonlySet<string> => new Set(list.split(",").map((s) => s.trim()).filter((s) => s !== ""))

/** LOG_FORMAT's default follows stderr: read when the configuration is, not when this module loads. */
const ttyFormat = (): "json" | "pretty" => (process.stderr.isTTY ? "pretty" : "json")

export const common = {
  port: integer("PORT", 8080, null, "the API and its WebSocket (`/v1/ws`); `0` picks a free port (printed at start)"),
  host: string("HOST", "127.0.0.1", "bind address of the API, the deposit service and the web app"),
  drainTimeoutSec: integer("DRAIN_TIMEOUT_SEC", 30, "s", "bound on a SIGTERM stop; past it the process exits 124 saying what it waited for (docs/operations.md, `test/ops/drain.test.ts`)"),
  corsOrigins: string("CORS_ORIGINS", "http://localhost:3000,http://127.0.0.1:3000", "comma-separated Origin allow-list (also for cookie-authenticated WebSocket upgrades)"),
  devCredit: boolean(
    "DEV_CREDIT",
    true,
    "enables `POST /v1/admin/credit` (a development credit beside on-chain deposits) and, on the embedded chain only, the test-USDG faucet (`POST /v1/dev/faucet`, `npm run faucet`). **Set `false` in production**"
  ),
  secureCookies: boolean("SECURE_COOKIES", false, "adds `Secure` to the session cookie (set behind TLS)"),
  verifyWorkers: integer("VERIFY_WORKERS", 1, null, "worker threads verifying order signatures (0 = on the main thread)"),
  registrationsPerMinute: integer(
    "LIMIT_REGISTRATIONS_PER_MIN",
    DEFAULT_ABUSE_LIMITS.registrationsPerMinute,
    "per minute",
    "registrations per address (docs/api.md \"Limits\"); the same limit applies to wallet links, in a bucket of their own"
  ),
  wsConnectionsPerAddress: integer("LIMIT_WS_CONNECTIONS_PER_IP", DEFAULT_ABUSE_LIMITS.wsConnectionsPerAddress, null, "WebSocket connections open at once per address (docs/api.md \"Limits\")"),
  wsSubscriptionsPerConnection: integer("LIMIT_WS_SUBSCRIPTIONS", DEFAULT_ABUSE_LIMITS.wsSubscriptionsPerConnection, null, "subscriptions per WebSocket connection (docs/api.md \"Limits\")"),
  rateLimitBuckets: integer(
    "LIMIT_RATE_BUCKETS",
    DEFAULT_ABUSE_LIMITS.rateLimitBuckets,
    null,
    "rate-limit buckets held at most, every name and address together; past it the least recently used is evicted (docs/api.md \"Limits\", `test/hostile/limiter-keys.test.ts`)"
  ),
  wsConnections: integer(
    "LIMIT_WS_CONNECTIONS",
    DEFAULT_ABUSE_LIMITS.wsConnections,
    null,
    "WebSocket connections open at once over all addresses; past it a connection is closed with 1013 (docs/api.md \"Limits\", `test/hostile/ws-storm.test.ts`; `/v1/health` under a storm: `npm run bench -- ws-storm`)"
  ),
  wsSubscriptions: integer("LIMIT_WS_SUBSCRIPTIONS_TOTAL", DEFAULT_ABUSE_LIMITS.wsSubscriptions, null, "WebSocket subscriptions over all connections; past it 1013, as above"),
  wsBufferedMib: integer("LIMIT_WS_BUFFERED_MIB", DEFAULT_ABUSE_LIMITS.wsBufferedBytes / (1024 * 1024), "MiB", "bytes queued for WebSocket clients over all connections; past it the slowest are closed with 1013, as above"),
  rewardsDailyBudgetMicro: integer("REWARDS_DAILY_BUDGET_MICRO", 1_000_000_000, "µUSDG", "the daily LP pool (paid at 00:00 UTC), shown in `/v1/rewards/config` (docs/rewards.md)"),
  rewardsBandSpreadBpsMax: integer("REWARDS_BAND_SPREAD_BPS_MAX", 300, "bps", "orders further than this from the mid score nothing; shown in `/v1/rewards/config`"),
  rewardsMinSizeContracts: integer("REWARDS_MIN_SIZE_CONTRACTS", 10, "contracts", "smaller resting orders score nothing in the LP pool (docs/rewards.md)"),
  logLevel: declare(
    "LOG_LEVEL",
    Config.literal("debug", "info", "warn", "error")("LOG_LEVEL").pipe(Config.withDefault("info" as const)),
    code("info"),
    null,
    "`debug`, `info`, `warn` or `error`: structured logs on stderr, one line per request and per notable event, no secrets (docs/metrics.md, `test/ops/logs.test.ts`)"
  ),
  logFormat: optional("LOG_FORMAT", Config.literal("json", "pretty")("LOG_FORMAT"), "`json` (`pretty` on a terminal)", "`json` or `pretty` (docs/metrics.md \"Logs\")"),
  slowDiskWarnMs: integer(
    "SLOW_DISK_WARN_MS",
    DEFAULT_SLOW_WRITE_MS,
    "ms",
    "a durable journal write slower than this is a `slow disk` warning line and a readiness detail (docs/durability.md, `test/store/slow-disk.test.ts`)"
  ),
  metricsPublic: boolean("METRICS_PUBLIC", false, "`GET /metrics` (Prometheus) without the operator token (docs/metrics.md, `test/ops/metrics.test.ts`)"),
  readyMaxLagBlocks: integer("READY_MAX_LAG_BLOCKS", 20, "blocks", "the deposit watcher's lag past which `GET /v1/ready` answers 503 (docs/metrics.md, `test/ops/health.test.ts`)")
}

// ---------------------------------------------------------------------------------------------
// The single process only (src/runtime/single-main.ts)

export const single = {
  dataDir: string(
    "DATA_DIR",
    "./data",
    "state directory: `journal/` (the command journal, never pruned), `snapshots/`, `history.duckdb` (trades and fills projected from the journal, for start-up, rebuilds and exports; see `docs/decisions.md` § History) and the session secret; one service per directory (docs/operations.md \"The DATA_DIR lock\", `test/ops/process.test.ts`)"
  ),
  adminToken: optional(
    "ADMIN_TOKEN",
    Config.redacted("ADMIN_TOKEN"),
    "generated once, kept in `DATA_DIR/admin-token`",
    "operator bearer token (`Authorization: Bearer …`); a generated one is printed on the first start only, later starts say where it is kept (`test/ops/process.test.ts`)"
  ),
  webPort: integer("WEB_PORT", 3000, null, "the web app (built into `web/dist` on `npm install`, or at start when stale); `npm run web:dev` for hot reload (docs/web.md)"),
  web: boolean("WEB", true, "`false` runs the service without the web app"),
  snapshotIntervalSec: integer("SNAPSHOT_INTERVAL_SEC", 300, "s", "seconds between snapshots (also taken on a clean stop); `0`: only at a clean stop; see `docs/durability.md`")
}

// ---------------------------------------------------------------------------------------------
// The chain side (the single process; a cluster's leader with an external chain only)

const addressConfig = (name: string): Config.Config<Address> =>
  Config.string(name).pipe(
    Config.mapOrFail((s) => {
      const a = normalizeAddress(s.trim())
      return a === null ? Either.left(invalid(name, "expected 0x + 40 hex characters")) : Either.right(a)
    })
  )

export const chain = {
  mode: optional(
    "CHAIN",
    Config.literal("embedded", "off")("CHAIN"),
    code("embedded"),
    "`embedded`: start Anvil (chain id 4663) from `@foundry-rs/anvil`, or use `CHAIN_RPC_URL`; `off`: no chain side. In a cluster role, unset means no chain unless `CHAIN_RPC_URL` is set, and `embedded` is refused (docs/cluster.md \"The chain side\")"
  ),
  rpcUrl: optional(
    "CHAIN_RPC_URL",
    Config.string("CHAIN_RPC_URL"),
    "unset",
    "an external RPC instead of the embedded Anvil (its chain id must be 4663; then `CHAIN_OPERATOR_KEY`, and the three contract addresses or none to deploy). Cluster sequencers (`ROLE=sequencer`) take only an external chain, with the three addresses; the leader runs the chain side (docs/cluster.md \"The chain side\", `test/cluster/chain-failover.test.ts`)"
  ),
  operatorKey: optional(
    "CHAIN_OPERATOR_KEY",
    Config.redacted("CHAIN_OPERATOR_KEY").pipe(
      Config.mapOrFail((r) => {
        const key = Redacted.value(r).trim()
        return /^0x[0-9a-fA-F]{64}$/.test(key) ? Either.right(key as Hex) : Either.left(invalid("CHAIN_OPERATOR_KEY", "expected 0x + 64 hex characters"))
      })
    ),
    "Anvil's first development key",
    "`0x` + 64 hex; required with `CHAIN_RPC_URL`; pays gas for sweeps and payouts"
  ),
  token: optional("CHAIN_TOKEN_ADDRESS", addressConfig("CHAIN_TOKEN_ADDRESS"), "unset: deploy at start", "the USDG token's address; `CHAIN_TOKEN_ADDRESS`, `CHAIN_VAULT_ADDRESS` and `CHAIN_FACTORY_ADDRESS`: all three or none"),
  vault: optional("CHAIN_VAULT_ADDRESS", addressConfig("CHAIN_VAULT_ADDRESS"), "unset: deploy at start", "the vault's address (with the other two)"),
  factory: optional("CHAIN_FACTORY_ADDRESS", addressConfig("CHAIN_FACTORY_ADDRESS"), "unset: deploy at start", "the forwarder factory's address (with the other two)"),
  anvilStatePath: optional(
    "CHAIN_ANVIL_STATE",
    Config.string("CHAIN_ANVIL_STATE"),
    "`DATA_DIR/anvil-state.json`",
    "the embedded chain's state file, saved by the service (atomically, fsynced) whenever the chain moved, before any deposit or payout is confirmed, and at a clean stop. A clean stop keeps the whole chain; a SIGKILL keeps every block the ledger relies on (credited deposits, confirmed payouts: `test/chain/crash-anvil.test.ts`) and may lose at most the last poll's uncredited activity (a pending transfer stays the sender's; a lost sweep is sent again; an unconfirmed payout is re-sent, paid once). A file lost or restored from an older copy is a chain gone back: crediting and payouts halt (`GET /v1/admin/chain`, docs/api.md)"
  ),
  anvilPort: optional(
    "CHAIN_PORT",
    Config.integer("CHAIN_PORT"),
    "any free port",
    "the embedded chain's RPC port on 127.0.0.1; a taken port stops the start, naming it (`embedded anvil on CHAIN_PORT <p>: … already in use by another process`, `test/ops/process.test.ts`). Refused together with `CHAIN_RPC_URL`"
  ),
  anvilBin: {
    name: "ANVIL_BIN",
    shownDefault: "the `@foundry-rs/anvil` platform binary",
    unit: null,
    doc: "another Anvil binary for the embedded chain (read where Anvil starts, so tests and benches honour it too)",
    table: "readme",
    readIn: "src/chain/anvil.ts"
  } satisfies VariableDoc,
  depositPort: integer("DEPOSIT_PORT", 8081, null, "the deposit service; `0` picks a free port"),
  confirmations: integer("DEPOSIT_CONFIRMATIONS", 0, "blocks", "blocks before a deposit credits (0 on the embedded chain, where blocks are mined per transaction)"),
  minUsdgMicro: integer("DEPOSIT_MIN_MICRO", 1_000_000, "µUSDG", "smaller deposits end in `error`, uncredited and recorded (see `docs/decisions.md` § Deposits and withdrawals)"),
  maxPerTxMicro: integer("DEPOSIT_MAX_PER_TX_MICRO", 100_000_000, "µUSDG", "larger deposits end in `error`, uncredited and recorded (as above)"),
  pollMs: integer("CHAIN_POLL_MS", 1000, "ms", "watcher and payout worker cadence on a quiet chain (the longest time between passes)"),
  headPollMs: integer(
    "CHAIN_HEAD_POLL_MS",
    100,
    "ms",
    "how often the chain's head is read; a new block starts a pass at once (`test/runtime/chain-head.test.ts`; latency: `npm run bench -- deposit`); 0 turns it off"
  )
}

// ---------------------------------------------------------------------------------------------
// The cluster roles' own (docs/cluster.md "Roles and their variables")

const SESSION_SECRET_RULE = "SESSION_SECRET must be at least 32 bytes in hex (64 hex digits), the same on every process of the cluster"

export const cluster = {
  natsUrl: declare(
    "NATS_URL",
    Config.string("NATS_URL"),
    "required",
    null,
    "the NATS nodes, comma-separated (`nats://n1:4222,nats://n2:4222,nats://n3:4222`); the client moves to another node when one fails",
    "cluster"
  ),
  nodeName: optional("NODE_NAME", Config.string("NODE_NAME"), "`host:pid`", "this process's name on the lease, on every batch it appends and in its log lines", "cluster"),
  adminToken: declare(
    "ADMIN_TOKEN",
    Config.redacted("ADMIN_TOKEN"),
    "required",
    null,
    "the operator token, the same on every process (an operator call may reach any gateway)",
    "cluster"
  ),
  sessionSecret: declare(
    "SESSION_SECRET",
    Config.redacted("SESSION_SECRET").pipe(
      Config.mapOrFail((r) => (/^(?:[0-9a-f]{2}){32,}$/i.test(Redacted.value(r)) ? Either.right(Redacted.value(r)) : Either.left(invalid("SESSION_SECRET", SESSION_SECRET_RULE))))
    ),
    "required",
    null,
    "32 bytes or more in hex, the same on every process: a session cookie issued by one gateway is good on all (`test/cluster/failover.test.ts` moves each trader between gateways with one cookie)",
    "cluster"
  ),
  replicas: integer("NATS_REPLICAS", 3, null, "the stream's and the lease bucket's replicas (1 only for a one-node trial)", "cluster"),
  leaseTtlMs: integer(
    "LEASE_TTL_MS",
    3_000,
    "ms",
    "sequencer: the lease's lifetime; a standby takes over between TTL and TTL + 1 s after the leader's last renewal (see \"The lease\"). Every sequencer must use the same value (a bucket with another TTL is refused)",
    "cluster"
  ),
  commandTimeoutMs: integer(
    "COMMAND_TIMEOUT_MS",
    5_000,
    "ms",
    "gateway: how long the leader may take to answer a command. A command in flight when its leader died is answered sooner: 503 `not_leader` (\"read before retrying: it may have been applied\") as soon as the gateway's replica reads the next term's marker (`test/cluster/commands.test.ts`); the timeout is for a leader that is alive but silent",
    "cluster"
  )
}

/**
 * Every declared variable, in table order: README's (where it listens and keeps its state first,
 * then what every role shares, then the chain), then docs/cluster.md's.
 */
export const VARIABLES: ReadonlyArray<VariableDoc> = [
  ROLE,
  common.port,
  common.host,
  ...Object.values(single),
  ...Object.values(common).filter((v) => v !== common.port && v !== common.host),
  ...Object.values(chain),
  ...Object.values(cluster)
]

// ---------------------------------------------------------------------------------------------
// The configuration, read

export type Role = "single" | "sequencer" | "gateway"

export interface CommonSettings {
  readonly host: string
  readonly port: number
  readonly drainTimeoutSec: number
  readonly verifyWorkers: number
  /** AppConfig but the operator token, which each role finds its own way. */
  readonly app: Omit<AppConfig, "adminToken">
  readonly ops: OpsOptions
  readonly log: { readonly level: "debug" | "info" | "warn" | "error"; readonly format: "json" | "pretty" }
}

/** What every role reads the same way (docs/cluster.md "Roles and their variables"). */
export const commonSettings: Effect.Effect<CommonSettings, ConfigError.ConfigError> = Effect.gen(function* () {
  const c = yield* Config.all(Object.fromEntries(Object.entries(common).map(([k, v]) => [k, v.config])) as { [K in keyof typeof common]: (typeof common)[K]["config"] })
  return {
    host: c.host,
    port: c.port,
    drainTimeoutSec: c.drainTimeoutSec,
    verifyWorkers: c.verifyWorkers,
    app: {
      corsOrigins: originsOf(c.corsOrigins),
      devCredit: c.devCredit,
      secureCookies: c.secureCookies,
      rewards: { dailyBudgetMicro: c.rewardsDailyBudgetMicro, bandSpreadBpsMax: c.rewardsBandSpreadBpsMax, perWalletCapPct: 40, minSizeContracts: c.rewardsMinSizeContracts },
      limits: {
        registrationsPerMinute: c.registrationsPerMinute,
        wsConnectionsPerAddress: c.wsConnectionsPerAddress,
        wsSubscriptionsPerConnection: c.wsSubscriptionsPerConnection,
        wsConnections: c.wsConnections,
        wsSubscriptions: c.wsSubscriptions,
        wsBufferedBytes: c.wsBufferedMib * 1024 * 1024,
        rateLimitBuckets: c.rateLimitBuckets
      }
    },
    // /metrics behind the operator token unless public (docs/metrics.md).
    ops: { metricsPublic: c.metricsPublic, maxLagBlocks: c.readyMaxLagBlocks, slowWriteMs: c.slowDiskWarnMs },
    // Logs on stderr, JSON unless stderr is a terminal.
    log: { level: c.logLevel, format: Option.getOrElse(c.logFormat, ttyFormat) }
  }
})

/**
 * The chain's variables as the live chain takes them: CHAIN_RPC_URL (absent: embedded Anvil),
 * CHAIN_OPERATOR_KEY (required with CHAIN_RPC_URL), the three contract addresses (all or none;
 * none: deploy at start-up), CHAIN_ANVIL_STATE, CHAIN_PORT (absent: any free port).
 */
export const liveChainConfigFromEnv: Config.Config<LiveChainConfig> = Config.all({
  rpcUrl: chain.rpcUrl.config,
  operatorKey: chain.operatorKey.config,
  token: chain.token.config,
  vault: chain.vault.config,
  factory: chain.factory.config,
  anvilStatePath: chain.anvilStatePath.config,
  anvilPort: chain.anvilPort.config
}).pipe(
  Config.mapOrFail((c): Either.Either<LiveChainConfig, ConfigError.ConfigError> => {
    if (Option.isSome(c.anvilPort) && (c.anvilPort.value < 1 || c.anvilPort.value > 65_535)) return Either.left(invalid("CHAIN_PORT", "expected a port number, 1 to 65535"))
    if (Option.isSome(c.anvilPort) && Option.isSome(c.rpcUrl)) {
      return Either.left(invalid("CHAIN_PORT", "CHAIN_PORT pins the embedded chain's port; unset it when CHAIN_RPC_URL names an external chain"))
    }
    const addresses = [c.token, c.vault, c.factory].filter(Option.isSome).length
    if (addresses !== 0 && addresses !== 3) return Either.left(invalid("CHAIN_TOKEN_ADDRESS", "set CHAIN_TOKEN_ADDRESS, CHAIN_VAULT_ADDRESS and CHAIN_FACTORY_ADDRESS together, or none"))
    const info: ChainInfo | undefined =
      Option.isSome(c.token) && Option.isSome(c.vault) && Option.isSome(c.factory)
        ? { chainId: DEPOSIT_CHAIN_ID, token: c.token.value, vault: c.vault.value, factory: c.factory.value }
        : undefined
    return Either.right({
      ...(Option.isSome(c.rpcUrl) ? { rpcUrl: c.rpcUrl.value } : {}),
      ...(Option.isSome(c.operatorKey) ? { operatorKey: c.operatorKey.value } : {}),
      ...(info !== undefined ? { info } : {}),
      ...(Option.isSome(c.anvilStatePath) ? { anvilStatePath: c.anvilStatePath.value } : {}),
      ...(Option.isSome(c.anvilPort) ? { anvil: { port: c.anvilPort.value } } : {})
    })
  })
)

/** The chain side's settings, the same in the single process and on a cluster's leader. */
const chainSideOf = (settings: CommonSettings): Effect.Effect<ChainSideConfig, ConfigError.ConfigError> =>
  Effect.map(
    Config.all({
      depositPort: chain.depositPort.config,
      confirmations: chain.confirmations.config,
      pollMs: chain.pollMs.config,
      headPollMs: chain.headPollMs.config,
      minUsdgMicro: chain.minUsdgMicro.config,
      maxPerTxMicro: chain.maxPerTxMicro.config
    }),
    (c) => ({ host: settings.host, ...c, corsOrigins: settings.app.corsOrigins })
  )

export interface ChainSettings {
  /** CHAIN as given: unset differs from `embedded` in a cluster role (docs/cluster.md "The chain side"). */
  readonly mode: Option.Option<"embedded" | "off">
  readonly live: LiveChainConfig
  readonly side: ChainSideConfig
}

export interface SingleSettings {
  readonly dataDir: string
  /** Unset: generated once and kept in DATA_DIR (src/runtime/single-main.ts). */
  readonly adminToken: Option.Option<string>
  readonly snapshotIntervalSec: number
  readonly web: { readonly enabled: boolean; readonly port: number }
}

export interface ClusterSettings {
  readonly natsUrl: string
  readonly nodeName: string
  readonly replicas: number
  readonly leaseTtlMs: number
  /** Shared by every process: an operator token and a session cookie good on one are good on all. */
  readonly adminToken: string
  /** Hex, at least 32 bytes. */
  readonly sessionSecret: string
  readonly commandTimeoutMs: number
}

/** The configuration of one process: what its ROLE reads. */
export type Configuration =
  | { readonly role: "single"; readonly common: CommonSettings; readonly chain: ChainSettings; readonly single: SingleSettings }
  | { readonly role: "sequencer" | "gateway"; readonly common: CommonSettings; readonly chain: ChainSettings; readonly cluster: ClusterSettings }

const singleSettings: Effect.Effect<SingleSettings, ConfigError.ConfigError> = Effect.map(
  Config.all({ dataDir: single.dataDir.config, adminToken: single.adminToken.config, webPort: single.webPort.config, web: single.web.config, snapshotIntervalSec: single.snapshotIntervalSec.config }),
  (c) => ({ dataDir: c.dataDir, adminToken: Option.map(c.adminToken, Redacted.value), snapshotIntervalSec: c.snapshotIntervalSec, web: { enabled: c.web, port: c.webPort } })
)

const clusterSettings: Effect.Effect<ClusterSettings, ConfigError.ConfigError> = Effect.map(
  Config.all({
    natsUrl: cluster.natsUrl.config,
    nodeName: cluster.nodeName.config,
    replicas: cluster.replicas.config,
    leaseTtlMs: cluster.leaseTtlMs.config,
    adminToken: cluster.adminToken.config,
    sessionSecret: cluster.sessionSecret.config,
    commandTimeoutMs: cluster.commandTimeoutMs.config
  }),
  // Unset: host and PID, a name that tells processes apart in logs and on the lease.
  (c) => ({ ...c, nodeName: Option.getOrElse(c.nodeName, () => `${hostname()}:${process.pid}`), adminToken: Redacted.value(c.adminToken) })
)

/**
 * The whole configuration from the ConfigProvider (the environment live; `ConfigProvider.fromMap`
 * in tests): ROLE, what every role shares, the chain, then the role's own. A malformed value fails
 * with a ConfigError naming its variable, before anything starts.
 */
export const configuration: Effect.Effect<Configuration, ConfigError.ConfigError> = Effect.gen(function* () {
  const role = yield* ROLE.config
  const settings = yield* commonSettings
  const chainSettings: ChainSettings = { mode: yield* chain.mode.config, live: yield* liveChainConfigFromEnv, side: yield* chainSideOf(settings) }
  if (role === "single") return { role, common: settings, chain: chainSettings, single: yield* singleSettings }
  return { role, common: settings, chain: chainSettings, cluster: yield* clusterSettings }
})

// ---------------------------------------------------------------------------------------------
// The tables (README "Running the service", docs/cluster.md "Roles and their variables")

const cell = (s: string): string => s.replace(/\|/g, "\\|")

/** A table's rows as markdown: one row per variable, its default (and unit), its doc line. */
export const variableTable = (table: Table): string =>
  [
    "| variable | default | meaning |",
    "|---|---|---|",
    ...VARIABLES.filter((v) => v.table === table).map((v) => `| \`${v.name}\` | ${cell(v.shownDefault)}${v.unit === null ? "" : ` ${cell(v.unit)}`} | ${cell(v.doc)} |`)
  ].join("\n")

/** Where each generated table lives, between its two marker lines. */
export const TABLE_FILES: ReadonlyArray<{ readonly file: string; readonly table: Table }> = [
  { file: "README.md", table: "readme" },
  { file: "docs/cluster.md", table: "cluster" }
]

export const BEGIN_MARKER = "<!-- config-table: generated by `npm run docs:config` from src/runtime/config.ts; edit there -->"
export const END_MARKER = "<!-- config-table: end -->"

/** `doc` with its generated table replaced by `table`'s; null when the markers are missing. */
export const withTable = (doc: string, table: Table): string | null => {
  const begin = doc.indexOf(BEGIN_MARKER)
  const end = doc.indexOf(END_MARKER)
  if (begin < 0 || end < begin) return null
  return `${doc.slice(0, begin)}${BEGIN_MARKER}\n${variableTable(table)}\n${doc.slice(end)}`
}
