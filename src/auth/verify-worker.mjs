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

parentPort.on("message", ({ id, items }) => {
  const results = new Uint8Array(items.length)
  const split = items.length >= 4 ? Math.ceil(items.length / 2) : items.length
  for (let i = 0; i < split; i++) results[i] = checkOne(items[i])
  if (split === items.length) return parentPort.postMessage({ id, from: 0, results }, [results.buffer])
  parentPort.postMessage({ id, from: 0, results: results.slice(0, split) })
  for (let i = split; i < items.length; i++) results[i] = checkOne(items[i])
  const rest = results.slice(split)
  parentPort.postMessage({ id, from: split, results: rest }, [rest.buffer])
})
