// Where signatures are verified. Inline: synchronous node:crypto on the calling
// thread (tests, simulation). Worker pool: the same node:crypto verify on worker
// threads, batched per event-loop turn, keeping the main thread for HTTP and
// matching (verification was ~40% of the main thread at 4k orders/s).
import { Worker } from "node:worker_threads"
import { decodeUserKey, verifyUser } from "./ed25519.ts"

export interface Verifier {
  verify(user: string, message: Uint8Array, signature: Uint8Array): Promise<boolean>
  close(): Promise<void>
}

export const inlineVerifier = (): Verifier => ({
  verify: (user, message, signature) => Promise.resolve(verifyUser(user, message, signature)),
  close: () => Promise.resolve()
})

type Item = readonly [user: string, pub: Uint8Array, message: Uint8Array, signature: Uint8Array]

/**
 * A batch as one transferred buffer, per item: the 32-byte key, the 64-byte signature, the
 * message's length (u32, little-endian) and the message (layout read by verify-worker.mjs).
 * Structured clone copies a view's whole backing ArrayBuffer, and a signature or key parsed
 * from hex or base58 is a view into Node's shared 8 KiB pool: a batch of 8 cloned ~10 of
 * those slabs (~35 µs on the main thread, the same again to rebuild them in the worker).
 */
const packBatch = (items: ReadonlyArray<Item>): Uint8Array<ArrayBuffer> => {
  let bytes = 0
  for (const [, , message] of items) bytes += 100 + message.length
  const data = new Uint8Array(bytes)
  const view = new DataView(data.buffer)
  let at = 0
  for (const [, pub, message, signature] of items) {
    data.set(pub, at)
    data.set(signature, at + 32)
    view.setUint32(at + 96, message.length, true)
    data.set(message, at + 100)
    at += 100 + message.length
  }
  return data
}

interface Batch {
  readonly items: Item[]
  readonly resolvers: Array<(ok: boolean) => void>
}

interface Slot {
  worker: Worker
  pending: Batch | null
  readonly inFlight: Map<number, Batch>
}

// One piece: a factory whose worker pool, queue and fallback share the workers.
/**
 * `size` workers; a user always goes to the same worker, so one user's orders keep
 * their order. If a worker dies, its in-flight batches are verified inline (same
 * answers) and the worker is replaced: no request ever hangs.
 */
export const workerVerifier = (size: number, hooks: { onSpawn?: (worker: Worker) => void } = {}): Verifier => {
  if (!Number.isInteger(size) || size < 1) throw new Error(`workerVerifier: size must be a positive integer, got ${size}`)
  let nextId = 1
  let scheduled = false
  let closing = false
  const slots: Slot[] = []

  const spawn = (slot: Slot): Worker => {
    const w = new Worker(new URL("./verify-worker.mjs", import.meta.url))
    w.unref()
    // A batch may be answered in parts (verify-worker.mjs): answers `from`.. of batch `id`.
    w.on("message", ({ id, from, results }: { id: number; from: number; results: Uint8Array }) => {
      const batch = slot.inFlight.get(id)
      if (batch === undefined) return
      if (from + results.length >= batch.resolvers.length) slot.inFlight.delete(id)
      for (let i = 0; i < results.length; i++) batch.resolvers[from + i]!(results[i] === 1)
    })
    const fail = (): void => {
      // A part already answered is answered again inline: a settled promise ignores it.
      for (const batch of slot.inFlight.values()) {
        batch.items.forEach(([user, , message, signature], i) => batch.resolvers[i]!(verifyUser(user, message, signature)))
      }
      slot.inFlight.clear()
      if (!closing && slot.worker === w) slot.worker = spawn(slot)
    }
    w.on("error", fail)
    w.on("exit", fail)
    hooks.onSpawn?.(w)
    return w
  }
  for (let i = 0; i < size; i++) {
    const slot = { pending: null, inFlight: new Map() } as unknown as Slot
    slot.worker = spawn(slot)
    slots.push(slot)
  }

  const flush = (): void => {
    scheduled = false
    for (const slot of slots) {
      const batch = slot.pending
      if (batch === null) continue
      slot.pending = null
      const id = nextId++
      slot.inFlight.set(id, batch)
      const data = packBatch(batch.items)
      slot.worker.postMessage({ id, count: batch.items.length, data }, [data.buffer])
    }
  }
  const shard = (user: string): number => {
    let h = 0
    for (let i = 0; i < user.length; i++) h = (h * 31 + user.charCodeAt(i)) | 0
    return Math.abs(h) % size
  }
  return {
    verify: (user, message, signature) => {
      const pub = decodeUserKey(user)
      if (pub === null || signature.length !== 64) return Promise.resolve(false)
      return new Promise((resolve) => {
        const slot = slots[shard(user)]!
        const batch = (slot.pending ??= { items: [], resolvers: [] })
        batch.items.push([user, pub, message, signature])
        batch.resolvers.push(resolve)
        if (!scheduled) {
          scheduled = true
          setImmediate(flush)
        }
      })
    },
    close: async () => {
      closing = true
      await Promise.all(slots.map((s) => s.worker.terminate()))
    }
  }
}
