// Observability for one live service (docs/metrics.md), in two steps the composition root
// (src/runtime/boot.ts) calls: `prepareOps` before the journal opens (the logger, the metrics
// registry, the request hook, the metered journal disk) and `attachOps` once the parts exist
// (the scrape-time gauges, readiness, the journal's notable events, the recovery line).
import type { OnError, RequestObserver } from "./hooks.ts"
import type { FeedHub } from "../feed/hub.ts"
import type { Exchange } from "../service/exchange.ts"
import { snapshotDir } from "../store/durable.ts"
import type { RecoveryReport } from "../store/durable.ts"
import type { Storage } from "../store/storage.ts"
import type { RateLimiter } from "../usecase/rate-limit.ts"
import type { Chain } from "../chain/chain.ts"
import { chainProbe } from "./chain-probe.ts"
import { observeExchange } from "./events.ts"
import { errorFields, type Logger, silentLogger } from "./log.ts"
import { meteredStorage } from "./metered-storage.ts"
import { StorageHealth } from "./storage-health.ts"
import { ServiceMetrics } from "./metrics.ts"
import { attachOps as attach } from "./port.ts"
import { loggedReadiness, readiness } from "./readiness.ts"
import { requestObserver } from "./requests.ts"

export interface OpsOptions {
  /** /metrics without the operator token (METRICS_PUBLIC). Default false. */
  readonly metricsPublic?: boolean
  /** /v1/ready fails when the deposit watcher is further behind the head (READY_MAX_LAG_BLOCKS). Default 20. */
  readonly maxLagBlocks?: number
  /** How long each readiness probe (journal sync, chain head) may take. Default 2000. */
  readonly probeTimeoutMs?: number
  /** A durable journal write slower than this is logged and shown by readiness (SLOW_DISK_WARN_MS). Default 100. */
  readonly slowWriteMs?: number
}

export interface PreparedOps {
  readonly logger: Logger
  readonly metrics: ServiceMetrics
  readonly observe: RequestObserver
  /** The deposit service's request hook: its own histogram family, lines marked `service: "deposit"`. */
  readonly depositObserve: RequestObserver
  /** Measures the journal's disk: batch sizes, durable-write latency, slow writes (StorageHealth). */
  readonly meter: (disk: Storage) => Storage
  /** Slow durable writes and failing background writes: the log lines and readiness's view. */
  readonly storageHealth: StorageHealth
  /** Security events (AppCtx.log) as warn lines. */
  readonly log: (event: Readonly<Record<string, unknown>>) => void
  /** Unexpected errors as error lines: code and message, the stack at debug. */
  readonly onError: OnError
}

export const prepareOps = (o: { logger?: Logger; nowMs: () => number; monoMs: () => number; secret: Uint8Array; slowWriteMs?: number }): PreparedOps => {
  const logger = o.logger ?? silentLogger
  const metrics = new ServiceMetrics()
  const storageHealth = new StorageHealth({ logger, monoMs: o.monoMs, ...(o.slowWriteMs === undefined ? {} : { slowWriteMs: o.slowWriteMs }) })
  metrics.bindHealth({ droppedLogLines: () => logger.droppedLines(), slowDurableWrites: () => storageHealth.slowWrites })
  return {
    storageHealth,
    logger,
    metrics,
    observe: requestObserver({ metrics, logger, monoMs: o.monoMs, nowMs: o.nowMs, secret: o.secret }),
    depositObserve: requestObserver({ metrics, logger, monoMs: o.monoMs, nowMs: o.nowMs, secret: o.secret, service: "deposit" }),
    meter: (disk) =>
      meteredStorage(disk, o.monoMs, {
        batch: (n) => metrics.journalBatch.observe(n),
        fsyncSeconds: (s) => {
          metrics.journalFsync.observe(s)
          storageHealth.durableWrite(s * 1000, "journal")
        }
      }),
    log: (event) => {
      const { event: name, ...fields } = event
      logger.warn(typeof name === "string" ? name : "security event", fields)
    },
    onError: (err, where) =>
      logger.error("internal error", {
        ...(where === undefined ? {} : { request_id: where.requestId, method: where.method, route: where.route }),
        ...errorFields(err, logger.enabled("debug"))
      })
  }
}

export interface OpsParts {
  readonly ctx: object
  readonly exchange: Exchange
  readonly hub: FeedHub
  readonly limiter: RateLimiter
  readonly nowMs: () => number
  readonly dataDir?: string
  readonly journal: { sync(): Promise<void> } | null
  readonly recovery?: RecoveryReport
  readonly chain?: {
    readonly chain: Pick<Chain, "head">
    readonly watcher: { readonly scannedThroughBlock: bigint; readonly passed: boolean }
    readonly guard: { readonly isHalted: boolean; readonly deciding: boolean }
    readonly depositServer: { readonly listening: boolean }
  }
}

export const attachOps = (p: PreparedOps, parts: OpsParts, o: OpsOptions = {}): void => {
  const timeoutMs = o.probeTimeoutMs ?? 2000
  const probe = parts.chain === undefined ? undefined : chainProbe({ ...parts.chain, timeoutMs })
  p.metrics.bind({
    exchange: parts.exchange,
    hub: parts.hub,
    limiter: parts.limiter,
    nowMs: parts.nowMs,
    ...(parts.dataDir === undefined ? {} : { snapshotDir: snapshotDir(parts.dataDir) }),
    ...(probe === undefined ? {} : { chain: probe })
  })
  attach(parts.ctx, {
    metrics: p.metrics,
    metricsPublic: o.metricsPublic ?? false,
    ready: loggedReadiness(
      readiness({
        journal: parts.journal,
        ...(parts.dataDir === undefined ? {} : { dataDir: parts.dataDir }),
        storageHealth: p.storageHealth,
        ...(probe === undefined ? {} : { chain: probe }),
        ...(parts.chain === undefined ? {} : { depositService: parts.chain.depositServer }),
        maxLagBlocks: o.maxLagBlocks ?? 20,
        timeoutMs
      }),
      p.logger
    )
  })
  observeExchange(parts.exchange, p.metrics, p.logger)
  const r = parts.recovery
  if (r !== undefined) {
    p.logger.info("recovery", {
      last_seq: r.lastSeq,
      snapshot_seq: r.snapshotSeq,
      replayed: r.replayed,
      skipped_snapshots: r.skippedSnapshots.length,
      torn_tail_bytes: r.tornTail?.droppedBytes ?? 0
    })
  }
}
