// The journal's on-disk framing: each record is
//   u32 LE payload length | u32 LE CRC-32 of the payload | payload
// so a torn or corrupted tail is detected record by record. The payload is the record's
// UTF-8 JSON (first byte `{`) or, for orders and cancels, the binary form of record-codec.ts
// (first byte its tag).
// A segment may end in a reserve: zeros the live disk wrote ahead of the records
// (src/store/reserved-file.ts), left in place by a crash. No record has length 0, so
// a whole header's worth of zeros or more, from a record boundary to the end, is that
// reserve, not damage; fewer zeros, or zeros followed by anything else, are a torn tail.
import { crc32 } from "node:zlib"
import type { JournalRecord } from "../service/commands.ts"
import { decodeBinary, encodeBinary } from "./record-codec.ts"

export const HEADER_BYTES = 8
/** A record larger than this is corruption, not data (requests are capped at 64 KiB). */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024

const OPEN_BRACE = 0x7b

export const encodeRecord = (record: JournalRecord): Buffer => {
  const binary = encodeBinary(record, HEADER_BYTES)
  if (binary !== null) {
    const length = binary.length - HEADER_BYTES
    binary.writeUInt32LE(length, 0)
    binary.writeUInt32LE(crc32(binary.subarray(HEADER_BYTES)), 4)
    return binary
  }
  const payload = Buffer.from(JSON.stringify(record), "utf8")
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length)
  frame.writeUInt32LE(payload.length, 0)
  frame.writeUInt32LE(crc32(payload), 4)
  payload.copy(frame, HEADER_BYTES)
  return frame
}

export interface DecodedSegment {
  readonly records: JournalRecord[]
  /** Bytes of whole, valid records; anything after is a reserve of zeros (`problem` null) or a torn or corrupt tail. */
  readonly validBytes: number
  /** Why decoding stopped early, when it did. */
  readonly problem: string | null
}

/** Decodes records until the end or the first bad frame (short header, short payload, bad CRC or JSON). */
export const decodeSegment = (buf: Buffer): DecodedSegment => {
  const records: JournalRecord[] = []
  const { validBytes, problem } = decodeFrames(buf, (r) => void records.push(r))
  return { records, validBytes, problem }
}

/**
 * The streaming form of `decodeSegment`: hands each whole record to `onRecord` as
 * it is decoded, so a reader need not hold a segment's records at once.
 */
export const decodeFrames = (buf: Buffer, onRecord: (record: JournalRecord) => void): Omit<DecodedSegment, "records"> => {
  let offset = 0
  while (offset < buf.length) {
    if (buf[offset] === 0 && buf.length - offset >= HEADER_BYTES && zerosFrom(buf, offset)) return { validBytes: offset, problem: null }
    if (buf.length - offset < HEADER_BYTES) return { validBytes: offset, problem: `torn header at byte ${offset}` }
    const length = buf.readUInt32LE(offset)
    const sum = buf.readUInt32LE(offset + 4)
    if (length > MAX_RECORD_BYTES) return { validBytes: offset, problem: `implausible length ${length} at byte ${offset}` }
    const start = offset + HEADER_BYTES
    const end = start + length
    if (end > buf.length) return { validBytes: offset, problem: `torn record at byte ${offset} (${buf.length - offset} of ${HEADER_BYTES + length} bytes)` }
    if (crc32(buf.subarray(start, end)) !== sum) return { validBytes: offset, problem: `checksum mismatch at byte ${offset}` }
    let record: JournalRecord
    try {
      record = buf[start] === OPEN_BRACE ? (JSON.parse(buf.toString("utf8", start, end)) as JournalRecord) : decodeBinary(buf, start, end)
    } catch {
      return { validBytes: offset, problem: `unparseable record at byte ${offset}` }
    }
    onRecord(record)
    offset = end
  }
  return { validBytes: offset, problem: null }
}

/** Whether every byte from `offset` to the end is zero (the reserve). */
const zerosFrom = (buf: Buffer, offset: number): boolean => {
  for (let i = offset; i < buf.length; i++) if (buf[i] !== 0) return false
  return true
}
