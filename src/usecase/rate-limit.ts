// Token buckets keyed by wallet or IP, refilled by the monotonic clock (src/time/clock.ts):
// a wall-clock step must neither drain a bucket nor fill one (docs/time.md). Injected, so
// tests advance time instead of sleeping. Below the routes: the HTTP routes, the deposit
// service and the server-managed LP bot (its own `botOrders` bucket) all charge this table.
import { ApiError } from "../domain/errors.ts"

export interface BucketSpec {
  readonly name: string
  /** Requests allowed per window. */
  readonly limit: number
  readonly windowSec: number
}

interface Bucket {
  tokens: number
  updatedMonoMs: number
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>()
  /** Refusals by bucket name (read by /metrics). */
  readonly hits = new Map<string, number>()

  constructor(private readonly monoMs: () => number) {}

  /** Takes one token or throws 429 rate_limited with the seconds until one is free. */
  take(spec: BucketSpec, key: string): void {
    const now = this.monoMs()
    const id = `${spec.name}|${key}`
    const ratePerMs = spec.limit / (spec.windowSec * 1000)
    let b = this.buckets.get(id)
    if (b === undefined) {
      if (this.buckets.size > 200_000) this.sweep(now)
      b = { tokens: spec.limit, updatedMonoMs: now }
      this.buckets.set(id, b)
    } else {
      b.tokens = Math.min(spec.limit, b.tokens + (now - b.updatedMonoMs) * ratePerMs)
      b.updatedMonoMs = now
    }
    if (b.tokens < 1) {
      const retryAfterSec = Math.max(1, Math.ceil((1 - b.tokens) / ratePerMs / 1000))
      this.hits.set(spec.name, (this.hits.get(spec.name) ?? 0) + 1)
      throw new ApiError("rate_limited", `${spec.name}: ${spec.limit} per ${spec.windowSec} s`, retryAfterSec)
    }
    b.tokens -= 1
  }

  /** Drops buckets idle long enough to be full again. */
  private sweep(now: number): void {
    for (const [id, b] of this.buckets) if (now - b.updatedMonoMs > 3_600_000) this.buckets.delete(id)
  }
}

export const LIMITS = {
  walletOrders: { name: "wallet_orders", limit: 50, windowSec: 60 },
  ipOrders: { name: "ip_orders", limit: 600, windowSec: 60 },
  ipAdmin: { name: "ip_admin", limit: 60, windowSec: 60 },
  /** Extension: failed operator-token attempts per address; only failures are charged and refused. */
  ipAdminFailures: { name: "ip_admin_failures", limit: 10, windowSec: 60 },
  /** Extension: /v1/lp-bot/* (SPEC §8 sets none), like the order routes' per-IP bucket. */
  ipLp: { name: "ip_lp", limit: 600, windowSec: 60 },
  /** Extension: a server-managed bot's own placements, per user (its orders skip the HTTP buckets). */
  botOrders: { name: "bot_orders", limit: 600, windowSec: 60 }
} as const satisfies Record<string, BucketSpec>
