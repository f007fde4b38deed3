// Reading the replicated journal from a position on (ReplicatedLog.follow, docs/cluster.md
// "The replicated journal"): every batch once, in order, going on with new ones, through node
// restarts and client reconnects. A pull consumer of our own, not the client library's ordered
// consumer: that one, when the node holding its consumer dies, waits on a consumer-info request
// that node cannot answer until it returns; ours makes a new consumer elsewhere.
//
// The reader keeps `next`, the position it must deliver next, and checks every message against it:
//  - an ephemeral consumer (R1, in memory, no acks) starts at `next`; its messages are fetched in
//    pulls with idle heartbeats, so a dead consumer node or a lost connection shows within seconds;
//  - a message at `next` is decoded (./journal-batch.ts: CRC per record, headers cross-checked)
//    and delivered; one that does not decode is an error, never skipped;
//  - a message past `next` means the consumer skipped positions: lost in transit (a reconnect
//    drops what was in flight; with no acks the consumer has moved on), or missing from the one
//    replica the consumer reads (JetStream places an R1 consumer on any live replica, a damaged
//    one included — docs/cluster.md). Each skipped position is read from the stream leader, the
//    authority on what the log holds; where the leader holds nothing either, the log has a hole:
//    an error (LogGap), never skipped;
//  - anything before `next` is an error too (the stream would be delivering twice);
//  - a pull that brings nothing while the stream leader says the log goes past `next` is checked
//    with the leader: no message at `next` is a hole (an error), else the consumer is made anew.
// Failures to reach the stream (no leader, node down, timeouts) are retried, never reported:
// a reader waits out an outage. Errors end the reading: `onError` is called once, then nothing.
// A pull is abandoned, and the consumer made anew, when the client reconnects (the consumer may
// have lived on the node that died) and when a pull outlasts its own expiry by two heartbeats:
// after a reconnect the client library stops watching heartbeats until its consumer-info request
// is answered, which for a consumer on a dead node never comes (seen: a reader stuck for good
// beside two CPU hogs, test/cluster/jetstream-log.test.ts "with a node SIGKILLed").
import { AckPolicy, type Consumer, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, JetStreamError, type JetStreamClient, type JetStreamManager, ReplayPolicy } from "@nats-io/jetstream"
import { type MsgHdrs, type NatsConnection, nanos, nuid, type Status } from "@nats-io/transport-node"
import { BatchUnreadable, decodeBatch } from "./journal-batch.ts"
import type { LogBatch, LogPosition, LogReader } from "./ports.ts"

export interface FollowOptions {
  /**
   * Bytes per pull request (at most 100 messages either way): bounds what a reader buffers. Must
   * exceed the largest message, or the server holds that message back for good.
   */
  readonly pullMaxBytes?: number
  /** How long one pull request stays open on an idle stream. */
  readonly pullExpiresMs?: number
  /** The server's idle heartbeat on a pull; two missed ones and the consumer is made anew. */
  readonly heartbeatMs?: number
  /** Wait before trying again after the stream could not be reached. */
  readonly retryMs?: number
}

/** The log holds nothing at a position a reader needs, or delivered one out of order. */
export class LogGap extends Error {
  readonly _tag = "LogGap"
  constructor(
    /** The position the reader needed next. */
    readonly expected: LogPosition,
    readonly detail: string
  ) {
    super(`the log cannot give position ${expected}: ${detail}`)
  }
}

/** Thrown inside the loop: the consumer is behind the stream leader; make a new one. */
class Resume extends Error {}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = (): void => {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener("abort", done)
  })

// One piece: a factory whose consumer loop, gap check and stop share the reader's position and consumer.
export const followStream = (
  nc: NatsConnection,
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  from: LogPosition,
  onBatch: (position: LogPosition, batch: LogBatch) => void,
  onError: (err: unknown) => void,
  options: FollowOptions = {}
): LogReader => {
  const pullMaxBytes = options.pullMaxBytes ?? 32 * 1024 * 1024
  const pullExpiresMs = options.pullExpiresMs ?? 10_000
  if (!(pullExpiresMs >= 1_000)) throw new Error(`pullExpiresMs ${pullExpiresMs}: a pull must last at least 1000 ms`)
  // The server wants heartbeats well inside a pull's lifetime.
  const heartbeatMs = Math.min(options.heartbeatMs ?? 1_000, Math.floor(pullExpiresMs / 2))
  const retryMs = options.retryMs ?? 250
  const stopping = new AbortController()
  // `from` is the first position wanted (ports.ts); position 0 is "before the first batch".
  let next = Math.max(1, from)
  let stopCurrent: (() => void) | null = null
  /** Set when the current pull was abandoned (reconnect, overdue): its consumer is made anew. */
  let abandoned = false
  let failed = false
  // The library's iterator ends (and unregisters) on stop(), which its public type does not show.
  const statuses = nc.status() as AsyncIterable<Status> & { stop?: () => void }

  const fail = (err: unknown): void => {
    if (failed || stopping.signal.aborted) return
    failed = true
    stopping.abort()
    onError(err)
  }

  const newConsumer = async (): Promise<Consumer> => {
    const info = await jsm.consumers.add(stream, {
      name: `twinbook_follow_${nuid.next()}`,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: next,
      ack_policy: AckPolicy.None,
      replay_policy: ReplayPolicy.Instant,
      mem_storage: true,
      num_replicas: 1,
      // Left behind by a reader that died (or by a consumer on a node that was down): removed by the server.
      inactive_threshold: nanos(60_000)
    })
    return js.consumers.getConsumerFromInfo(info)
  }

  /** Decodes and hands over the batch at `next`; false once the reading has ended. */
  const deliver = (position: LogPosition, h: MsgHdrs | undefined, data: Uint8Array): boolean => {
    const batch = decodeBatch(position, h, data)
    if (stopping.signal.aborted) return false
    try {
      onBatch(position, batch)
    } catch (err) {
      // The caller's own exception ends the reading like any error.
      fail(err)
      return false
    }
    next++
    return true
  }

  /** Delivers what one consumer fetches until it must be replaced (throws) or the reading ends. */
  const drain = async (consumer: Consumer): Promise<void> => {
    while (!stopping.signal.aborted) {
      const messages = await consumer.fetch({ max_bytes: pullMaxBytes, expires: pullExpiresMs, idle_heartbeat: heartbeatMs })
      abandoned = false
      stopCurrent = () => void messages.stop()
      // The server ends every pull by its expiry; one still open two heartbeats later is lost.
      const overdue = setTimeout(() => abandon(), pullExpiresMs + 2 * heartbeatMs)
      const before = next
      try {
        for await (const m of messages) {
          if (stopping.signal.aborted || abandoned) break
          if (m.seq < next) throw new LogGap(next, `it delivered position ${m.seq} again`)
          if (m.seq > next && !(await fillFromLeader(m.seq))) break
          if (!deliver(m.seq, m.headers, m.data)) break
        }
      } finally {
        clearTimeout(overdue)
        stopCurrent = null
      }
      if (abandoned) throw new Resume()
      if (next === before && !stopping.signal.aborted) await checkIdle()
    }
  }

  /**
   * The consumer skipped from `next` to `upTo`: lost in transit (a reconnect), or absent from the
   * replica it reads. The stream leader, the authority on what the log holds, gives each one, or
   * says it holds nothing there: a hole in the log.
   */
  const fillFromLeader = async (upTo: LogPosition): Promise<boolean> => {
    while (next < upTo) {
      const stored = await jsm.streams.getMessage(stream, { seq: next })
      if (stored === null) throw new LogGap(next, `neither the stream leader nor this reader's replica holds it (the replica's next batch is at ${upTo})`)
      if (!deliver(next, stored.header, stored.data)) return false
    }
    return true
  }

  /**
   * A pull that brought nothing: the log may simply have nothing new, or it may hold nothing at
   * `next` while holding later positions — a hole no new batch would ever reveal if the log stays
   * quiet. The stream leader (the authority on what the log holds) tells which.
   */
  const checkIdle = async (): Promise<void> => {
    const last = (await jsm.streams.info(stream)).state.last_seq
    if (last < next) return
    if ((await jsm.streams.getMessage(stream, { seq: next })) === null) throw new LogGap(next, `the log's last position is ${last}, but it holds nothing at ${next}`)
    // The leader has it but this consumer did not deliver it (its replica lags, or it lost it): anew.
    throw new Resume()
  }

  /** Ends the current pull; `drain` then makes a new consumer. */
  const abandon = (): void => {
    if (stopCurrent === null) return
    abandoned = true
    stopCurrent()
  }

  const watchReconnects = async (): Promise<void> => {
    for await (const status of statuses) if (status.type === "reconnect") abandon()
  }

  const run = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      let consumer: Consumer | null = null
      try {
        consumer = await newConsumer()
        if (stopping.signal.aborted) break
        await drain(consumer)
      } catch (err) {
        if (err instanceof LogGap || err instanceof BatchUnreadable) return fail(err)
        if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return fail(err)
        // The server calls the pull itself malformed: retrying would only repeat it.
        if (err instanceof JetStreamError && (err as { code?: unknown }).code === 400) return fail(err)
        if (!(err instanceof Resume)) await sleep(retryMs, stopping.signal)
      } finally {
        stopCurrent = null
        // Best effort: the server removes it after inactive_threshold anyway.
        if (consumer !== null) void consumer.delete().catch(() => undefined)
      }
    }
  }

  const running = run()
    .catch(fail)
    .finally(() => statuses.stop?.())
  void watchReconnects()
  return {
    stop: async () => {
      stopping.abort()
      stopCurrent?.()
      await running
    }
  }
}
