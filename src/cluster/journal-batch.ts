// One log batch as one NATS message (docs/cluster.md "The replicated journal"). The payload is
// the batch's records framed exactly as the file journal frames them (src/store/journal-format.ts:
// length, CRC-32, payload per record), so a reader detects a damaged record the same way;
// an empty payload is a term marker. The headers say who wrote it and which records it holds,
// so a reader can find a record's position without decoding a payload:
//   Twinbook-Batch: 1            the format (a reader refuses one it does not know)
//   Twinbook-Term, Twinbook-Holder
//   Twinbook-First-Seq, Twinbook-Last-Seq   the records' journal seqs (absent on a term marker)
// The headers cross-check the payload: a payload that lost or gained whole records no longer
// matches its first and last seq, which the frames' CRCs alone would not catch.
import { headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node"
import type { JournalRecord } from "../service/commands.ts"
import { decodeFrames, encodeRecord } from "../store/journal-format.ts"
import type { LogBatch, LogPosition } from "./ports.ts"

export const BATCH_FORMAT = "1"
export const H_FORMAT = "Twinbook-Batch"
export const H_TERM = "Twinbook-Term"
export const H_HOLDER = "Twinbook-Holder"
export const H_FIRST_SEQ = "Twinbook-First-Seq"
export const H_LAST_SEQ = "Twinbook-Last-Seq"

/** A stored message that is not a well-formed batch: the log is damaged there; a reader stops. */
export class BatchUnreadable extends Error {
  readonly _tag = "BatchUnreadable"
  constructor(
    readonly position: LogPosition,
    readonly detail: string
  ) {
    super(`log batch at position ${position} is unreadable: ${detail}`)
  }
}

export interface EncodedBatch {
  readonly headers: MsgHdrs
  readonly payload: Buffer
}

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0

export const encodeBatch = (batch: LogBatch): EncodedBatch => {
  // Programming errors, refused before anything is sent: a batch the reader would refuse.
  if (!isCount(batch.term)) throw new Error(`batch term ${batch.term} is not a non-negative integer`)
  if (batch.holder === "" || /[\x00-\x1f\x7f]/.test(batch.holder)) throw new Error(`batch holder ${JSON.stringify(batch.holder)} is empty or has control characters`)
  const h = natsHeaders()
  h.set(H_FORMAT, BATCH_FORMAT)
  h.set(H_TERM, String(batch.term))
  h.set(H_HOLDER, batch.holder)
  const records = batch.records
  if (records.length === 0) return { headers: h, payload: Buffer.alloc(0) }
  const first = records[0]!.seq
  records.forEach((r, i) => {
    if (r.seq !== first + i) throw new Error(`batch records are not contiguous: seq ${r.seq} at index ${i} after first seq ${first}`)
  })
  h.set(H_FIRST_SEQ, String(first))
  h.set(H_LAST_SEQ, String(records[records.length - 1]!.seq))
  return { headers: h, payload: Buffer.concat(records.map(encodeRecord)) }
}

/** The header's value as a non-negative integer; null when absent; throws when malformed. */
const countHeader = (h: MsgHdrs | undefined, name: string, position: LogPosition): number | null => {
  const raw = h?.get(name) ?? ""
  if (raw === "") return null
  const n = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN
  if (!isCount(n)) throw new BatchUnreadable(position, `header ${name} is ${JSON.stringify(raw)}`)
  return n
}

/** The batch a stored message holds; throws `BatchUnreadable` for anything else. */
export const decodeBatch = (position: LogPosition, h: MsgHdrs | undefined, data: Uint8Array): LogBatch => {
  const format = h?.get(H_FORMAT) ?? ""
  if (format !== BATCH_FORMAT) throw new BatchUnreadable(position, `format header ${H_FORMAT} is ${JSON.stringify(format)}, not ${BATCH_FORMAT}`)
  const term = countHeader(h, H_TERM, position)
  if (term === null) throw new BatchUnreadable(position, `no ${H_TERM} header`)
  const holder = h?.get(H_HOLDER) ?? ""
  if (holder === "") throw new BatchUnreadable(position, `no ${H_HOLDER} header`)
  const first = countHeader(h, H_FIRST_SEQ, position)
  const last = countHeader(h, H_LAST_SEQ, position)
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  if (buf.length === 0) {
    if (first !== null || last !== null) throw new BatchUnreadable(position, "record seqs in the headers but an empty payload")
    return { term, holder, records: [] }
  }
  if (first === null || last === null || last < first) throw new BatchUnreadable(position, `records without a valid ${H_FIRST_SEQ}..${H_LAST_SEQ} range`)
  const records: JournalRecord[] = []
  const { validBytes, problem } = decodeFrames(buf, (r) => void records.push(r))
  // decodeFrames reads trailing zeros as a file's reserve; a message has none, so they are damage too.
  if (problem !== null || validBytes !== buf.length) throw new BatchUnreadable(position, problem ?? `${buf.length - validBytes} stray bytes after the records`)
  if (records.length !== last - first + 1) throw new BatchUnreadable(position, `${records.length} records where the headers say ${first}..${last}`)
  records.forEach((r, i) => {
    if (r.seq !== first + i) throw new BatchUnreadable(position, `record seq ${r.seq} where ${first + i} was due`)
  })
  return { term, holder, records }
}
