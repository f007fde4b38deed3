// The journal's on-disk framing: each record is
//   u32 LE payload length | u32 LE CRC-32 of the payload | payload (UTF-8 JSON of a JournalRecord)
// so a torn or corrupted tail is detected record by record.
import { crc32 } from "node:zlib"
import type { JournalRecord } from "../service/commands.ts"

export const HEADER_BYTES = 8
/** A record larger than this is corruption, not data (requests are capped at 64 KiB). */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024

export const encodeRecord = (record: JournalRecord): Buffer => {
  const payload = Buffer.from(JSON.stringify(record), "utf8")
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length)
  frame.writeUInt32LE(payload.length, 0)
  frame.writeUInt32LE(crc32(payload), 4)
  payload.copy(frame, HEADER_BYTES)
  return frame
}

export interface DecodedSegment {
  readonly records: JournalRecord[]
  /** Bytes of whole, valid records; anything after is a torn or corrupt tail. */
  readonly validBytes: number
  /** Why decoding stopped early, when it did. */
  readonly problem: string | null
}

/** Decodes records until the end or the first bad frame (short header, short payload, bad CRC or JSON). */
export const decodeSegment = (buf: Buffer): DecodedSegment => {
  const records: JournalRecord[] = []
  let offset = 0
  while (offset < buf.length) {
    if (buf.length - offset < HEADER_BYTES) return { records, validBytes: offset, problem: `torn header at byte ${offset}` }
    const length = buf.readUInt32LE(offset)
    const sum = buf.readUInt32LE(offset + 4)
    if (length > MAX_RECORD_BYTES) return { records, validBytes: offset, problem: `implausible length ${length} at byte ${offset}` }
    const end = offset + HEADER_BYTES + length
    if (end > buf.length) return { records, validBytes: offset, problem: `torn record at byte ${offset} (${buf.length - offset} of ${HEADER_BYTES + length} bytes)` }
    const payload = buf.subarray(offset + HEADER_BYTES, end)
    if (crc32(payload) !== sum) return { records, validBytes: offset, problem: `checksum mismatch at byte ${offset}` }
    let record: JournalRecord
    try {
      record = JSON.parse(payload.toString("utf8")) as JournalRecord
    } catch {
      return { records, validBytes: offset, problem: `unparseable record at byte ${offset}` }
    }
    records.push(record)
    offset = end
  }
  return { records, validBytes: offset, problem: null }
}
