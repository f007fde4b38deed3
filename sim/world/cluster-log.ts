// The simulated replicated log (src/cluster/ports.ts `ReplicatedLog`): a model of a JetStream
// stream with R3 and `sync_interval: always`, so an append the log acknowledged is never lost.
// Each process reaches it through its own client, whose messages take seeded latencies (one way;
// an append's covers the stream leader's quorum round trip) and whose answers pass the process's
// gate (sim/world/cluster-process.ts). A request with no answer within the request timeout rejects with
// `LogUnreachable`: the caller cannot know whether it landed, as with a NATS request timeout.
//
// Fencing is exactly JetStream's expected-last-sequence header: an append names the position it
// follows and is refused (`LogFenced`) when the stream is anywhere else. `appendUnchecked` is an
// append without the header (only the planted bug uses it: sim/testing/no-expected-position.ts).
//
// Faults: an outage (`unavailable`: the stream lost its quorum) answers nothing for a while; an
// append that reaches it then is either lost or committed late, when the outage ends (a Raft
// entry that reached a majority before the leader lost quorum), each with its fencing check made
// then. A client's append leaves at the process's next turn (the NATS client flushes its buffer),
// so a process paused in between (the zombie fault) sends it only when it resumes.
import { type LogBatch, LogFenced, type LogPosition, type LogReader, type ReplicatedLog } from "../../src/cluster/ports.ts"
import type { SimProcess } from "./cluster-process.ts"
import type { Rng } from "./random.ts"
import type { Scheduler } from "./scheduler.ts"

export interface LinkParams {
  /** One-way latency between a process and the service, uniform in [min, max] ms. */
  readonly latencyMs: readonly [number, number]
  /** A request not answered within this fails with an unknown outcome. */
  readonly timeoutMs: number
}

/** No answer in time: the outcome of the request is unknown (it may still land). */
export class LogUnreachable extends Error {
  readonly _tag = "LogUnreachable"
}

type Answer<A> = { readonly ok: A } | { readonly err: Error } | null

/**
 * One request from `proc` to a service: leaves now, is handled there (`atServer`, null: no
 * answer) after a latency, answered after another; the answer passes the process's gate.
 */
export const roundTrip = <A>(
  scheduler: Scheduler,
  proc: SimProcess,
  rng: Rng,
  link: LinkParams,
  what: string,
  atServer: () => Answer<A>,
  /** Extra time before the request reaches the service (a delayed renewal). */
  extraMs = 0
): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    let settled = false
    const timer = proc.after(link.timeoutMs, () => {
      if (settled) return
      settled = true
      reject(new LogUnreachable(`${what}: no answer in ${link.timeoutMs} ms (its outcome is unknown)`))
    })
    scheduler.after(rng.int(link.latencyMs[0], link.latencyMs[1]) + extraMs, () => {
      const answer = atServer()
      if (answer === null) return
      scheduler.after(rng.int(link.latencyMs[0], link.latencyMs[1]), () =>
        proc.run(() => {
          if (settled) return
          settled = true
          timer.cancel()
          if ("ok" in answer) resolve(answer.ok)
          else reject(answer.err)
        })
      )
    })
  })

/** A replicated log client with, beside the port, an append without the expected position. */
export interface SimLogClient extends ReplicatedLog {
  /** The append JetStream takes without the expected-last-sequence header: after whatever is there. */
  appendUnchecked(batch: LogBatch): Promise<LogPosition>
}

export interface LogRunStats {
  appends: number
  fenced: number
  outages: number
  /** Appends that reached the log during an outage and were lost (never acknowledged). */
  lostInOutage: number
  /** Appends committed late, when an outage ended (stored, or fenced then). */
  landedLate: number
}

export class SimLog {
  /** Every batch stored, in order: position p is batches[p - 1]. Nothing here is ever lost. */
  readonly batches: LogBatch[] = []
  private outageUntilMs = -1
  private outageEnd: { cancel(): void } | null = null
  private landPct = 0
  private readonly late: Array<{ batch: LogBatch; expected: LogPosition | null }> = []
  private readonly followers = new Set<() => void>()
  /** Told as a client's append is about to leave its process (the zombie fault pauses it there). */
  onSend: ((proc: SimProcess) => void) | null = null
  readonly stats: LogRunStats = { appends: 0, fenced: 0, outages: 0, lostInOutage: 0, landedLate: 0 }

  constructor(
    private readonly scheduler: Scheduler,
    private readonly rng: Rng,
    readonly link: LinkParams,
    /** Told of each batch stored, in order (the world's view of the log). */
    private readonly onStored: (position: LogPosition, batch: LogBatch) => void
  ) {}

  get unavailable(): boolean {
    return this.scheduler.nowMs() < this.outageUntilMs
  }

  /** The stream loses its quorum for `durationMs`; of the appends reaching it meanwhile, `landPct` % are committed when it ends. */
  outage(durationMs: number, landPct: number): void {
    this.stats.outages++
    this.landPct = landPct
    this.outageUntilMs = Math.max(this.outageUntilMs, this.scheduler.nowMs() + durationMs)
    this.outageEnd?.cancel()
    this.outageEnd = this.scheduler.at(this.outageUntilMs, () => {
      this.outageEnd = null
      for (const l of this.late.splice(0)) {
        this.stats.landedLate++
        this.store(l.batch, l.expected)
      }
    })
  }

  private receive(batch: LogBatch, expected: LogPosition | null): Answer<LogPosition> {
    this.stats.appends++
    if (this.unavailable) {
      if (this.rng.chance(this.landPct / 100)) this.late.push({ batch, expected })
      else this.stats.lostInOutage++
      return null
    }
    return this.store(batch, expected)
  }

  private store(batch: LogBatch, expected: LogPosition | null): Answer<LogPosition> {
    if (expected !== null && expected !== this.batches.length) {
      this.stats.fenced++
      return { err: new LogFenced(expected, `wrong last sequence: the stream is at ${this.batches.length}`) }
    }
    this.batches.push(batch)
    const position = this.batches.length
    this.onStored(position, batch)
    for (const kick of this.followers) kick()
    return { ok: position }
  }

  /** The log as process `proc` reaches it; `rng` draws its latencies. */
  clientFor(proc: SimProcess, rng: Rng): SimLogClient {
    const s = this.scheduler
    const send = (batch: LogBatch, expected: LogPosition | null): Promise<LogPosition> =>
      new Promise<LogPosition>((resolve, reject) => {
        // The client flushes its buffer at the process's next turn: a pause before then holds the append.
        proc.after(0, () => {
          this.onSend?.(proc)
          proc.run(() => roundTrip(s, proc, rng, this.link, `append after position ${expected ?? "(none)"}`, () => this.receive(batch, expected)).then(resolve, reject))
        })
      })
    return {
      append: (batch, expectedLast) => send(batch, expectedLast),
      appendUnchecked: (batch) => send(batch, null),
      lastPosition: () => roundTrip(s, proc, rng, this.link, "the stream's last sequence", () => (this.unavailable ? null : { ok: this.batches.length })),
      follow: (from, onBatch) => this.follow(proc, rng, from, onBatch)
    }
  }

  /** A consumer from `from` on: the backlog, then each batch as it is stored, each after a latency, in order, exactly once. */
  private follow(proc: SimProcess, rng: Rng, from: LogPosition, onBatch: (position: LogPosition, batch: LogBatch) => void): LogReader {
    let next = Math.max(1, from)
    let stopped = false
    let scheduled = false
    const flush = (): void => {
      scheduled = false
      while (!stopped && next <= this.batches.length) {
        const p = next++
        onBatch(p, this.batches[p - 1]!)
      }
    }
    const kick = (): void => {
      if (!proc.alive) return void this.followers.delete(kick)
      if (scheduled || stopped) return
      scheduled = true
      proc.after(rng.int(this.link.latencyMs[0], this.link.latencyMs[1]), flush)
    }
    this.followers.add(kick)
    kick()
    return {
      stop: () => {
        stopped = true
        this.followers.delete(kick)
        return Promise.resolve()
      }
    }
  }
}
