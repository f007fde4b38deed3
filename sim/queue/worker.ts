// `npm run sim:worker`: pulls sweep jobs from the JetStream work queue and runs them, any number
// of these on any number of machines. Each of `concurrency` slots pulls one job at a time (no
// prefetch: a job is only ever held by the slot running it), checks it can run it faithfully,
// runs it on its own thread while the main thread tells JetStream it is still working, publishes
// the result, then acknowledges. Killed mid-job, the job comes back after ack_wait; stopped
// (SIGTERM/SIGINT), it hands its jobs back at once (nak) and exits.
import { hostname } from "node:os"
import { type JetStreamClient, jetstream, type JsMsg } from "@nats-io/jetstream"
import { headers, type NatsConnection } from "@nats-io/transport-node"
import { fetchBlob } from "./blob.ts"
import { JobThread, ThreadDied } from "./job-thread-handle.ts"
import { type BlobRef, chunks, decode, encode, HEADER, HEARTBEATS_PER_ACK_WAIT, JOB_KINDS, type JobKind, type JobOutput, JOBS_STREAM, parseBlobHeader, subjects, WORKERS_CONSUMER, workerName } from "./protocol.ts"
import { connectQueue, ensureQueue } from "./streams.ts"
import { codeVersion, mismatch } from "./version.ts"

export interface WorkerOptions {
  readonly servers: string
  readonly concurrency: number
  /** One line per event (the CLI prints them on stdout). */
  readonly log: (line: string) => void
  /** The module each job thread runs (sim/job-thread.mjs): it registers the job kinds, which the queue itself does not know. */
  readonly threadEntry: URL
}

export interface RunningWorker {
  readonly name: string
  /** Stops pulling, hands back (nak) the jobs in hand, closes the connection. */
  stop(): Promise<void>
  /** Settles when the worker has stopped (after stop(), or when its connection closed for good). */
  readonly stopped: Promise<void>
}

interface Slot {
  thread: JobThread
  current: JsMsg | null
  /** The current job's in-progress acknowledgements. */
  beat: ReturnType<typeof setInterval> | null
}

/** What every job of this worker shares. */
interface Context {
  readonly nc: NatsConnection
  readonly js: JetStreamClient
  readonly name: string
  readonly mine: { readonly code: string; readonly node: string }
  readonly ackWaitMs: number
  readonly log: (line: string) => void
  readonly stopping: () => boolean
  readonly threadEntry: URL
}

/** What a job message says about itself (headers), before its body is opened. */
interface JobHead {
  readonly sweep: string
  readonly index: number
  readonly kind: string
  readonly label: string
  readonly code: string
  readonly node: string
  readonly blob: string | null
}

const headOf = (msg: JsMsg): JobHead | null => {
  const h = msg.headers
  const sweep = h?.get(HEADER.sweep) ?? ""
  const index = Number(h?.get(HEADER.job) ?? "")
  if (h === undefined || !/^[0-9a-z]+$/.test(sweep) || !Number.isSafeInteger(index) || index < 0) return null
  const blob = h.get(HEADER.blob)
  return { sweep, index, kind: h.get(HEADER.kind), label: h.get(HEADER.label), code: h.get(HEADER.code), node: h.get(HEADER.node), blob: blob === "" ? null : blob }
}

const publishOutput = async (c: Context, head: JobHead, run: string, output: JobOutput): Promise<void> => {
  const parts = chunks(encode(output))
  for (let i = 0; i < parts.length; i++) {
    const h = headers()
    h.set(HEADER.run, run)
    h.set(HEADER.worker, c.name)
    h.set(HEADER.part, String(i))
    h.set(HEADER.parts, String(parts.length))
    await c.js.publish(subjects.result(head.sweep, head.index), parts[i]!, { headers: h })
  }
}

const refuse = async (c: Context, msg: JsMsg, head: JobHead, what: string, why: string): Promise<void> => {
  const h = headers()
  h.set(HEADER.worker, c.name)
  h.set(HEADER.refused, why)
  await c.js.publish(subjects.result(head.sweep, head.index), new Uint8Array(0), { headers: h }).catch(() => undefined)
  msg.term(why)
  c.log(`refused job ${what}: ${why}`)
}

/** Why this worker cannot run the job faithfully, or null. */
const unfit = (c: Context, head: JobHead, blob: BlobRef | null): string | null =>
  !(JOB_KINDS as ReadonlyArray<string>).includes(head.kind)
    ? `unknown job kind "${head.kind}" (this worker runs ${JOB_KINDS.join(", ")})`
    : head.blob !== null && blob === null
      ? `malformed shared-input header "${head.blob}"`
      : mismatch(head, c.mine)

/** Runs one job on the slot's thread and answers for it: result and ack, a refusal, or a nak. */
const handle = async (c: Context, slot: Slot, msg: JsMsg): Promise<void> => {
  const head = headOf(msg)
  if (head === null) {
    msg.term("not a twinbook sweep job")
    return c.log(`dropped a message without a sweep and job (${msg.subject})`)
  }
  const what = `${head.label} (sweep ${head.sweep}, job ${head.index}, delivery ${msg.info.deliveryCount})`
  const blobRef = head.blob === null ? null : parseBlobHeader(head.blob)
  const why = unfit(c, head, blobRef)
  if (why !== null) return refuse(c, msg, head, what, why)
  slot.current = msg
  c.nc.publish(subjects.events(head.sweep), JSON.stringify({ event: "started", job: head.index, worker: c.name, delivery: msg.info.deliveryCount }))
  // Out before the log line says so: the caller counts this worker as seen even if it dies right after.
  await c.nc.flush()
  c.log(`started job ${what}`)
  const startedMs = performance.now() // live-only: the job's wall time, logged
  slot.beat = setInterval(() => msg.working(), Math.max(100, Math.floor(c.ackWaitMs / HEARTBEATS_PER_ACK_WAIT)))
  try {
    let shared: { sha256: string; bytes: Uint8Array } | null = null
    if (blobRef !== null) {
      try {
        shared = { sha256: blobRef.sha256, bytes: await fetchBlob(c.js, head.sweep, blobRef) }
      } catch (err) {
        // Perhaps only slow or cut off: another try, here or elsewhere (max_deliver bounds it).
        if (c.stopping()) return
        msg.nak(1_000)
        return c.log(`could not fetch the shared input of job ${what}: ${err instanceof Error ? err.message : String(err)}; handed back`)
      }
    }
    let output: JobOutput
    try {
      const body = decode<{ payload: unknown; outputs: string[] }>(msg.data)
      const reply = await slot.thread.run({ kind: head.kind as JobKind, payload: body.payload, outputs: body.outputs, shared })
      if (!reply.ok) throw new Error(reply.error)
      output = reply.output
    } catch (err) {
      if (c.stopping()) return
      if (err instanceof ThreadDied) {
        // The run took its thread down: hand the job back (max_deliver bounds a job that does this everywhere).
        msg.nak()
        c.log(`job thread died on job ${what}: ${err.message}; handed back`)
        slot.thread = new JobThread(c.threadEntry)
        return slot.thread.ready
      }
      // It cannot run here (its body or its input does not decode): tell the caller, drop it.
      return refuse(c, msg, head, what, err instanceof Error ? err.message.split("\n")[0]! : String(err))
    }
    if (c.stopping()) return
    try {
      await publishOutput(c, head, `${c.name}/${msg.info.deliveryCount}`, output)
      await msg.ackAck()
    } catch (err) {
      // Not stored, or stored but not acknowledged: run again (a second result is dropped by the caller).
      msg.nak()
      return c.log(`could not hand in job ${what}: ${err instanceof Error ? err.message : String(err)}; handed back`)
    }
    c.log(`finished job ${what} in ${((performance.now() - startedMs) / 1000).toFixed(1)} s`) // live-only: the job's wall time, logged
  } finally {
    clearInterval(slot.beat ?? undefined)
    slot.beat = null
    slot.current = null
  }
}

export const startWorker = async (o: WorkerOptions): Promise<RunningWorker> => {
  const name = workerName(hostname(), process.pid)
  const nc = await connectQueue(o.servers, `twinbook sim:worker ${name}`)
  // Threads only once the queue answers, and gone again if setting up fails: a live thread would keep the process from exiting.
  const slots: Slot[] = []
  let ackWaitMs: number
  let consumer
  try {
    ;({ ackWaitMs } = await ensureQueue(nc))
    consumer = await jetstream(nc).consumers.get(JOBS_STREAM, WORKERS_CONSUMER)
    for (let i = 0; i < o.concurrency; i++) slots.push({ thread: new JobThread(o.threadEntry), current: null, beat: null })
    await Promise.all(slots.map((s) => s.thread.ready))
  } catch (err) {
    await Promise.all(slots.map((s) => s.thread.terminate()))
    await nc.close().catch(() => undefined)
    throw err
  }
  const js = jetstream(nc)
  let stopping = false
  const c: Context = { nc, js, name, mine: { code: codeVersion(), node: process.versions.node }, ackWaitMs, log: o.log, stopping: () => stopping, threadEntry: o.threadEntry }

  const loop = async (slot: Slot): Promise<void> => {
    while (!stopping) {
      let msg: JsMsg | null
      try {
        msg = await consumer.next({ expires: 5_000 })
      } catch (err) {
        if (stopping || nc.isClosed()) return
        o.log(`pull failed: ${err instanceof Error ? err.message : String(err)}`)
        await new Promise((r) => setTimeout(r, 1_000))
        continue
      }
      if (msg === null) continue
      if (stopping) return msg.nak()
      await handle(c, slot, msg)
    }
  }

  const loops = Promise.all(slots.map(loop))
  const stopped = (async () => {
    await Promise.race([loops, nc.closed()])
    stopping = true
    await Promise.all(slots.map((s) => s.thread.terminate()))
    if (!nc.isClosed()) await nc.close()
  })()
  o.log(`ready: code ${c.mine.code.slice(0, 12)}, node ${c.mine.node}, ${o.concurrency} job thread(s), ack_wait ${ackWaitMs / 1000} s, in-progress acks every ${Math.round(ackWaitMs / HEARTBEATS_PER_ACK_WAIT)} ms, queue ${o.servers}`)
  return {
    name,
    stopped,
    stop: async () => {
      if (stopping) return stopped
      stopping = true
      for (const slot of slots) {
        const msg = slot.current
        if (msg === null) continue
        clearInterval(slot.beat ?? undefined)
        msg.nak()
        o.log(`stopping: handed back job ${headOf(msg)?.label ?? msg.subject} (nak)`)
      }
      await Promise.all(slots.map((s) => s.thread.terminate()))
      await nc.flush().catch(() => undefined)
      await nc.close()
      await stopped
    }
  }
}
