// The journal's binary payloads for orders and cancels (src/store/record-codec.ts): whatever
// a record is, reading its frame back gives exactly what a JSON frame would (the same JSON
// text, key order included); the service's own orders and cancels take the binary form;
// journals written as JSON before it read unchanged; a binary payload that does not parse is
// a bad frame like any other.
import fc from "fast-check"
import { crc32 } from "node:zlib"
import { describe, expect, it } from "vitest"
import type { JournalRecord } from "../../src/service/commands.ts"
import { decodeFrames, encodeRecord, HEADER_BYTES } from "../../src/store/journal-format.ts"
import { TAG_CANCEL_ORDER, TAG_PLACE_ORDER } from "../../src/store/record-codec.ts"

const USER = "2d1viRVDj6tZkAa59DhJNMxGNRprwxLabUL8npDyiukQ"
const MARKET = "7fd6c0aafd4f6c29e9d12d18b87b81e374d9d6f33be5db831c46f6c4f69908a4"

/** What reading `frames` back gives, and the problem if any. */
const readBack = (frames: Buffer[]): { records: unknown[]; problem: string | null } => {
  const records: unknown[] = []
  const { problem } = decodeFrames(Buffer.concat(frames), (r) => void records.push(r))
  return { records, problem }
}

/** The frame the journal wrote before the binary form: JSON always. */
const jsonFrame = (record: unknown): Buffer => {
  const payload = Buffer.from(JSON.stringify(record), "utf8")
  const header = Buffer.alloc(HEADER_BYTES)
  header.writeUInt32LE(payload.length, 0)
  header.writeUInt32LE(crc32(payload), 4)
  return Buffer.concat([header, payload])
}

const frameOf = (payload: Buffer): Buffer => {
  const header = Buffer.alloc(HEADER_BYTES)
  header.writeUInt32LE(payload.length, 0)
  header.writeUInt32LE(crc32(payload), 4)
  return Buffer.concat([header, payload])
}

const place = (order: Record<string, unknown>, extra: Record<string, unknown> = {}): JournalRecord =>
  ({
    seq: 7,
    tsSec: 1_795_305_600,
    cmd: {
      type: "place_order",
      order: { user: USER, marketId: MARKET, side: "buy", outcome: "yes", priceBps: 4762, size: 12, orderType: "gtc", nonce: 1_795_305_600_123, ...order },
      ...extra
    }
  }) as unknown as JournalRecord

const cancel: JournalRecord = { seq: 8, tsSec: 1_795_305_601, cmd: { type: "cancel_order", user: USER, orderId: 93_759 } }

// Values near and far from what the service writes: the binary form must take only what it keeps exactly.
const anyString = fc.oneof(
  fc.constantFrom(USER, MARKET, "buy", "sell", "yes", "no", "gtc", "post_only", "ioc", "fok", "cancel_resting", "cancel_taking", "cancel_both", ""),
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ minLength: 250, maxLength: 260 })
)
const anyNumber = fc.oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.maxSafeInteger(), fc.double(), fc.constantFrom(-0, 2 ** 53, Number.MAX_SAFE_INTEGER))
const anyValue = fc.oneof(anyString, anyNumber, fc.constant(undefined), fc.constant(null))

/** An order body: canonical keys and values mostly, with any of them changed, dropped, reordered or added to. */
const anyOrder = fc
  .record({
    user: fc.oneof(fc.constant(USER), anyString),
    marketId: fc.oneof(fc.constant(MARKET), anyString),
    side: fc.oneof(fc.constantFrom("buy", "sell"), anyValue),
    outcome: fc.oneof(fc.constantFrom("yes", "no"), anyValue),
    priceBps: fc.oneof(fc.integer({ min: 1, max: 9999 }), anyValue),
    size: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), anyValue),
    orderType: fc.oneof(fc.constantFrom("gtc", "post_only", "ioc", "fok"), anyValue),
    nonce: fc.oneof(fc.maxSafeInteger(), anyValue),
    stp: fc.option(fc.oneof(fc.constantFrom("cancel_resting", "cancel_taking", "cancel_both"), anyValue), { nil: undefined }),
    builderKey: fc.option(anyString, { nil: undefined })
  })
  .chain((o) =>
    fc.tuple(fc.boolean(), fc.boolean(), fc.option(fc.tuple(fc.string({ maxLength: 8 }), anyValue), { nil: undefined })).map(([reorder, dropUndefined, added]) => {
      let entries = Object.entries(o)
      if (dropUndefined) entries = entries.filter(([, v]) => v !== undefined)
      if (reorder) entries = entries.reverse()
      if (added !== undefined) entries.push(added)
      return Object.fromEntries(entries)
    })
  )

const anyRecord = fc.oneof(
  fc.record({ seq: fc.oneof(fc.integer({ min: 1, max: 10 ** 9 }), anyNumber), tsSec: fc.oneof(fc.integer({ min: 0, max: 2 ** 32 }), anyNumber), order: anyOrder, via: fc.option(anyValue, { nil: undefined }) }).map(
    ({ seq, tsSec, order, via }) => ({ seq, tsSec, cmd: { type: "place_order", order, ...(via === undefined ? {} : { viaSession: via }) } })
  ),
  fc.record({ seq: fc.oneof(fc.integer({ min: 1, max: 10 ** 9 }), anyNumber), tsSec: anyNumber, user: anyString, orderId: anyNumber }).map(({ seq, tsSec, user, orderId }) => ({
    seq,
    tsSec,
    cmd: { type: "cancel_order", user, orderId }
  })),
  fc.record({ seq: fc.integer({ min: 1, max: 10 ** 9 }), tsSec: fc.integer({ min: 0, max: 2 ** 32 }), user: anyString, amountMicro: anyNumber }).map(({ seq, tsSec, user, amountMicro }) => ({
    seq,
    tsSec,
    cmd: { type: "credit", user, amountMicro, ref: "r" }
  }))
)

describe("journal record codec", () => {
  it("reads back every record exactly as a JSON frame would: the same JSON text, key order included", () => {
    let binary = 0
    fc.assert(
      fc.property(anyRecord, (record) => {
        const frame = encodeRecord(record as unknown as JournalRecord)
        if (frame[HEADER_BYTES] !== 0x7b) binary++
        const { records, problem } = readBack([frame])
        expect(problem).toBeNull()
        expect(JSON.stringify(records[0])).toBe(JSON.stringify(record))
        expect(records[0]).toEqual(JSON.parse(JSON.stringify(record)))
      }),
      { numRuns: 3000 }
    )
    // The generator is mostly canonical records, so the binary form was exercised, not only the fallback.
    expect(binary).toBeGreaterThan(100)
  })

  it("writes the service's orders and cancels in the binary form, 40% smaller, and everything else as JSON", () => {
    const withAll = place({ stp: "cancel_both", builderKey: "0123456789abcdef0123456789abcdef" }, { viaSession: USER })
    for (const [record, tag] of [
      [place({}), TAG_PLACE_ORDER],
      [place({ stp: undefined, builderKey: undefined }), TAG_PLACE_ORDER],
      [withAll, TAG_PLACE_ORDER],
      [cancel, TAG_CANCEL_ORDER]
    ] as const) {
      const frame = encodeRecord(record)
      expect(frame[HEADER_BYTES]).toBe(tag)
      expect(frame.length).toBeLessThan(jsonFrame(record).length * 0.65)
      expect(JSON.stringify(readBack([frame]).records[0])).toBe(JSON.stringify(record))
    }
    // -0 comes back as 0, as from JSON.
    const minusZero = readBack([encodeRecord(place({ priceBps: -0, size: -0 }))]).records[0] as { cmd: { order: { priceBps: number; size: number } } }
    expect(Object.is(minusZero.cmd.order.priceBps, 0) && Object.is(minusZero.cmd.order.size, 0)).toBe(true)
    const credit: JournalRecord = { seq: 9, tsSec: 1, cmd: { type: "credit", user: USER, amountMicro: 5, ref: "dev" } }
    expect(encodeRecord(credit)).toEqual(jsonFrame(credit))
    // Not kept exactly in binary, so JSON: a fractional price, a non-ASCII user, keys in another order.
    for (const odd of [place({ priceBps: 47.5 }), place({ user: "ünïcode" }), { seq: 7, cmd: place({}).cmd, tsSec: 1 } as JournalRecord]) {
      expect(encodeRecord(odd)).toEqual(jsonFrame(odd))
    }
  })

  it("reads a journal written before the binary form (JSON frames), and one that mixes both", () => {
    const old = [jsonFrame(place({})), jsonFrame(cancel)]
    expect(readBack(old)).toEqual({ records: [place({}), cancel], problem: null })
    expect(readBack([...old, encodeRecord(place({ nonce: 9 })), encodeRecord(cancel)]).records).toEqual([place({}), cancel, place({ nonce: 9 }), cancel])
  })

  it("calls a binary payload that does not parse (its CRC intact) an unparseable record at its byte", () => {
    const good = encodeRecord(cancel)
    const payload = good.subarray(HEADER_BYTES)
    const bad = [
      Buffer.from([0x09, 1, 2, 3]), // unknown tag
      Buffer.concat([payload, Buffer.from([0])]), // trailing byte
      payload.subarray(0, payload.length - 3), // short string
      Buffer.from([TAG_PLACE_ORDER, 0]), // short fixed part
      Buffer.from(encodeRecord(place({})).subarray(HEADER_BYTES)).fill(0xff, 2, 3), // an unknown side code
      Buffer.from(encodeRecord(place({})).subarray(HEADER_BYTES)).fill(0xf0, 1, 2) // unknown flags
    ]
    for (const b of bad) {
      const { records, problem } = readBack([good, frameOf(b)])
      expect(records).toHaveLength(1)
      expect(problem).toBe(`unparseable record at byte ${good.length}`)
    }
  })
})
