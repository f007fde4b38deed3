// The service's Prometheus metrics (docs/metrics.md): one prom-client Registry per service
// instance (never the global default, so several services in one process do not collide).
// State the service already keeps (connections, deposits by stage, bots, snapshot age, the
// chain head) is read when Prometheus scrapes; events are counted where they happen, once each:
// a request's latency (one histogram observe), a placement's outcome, a fill, a journal batch.
import { readdir, stat } from "node:fs/promises"
import { createRequire } from "node:module"
import type * as PromClient from "prom-client"
import type { FeedHub } from "../feed/hub.ts"
import type { Exchange } from "../service/exchange.ts"
import type { RateLimiter } from "../usecase/rate-limit.ts"
import type { ChainProbe } from "./chain-probe.ts"

/**
 * prom-client, loaded by the first service that keeps metrics: the simulator's services keep none
 * (`metrics: false`), and its load (with @opentelemetry/api) was ~80 ms of every process's start.
 */
let promModule: typeof PromClient | undefined
const prom = (): typeof PromClient => (promModule ??= createRequire(import.meta.url)("prom-client") as typeof PromClient)

/** What the scrape-time gauges read. */
export interface MetricsSources {
  readonly exchange: Exchange
  readonly hub: FeedHub
  readonly limiter: RateLimiter
  /** The wall clock (snapshot age against the files' modification times). */
  readonly nowMs: () => number
  /** DATA_DIR/snapshots in durable mode. */
  readonly snapshotDir?: string
  readonly chain?: ChainProbe
}

/** Request latency buckets (seconds), shared by the API and the deposit service. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

/** prom-client's default gauges whose names end in `_total` (removed: see the constructor). */
const GAUGES_NAMED_TOTAL = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]

/** A deposit's stages past which it never moves. */
const FINAL_DEPOSIT: ReadonlySet<string> = new Set(["credited", "error"])

const SNAP = /^snap-\d{12}\.json$/

/** The newest snapshot's modification time (ms), or null when there is none. */
const newestSnapshotMs = async (dir: string): Promise<number | null> => {
  let names: string[]
  try {
    names = (await readdir(dir)).filter((n) => SNAP.test(n)).sort()
  } catch {
    return null
  }
  const newest = names.at(-1)
  if (newest === undefined) return null
  try {
    return (await stat(`${dir}/${newest}`)).mtimeMs
  } catch {
    return null // pruned between the listing and the stat
  }
}

export class ServiceMetrics {
  readonly registry = new (prom().Registry)()
  readonly httpDuration = new (prom().Histogram)({
    name: "twinbook_http_request_duration_seconds",
    help: "HTTP requests by method, route template and status, and their latency (the _count is the request counter)",
    labelNames: ["method", "route", "status"] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry]
  })
  /** The deposit service's own port (DEPOSIT_PORT): a family of its own, so API dashboards and alerts stay as they are. */
  readonly depositHttpDuration = new (prom().Histogram)({
    name: "twinbook_deposit_http_request_duration_seconds",
    help: "Deposit-service HTTP requests by method, route template and status, and their latency (the _count is the request counter)",
    labelNames: ["method", "route", "status"] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry]
  })
  readonly orders = new (prom().Counter)({
    name: "twinbook_orders_total",
    help: "POST /v1/orders by result (accepted, queued while paused, rejected) and reason (the error code; none when accepted)",
    labelNames: ["result", "reason"] as const,
    registers: [this.registry]
  })
  readonly fills = new (prom().Counter)({ name: "twinbook_fills_total", help: "Fills (one per maker order matched)", registers: [this.registry] })
  readonly fillContracts = new (prom().Counter)({ name: "twinbook_fill_contracts_total", help: "Contracts filled", registers: [this.registry] })
  readonly journalBatch = new (prom().Histogram)({
    name: "twinbook_journal_batch_records",
    help: "Records per journal write (group commit: one durable write covers the batch)",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    registers: [this.registry]
  })
  readonly journalFsync = new (prom().Histogram)({
    name: "twinbook_journal_fsync_seconds",
    help: "Latency of making a journal batch durable (the O_DSYNC write; the fdatasync where writes are not synchronous)",
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry]
  })

  constructor() {
    prom().collectDefaultMetrics({ register: this.registry })
    // prom-client exposes these three totals as gauges named `…_total`, which Prometheus's linter
    // (promtool check metrics) refuses: a `_total` name is a counter. The same counts stay readable
    // as `sum(nodejs_active_handles)` etc., from the by-type gauges beside them.
    for (const name of GAUGES_NAMED_TOTAL) this.registry.removeSingleMetric(name)
  }

  /** What the service says about itself: log lines it could not write, durable writes over the slow threshold. */
  bindHealth(h: { droppedLogLines(): number; slowDurableWrites(): number }): void {
    const r = [this.registry]
    new (prom().Counter)({
      name: "twinbook_log_lines_dropped_total",
      help: "Log lines dropped because stderr could not take them (a full disk, a file-size limit, a closed pipe)",
      registers: r,
      collect() { this.reset(); this.inc(h.droppedLogLines()) }
    })
    new (prom().Counter)({
      name: "twinbook_slow_durable_writes_total",
      help: "Durable journal writes slower than SLOW_DISK_WARN_MS",
      registers: r,
      collect() { this.reset(); this.inc(h.slowDurableWrites()) }
    })
  }

  /**
   * Deposits and payouts: what is in flight is a gauge; what reached a final state is a counter
   * (alerts take `increase()` of it). Both are read off the journaled ledger, so a restart carries
   * the counts on instead of resetting them. A deposit held in `error` that a reorg then removes
   * stays counted (`counted` remembers it): a counter never goes down within a process.
   */
  private bindFunds(x: Exchange): void {
    const r = [this.registry]
    new (prom().Gauge)({
      name: "twinbook_deposits_in_flight",
      help: "Deposits seen on chain and not yet credited (detected, confirming)",
      labelNames: ["stage"] as const,
      registers: r,
      collect() {
        this.reset()
        for (const stage of ["detected", "confirming"]) this.set({ stage }, 0)
        for (const d of x.deposits.byKey.values()) if (!FINAL_DEPOSIT.has(d.stage)) this.inc({ stage: d.stage })
      }
    })
    const counted = new Map<string, Set<string>>([...FINAL_DEPOSIT].map((stage) => [stage, new Set<string>()]))
    new (prom().Counter)({
      name: "twinbook_deposits_total",
      help: "Deposits that reached a final stage: credited, or error (held for an operator refund)",
      labelNames: ["stage"] as const,
      registers: r,
      collect() {
        for (const d of x.deposits.byKey.values()) counted.get(d.stage)?.add(d.key)
        this.reset()
        for (const [stage, keys] of counted) this.inc({ stage }, keys.size)
      }
    })
    new (prom().Gauge)({
      name: "twinbook_payouts_in_flight",
      help: "Withdrawals not yet paid: pending (not sent) and sent (awaiting confirmation)",
      labelNames: ["state"] as const,
      registers: r,
      collect() {
        this.reset()
        for (const state of ["pending", "sent"]) this.set({ state }, 0)
        for (const w of x.withdrawals.byId.values()) if (w.status === "pending" || w.status === "sent") this.inc({ state: w.status })
      }
    })
    new (prom().Counter)({
      name: "twinbook_payouts_total",
      help: "Withdrawals that reached a final state: confirmed (paid), or refunded (the payout failed for good)",
      labelNames: ["state"] as const,
      registers: r,
      collect() {
        this.reset()
        for (const state of ["confirmed", "refunded"]) this.inc({ state }, 0)
        for (const w of x.withdrawals.byId.values()) if (w.status === "confirmed" || w.status === "refunded") this.inc({ state: w.status })
      }
    })
  }

  // One piece: one collect function per scrape-time metric family, each a few lines, all reading the same sources.
  /** The scrape-time families, reading `s`. */
  bind(s: MetricsSources): void {
    const r = [this.registry]
    const x = s.exchange
    new (prom().Gauge)({ name: "twinbook_journal_last_seq", help: "Sequence number of the newest journal record applied", registers: r, collect() { this.set(x.lastSeq) } })
    new (prom().Gauge)({ name: "twinbook_ws_connections", help: "Open WebSocket connections", registers: r, collect() { this.set(s.hub.connections) } })
    new (prom().Gauge)({ name: "twinbook_ws_subscriptions", help: "Channel subscriptions held by open WebSocket connections", registers: r, collect() { this.set(s.hub.subscriptions) } })
    new (prom().Counter)({ name: "twinbook_ws_frames_sent_total", help: "WebSocket frames sent", registers: r, collect() { this.reset(); this.inc(s.hub.framesSent) } })
    new (prom().Counter)({
      name: "twinbook_ws_slow_consumer_closes_total",
      help: "WebSocket connections closed as slow consumers (code 1013): over 4 MiB queued, or the longest queues when all together pass LIMIT_WS_BUFFERED_MIB",
      registers: r,
      collect() { this.reset(); this.inc(s.hub.slowConsumerCloses) }
    })
    new (prom().Gauge)({ name: "twinbook_ws_buffered_bytes", help: "Bytes queued for WebSocket clients, all sockets together", registers: r, collect() { this.set(s.hub.bufferedBytes) } })
    new (prom().Counter)({
      name: "twinbook_ws_limit_closes_total",
      help: "WebSocket connections refused or closed by a limit (docs/api.md Limits)",
      labelNames: ["limit"] as const,
      registers: r,
      collect() {
        this.reset()
        for (const [limit, n] of Object.entries(s.hub.limitCloses)) this.inc({ limit }, n)
      }
    })
    new (prom().Counter)({
      name: "twinbook_rate_limit_hits_total",
      help: "Requests refused 429 rate_limited, by bucket",
      labelNames: ["bucket"] as const,
      registers: r,
      collect() {
        this.reset()
        for (const [bucket, n] of s.limiter.hits) this.inc({ bucket }, n)
      }
    })
    new (prom().Gauge)({
      name: "twinbook_rate_limit_buckets",
      help: "Rate-limit buckets held (all buckets and keys; at most LIMIT_RATE_BUCKETS)",
      registers: r,
      collect() { this.set(s.limiter.size) }
    })
    new (prom().Counter)({
      name: "twinbook_rate_limit_evictions_total",
      help: "Rate-limit buckets evicted at LIMIT_RATE_BUCKETS before they were full again (each resets one key's limit)",
      registers: r,
      collect() { this.reset(); this.inc(s.limiter.evicted) }
    })
    this.bindFunds(x)
    new (prom().Gauge)({
      name: "twinbook_lp_bots",
      help: "Server-managed LP bots running, and bot markets paused on one-sided inventory",
      labelNames: ["state"] as const,
      registers: r,
      collect() {
        let running = 0
        let paused = 0
        for (const bot of x.lpBook.runningBots()) {
          running++
          for (const m of bot.markets) if (m.lastDecision === "pause") paused++
        }
        this.set({ state: "running" }, running)
        this.set({ state: "paused_markets" }, paused)
      }
    })
    const snapshotDir = s.snapshotDir
    if (snapshotDir !== undefined) {
      new (prom().Gauge)({
        name: "twinbook_snapshot_age_seconds",
        help: "Seconds since the newest snapshot was written (+Inf when there is none)",
        registers: r,
        async collect() {
          const ms = await newestSnapshotMs(snapshotDir)
          this.set(ms === null ? Infinity : Math.max(0, (s.nowMs() - ms) / 1000)) // live-only: a file's mtime is wall time
        }
      })
    }
    const chain = s.chain
    if (chain !== undefined) {
      // One probe per scrape, shared by the chain families (they are collected in turn).
      let pending: ReturnType<ChainProbe["probe"]> | null = null
      const probe = (): ReturnType<ChainProbe["probe"]> => {
        pending ??= chain.probe().finally(() => setImmediate(() => (pending = null)))
        return pending
      }
      new (prom().Gauge)({ name: "twinbook_chain_up", help: "1 when the chain's RPC answered this scrape", registers: r, async collect() { this.set((await probe()).head === null ? 0 : 1) } })
      new (prom().Gauge)({
        name: "twinbook_chain_head_block",
        help: "The chain's head block number (NaN while unreachable)",
        registers: r,
        async collect() {
          const p = await probe()
          this.set(p.head === null ? NaN : Number(p.head))
        }
      })
      new (prom().Gauge)({
        name: "twinbook_chain_watcher_lag_blocks",
        help: "Blocks between the chain head and the last block the deposit watcher scanned (NaN while unreachable)",
        registers: r,
        async collect() {
          const p = await probe()
          this.set(p.lagBlocks ?? NaN)
        }
      })
      new (prom().Gauge)({ name: "twinbook_chain_halted", help: "1 while the chain guard has halted crediting and payouts", registers: r, async collect() { this.set((await probe()).halted ? 1 : 0) } })
    }
  }
}
