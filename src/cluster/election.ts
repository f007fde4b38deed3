// Becoming the leader, and staying it (docs/cluster.md "Failover"). A standby follows the log
// hot; once it has caught up it tries the lease, and with the lease it catches up with whatever
// was appended meanwhile, then fences the log with its term marker (an empty batch appended after
// the last position it applied). If the marker is refused, a deposed leader's batch landed first:
// it is applied like any other and the marker tried again. Only after the marker does the new
// leader take commands. The keeper renews the lease every third of its lifetime and reports the
// loss — a refused renewal, or no renewal before the lease's own deadline — exactly once.
import type { LogFollower } from "./follower.ts"
import { type Lease, type LeasePort, LogFenced, type LogPosition, type ReplicatedLog } from "./ports.ts"

export interface ElectionOptions {
  readonly log: ReplicatedLog
  readonly lease: LeasePort
  readonly follower: LogFollower
  readonly holder: string
  /** Waits (the Clock's sleep: real live, the scheduler's in the simulator). */
  readonly sleep: (ms: number) => Promise<void>
  /** Between two tries of the lease; a third of its lifetime by default. */
  readonly retryMs?: number
  /** Notable moments, one line each (the sequencer's log). */
  readonly note?: (msg: string, fields: Readonly<Record<string, unknown>>) => void
}

export interface Leadership {
  readonly lease: Lease
  /** The term marker's position: this leader's appends follow it. */
  readonly after: LogPosition
}

/** Resolves once this process leads: lease held, log caught up, term marker appended. */
export const takeLeadership = async (o: ElectionOptions): Promise<Leadership> => {
  const retryMs = o.retryMs ?? Math.max(1, Math.floor(o.lease.ttlMs / 3))
  o.follower.start()
  for (;;) {
    // Caught up first: a standby that has the lease while replaying a long log would let it lapse.
    if (!(await catchUp(o))) {
      await o.sleep(retryMs)
      continue
    }
    const lease = await o.lease.acquire(o.holder).catch((err: unknown) => {
      // Not "someone holds it" but a failure to ask (NATS unreachable, a timeout): said, then retried.
      o.note?.("lease request failed", { holder: o.holder, detail: err instanceof Error ? err.message : String(err) })
      return null
    })
    if (lease === null) {
      await o.sleep(retryMs)
      continue
    }
    o.note?.("lease acquired", { term: lease.term, holder: o.holder, applied_position: o.follower.position })
    const fenced = await fence(o, lease, retryMs)
    if (fenced !== null) return fenced
    o.note?.("lease lost before taking over", { term: lease.term })
  }
}

/**
 * Waits until the follower has applied the log's last position. False, said, when the log could
 * not be asked (its stream re-electing after a node's loss, NATS unreachable): the caller tries
 * again. A standby once died here without a word when the question timed out, and the cluster had
 * no leader for minutes (issue 35, run 49).
 */
const catchUp = async (o: ElectionOptions): Promise<boolean> => {
  let last: LogPosition
  try {
    last = await o.log.lastPosition()
  } catch (err) {
    o.note?.("log position request failed", { holder: o.holder, detail: err instanceof Error ? err.message : String(err) })
    return false
  }
  await o.follower.waitFor(last)
  return true
}

/** Catches up and appends the term marker; null when the lease was lost meanwhile. */
const fence = async (o: ElectionOptions, first: Lease, retryMs: number): Promise<Leadership | null> => {
  let lease = first
  for (;;) {
    const caughtUp = await catchUp(o)
    if (caughtUp) {
      try {
        const after = await o.log.append({ term: lease.term, holder: o.holder, records: [] }, o.follower.position)
        await o.follower.stop()
        o.note?.("leading", { term: lease.term, holder: o.holder, marker_position: after })
        return { lease, after }
      } catch (err) {
        if (err instanceof LogFenced) {
          // A deposed leader's batch landed after what we applied: apply it, renew, try again.
          o.note?.("term marker refused: catching up", { term: lease.term, detail: err.detail })
        } else {
          // Not answered (the marker may have landed: then it is applied like any batch, and another follows it).
          o.note?.("term marker append failed", { term: lease.term, detail: err instanceof Error ? err.message : String(err) })
        }
      }
    }
    // Still ours? Renewing says so and keeps it while the log is asked again.
    if (!caughtUp) await o.sleep(retryMs)
    const renewed = await o.lease.renew(lease).catch(() => null)
    if (renewed === null) return null
    lease = renewed
  }
}

export interface LeaseKeeper {
  /** The lease as last renewed. */
  current(): Lease
  /** True while the lease is certainly ours (before its deadline on the monotonic clock). */
  valid(): boolean
  /** Stops renewing (a clean stop releases the lease after this). */
  stop(): Promise<void>
}

export const keepLease = (o: {
  readonly lease: LeasePort
  readonly initial: Lease
  readonly monoMs: () => number
  readonly sleep: (ms: number) => Promise<void>
  /** Told once, when the lease is lost: the leader stops acknowledging at once. */
  readonly onLost: (reason: string) => void
}): LeaseKeeper => {
  let current = o.initial
  let stopped = false
  let lost = false
  const lose = (reason: string): void => {
    if (lost) return
    lost = true
    o.onLost(reason)
  }
  const everyMs = Math.max(1, Math.floor(o.lease.ttlMs / 3))
  const loop = (async () => {
    while (!stopped && !lost) {
      await o.sleep(everyMs)
      if (stopped) return
      if (o.monoMs() >= current.validUntilMonoMs) return lose(`term ${current.term}: not renewed before its deadline (paused, or NATS unreachable)`)
      let renewed: Lease | null
      try {
        renewed = await o.lease.renew(current)
      } catch (err) {
        // A failed renewal is retried until the deadline: the lease may well still be ours.
        if (o.monoMs() >= current.validUntilMonoMs) return lose(`term ${current.term}: renewal failed past the deadline (${err instanceof Error ? err.message : String(err)})`)
        continue
      }
      if (renewed === null) return lose(`term ${current.term}: renewal refused (another holder, or it lapsed on the server)`)
      current = renewed
    }
  })()
  return {
    current: () => current,
    valid: () => !lost && o.monoMs() < current.validUntilMonoMs,
    stop: async () => {
      stopped = true
      await loop
    }
  }
}
