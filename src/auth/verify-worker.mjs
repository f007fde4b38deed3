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

// A batch of four or more is answered in two parts: the first half's orders go on to matching
// and the journal while the second half is verified (one more message per batch, +3% signed
// orders/s in the API bench: docs/decisions.md). `from` is the index of a part's first answer.
const checkOne = ([pub, message, signature]) => {
  try {
    return verify(null, Buffer.from(message), keyFor(Buffer.from(pub)), Buffer.from(signature)) ? 1 : 0
  } catch {
    return 0
  }
}

/** Verifies items from..to-1 and posts their answers (one byte each) as one part. */
const answer = (id, items, from, to) => {
  const results = new Uint8Array(to - from)
  for (let i = from; i < to; i++) results[i - from] = checkOne(items[i])
  parentPort.postMessage({ id, from, results }, [results.buffer])
}

parentPort.on("message", ({ id, items }) => {
  const split = items.length >= 4 ? Math.ceil(items.length / 2) : items.length
  answer(id, items, 0, split)
  if (split < items.length) answer(id, items, split, items.length)
})
