// The in-process edge cache: read routes carry `Cache-Control: public, s-maxage=N`
// and `X-Cache: HIT|MISS`; within N seconds the same URL is served from here. The TTL runs
// on the monotonic clock (src/time/clock.ts): a wall-clock step must not keep an entry alive.
import type { HttpResponse } from "./http.ts"

interface Entry {
  readonly expiresMonoMs: number
  readonly response: HttpResponse
}

export class EdgeCache {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly monoMs: () => number) {}

  async serve(key: string, ttlSec: number, produce: () => HttpResponse | Promise<HttpResponse>): Promise<HttpResponse> {
    const now = this.monoMs()
    const hit = this.entries.get(key)
    // Every caller gets its own copy: the app adds per-request headers (CORS) and
    // blanks the body of a HEAD, and neither may leak into the stored entry.
    if (hit !== undefined && hit.expiresMonoMs > now) return copyOf(hit.response, "HIT")
    const response = await produce()
    if (response.status !== 200) {
      // Errors are not cached, here or at the edge: a 4xx must not stick for the TTL.
      response.headers["cache-control"] = "no-store"
      response.headers["x-cache"] = "MISS"
      return response
    }
    response.headers["cache-control"] = `public, s-maxage=${ttlSec}`
    if (this.entries.size > 10_000) this.entries.clear()
    this.entries.set(key, { expiresMonoMs: now + ttlSec * 1000, response: copyOf(response, "HIT") })
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
