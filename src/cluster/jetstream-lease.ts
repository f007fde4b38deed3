// The leader lease (src/cluster/ports.ts `LeasePort`) on a JetStream KV key (docs/cluster.md
// "The lease"). The bucket keeps one value per key (history 1) for at most `max_age` = the lease's
// TTL: a holder that stops renewing loses the lease on the server's own timer, whatever happens
// to the holder. nats-server 2.10 has no per-key TTL; the bucket's max_age is the TTL, so the
// bucket holds nothing else.
//  - acquire: `create` (accepted only while the key is absent or deleted); the term is that
//    create's revision, the bucket stream's sequence, which only grows — so terms only grow across
//    holders. The value names the holder (and, from the first renewal on, the term).
//  - renew: `update` on the revision last written (compare-and-set): refused when anybody else
//    wrote the key since, or when it lapsed (the server removed it).
//  - release: delete on that revision, so a standby takes over at once after a clean stop.
// Validity: a holder counts the lease as its own until the monotonic time at which it SENT the
// request that wrote it, plus the TTL, less `marginMs`. The server stamps the entry when it
// receives the request (later) and removes it only once its own wall clock passes stamp + TTL
// (measured on 2.10.27: 0 to 1 s late, never early, see `MEASURED_LAPSE`), so the holder's
// deadline comes first unless clocks disagree. The margin covers that: the rate difference
// between this machine's monotonic clock and the servers' wall clocks over one TTL (NTP keeps
// it under 500 ppm: 0.5 ms per second), and the wall-clock offset between two NATS nodes when the
// bucket's stream leader changes between the stamp and the expiry (the new leader judges the old
// leader's stamp by its own clock). The expiry timer's lateness costs takeover time, not safety.
//
// The bucket must never be deleted while a cluster uses it: a new bucket's revisions start at 1
// again, and so would terms.
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, StorageType, type StreamConfig } from "@nats-io/jetstream"
import { type KV, Kvm } from "@nats-io/kv"
import type { NatsConnection } from "@nats-io/transport-node"
import { isWrongLastSequence } from "./jetstream-log.ts"
import type { Lease, LeasePort } from "./ports.ts"

export interface JetStreamLeaseOptions {
  /** The lease's lifetime: the bucket's max_age. */
  readonly ttlMs: number
  /** Subtracted from every validity (see above); default 250 ms + 1% of the TTL. */
  readonly marginMs?: number
  readonly bucket?: string
  readonly key?: string
  /** 3 in production (the lease survives one NATS node); 1 for single-node tests. */
  readonly replicas?: number
  /** How long one KV request waits for its answer. */
  readonly timeoutMs?: number
}

export const DEFAULT_BUCKET = "twinbook_lease"
export const DEFAULT_KEY = "leader"

/**
 * How precisely an unrenewed entry lapses on nats-server 2.10.27 (3 local nodes, R3, TTL 2 s;
 * probed by acquiring back to back from another holder, so to within one round trip, 1-2 ms):
 *  - a renewed lease, and a fresh bucket's first entry: at stamp + TTL, within that resolution;
 *  - an entry written while the bucket's expiry timer was already due within 250 ms (here: an
 *    acquire just after the previous holder released): up to 1 s late (12 trials: median +997 ms,
 *    max +999 ms), because the server then fires its expiry timer after 1 s (filestore.go
 *    resetAgeChk: "only fire at most once every 250ms", rounded up to a second).
 * Never early. test/cluster/jetstream-lease.test.ts checks every holder's deadline came before
 * the lapse.
 */
export const MEASURED_LAPSE = { earlyMs: 0, lateMsUpTo: 1_000 } as const

interface LeaseValue {
  readonly holder: string
  /** Absent in the create (its revision, the term, is not known before it is written). */
  readonly term?: number
}

const encode = (v: LeaseValue): Uint8Array => new TextEncoder().encode(JSON.stringify(v))

const decode = (data: Uint8Array): LeaseValue | null => {
  try {
    const v = JSON.parse(new TextDecoder().decode(data)) as Partial<LeaseValue>
    return typeof v.holder === "string" ? { holder: v.holder, ...(typeof v.term === "number" ? { term: v.term } : {}) } : null
  } catch {
    return null
  }
}

const leaseKey = (holder: string, term: number): string => `${term}\n${holder}`

/** What makes an existing bucket unsafe as the lease (empty: safe). */
export const bucketConfigProblems = (actual: Partial<StreamConfig>, ttlMs: number, replicas: number): string[] => {
  const problems: string[] = []
  const maxAgeMs = (actual.max_age ?? 0) / 1e6
  if (maxAgeMs !== ttlMs) problems.push(`max_age is ${maxAgeMs} ms, not the lease TTL ${ttlMs} ms`)
  if (actual.max_msgs_per_subject !== 1) problems.push(`history is ${actual.max_msgs_per_subject}, not 1`)
  if (actual.num_replicas !== replicas) problems.push(`num_replicas is ${actual.num_replicas}, not ${replicas}`)
  if (actual.storage !== StorageType.File) problems.push(`storage is ${actual.storage}, not file: a full restart would restart the terms`)
  return problems
}

export class UnsafeLeaseBucket extends Error {
  readonly _tag = "UnsafeLeaseBucket"
  constructor(
    readonly bucket: string,
    readonly problems: ReadonlyArray<string>
  ) {
    super(`KV bucket ${bucket} cannot hold the lease: ${problems.join("; ")} (every process must use the same TTL; docs/cluster.md)`)
  }
}

/** Creates the bucket if it is absent (idempotent), refuses an unsafe one, and returns the lease. */
export const openJetStreamLease = async (nc: NatsConnection, monoMs: () => number, options: JetStreamLeaseOptions): Promise<JetStreamLease> => {
  const bucket = options.bucket ?? DEFAULT_BUCKET
  const replicas = options.replicas ?? 3
  const marginMs = options.marginMs ?? 250 + Math.ceil(options.ttlMs / 100)
  if (!(options.ttlMs > 2 * marginMs)) throw new Error(`lease TTL ${options.ttlMs} ms must exceed twice the safety margin (${marginMs} ms)`)
  const js = jetstream(nc, options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs })
  const jsm = await jetstreamManager(nc)
  const stream = `KV_${bucket}`
  const config = async (): Promise<StreamConfig | null> => {
    try {
      return (await jsm.streams.info(stream)).config
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return null
      throw err
    }
  }
  const kvm = new Kvm(js)
  let found = await config()
  if (found === null) {
    // allow_direct off: a get is answered by the stream leader, never by a lagging replica.
    await kvm.create(bucket, { history: 1, ttl: options.ttlMs, replicas, storage: StorageType.File, allow_direct: false }).catch(async (err: unknown) => {
      if ((await config()) === null) throw err
    })
    found = await config()
    if (found === null) throw new Error(`KV bucket ${bucket} was not created`)
  }
  const problems = bucketConfigProblems(found, options.ttlMs, replicas)
  if (problems.length > 0) throw new UnsafeLeaseBucket(bucket, problems)
  const kv = await kvm.open(bucket, { allow_direct: false })
  return new JetStreamLease(kv, stream, options.key ?? DEFAULT_KEY, monoMs, options.ttlMs, marginMs)
}

export class JetStreamLease implements LeasePort {
  /** The revision this process last wrote, per lease it holds (holder and term). */
  private readonly revisions = new Map<string, number>()

  constructor(
    private readonly kv: KV,
    /** The bucket's stream (KV_<bucket>). */
    readonly stream: string,
    readonly key: string,
    private readonly monoMs: () => number,
    readonly ttlMs: number,
    readonly marginMs: number
  ) {}

  private validFrom(sentMonoMs: number): number {
    return sentMonoMs + this.ttlMs - this.marginMs
  }

  async acquire(holder: string): Promise<Lease | null> {
    const sentMonoMs = this.monoMs()
    let revision: number
    try {
      revision = await this.kv.create(this.key, encode({ holder }))
    } catch (err) {
      if (isWrongLastSequence(err)) return null
      throw err
    }
    this.revisions.set(leaseKey(holder, revision), revision)
    return { holder, term: revision, validUntilMonoMs: this.validFrom(sentMonoMs) }
  }

  async renew(lease: Lease): Promise<Lease | null> {
    const known = this.revisions.get(leaseKey(lease.holder, lease.term))
    if (known !== undefined) {
      const renewed = await this.update(lease, known)
      if (renewed !== null) return renewed
    }
    // Our last write's revision is unknown (a renewal whose answer was lost may have landed):
    // the key tells. Still ours if it holds our holder and term, at whatever revision.
    const current = await this.ours(lease)
    if (current === null) {
      this.revisions.delete(leaseKey(lease.holder, lease.term))
      return null
    }
    return this.update(lease, current)
  }

  /** The compare-and-set renewal; null when the key moved past `revision` or lapsed. */
  private async update(lease: Lease, revision: number): Promise<Lease | null> {
    const sentMonoMs = this.monoMs()
    try {
      const next = await this.kv.update(this.key, encode({ holder: lease.holder, term: lease.term }), revision)
      this.revisions.set(leaseKey(lease.holder, lease.term), next)
      return { holder: lease.holder, term: lease.term, validUntilMonoMs: this.validFrom(sentMonoMs) }
    } catch (err) {
      if (isWrongLastSequence(err)) {
        this.revisions.delete(leaseKey(lease.holder, lease.term))
        return null
      }
      throw err
    }
  }

  /** The key's revision when it holds `lease` (read from the bucket's stream leader), else null. */
  private async ours(lease: Lease): Promise<number | null> {
    const entry = await this.kv.get(this.key)
    if (entry === null || entry.operation !== "PUT") return null
    const v = decode(entry.value)
    if (v === null || v.holder !== lease.holder) return null
    const term = v.term ?? entry.revision
    return term === lease.term ? entry.revision : null
  }

  async release(lease: Lease): Promise<void> {
    const revision = this.revisions.get(leaseKey(lease.holder, lease.term)) ?? (await this.ours(lease))
    this.revisions.delete(leaseKey(lease.holder, lease.term))
    if (revision === null) return
    try {
      await this.kv.delete(this.key, { previousSeq: revision })
    } catch (err) {
      // Not ours any more (lapsed, or taken): nothing to release.
      if (!isWrongLastSequence(err)) throw err
    }
  }
}
