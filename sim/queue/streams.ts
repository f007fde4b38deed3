// The queue's streams and the workers' consumer, created by whichever process comes first (a
// caller or a worker) and left in place: both sides ask for the same configuration, so creation
// is idempotent, and an existing stream or consumer is used as it is. On a JetStream cluster the
// streams are replicated on three nodes; a single server takes one replica.
import { AckPolicy, DeliverPolicy, type JetStreamManager, jetstreamManager, RetentionPolicy, StorageType, type StreamConfig } from "@nats-io/jetstream"
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node"
import { ACK_WAIT_MS, DATA_STREAM, JOBS_STREAM, MAX_AGE_MS, MAX_DELIVER, subjects, WORKERS_CONSUMER } from "./protocol.ts"

/** No server of the work queue answered (the CLIs print it as one line and exit 2). */
export class QueueUnreachable extends Error {
  override readonly name = "QueueUnreachable"
}

export const connectQueue = async (servers: string, name: string): Promise<NatsConnection> => {
  try {
    return await connect({ servers: servers.split(",").map((s) => s.trim()), name, maxReconnectAttempts: -1, reconnectTimeWait: 500 })
  } catch (err) {
    throw new QueueUnreachable(`cannot reach the work queue at ${servers}: ${err instanceof Error ? err.message : String(err)}`)
  }
}

const addStream = async (jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> => {
  try {
    await jsm.streams.info(config.name)
    return
  } catch {
    // not there yet
  }
  for (const replicas of [3, 1]) {
    try {
      await jsm.streams.add({ ...config, num_replicas: replicas })
      return
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err)
      // Another process made it meanwhile: use theirs.
      if (/already in use/.test(text)) return
      // A single server (or a cluster of fewer than three): one replica.
      if (replicas > 1 && /replicas|insufficient resources|not supported|no suitable peers/i.test(text)) continue
      throw new Error(`work queue: cannot create stream ${config.name}: ${text}`)
    }
  }
}

/**
 * Makes sure the streams and the consumer exist; returns the ack_wait the consumer really has (ms).
 * `ackWaitMs` only applies when this call creates the consumer (tests make it short, so a killed
 * worker's job comes back sooner and a job outlasts it).
 */
export const ensureQueue = async (nc: NatsConnection, ackWaitMs: number = ACK_WAIT_MS): Promise<{ jsm: JetStreamManager; ackWaitMs: number }> => {
  const jsm = await jetstreamManager(nc)
  const maxAge = nanos(MAX_AGE_MS)
  await addStream(jsm, { name: JOBS_STREAM, subjects: [subjects.jobs], retention: RetentionPolicy.Workqueue, storage: StorageType.File, max_age: maxAge })
  await addStream(jsm, { name: DATA_STREAM, subjects: [...subjects.data], retention: RetentionPolicy.Limits, storage: StorageType.File, max_age: maxAge })
  let info
  try {
    info = await jsm.consumers.info(JOBS_STREAM, WORKERS_CONSUMER)
  } catch {
    try {
      info = await jsm.consumers.add(JOBS_STREAM, {
        durable_name: WORKERS_CONSUMER,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(ackWaitMs),
        max_deliver: MAX_DELIVER,
        filter_subject: subjects.jobs
      })
    } catch (err) {
      // Another process made it meanwhile.
      info = await jsm.consumers.info(JOBS_STREAM, WORKERS_CONSUMER).catch(() => {
        throw err
      })
    }
  }
  return { jsm, ackWaitMs: (info.config.ack_wait ?? 30_000_000_000) / 1_000_000 }
}
