// In-memory implementations of the cluster ports (src/cluster/ports.ts), for unit tests and as the
// simulator's base: one process's idea of a perfect replicated log (appends fenced on the expected
// position, followers told of every batch in order) and of a lease on an injected monotonic clock.
// They fail only when told to (`failAppends`), so tests of the sequencer's own logic stay exact.
import { type Lease, type LeasePort, type LogBatch, LogFenced, type LogPosition, type LogReader, type ReplicatedLog } from "./ports.ts"

export class MemoryLog implements ReplicatedLog {
  readonly batches: LogBatch[] = []
  private readonly followers = new Set<(position: LogPosition, batch: LogBatch) => void>()
  /** When set, every append rejects with it (the log unreachable). */
  failAppends: Error | null = null

  append(batch: LogBatch, expectedLast: LogPosition): Promise<LogPosition> {
    if (this.failAppends !== null) return Promise.reject(this.failAppends)
    if (expectedLast !== this.batches.length) {
      return Promise.reject(new LogFenced(expectedLast, `wrong last sequence: the log is at ${this.batches.length}`))
    }
    this.batches.push(batch)
    const position = this.batches.length
    // Delivered after the append's own promise settles, as a real log's consumers see it later.
    queueMicrotask(() => {
      for (const f of this.followers) f(position, batch)
    })
    return Promise.resolve(position)
  }

  lastPosition(): Promise<LogPosition> {
    return Promise.resolve(this.batches.length)
  }

  follow(from: LogPosition, onBatch: (position: LogPosition, batch: LogBatch) => void, _onError: (err: unknown) => void): LogReader {
    let next = Math.max(1, from)
    let stopped = false
    const deliver = (): void => {
      while (!stopped && next <= this.batches.length) {
        const p = next++
        onBatch(p, this.batches[p - 1]!)
      }
    }
    const listener = (): void => deliver()
    this.followers.add(listener)
    queueMicrotask(deliver)
    return {
      stop: () => {
        stopped = true
        this.followers.delete(listener)
        return Promise.resolve()
      }
    }
  }
}

/** A lease on an injected monotonic clock: held until `ttlMs` after its last renewal. */
export class MemoryLease implements LeasePort {
  private held: { holder: string; term: number; expiresMonoMs: number } | null = null
  private lastTerm = 0
  /** Holders cut off from the lease (tests): their calls fail as an unreachable server's would. */
  readonly partitioned = new Set<string>()
  /** Holders whose acquire is refused for now (tests: a standby held back). */
  readonly heldBack = new Set<string>()

  constructor(
    private readonly monoMs: () => number,
    readonly ttlMs: number
  ) {}

  acquire(holder: string): Promise<Lease | null> {
    if (this.partitioned.has(holder)) return Promise.reject(new Error(`${holder} cannot reach the lease`))
    if (this.heldBack.has(holder)) return Promise.resolve(null)
    const now = this.monoMs()
    if (this.held !== null && this.held.expiresMonoMs > now) return Promise.resolve(null)
    const term = ++this.lastTerm
    this.held = { holder, term, expiresMonoMs: now + this.ttlMs }
    return Promise.resolve({ holder, term, validUntilMonoMs: now + this.ttlMs })
  }

  renew(lease: Lease): Promise<Lease | null> {
    if (this.partitioned.has(lease.holder)) return Promise.reject(new Error(`${lease.holder} cannot reach the lease`))
    const now = this.monoMs()
    const h = this.held
    if (h === null || h.term !== lease.term || h.expiresMonoMs <= now) return Promise.resolve(null)
    h.expiresMonoMs = now + this.ttlMs
    return Promise.resolve({ ...lease, validUntilMonoMs: now + this.ttlMs })
  }

  release(lease: Lease): Promise<void> {
    if (this.held?.term === lease.term) this.held = null
    return Promise.resolve()
  }

  /** The lease lapses now, as on a server that stopped hearing its holder (tests: a partitioned leader). */
  lapse(): void {
    this.held = null
  }

  /** Who holds the lease now (tests). */
  holder(): { holder: string; term: number } | null {
    const h = this.held
    return h === null || h.expiresMonoMs <= this.monoMs() ? null : { holder: h.holder, term: h.term }
  }
}
