// Assembles the service from its parts: exchange, feed hub, HTTP app and the
// node transport. Time comes in as `nowMs` (the Clock layer's reading), so
// tests and the simulator drive it with a test clock.
import { makeApp } from "../api/app.ts"
import { EdgeCache } from "../api/cache.ts"
import type { AppConfig, AppCtx } from "../api/context.ts"
import { listen, type RunningServer } from "../api/node-server.ts"
import { RateLimiter } from "../api/rate-limit.ts"
import { inlineVerifier, type Verifier } from "../auth/verifier.ts"
import { FeedHub } from "../feed/hub.ts"
import type { NewEvent } from "./catalog.ts"
import { type DurableExchange, openDurableExchange } from "../store/durable.ts"
import { Exchange, memoryJournal } from "./exchange.ts"

export interface ServiceOptions {
  readonly host: string
  readonly port: number
  readonly nowMs: () => number
  readonly secret: Uint8Array
  readonly config: AppConfig
  /** Journal and snapshots live here when given; otherwise state is in memory only. */
  readonly dataDir?: string
  /** Seconds between periodic snapshots (durable mode); 0 disables them. */
  readonly snapshotIntervalSec?: number
  /** Called when the journal cannot write: memory is ahead of disk, so the process must stop. */
  readonly onFatal?: (err: unknown) => void
  /** Loaded when the exchange starts with no events (first start). */
  readonly catalog?: ReadonlyArray<NewEvent>
  readonly onError?: (err: unknown) => void
  /** Inline (synchronous, deterministic) unless the caller brings a worker pool. */
  readonly verifier?: Verifier
}

export interface Service {
  readonly exchange: Exchange
  readonly hub: FeedHub
  readonly ctx: AppCtx
  readonly http: RunningServer
  /** Set in durable mode. */
  readonly durable: DurableExchange | null
  close(): Promise<void>
}

export const loadCatalog = (exchange: Exchange, events: ReadonlyArray<NewEvent>): void => {
  if (exchange.catalog.events.length > 0) return
  for (const event of events) exchange.submit({ type: "create_event", event })
}

export const startService = async (opts: ServiceOptions): Promise<Service> => {
  const durable =
    opts.dataDir === undefined
      ? null
      : await openDurableExchange(opts.dataDir, opts.nowMs, {
          onFatal: opts.onFatal ?? ((err) => {
            console.error("journal write failed; stopping", err)
            process.exit(70)
          })
        })
  const exchange = durable?.exchange ?? new Exchange(opts.nowMs, memoryJournal())
  if (opts.catalog !== undefined) loadCatalog(exchange, opts.catalog)
  const hub = new FeedHub(exchange, opts.nowMs)
  let flushQueued = false
  hub.setFlushScheduler(() => {
    if (flushQueued) return
    flushQueued = true
    // Frames tell of fills and balances: they leave only once the journal holds them.
    const durableNow = durable === null ? Promise.resolve() : durable.journal.sync()
    void durableNow.then(() =>
      setImmediate(() => {
        flushQueued = false
        hub.flush()
      })
    )
  })
  const ctx: AppCtx = {
    exchange,
    nowMs: opts.nowMs,
    secret: opts.secret,
    config: opts.config,
    limiter: new RateLimiter(opts.nowMs),
    cache: new EdgeCache(opts.nowMs),
    verifier: opts.verifier ?? inlineVerifier()
  }
  const app = makeApp(ctx, opts.onError)
  const http = await listen({ app, hub, host: opts.host, port: opts.port, secret: opts.secret, nowMs: opts.nowMs, corsOrigins: opts.config.corsOrigins })
  const intervalSec = opts.snapshotIntervalSec ?? 0
  const timer =
    durable !== null && intervalSec > 0
      ? setInterval(() => void durable.snapshot().catch((err) => opts.onError?.(err)), intervalSec * 1000)
      : null
  timer?.unref()
  return {
    exchange,
    hub,
    ctx,
    http,
    durable,
    close: async () => {
      if (timer !== null) clearInterval(timer)
      await http.close()
      await ctx.verifier.close()
      if (durable !== null) {
        await durable.snapshot()
        await durable.close()
      }
    }
  }
}
