// The simulated leader lease (src/cluster/ports.ts `LeasePort`): a model of a JetStream KV key
// with a TTL and compare-and-set, on the world's clock. The server's lease lapses `ttlMs` after
// the last acquire or renewal it processed; terms only grow. A holder is told its lease is valid
// until `ttlMs` after it *sent* the request (it cannot know when the server processed it), which
// is never later than the server's own deadline: the holder stops first.
//
// Fault: `disturb(holder)` (the lease-expiry fault) loses or delays that holder's renewals for a
// while — lost ones time out, delayed ones arrive late — so its lease lapses on the server while
// the leader itself runs on.
import type { Lease, LeasePort } from "../../src/cluster/ports.ts"
import { type LinkParams, roundTrip } from "./cluster-log.ts"
import type { SimProcess } from "./cluster-process.ts"
import type { Rng } from "./random.ts"
import type { Scheduler } from "./scheduler.ts"

export interface LeaseRunStats {
  acquired: number
  renewed: number
  /** Renewals answered "no longer yours". */
  refused: number
  released: number
  /** Renewals lost or delayed by the lease-expiry fault. */
  lostRenewals: number
  delayedRenewals: number
}

export class SimLease {
  private held: { holder: string; term: number; expiresMs: number } | null = null
  private lastTerm = 0
  /** Holders whose renewals are disturbed, until when. */
  private readonly disturbed = new Map<string, number>()
  readonly stats: LeaseRunStats = { acquired: 0, renewed: 0, refused: 0, released: 0, lostRenewals: 0, delayedRenewals: 0 }
  /** Told at the server as a holder acquires the lease (the zombie fault resumes a paused leader then). */
  onAcquired: ((holder: string) => void) | null = null

  constructor(
    private readonly scheduler: Scheduler,
    readonly ttlMs: number,
    readonly link: LinkParams
  ) {}

  /** For `durationMs`, `holder`'s renewals are lost or delayed. */
  disturb(holder: string, durationMs: number): void {
    this.disturbed.set(holder, this.scheduler.nowMs() + durationMs)
  }

  /** Who holds the lease on the server now. */
  holder(): { holder: string; term: number } | null {
    const h = this.held
    return h === null || h.expiresMs <= this.scheduler.nowMs() ? null : { holder: h.holder, term: h.term }
  }

  private acquire(holder: string): { term: number } | null {
    const now = this.scheduler.nowMs()
    if (this.held !== null && this.held.expiresMs > now) return null
    this.held = { holder, term: ++this.lastTerm, expiresMs: now + this.ttlMs }
    this.stats.acquired++
    const term = this.held.term
    this.onAcquired?.(holder)
    return { term }
  }

  private renew(lease: Lease): boolean {
    const h = this.held
    if (h === null || h.term !== lease.term || h.holder !== lease.holder || h.expiresMs <= this.scheduler.nowMs()) {
      this.stats.refused++
      return false
    }
    h.expiresMs = this.scheduler.nowMs() + this.ttlMs
    this.stats.renewed++
    return true
  }

  clientFor(proc: SimProcess, rng: Rng): LeasePort {
    const s = this.scheduler
    const trip = <A>(what: string, atServer: () => A, extraMs = 0): Promise<A> => roundTrip(s, proc, rng, this.link, what, () => ({ ok: atServer() }), extraMs)
    return {
      ttlMs: this.ttlMs,
      acquire: (holder) => {
        const sentMs = s.nowMs()
        return trip(`acquire the lease for ${holder}`, () => this.acquire(holder)).then((got) =>
          got === null ? null : { holder, term: got.term, validUntilMonoMs: sentMs + this.ttlMs }
        )
      },
      renew: (lease) => {
        const sentMs = s.nowMs()
        const what = `renew term ${lease.term}`
        if ((this.disturbed.get(lease.holder) ?? -1) > sentMs) {
          if (rng.chance(0.5)) {
            this.stats.lostRenewals++
            return roundTrip<Lease | null>(s, proc, rng, this.link, what, () => null)
          }
          this.stats.delayedRenewals++
          const extraMs = rng.int(Math.floor(this.ttlMs / 2), 2 * this.ttlMs)
          return trip(what, () => this.renew(lease), extraMs).then((ok) => (ok ? { ...lease, validUntilMonoMs: sentMs + this.ttlMs } : null))
        }
        return trip(what, () => this.renew(lease)).then((ok) => (ok ? { ...lease, validUntilMonoMs: sentMs + this.ttlMs } : null))
      },
      release: (lease) =>
        trip(`release term ${lease.term}`, () => {
          if (this.held?.term === lease.term) {
            this.held = null
            this.stats.released++
          }
        })
    }
  }
}
