// The in-process edge cache: read routes carry `Cache-Control: public, s-maxage=N`
// and `X-Cache: HIT|MISS`; within N seconds the same URL is served from here. The TTL runs
// on the monotonic clock (src/time/clock.ts): a wall-clock step must not keep an entry alive.
// An entry may carry a tag (`book:<market_id>`); `invalidate(tag)` retires every entry of it, so
// a book read after a change never comes from before the change (the TTL stays the header's).
import type { Exchange } from "../service/exchange.ts"
import type { HttpResponse } from "./http.ts"

interface Entry {
  readonly expiresMonoMs: number
  readonly response: HttpResponse
  readonly tag: string | undefined
  /** The tag's generation when the response was produced. */
  readonly generation: number
}

export class EdgeCache {
  private readonly entries = new Map<string, Entry>()
  /** Tag → how many times it was invalidated; an entry of an older generation is stale. */
  private readonly generations = new Map<string, number>()

  constructor(private readonly monoMs: () => number) {}

  /** Retires every entry tagged `tag`, including one being produced right now. */
  invalidate(tag: string): void {
    this.generations.set(tag, (this.generations.get(tag) ?? 0) + 1)
  }

  async serve(key: string, ttlSec: number, produce: () => HttpResponse | Promise<HttpResponse>, tag?: string): Promise<HttpResponse> {
    const now = this.monoMs()
    const generation = tag === undefined ? 0 : (this.generations.get(tag) ?? 0)
    const hit = this.entries.get(key)
    // Every caller gets its own copy: the app adds per-request headers (CORS) and
    // blanks the body of a HEAD, and neither may leak into the stored entry.
    if (hit !== undefined && hit.expiresMonoMs > now && hit.tag === tag && hit.generation === generation) return copyOf(hit.response, "HIT")
    const response = await produce()
    if (response.status !== 200) {
      // Errors are not cached, here or at the edge: a 4xx must not stick for the TTL.
      response.headers["cache-control"] = "no-store"
      response.headers["x-cache"] = "MISS"
      return response
    }
    response.headers["cache-control"] = `public, s-maxage=${ttlSec}`
    if (this.entries.size > 10_000) this.entries.clear()
    this.entries.set(key, { expiresMonoMs: now + ttlSec * 1000, response: copyOf(response, "HIT"), tag, generation })
    return copyOf(response, "MISS")
  }
}

const copyOf = (r: HttpResponse, xCache: "HIT" | "MISS"): HttpResponse => ({
  status: r.status,
  headers: { ...r.headers, "x-cache": xCache },
  body: r.body
})

export const TTL_SEC = {
  markets: 30,
  book: 1,
  trades: 3,
  candles: { "1m": 5, "5m": 15, "1h": 60, "1d": 300 },
  fees: 30
} as const

/** The cache tag of a market's book (`GET /v1/markets/:id/book`, by id or slug alike). */
export const bookTag = (marketId: string): string => `book:${marketId}`

/**
 * Invalidates a market's cached book on every event that moves it (what the feed hub sends a
 * `book_update` for: a fill, an order resting, an order cancelled), synchronously as the command
 * applies, so before any frame telling of it can leave.
 */
export const invalidateBooksOnChange = (exchange: Exchange, cache: EdgeCache): void =>
  exchange.onApply((_record, result) => {
    for (const ev of result.events) {
      if (ev.type === "fill" || ev.type === "order_cancelled") cache.invalidate(bookTag(ev.marketId))
      else if (ev.type === "order_rested") {
        const marketId = exchange.engine.orders.get(ev.orderId)?.market.id
        if (marketId !== undefined) cache.invalidate(bookTag(marketId))
      }
    }
  })
