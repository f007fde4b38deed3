// The DuckDB history store: the projection of a run equals the in-memory History
// (trades field by field, candles for every interval), and a restart seeds the History
// from the store with every trade exactly once, whether the store is level with the
// journal, ahead of the snapshot (P > S), behind it (P < S), past a journal that lost
// its last record, or left with rows past its projected seq by an interrupted write.
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { DuckDBInstance } from "@duckdb/node-api"
import { afterEach, describe, expect, it } from "vitest"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { Exchange } from "../../src/service/exchange.ts"
import { INTERVALS, type Interval } from "../../src/service/history.ts"
import { journalDir } from "../../src/store/durable.ts"
import { listSegments } from "../../src/store/file-journal.ts"
import { HistoryStore } from "../../src/store/history-db.ts"
import { historyPath } from "../../src/store/history-rebuild.ts"
import type { Service } from "../../src/runtime/boot.ts"
import { crash, historyCandles, historyTrades, marketIds, startDurable, tempDirs, trade } from "../support/history.ts"

const temp = tempDirs("twinbook-history-")
afterEach(temp.cleanup)

/** Store and in-memory History agree: all trades (JSON-identical), candles, and paged reads. */
const expectStoreMatchesHistory = async (s: Service): Promise<void> => {
  const x = s.exchange
  const store = s.history()!
  const live = historyTrades(x)
  const stored = await store.trades()
  expect(stored.length).toBe(live.length)
  // Field by field, and key order too: a seeded trade serialises exactly like a live one.
  expect(stored.map((t) => JSON.stringify(t))).toEqual(live.map((t) => JSON.stringify(t)))
  for (const m of marketIds(x)) {
    for (const iv of Object.keys(INTERVALS) as Interval[]) {
      expect(await store.candles(m, iv, 0, 2 ** 40)).toEqual(x.history.candleRange(m, iv, 0, 2 ** 40))
    }
  }
}

describe("history store projection", () => {
  it("projects a run into DuckDB equal to the in-memory History: trades, candles of every interval, pages", async () => {
    const dir = temp.fresh()
    const s = await startDurable(dir)
    await trade(s.exchange, 600, 11)
    await s.flushHistory()
    const store = s.history()!
    expect(store.projectedSeq).toBe(s.exchange.lastSeq)
    expect(store.pendingRows).toBe(0)
    const live = historyTrades(s.exchange)
    expect(live.length).toBeGreaterThan(100)
    // The workload exercises every settlement kind and both taker sides.
    expect(new Set(live.map((t) => t.kind))).toEqual(new Set(["normal", "mint", "merge"]))
    expect(new Set(live.map((t) => t.side))).toEqual(new Set(["buy", "sell"]))
    await expectStoreMatchesHistory(s)

    // Candles over arbitrary (unaligned) windows, per market and interval, as History.candleRange.
    const x = s.exchange
    const t0 = live[0]!.time
    const t1 = live.at(-1)!.time
    let nonEmpty = 0
    for (const m of marketIds(x)) {
      for (const iv of Object.keys(INTERVALS) as Interval[]) {
        for (let k = 0; k < 6; k++) {
          const from = t0 + Math.floor(((t1 - t0) * k) / 7) + 13
          const to = from + INTERVALS[iv] * (3 + k * 5) + 7
          const want = x.history.candleRange(m, iv, from, to)
          nonEmpty += want.length
          expect(await store.candles(m, iv, from, to)).toEqual(want)
        }
      }
    }
    expect(nonEmpty).toBeGreaterThan(50)
    // Several buckets at every width, the day included.
    for (const iv of Object.keys(INTERVALS) as Interval[]) {
      expect(x.history.candleRange(marketIds(x)[0]!, iv, 0, 2 ** 40).length).toBeGreaterThan(1)
    }

    // The store answers the trade pages the API serves from memory, identically.
    for (const m of marketIds(x)) {
      for (const [limit, offset] of [[50, 0], [7, 3], [100, 40], [10, 100_000]] as const) {
        expect(await store.marketTrades(m, limit, offset)).toEqual(x.history.marketTrades(m, limit, offset))
      }
    }
    for (const user of new Set(live.flatMap((t) => [t.maker, t.taker]))) {
      expect(await store.userTrades(user, 25, 5)).toEqual(x.history.userTrades(user, 25, 5))
    }

    // Per-user fills: two rows a trade (taker and maker), consistent with the trade.
    const [fills] = await store.run("SELECT count(*), count(DISTINCT trade_id), sum(CASE WHEN role = 'maker' THEN rebate ELSE 0 END) FROM fills")
    expect(fills!.map(Number)).toEqual([2 * live.length, live.length, live.reduce((a, t) => a + t.maker_rebate, 0)])
    // The tables for later projections exist, empty.
    for (const table of ["deposits", "withdrawals", "rewards"]) expect(await store.run(`SELECT count(*) FROM ${table}`)).toEqual([[0n]])
    await s.close()
  })

  it("buffers only records past projected_seq, flushes only through the seq it is given, and refuses a gap", async () => {
    const dir = temp.fresh()
    const path = historyPath(dir)
    const store = await HistoryStore.open(path)
    const x = new Exchange(() => 1_795_305_600_000, { append: () => Promise.resolve() })
    x.onApply((r, res) => store.record(r, res))
    await trade(x, 200, 5)
    const mid = Math.floor(x.lastSeq / 2)
    await store.flush(mid)
    expect(store.projectedSeq).toBe(mid)
    const stored = await store.trades()
    expect(stored.length).toBeGreaterThan(0)
    expect(stored.length).toBeLessThan(historyTrades(x).length)
    await store.flush()
    expect(await store.trades()).toEqual(historyTrades(x))
    // Read in chunks (the seed reads 100k a query): the chunk seams lose or repeat nothing.
    for (const chunk of [1, 7, stored.length]) expect(await store.trades(chunk)).toEqual(historyTrades(x))
    // A record already projected is ignored; one that skips a seq stops the projection loudly.
    store.record({ seq: 1, tsSec: 0, cmd: { type: "set_lp", state: "open" } }, { events: [] })
    store.record({ seq: x.lastSeq + 2, tsSec: 0, cmd: { type: "set_lp", state: "open" } }, { events: [] })
    await expect(store.flush()).rejects.toThrow(/never projected/)
    await store.close()
    const again = await HistoryStore.open(path)
    expect(again.projectedSeq).toBe(x.lastSeq)
    await again.close()
  })
})

describe("restart seeds the History from the store exactly once", () => {
  it("clean close, then P > S (store flushed after the last snapshot, then a crash)", async () => {
    const dir = temp.fresh()
    const a = await startDurable(dir)
    await trade(a.exchange, 300, 21)
    await a.close() // snapshot S = P = lastSeq
    const expected = historyTrades(a.exchange)

    const b = await startDurable(dir)
    expect(b.historyStartup).toMatchObject({ rebuilt: null, discardedRows: 0, seededTrades: expected.length })
    expect(b.durable!.recovery.replayed).toBe(0)
    expect(historyTrades(b.exchange)).toEqual(expected)
    expect(historyCandles(b.exchange)).toEqual(historyCandles(a.exchange))

    await trade(b.exchange, 150, 22)
    const { seq: snapSeq } = await b.durable!.snapshot()
    await trade(b.exchange, 150, 23)
    await b.flushHistory() // P > S
    expect(b.history()!.projectedSeq).toBeGreaterThan(snapSeq)
    await trade(b.exchange, 40, 24) // durable in the journal, never flushed to the store
    const hash = exchangeHash(b.exchange)
    const expected2 = historyTrades(b.exchange)
    const candles2 = historyCandles(b.exchange)
    await crash(b)

    const c = await startDurable(dir)
    expect(exchangeHash(c.exchange)).toBe(hash)
    expect(c.durable!.recovery.snapshotSeq).toBe(snapSeq)
    expect(c.historyStartup!.projectedSeq).toBeGreaterThan(snapSeq)
    expect(c.historyStartup!.rebuilt).toBeNull()
    // Seeded through P, replayed S+1.. with fills ≤ P skipped: every trade once.
    const got = historyTrades(c.exchange)
    expect(new Set(got.map((t) => t.id)).size).toBe(got.length)
    expect(got).toEqual(expected2)
    expect(historyCandles(c.exchange)).toEqual(candles2)
    await c.flushHistory()
    await expectStoreMatchesHistory(c)
    await c.close()
  })

  it("a crash between the append and the meta update leaves rows past P: they are dropped at open and re-projected", async () => {
    const dir = temp.fresh()
    const a = await startDurable(dir)
    await trade(a.exchange, 250, 31)
    await a.flushHistory()
    const p = a.history()!.projectedSeq
    const storedIds = new Set((await a.history()!.trades()).map((t) => t.id))
    await trade(a.exchange, 120, 32)
    const expected = historyTrades(a.exchange)
    const unflushed = expected.filter((t) => !storedIds.has(t.id))
    expect(unflushed.length).toBeGreaterThan(5)
    await crash(a)

    // What the interrupted flush wrote: the appended rows (seq > P), without P's update.
    const db = await DuckDBInstance.create(historyPath(dir))
    const conn = await db.connect()
    const app = await conn.createAppender("trades")
    for (const t of unflushed) {
      app.appendBigInt(BigInt(t.id))
      app.appendBigInt(BigInt(p + 1))
      app.appendInteger(t.price)
      app.appendBigInt(BigInt(t.size))
      app.appendVarchar(t.side)
      app.appendBigInt(BigInt(t.time))
      app.appendVarchar(t.market_id)
      app.appendVarchar(t.maker)
      app.appendVarchar(t.taker)
      app.appendBigInt(BigInt(t.fee))
      app.appendBigInt(BigInt(t.builder_fee))
      app.appendVarchar(t.outcome)
      app.appendInteger(t.yes_price)
      app.appendVarchar(t.kind)
      app.appendBigInt(BigInt(t.maker_rebate))
      for (let k = 0; k < 2; k++) app.appendBigInt(0n)
      app.appendVarchar("buy")
      app.appendVarchar("yes")
      app.appendInteger(0)
      for (let k = 0; k < 2; k++) app.appendBigInt(0n)
      app.endRow()
    }
    app.flushSync()
    app.closeSync()
    expect((await conn.runAndReadAll("SELECT projected_seq FROM meta")).getRows()).toEqual([[BigInt(p)]])
    conn.closeSync()
    db.closeSync()

    const b = await startDurable(dir)
    expect(b.historyStartup).toMatchObject({ projectedSeq: p, discardedRows: unflushed.length, rebuilt: null })
    const got = historyTrades(b.exchange)
    expect(got).toEqual(expected)
    await b.flushHistory()
    // Re-projected from the journal with their real seq and maker columns: no duplicate, no stale row.
    await expectStoreMatchesHistory(b)
    const rows = await b.history()!.tradeRows()
    expect(rows.filter((r) => r.maker_price === 0)).toEqual([])
    await b.close()
  })

  it("P < S (store lost or older than the snapshot) and P > the journal's end: the store is rebuilt from the journal", async () => {
    const dir = temp.fresh()
    const a = await startDurable(dir)
    await trade(a.exchange, 250, 41)
    await a.close()
    const expected = historyTrades(a.exchange)

    // The store is gone (or predates the snapshot): P = 0 < S.
    rmSync(historyPath(dir))
    rmSync(`${historyPath(dir)}.wal`, { force: true })
    const b = await startDurable(dir)
    expect(b.historyStartup!.rebuilt).toMatch(/behind snapshot/)
    expect(historyTrades(b.exchange)).toEqual(expected)
    expect(b.history()!.projectedSeq).toBe(b.exchange.lastSeq)
    await expectStoreMatchesHistory(b)
    await trade(b.exchange, 60, 42)
    await b.flushHistory()
    await crash(b) // the newest snapshot stays a's, before these records

    // The journal loses its last record (a corrupt tail is cut on open): the store, at P, is past it.
    const seg = listSegments(journalDir(dir)).at(-1)!.path
    const buf = readFileSync(seg)
    const at = statSync(seg).size - 3
    buf[at] = buf[at]! ^ 0xff
    writeFileSync(seg, buf)
    const c = await startDurable(dir)
    expect(c.durable!.recovery.tornTail).not.toBeNull()
    expect(c.historyStartup!.rebuilt).toMatch(/ahead of the journal/)
    expect(c.history()!.projectedSeq).toBe(c.exchange.lastSeq)
    await expectStoreMatchesHistory(c)
    await c.close()
  })
})
