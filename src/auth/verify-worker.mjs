// Worker thread for Ed25519 verification (plain JS so it loads without a TS
// loader). Receives batches, answers with one byte per signature (1 = valid).
import { createPublicKey, verify } from "node:crypto"
import { parentPort } from "node:worker_threads"

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")
const keys = new Map()

const keyFor = (raw) => {
  const id = raw.toString("hex")
  let key = keys.get(id)
  if (key === undefined) {
    if (keys.size > 50000) keys.clear()
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" })
    keys.set(id, key)
  }
  return key
}

// A batch is one buffer (packBatch in verifier.ts): per item the 32-byte key, the 64-byte
// signature, the message length (u32 LE) and the message. Items are read as views, no copies.
const offsetsOf = (data, count) => {
  const offsets = new Array(count)
  let at = 0
  for (let i = 0; i < count; i++) {
    offsets[i] = at
    at += 100 + data.readUInt32LE(at + 96)
  }
  return offsets
}

const checkOne = (data, at) => {
  try {
    const message = data.subarray(at + 100, at + 100 + data.readUInt32LE(at + 96))
    return verify(null, message, keyFor(data.subarray(at, at + 32)), data.subarray(at + 32, at + 96)) ? 1 : 0
  } catch {
    return 0
  }
}

// A batch of four or more is answered in two parts: the first half's orders go on to matching
// and the journal while the second half is verified (one more message per batch, +3% signed
// orders/s in the API bench: docs/decisions.md). `from` is the index of a part's first answer.
/** Verifies items from..to-1 and posts their answers (one byte each) as one part. */
const answer = (id, data, offsets, from, to) => {
  const results = new Uint8Array(to - from)
  for (let i = from; i < to; i++) results[i - from] = checkOne(data, offsets[i])
  parentPort.postMessage({ id, from, results }, [results.buffer])
}

parentPort.on("message", ({ id, count, data: bytes }) => {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const offsets = offsetsOf(data, count)
  const split = count >= 4 ? Math.ceil(count / 2) : count
  answer(id, data, offsets, 0, split)
  if (split < count) answer(id, data, offsets, split, count)
})
