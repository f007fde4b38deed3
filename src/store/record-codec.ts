// A compact binary payload for the journal's two hot record kinds, `place_order` and
// `cancel_order` (98% of a trading day's records). JSON.parse was a quarter of recovery and
// JSON.stringify sits on every order's path; these payloads are about 40% smaller and are
// read without a parser. A payload starts with its tag byte; a JSON payload starts with `{`,
// so journals written before this codec read unchanged (docs/durability.md "Framing").
//
// The contract: `decodeBinary(encodeBinary(r))` is a record whose JSON text equals
// `JSON.stringify(r)`, key order included, exactly what a JSON frame gives back. So a record
// takes the binary form only when that can hold, and otherwise `encodeBinary` returns null
// and the caller writes JSON: keys in the canonical order (the order the service builds them
// in), numbers that are safe integers, ASCII strings of at most 255 bytes, known enum values.
// Proven by test/store/record-codec.test.ts (a property over arbitrary records).
import type { OrderType, Outcome, Side, Stp } from "../engine/types.ts"
import type { JournalRecord, OrderBody } from "../service/commands.ts"

export const TAG_PLACE_ORDER = 0x01
export const TAG_CANCEL_ORDER = 0x02

const SIDES: readonly Side[] = ["buy", "sell"]
const OUTCOMES: readonly Outcome[] = ["yes", "no"]
const ORDER_TYPES: readonly OrderType[] = ["gtc", "post_only", "ioc", "fok"]
const STPS: readonly Stp[] = ["cancel_resting", "cancel_taking", "cancel_both"]

const HAS_STP = 1
const HAS_BUILDER_KEY = 2
const HAS_VIA_SESSION = 4

// Node's Buffer has these natives (lib/buffer.js) though @types/node does not declare them;
// `toString("latin1", s, e)` and `write(s, o, "latin1")` reach them through argument checks.
interface Latin1Buffer extends Buffer {
  latin1Slice(start: number, end: number): string
  latin1Write(s: string, offset: number, length: number): number
}

/** A string the binary form keeps exactly: ASCII (one byte a character, no lone surrogates), at most 255 bytes. */
const shortAscii = (s: unknown): s is string => typeof s === "string" && s.length <= 255 && Buffer.byteLength(s, "utf8") === s.length

/** A number the binary form keeps exactly as JSON does (-0 is written as 0, which is what JSON gives back). */
const safeInt = (n: unknown): n is number => Number.isSafeInteger(n)

/** True when `obj`'s own enumerable keys are `required` in that order, then some of `optional` in theirs. */
const keysInOrder = (obj: object, required: readonly string[], optional: readonly string[]): boolean => {
  let i = 0
  let j = 0
  for (const k in obj) {
    if (!Object.hasOwn(obj, k)) return false
    if (i < required.length) {
      if (k !== required[i]) return false
      i++
      continue
    }
    // An optional key may be absent or undefined (JSON drops it; so does the binary form), in order.
    while (j < optional.length && optional[j] !== k) j++
    if (j === optional.length) return false
    j++
  }
  return i === required.length
}

const RECORD_KEYS = ["seq", "tsSec", "cmd"] as const
const PLACE_CMD_KEYS = ["type", "order"] as const
const PLACE_CMD_OPTIONAL = ["viaSession"] as const
const ORDER_KEYS = ["user", "marketId", "side", "outcome", "priceBps", "size", "orderType", "nonce"] as const
const ORDER_OPTIONAL = ["stp", "builderKey"] as const
const CANCEL_CMD_KEYS = ["type", "user", "orderId"] as const

/** 1 tag, 1 flags, 4 enum codes, 5 float64s, then length-prefixed strings. */
const PLACE_FIXED_BYTES = 6 + 5 * 8
/** 1 tag, 3 float64s, then the user. */
const CANCEL_FIXED_BYTES = 1 + 3 * 8

const writeString = (buf: Latin1Buffer, offset: number, s: string): number => {
  buf[offset] = s.length
  buf.latin1Write(s, offset + 1, s.length)
  return offset + 1 + s.length
}

const encodePlace = (record: JournalRecord, cmd: Extract<JournalRecord["cmd"], { type: "place_order" }>, headerBytes: number): Buffer | null => {
  const o: OrderBody = cmd.order
  if (o === null || typeof o !== "object" || !keysInOrder(cmd, PLACE_CMD_KEYS, PLACE_CMD_OPTIONAL) || !keysInOrder(o, ORDER_KEYS, ORDER_OPTIONAL)) return null
  if (!safeInt(o.priceBps) || !safeInt(o.size) || !safeInt(o.nonce) || !shortAscii(o.user) || !shortAscii(o.marketId)) return null
  const side = SIDES.indexOf(o.side)
  const outcome = OUTCOMES.indexOf(o.outcome)
  const orderType = ORDER_TYPES.indexOf(o.orderType)
  const stp = o.stp === undefined ? 0 : STPS.indexOf(o.stp)
  if (side < 0 || outcome < 0 || orderType < 0 || stp < 0) return null
  if (o.builderKey !== undefined && !shortAscii(o.builderKey)) return null
  if (cmd.viaSession !== undefined && !shortAscii(cmd.viaSession)) return null
  let flags = 0
  let bytes = PLACE_FIXED_BYTES + 2 + o.user.length + o.marketId.length
  if (o.stp !== undefined) flags |= HAS_STP
  if (o.builderKey !== undefined) {
    flags |= HAS_BUILDER_KEY
    bytes += 1 + o.builderKey.length
  }
  if (cmd.viaSession !== undefined) {
    flags |= HAS_VIA_SESSION
    bytes += 1 + cmd.viaSession.length
  }
  const buf = Buffer.allocUnsafe(headerBytes + bytes) as Latin1Buffer
  let at = headerBytes
  buf[at++] = TAG_PLACE_ORDER
  buf[at++] = flags
  buf[at++] = side
  buf[at++] = outcome
  buf[at++] = orderType
  buf[at++] = stp
  // `+ 0` turns -0 into 0, as JSON does.
  buf.writeDoubleLE(record.seq + 0, at)
  buf.writeDoubleLE(record.tsSec + 0, at + 8)
  buf.writeDoubleLE(o.priceBps + 0, at + 16)
  buf.writeDoubleLE(o.size + 0, at + 24)
  buf.writeDoubleLE(o.nonce + 0, at + 32)
  at += 40
  at = writeString(buf, at, o.user)
  at = writeString(buf, at, o.marketId)
  if (o.builderKey !== undefined) at = writeString(buf, at, o.builderKey)
  if (cmd.viaSession !== undefined) writeString(buf, at, cmd.viaSession)
  return buf
}

const encodeCancel = (record: JournalRecord, cmd: Extract<JournalRecord["cmd"], { type: "cancel_order" }>, headerBytes: number): Buffer | null => {
  if (!keysInOrder(cmd, CANCEL_CMD_KEYS, []) || !safeInt(cmd.orderId) || !shortAscii(cmd.user)) return null
  const buf = Buffer.allocUnsafe(headerBytes + CANCEL_FIXED_BYTES + 1 + cmd.user.length) as Latin1Buffer
  let at = headerBytes
  buf[at++] = TAG_CANCEL_ORDER
  buf.writeDoubleLE(record.seq + 0, at)
  buf.writeDoubleLE(record.tsSec + 0, at + 8)
  buf.writeDoubleLE(cmd.orderId + 0, at + 16)
  writeString(buf, at + 24, cmd.user)
  return buf
}

/**
 * The binary payload of `record`, after `headerBytes` unwritten bytes (the frame header's
 * room, so the frame is one allocation); null when the record must be written as JSON.
 */
export const encodeBinary = (record: JournalRecord, headerBytes: number): Buffer | null => {
  // The command's kind first: every other record goes to JSON without walking its keys.
  const cmd = record?.cmd
  if (cmd === null || typeof cmd !== "object" || (cmd.type !== "place_order" && cmd.type !== "cancel_order")) return null
  if (!keysInOrder(record, RECORD_KEYS, []) || !safeInt(record.seq) || !safeInt(record.tsSec)) return null
  return cmd.type === "place_order" ? encodePlace(record, cmd, headerBytes) : encodeCancel(record, cmd, headerBytes)
}

/** Thrown for a binary payload that does not parse (the frame's CRC held, so only a writer bug makes one). */
export class BadPayload extends Error {}

/**
 * A float64 as the number JSON.parse would give: a small integer as a small integer. A value
 * read from a Float64 stays a boxed double in V8, and the engine's objects then keep their
 * fields as doubles, which made the engine 10-20% slower on recovered commands.
 */
const readNumber = (buf: Buffer, at: number): number => {
  const v = buf.readDoubleLE(at)
  const small = v | 0
  return small === v ? small : v
}

const readString = (buf: Latin1Buffer, at: number, end: number): string => {
  if (at >= end) throw new BadPayload("short payload")
  const to = at + 1 + buf[at]!
  if (to > end) throw new BadPayload("short payload")
  return buf.latin1Slice(at + 1, to)
}

const enumAt = <T>(values: readonly T[], code: number): T => {
  const v = values[code]
  if (v === undefined) throw new BadPayload(`unknown code ${code}`)
  return v
}

const decodePlace = (buf: Latin1Buffer, start: number, end: number): JournalRecord => {
  if (end - start < PLACE_FIXED_BYTES) throw new BadPayload("short payload")
  const flags = buf[start + 1]!
  if (flags > 7) throw new BadPayload(`unknown flags ${flags}`)
  const at = start + 6
  const user = readString(buf, at + 40, end)
  const marketIdAt = at + 41 + user.length
  const marketId = readString(buf, marketIdAt, end)
  let next = marketIdAt + 1 + marketId.length
  // One literal per shape, keys in the canonical order, as JSON.parse would build them.
  const side = enumAt(SIDES, buf[start + 2]!)
  const outcome = enumAt(OUTCOMES, buf[start + 3]!)
  const orderType = enumAt(ORDER_TYPES, buf[start + 4]!)
  const priceBps = readNumber(buf, at + 16)
  const size = readNumber(buf, at + 24)
  const nonce = readNumber(buf, at + 32)
  let order: OrderBody
  if ((flags & (HAS_STP | HAS_BUILDER_KEY)) === 0) order = { user, marketId, side, outcome, priceBps, size, orderType, nonce }
  else {
    const base: { -readonly [K in keyof OrderBody]: OrderBody[K] } = { user, marketId, side, outcome, priceBps, size, orderType, nonce }
    if ((flags & HAS_STP) !== 0) base.stp = enumAt(STPS, buf[start + 5]!)
    if ((flags & HAS_BUILDER_KEY) !== 0) {
      base.builderKey = readString(buf, next, end)
      next += 1 + base.builderKey.length
    }
    order = base
  }
  let viaSession: string | undefined
  if ((flags & HAS_VIA_SESSION) !== 0) {
    viaSession = readString(buf, next, end)
    next += 1 + viaSession.length
  }
  if (next !== end) throw new BadPayload("trailing bytes")
  const seq = readNumber(buf, at)
  const tsSec = readNumber(buf, at + 8)
  return viaSession === undefined
    ? { seq, tsSec, cmd: { type: "place_order", order } }
    : { seq, tsSec, cmd: { type: "place_order", order, viaSession } }
}

const decodeCancel = (buf: Latin1Buffer, start: number, end: number): JournalRecord => {
  if (end - start < CANCEL_FIXED_BYTES + 1) throw new BadPayload("short payload")
  const user = readString(buf, start + CANCEL_FIXED_BYTES, end)
  if (start + CANCEL_FIXED_BYTES + 1 + user.length !== end) throw new BadPayload("trailing bytes")
  return { seq: readNumber(buf, start + 1), tsSec: readNumber(buf, start + 9), cmd: { type: "cancel_order", user, orderId: readNumber(buf, start + 17) } }
}

/** Decodes the binary payload `buf[start, end)` whose first byte is a known tag; throws BadPayload otherwise. */
export const decodeBinary = (buf: Buffer, start: number, end: number): JournalRecord => {
  const tag = buf[start]
  if (tag === TAG_PLACE_ORDER) return decodePlace(buf as Latin1Buffer, start, end)
  if (tag === TAG_CANCEL_ORDER) return decodeCancel(buf as Latin1Buffer, start, end)
  throw new BadPayload(`unknown payload tag ${tag}`)
}
