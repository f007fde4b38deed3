// The service's settings every role reads the same way (README "Configuration"): where it
// listens, the API's policies and limits, operations and logging. The single process (src/main.ts)
// and the cluster roles (src/runtime/cluster-main.ts) add their own (DATA_DIR and the chain; NATS).
import { Config, Effect } from "effect"
import { type AppConfig, DEFAULT_ABUSE_LIMITS } from "../api/context.ts"
import { batchedSink, type Logger, makeLogger } from "../ops/log.ts"
import type { OpsOptions } from "../ops/service-ops.ts"
import { DEFAULT_SLOW_WRITE_MS } from "../ops/storage-health.ts"

export interface CommonSettings {
  readonly host: string
  readonly port: number
  readonly drainTimeoutSec: number
  /** AppConfig but the operator token, which each role finds its own way. */
  readonly app: Omit<AppConfig, "adminToken">
  readonly ops: OpsOptions
  readonly log: { readonly level: "debug" | "info" | "warn" | "error"; readonly format: "json" | "pretty" }
}

const int = (name: string, fallback: number): Config.Config<number> => Config.integer(name).pipe(Config.withDefault(fallback))

const originsOf = (list: string): ReadonlySet<string> => new Set(list.split(",").map((s) => s.trim()).filter((s) => s !== ""))

export const commonSettings: Effect.Effect<CommonSettings, import("effect/ConfigError").ConfigError> = Effect.gen(function* () {
  const limits = {
    registrationsPerMinute: yield* int("LIMIT_REGISTRATIONS_PER_MIN", DEFAULT_ABUSE_LIMITS.registrationsPerMinute),
    wsConnectionsPerAddress: yield* int("LIMIT_WS_CONNECTIONS_PER_IP", DEFAULT_ABUSE_LIMITS.wsConnectionsPerAddress),
    wsSubscriptionsPerConnection: yield* int("LIMIT_WS_SUBSCRIPTIONS", DEFAULT_ABUSE_LIMITS.wsSubscriptionsPerConnection),
    wsConnections: yield* int("LIMIT_WS_CONNECTIONS", DEFAULT_ABUSE_LIMITS.wsConnections),
    wsSubscriptions: yield* int("LIMIT_WS_SUBSCRIPTIONS_TOTAL", DEFAULT_ABUSE_LIMITS.wsSubscriptions),
    wsBufferedBytes: (yield* int("LIMIT_WS_BUFFERED_MIB", DEFAULT_ABUSE_LIMITS.wsBufferedBytes / (1024 * 1024))) * 1024 * 1024,
    rateLimitBuckets: yield* int("LIMIT_RATE_BUCKETS", DEFAULT_ABUSE_LIMITS.rateLimitBuckets)
  }
  return {
    port: yield* int("PORT", 8080),
    host: yield* Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
    drainTimeoutSec: yield* int("DRAIN_TIMEOUT_SEC", 30),
    app: {
      corsOrigins: originsOf(yield* Config.string("CORS_ORIGINS").pipe(Config.withDefault("http://localhost:3000,http://127.0.0.1:3000"))),
      devCredit: yield* Config.boolean("DEV_CREDIT").pipe(Config.withDefault(true)),
      secureCookies: yield* Config.boolean("SECURE_COOKIES").pipe(Config.withDefault(false)),
      rewards: {
        dailyBudgetMicro: yield* int("REWARDS_DAILY_BUDGET_MICRO", 1_000_000_000),
        bandSpreadBpsMax: yield* int("REWARDS_BAND_SPREAD_BPS_MAX", 300),
        perWalletCapPct: 40,
        minSizeContracts: yield* int("REWARDS_MIN_SIZE_CONTRACTS", 10)
      },
      limits
    },
    // /metrics behind the operator token unless public (docs/metrics.md).
    ops: {
      metricsPublic: yield* Config.boolean("METRICS_PUBLIC").pipe(Config.withDefault(false)),
      maxLagBlocks: yield* int("READY_MAX_LAG_BLOCKS", 20),
      slowWriteMs: yield* int("SLOW_DISK_WARN_MS", DEFAULT_SLOW_WRITE_MS)
    },
    // Logs on stderr, JSON unless stderr is a terminal.
    log: {
      level: yield* Config.literal("debug", "info", "warn", "error")("LOG_LEVEL").pipe(Config.withDefault("info" as const)),
      format: yield* Config.literal("json", "pretty")("LOG_FORMAT").pipe(Config.withDefault(process.stderr.isTTY ? ("pretty" as const) : ("json" as const)))
    }
  }
})

/**
 * The process's logger on stderr: lines batched per turn, a failed write dropped and counted,
 * never fatal (docs/metrics.md "Logs"); lines of the last turn still go out on any exit.
 */
export const stderrLogger = (settings: CommonSettings["log"], nowMs: () => number): Logger => {
  const sink = batchedSink((text, failed) => {
    // A stream that failed once is destroyed: later lines are dropped (and counted) at once.
    if (process.stderr.destroyed) return failed(new Error("stderr is closed"))
    process.stderr.write(text, (err) => (err == null ? undefined : failed(err)))
  })
  process.once("exit", sink.flush)
  return makeLogger({ level: settings.level, format: settings.format, nowMs, write: sink.write, droppedLines: sink.droppedLines })
}

/**
 * The bound on a stop: from the first SIGTERM/SIGINT, the drain and every release after it have
 * `timeoutSec` seconds; past that the process exits DRAIN_TIMEOUT_EXIT naming the step it was
 * waiting for (the embedded Anvil is still stopped by its exit hook and watchdog).
 */
export const DRAIN_TIMEOUT_EXIT = 124
export const armStopDeadline = (timeoutSec: number, waitingFor: () => string): void => {
  const arm = (): void => {
    process.removeListener("SIGTERM", arm)
    process.removeListener("SIGINT", arm)
    // live-only: the bound on a stop is real time, whatever the Clock says
    setTimeout(() => {
      console.error(`twinbook: stop timed out after ${timeoutSec} s (DRAIN_TIMEOUT_SEC), still waiting for ${waitingFor()}; exiting ${DRAIN_TIMEOUT_EXIT}`)
      process.exit(DRAIN_TIMEOUT_EXIT)
    }, timeoutSec * 1000).unref()
  }
  process.once("SIGTERM", arm)
  process.once("SIGINT", arm)
}

/** The chain side's settings (README "Configuration"), the same in the single process and on a cluster's leader. */
export const chainSideSettings = (host: string, corsOrigins: ReadonlySet<string>) =>
  Effect.gen(function* () {
    return {
      host,
      depositPort: yield* int("DEPOSIT_PORT", 8081),
      confirmations: yield* int("DEPOSIT_CONFIRMATIONS", 0),
      pollMs: yield* int("CHAIN_POLL_MS", 1000),
      headPollMs: yield* int("CHAIN_HEAD_POLL_MS", 100),
      minUsdgMicro: yield* int("DEPOSIT_MIN_MICRO", 1_000_000),
      maxPerTxMicro: yield* int("DEPOSIT_MAX_PER_TX_MICRO", 100_000_000),
      corsOrigins
    }
  })

/** CHAIN: `embedded` (default; with CHAIN_RPC_URL, that external chain) or `off`. */
export const chainMode = Config.literal("embedded", "off")("CHAIN")
