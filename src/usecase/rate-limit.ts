// Token buckets keyed by wallet or IP, refilled by the monotonic clock (src/time/clock.ts):
// a wall-clock step must neither drain a bucket nor fill one (docs/time.md). Injected, so
// tests advance time instead of sleeping. Below the routes: the HTTP routes, the deposit
// service and the server-managed LP bot (its own `botOrders` bucket) all charge this table.
//
// Bounded whatever the number of keys (docs/decisions.md "Rate limits"): the buckets form a
// list in order of last use (a take moves its bucket to the end), so the buckets that may be
// dropped are at the front. A bucket is dropped once it would be full again, which is exactly
// an absent bucket; at the cap the least recently used one is evicted even if it is not. Each
// new key does at most SWEEP_PER_TAKE + 1 steps of that work, and a take of a known key none.
// (A linked list, not the Map's own insertion order: V8 skips deleted entries when a Map
// iterator starts, so taking the first entry after many deletes is not O(1).)
import { ApiError } from "../domain/errors.ts"
import { addressKey } from "./address-key.ts"

export interface BucketSpec {
  readonly name: string
  /** Requests allowed per window. */
  readonly limit: number
  readonly windowSec: number
}

interface Bucket {
  readonly id: string
  tokens: number
  updatedMonoMs: number
  /** The spec's, kept to tell when the bucket is full again. */
  readonly limit: number
  readonly ratePerMs: number
  /** Neighbours in order of last use (older, newer). */
  older: Bucket | null
  newer: Bucket | null
}

/** Buckets held at most, by default: ~220–250 bytes each (measured, IPv4 and IPv6 keys), so ~60 MB at the cap. */
export const DEFAULT_MAX_BUCKETS = 250_000

/** Refilled buckets looked for at the front on each new key: more than the one it adds, so memory drains after a flood. */
const SWEEP_PER_TAKE = 4

export interface RateLimiterOptions {
  /** Buckets held at most (all bucket names together); the least recently used is evicted beyond. */
  readonly maxBuckets?: number
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>()
  /** Least and most recently used. */
  private oldest: Bucket | null = null
  private newest: Bucket | null = null
  readonly maxBuckets: number
  /** Refusals by bucket name (read by /metrics). */
  readonly hits = new Map<string, number>()
  /** Buckets evicted at the cap before they were full again (read by /metrics: the cap is too small for the traffic). */
  evicted = 0
  /** Buckets looked at to drop or evict one: the work the bound is about (read by tests). */
  examined = 0

  constructor(private readonly monoMs: () => number, opts: RateLimiterOptions = {}) {
    this.maxBuckets = Math.max(1, opts.maxBuckets ?? DEFAULT_MAX_BUCKETS)
  }

  /** Buckets held now. */
  get size(): number {
    return this.buckets.size
  }

  /** Takes one token or throws 429 rate_limited with the seconds until one is free. */
  take(spec: BucketSpec, key: string): void {
    const now = this.monoMs()
    const id = `${spec.name}|${key}`
    const ratePerMs = spec.limit / (spec.windowSec * 1000)
    let b = this.buckets.get(id)
    if (b === undefined) {
      this.makeRoom(now)
      b = { id, tokens: spec.limit, updatedMonoMs: now, limit: spec.limit, ratePerMs, older: null, newer: null }
      this.buckets.set(id, b)
    } else {
      b.tokens = Math.min(spec.limit, b.tokens + (now - b.updatedMonoMs) * ratePerMs)
      b.updatedMonoMs = now
      this.unlink(b)
    }
    this.append(b)
    if (b.tokens < 1) {
      const retryAfterSec = Math.max(1, Math.ceil((1 - b.tokens) / ratePerMs / 1000))
      this.hits.set(spec.name, (this.hits.get(spec.name) ?? 0) + 1)
      throw new ApiError("rate_limited", `${spec.name}: ${spec.limit} per ${spec.windowSec} s`, retryAfterSec)
    }
    b.tokens -= 1
  }

  /** `take` keyed on a client's address group (src/usecase/address-key.ts: IPv6 by /64). */
  takeForAddress(spec: BucketSpec, ip: string): void {
    this.take(spec, addressKey(ip))
  }

  /**
   * Before a new bucket: drops up to SWEEP_PER_TAKE buckets from the least recently used end
   * that would be full again by now (dropping one changes nothing: a missing bucket is a full
   * one), stopping at the first that would not (it holds back the ones behind it until it is
   * full, at most one window: every bucket behind it was used later); then, at the cap, evicts
   * the least recently used bucket whatever it holds.
   */
  private makeRoom(now: number): void {
    for (let dropped = 0; dropped < SWEEP_PER_TAKE && this.oldest !== null; dropped++) {
      const b = this.oldest
      this.examined++
      // The refill of `take`, term for term: at or past the limit, `take` would make it exactly full.
      if (b.tokens + (now - b.updatedMonoMs) * b.ratePerMs < b.limit) break
      this.remove(b)
    }
    if (this.buckets.size >= this.maxBuckets && this.oldest !== null) {
      this.examined++
      this.evicted++
      this.remove(this.oldest)
    }
  }

  private remove(b: Bucket): void {
    this.unlink(b)
    this.buckets.delete(b.id)
  }

  private unlink(b: Bucket): void {
    if (b.older === null) this.oldest = b.newer
    else b.older.newer = b.newer
    if (b.newer === null) this.newest = b.older
    else b.newer.older = b.older
    b.older = null
    b.newer = null
  }

  private append(b: Bucket): void {
    b.older = this.newest
    if (this.newest === null) this.oldest = b
    else this.newest.newer = b
    this.newest = b
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
