// Helpers for the replicated-log tests (test/cluster/jetstream-*.test.ts) and the cluster log
// bench: journal records of the three kinds the journal frames (binary orders and cancels, JSON
// for the rest), batches of them, a reader that collects what `follow` delivers, and the
// JetStream moves the failure tests need (who leads a stream, make a given node lead it).
import type { JetStreamManager } from "@nats-io/jetstream"
import type { NatsConnection } from "@nats-io/transport-node"
import type { LogBatch, LogPosition, LogReader, ReplicatedLog } from "../../src/cluster/ports.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { encodeRecord } from "../../src/store/journal-format.ts"

const USER = "2d1viRVDj6tZkAa59DhJNMxGNRprwxLabUL8npDyiukQ"
const MARKET = "7fd6c0aafd4f6c29e9d12d18b87b81e374d9d6f33be5db831c46f6c4f69908a4"

/** The record with journal seq `seq`: an order, a cancel or a credit, by turns. */
export const recordAt = (seq: number): JournalRecord => {
  const tsSec = 1_795_305_600 + seq
  switch (seq % 3) {
    case 0:
      return {
        seq,
        tsSec,
        cmd: {
          type: "place_order",
          order: { user: USER, marketId: MARKET, side: seq % 2 === 0 ? "buy" : "sell", outcome: "yes", priceBps: 1 + (seq % 9_999), size: 1 + (seq % 500), orderType: "gtc", nonce: 1_795_305_600_000 + seq }
        }
      }
    case 1:
      return { seq, tsSec, cmd: { type: "cancel_order", user: USER, orderId: seq } }
    default:
      return { seq, tsSec, cmd: { type: "credit", user: `user-${seq % 7}`, amountMicro: 1_000_000 + seq, ref: `ref-${seq}` } }
  }
}

/** A batch of `count` records from `firstSeq` (none: a term marker). */
export const batchOf = (term: number, holder: string, firstSeq: number, count: number): LogBatch => ({
  term,
  holder,
  records: Array.from({ length: count }, (_, i) => recordAt(firstSeq + i))
})

/** The records' journal frames, concatenated: what "byte for byte" compares. */
export const framesOf = (batch: LogBatch): Buffer => Buffer.concat(batch.records.map(encodeRecord))

export interface Delivered {
  readonly position: LogPosition
  readonly batch: LogBatch
}

export interface Collector {
  readonly delivered: Delivered[]
  /** The error `follow` reported, once it has. */
  error: unknown
  /** Resolves once `count` batches arrived; rejects if the reader reports an error first. */
  until(count: number): Promise<void>
  /** Resolves with the reader's error (however many batches came before it). */
  failed(): Promise<unknown>
  stop(): Promise<void>
}

export const collect = (log: ReplicatedLog, from: LogPosition): Collector => {
  const waiters: Array<() => void> = []
  const wake = (): void => {
    for (const w of waiters.splice(0)) w()
  }
  const c: Collector & { reader?: LogReader } = {
    delivered: [],
    error: undefined,
    until: async (count) => {
      while (c.delivered.length < count) {
        if (c.error !== undefined) throw new Error(`reader failed after ${c.delivered.length} of ${count} batches: ${String(c.error)}`, { cause: c.error })
        await new Promise<void>((r) => waiters.push(r))
      }
    },
    failed: async () => {
      while (c.error === undefined) await new Promise<void>((r) => waiters.push(r))
      return c.error
    },
    stop: () => c.reader!.stop()
  }
  c.reader = log.follow(
    from,
    (position, batch) => {
      c.delivered.push({ position, batch })
      wake()
    },
    (err) => {
      c.error = err ?? new Error("undefined error")
      wake()
    }
  )
  return c
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * How long a test waits for JetStream to settle (a leader elected, a restarted node current): a
 * hang bound, not a speed expectation. Alone, or beside eight CPU hogs or fsync hogs, it takes
 * 1–20 s; inside a full test run with other suites' real processes beside it (load 10–14 on two
 * cores), a restarted node once took over 90 s to be current and a stream once had no leader for
 * over 90 s after its leader's SIGKILL. The failing waits print each node's log (the callers do).
 */
export const SETTLE_MS = 300_000

/** Polls `probe` until it returns a value other than undefined (JetStream state moves on its own). */
export const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = SETTLE_MS): Promise<T> => {
  const deadline = performance.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await probe()
      if (v !== undefined) return v
    } catch (err) {
      last = err
    }
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}${last === undefined ? "" : ` (last error: ${String(last)})`}`)
    await pause(200)
  }
}

/** The stream's leader's server name, once it has one. */
export const streamLeader = (jsm: JetStreamManager, stream: string): Promise<string> =>
  until(`a leader for ${stream}`, async () => (await jsm.streams.info(stream)).cluster?.leader || undefined)

/**
 * Resolves once `node` is an online, current replica (or the leader) of the stream. `sinceMs`, the
 * performance.now() at which the node's process was (re)started (NatsNode.startedAtMs), makes the
 * answer about that process: the leader must have heard from the node since (its `active`, the time
 * since it last did, shorter than the time since the start). Without it, the leader's view of the
 * process before a kill and restart a few milliseconds long passed for current (issue 35, run 45):
 * the test then killed the healthy leader with the restarted node not yet in the stream's quorum.
 */
export const waitCurrent = async (jsm: JetStreamManager, stream: string, node: string, sinceMs?: number, timeoutMs = SETTLE_MS): Promise<true> => {
  let seen = "nothing"
  try {
    return await until(
      `${node} current on ${stream}`,
      async () => {
        const cl = (await jsm.streams.info(stream)).cluster
        seen = JSON.stringify(cl)
        if (cl?.leader === node) return true
        // Right after a restart the leader may still report the node's last state: current, but offline, or heard from before the start.
        const heardSince = (activeNs: number): boolean => sinceMs === undefined || activeNs / 1e6 < performance.now() - sinceMs
        return cl?.replicas?.some((r) => r.name === node && r.current && r.offline !== true && heardSince(r.active)) === true ? true : undefined
      },
      timeoutMs
    )
  } catch (err) {
    // What the cluster last said of the node: lagging (how far), offline, or absent.
    throw new Error(`${(err as Error).message}; the stream's cluster info last read: ${seen}`)
  }
}

/** Reads the log from position 1 with a new reader until it has `count` batches or reports an error. */
export const readAll = async (log: ReplicatedLog, count: number): Promise<Collector> => {
  const r = collect(log, 1)
  await Promise.race([r.until(count).catch(() => undefined), r.failed()])
  await r.stop()
  return r
}

/** Asks the stream's leader to step down until `node` leads it (JetStream picks the successor). */
export const moveLeaderTo = (nc: NatsConnection, jsm: JetStreamManager, stream: string, node: string): Promise<true> =>
  until(
    `${node} to lead ${stream}`,
    async () => {
      const leader = await streamLeader(jsm, stream)
      if (leader === node) return true
      await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, "", { timeout: 5_000 })
      await streamLeader(jsm, stream)
      return undefined
    },
    SETTLE_MS
  )
