// A sweep's shared input (a backtest's dataset): published once by the caller in chunks on the
// data stream, fetched once per worker and kept by its sha256 for the sweep's other jobs.
import { createHash } from "node:crypto"
import { DeliverPolicy, type JetStreamClient } from "@nats-io/jetstream"
import { headers } from "@nats-io/transport-node"
import { type BlobRef, chunks, DATA_STREAM, HEADER, subjects } from "./protocol.ts"

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

export const publishBlob = async (js: JetStreamClient, sweep: string, bytes: Uint8Array): Promise<BlobRef> => {
  const parts = chunks(bytes)
  for (let i = 0; i < parts.length; i++) {
    const h = headers()
    h.set(HEADER.part, String(i))
    h.set(HEADER.parts, String(parts.length))
    await js.publish(subjects.blob(sweep), parts[i]!, { headers: h })
  }
  return { sha256: sha256(bytes), parts: parts.length, bytes: bytes.length }
}

/** Most recent first; two sweeps' inputs at most. */
const cache: Array<{ sha256: string; bytes: Promise<Uint8Array> }> = []

const download = async (js: JetStreamClient, sweep: string, ref: BlobRef): Promise<Uint8Array> => {
  const consumer = await js.consumers.get(DATA_STREAM, { filter_subjects: [subjects.blob(sweep)], deliver_policy: DeliverPolicy.All })
  const out = new Uint8Array(ref.bytes)
  let at = 0
  let got = 0
  while (got < ref.parts) {
    const msg = await consumer.next({ expires: 10_000 })
    if (msg === null) throw new Error(`the shared input of sweep ${sweep} is gone (its caller stopped?): ${got} of ${ref.parts} parts`)
    if (at + msg.data.length > out.length) throw new Error(`the shared input of sweep ${sweep} is longer than its ${ref.bytes} bytes`)
    out.set(msg.data, at)
    at += msg.data.length
    got++
  }
  const sha = sha256(out)
  if (at !== ref.bytes || sha !== ref.sha256) throw new Error(`the shared input of sweep ${sweep} does not match its sha256 (${sha} of ${at} bytes, expected ${ref.sha256} of ${ref.bytes})`)
  return out
}

export const fetchBlob = (js: JetStreamClient, sweep: string, ref: BlobRef): Promise<Uint8Array> => {
  const hit = cache.find((c) => c.sha256 === ref.sha256)
  if (hit !== undefined) return hit.bytes
  const bytes = download(js, sweep, ref)
  cache.unshift({ sha256: ref.sha256, bytes })
  cache.length = Math.min(cache.length, 2)
  // A failed download is not kept: the next job tries again.
  bytes.catch(() => {
    const i = cache.findIndex((c) => c.bytes === bytes)
    if (i >= 0) cache.splice(i, 1)
  })
  return bytes
}
