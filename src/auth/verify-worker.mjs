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

parentPort.on("message", ({ id, items }) => {
  const results = new Uint8Array(items.length)
  for (let i = 0; i < items.length; i++) {
    const [pub, message, signature] = items[i]
    try {
      results[i] = verify(null, Buffer.from(message), keyFor(Buffer.from(pub)), Buffer.from(signature)) ? 1 : 0
    } catch {
      results[i] = 0
    }
  }
  parentPort.postMessage({ id, results }, [results.buffer])
})
