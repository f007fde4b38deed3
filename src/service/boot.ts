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
import { Exchange, type JournalSink, memoryJournal } from "./exchange.ts"

export interface ServiceOptions {
  readonly host: string
  readonly port: number
  readonly nowMs: () => number
  readonly secret: Uint8Array
  readonly config: AppConfig
  readonly journal?: JournalSink
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
  close(): Promise<void>
}

export const loadCatalog = (exchange: Exchange, events: ReadonlyArray<NewEvent>): void => {
  if (exchange.catalog.events.length > 0) return
  for (const event of events) exchange.submit({ type: "create_event", event })
}

export const startService = async (opts: ServiceOptions): Promise<Service> => {
  const exchange = new Exchange(opts.nowMs, opts.journal ?? memoryJournal())
  if (opts.catalog !== undefined) loadCatalog(exchange, opts.catalog)
  const hub = new FeedHub(exchange, opts.nowMs)
  let flushQueued = false
  hub.setFlushScheduler(() => {
    if (flushQueued) return
    flushQueued = true
    setImmediate(() => {
      flushQueued = false
      hub.flush()
    })
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
  return {
    exchange,
    hub,
    ctx,
    http,
    close: async () => {
      await http.close()
      await ctx.verifier.close()
    }
  }
}
