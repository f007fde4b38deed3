// The in-process edge cache: read routes carry `Cache-Control: public, s-maxage=N`
// and `X-Cache: HIT|MISS`; within N seconds the same URL is served from here.
import type { HttpResponse } from "./http.ts"

interface Entry {
  readonly expiresMs: number
  readonly response: HttpResponse
}

export class EdgeCache {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly nowMs: () => number) {}

  async serve(key: string, ttlSec: number, produce: () => HttpResponse | Promise<HttpResponse>): Promise<HttpResponse> {
    const now = this.nowMs()
    const hit = this.entries.get(key)
    if (hit !== undefined && hit.expiresMs > now) return { ...hit.response, headers: { ...hit.response.headers, "x-cache": "HIT" } }
    const response = await produce()
    response.headers["cache-control"] = `public, s-maxage=${ttlSec}`
    response.headers["x-cache"] = "MISS"
    // Errors are not cached: a 4xx must not stick for the TTL.
    if (response.status === 200) {
      if (this.entries.size > 10_000) this.entries.clear()
      this.entries.set(key, { expiresMs: now + ttlSec * 1000, response })
    }
    return response
  }
}

export const TTL_SEC = {
  markets: 30,
  book: 1,
  trades: 3,
  candles: { "1m": 5, "5m": 15, "1h": 60, "1d": 300 },
  fees: 30
} as const
