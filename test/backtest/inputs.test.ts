// Inputs and the command line: CSV and Parquet load to the same data and result, bad
// files, flags, params files and sweeps fail with messages that name the problem, and a
// sweep on worker threads answers exactly what in-process runs answer.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DuckDBInstance } from "@duckdb/node-api"
import { beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_DATA, parseArgs } from "../../sim/backtest/args.ts"
import { DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import { type Dataset, KIND_TRADE } from "../../sim/backtest/dataset.ts"
import { loadDataset, loadTape } from "../../sim/backtest/load.ts"
import { TAPE_FORMAT, type TapeMeta, writeTape } from "../../src/store/tape.ts"
import { applyKnobs, combinations, parseSweep } from "../../sim/backtest/params.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import { runSweep, sweepConfigs } from "../../sim/backtest/sweep.ts"
import { syntheticDataset } from "../../sim/backtest/synthetic.ts"

const dir = mkdtempSync(join(tmpdir(), "backtest-inputs-"))
const file = (name: string, text: string): string => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
// A cheaper cadence keeps the two full-sample runs quick; the data path is what is under test.
const CHEAP = applyKnobs({ ...DEFAULT_CONFIG, sampleSec: 600 }, { interval: 300 })

describe("CSV and Parquet", () => {
  let csv: Dataset
  let parquet: Dataset
  beforeAll(async () => {
    const pq = join(dir, "sample.parquet")
    const db = await DuckDBInstance.create(":memory:")
    const conn = await db.connect()
    await conn.run(`COPY (SELECT * FROM read_csv('${DEFAULT_DATA}', header = true)) TO '${pq}' (FORMAT parquet)`)
    conn.closeSync()
    db.closeSync()
    csv = await loadDataset(DEFAULT_DATA)
    parquet = await loadDataset(pq)
  })

  it("load to the same events and give the same backtest", () => {
    expect({ ...parquet, source: "" }).toEqual({ ...csv, source: "" })
    const a = runBacktest(csv, CHEAP).report
    const b = runBacktest(parquet, CHEAP).report
    expect({ ...b, summary: { ...b.summary, source: "" } }).toEqual({ ...a, summary: { ...a.summary, source: "" } })
    expect(a.summary.fills).toBeGreaterThan(0)
  })

  it("accept ts_ms instead of ts_sec, and spread whole seconds through the second", async () => {
    const secs = await loadDataset(file("s.csv", "ts_sec,market_id,price_bps,size,taker_side\n100,a,5000,10,buy\n100,a,5100,10,buy\n101,a,5000,5,SELL\n"))
    expect([...secs.tMs]).toEqual([100_000, 100_500, 101_000])
    expect([...secs.side]).toEqual([0, 0, 1])
    const ms = await loadDataset(file("ms.csv", "ts_ms,market_id,price_bps,size,taker_side\n100250,a,5000,10,buy\n100000,a,5100,10,buy\n"))
    expect([...ms.tMs]).toEqual([100_000, 100_250]) // sorted by time, stable
    expect([...ms.priceBps]).toEqual([5100, 5000])
  })
})

describe("bad inputs give clear errors", () => {
  it("a missing column is named with the columns found", async () => {
    const path = file("nocol.csv", "ts_sec,market_id,price_bps,size\n1,a,5000,10\n")
    await expect(loadDataset(path)).rejects.toThrow(/missing column taker_side \(columns: ts_sec, market_id, price_bps, size\)/)
    await expect(loadDataset(file("notime.csv", "market_id,price_bps,size,taker_side\na,1,1,buy\n"))).rejects.toThrow(/missing column ts_sec \(or ts_ms\)/)
  })

  it("a bad value is named with its data row", async () => {
    await expect(loadDataset(file("price.csv", "ts_sec,market_id,price_bps,size,taker_side\n1,a,5000,10,buy\n2,a,12000,10,buy\n"))).rejects.toThrow(
      /data row 2: price_bps 12000 is not an integer in 1\.\.9999/
    )
    await expect(loadDataset(file("side.csv", "ts_sec,market_id,price_bps,size,taker_side\n1,a,5000,10,up\n"))).rejects.toThrow(/data row 1: taker_side is not buy or sell/)
    await expect(loadDataset(file("size.csv", "ts_sec,market_id,price_bps,size,taker_side\n1,a,5000,2.5,buy\n"))).rejects.toThrow(/data row 1: size 2.5/)
  })

  it("a row with too few or too many fields is named, not reported as a missing column", async () => {
    const short = file("short.csv", "ts_sec,market_id,price_bps,size,taker_side\n1,a,5000,10,buy\n2,a,5000\n3,a,5000,10,sell\n")
    await expect(loadDataset(short)).rejects.toThrow(/short\.csv: data row 2 has 3 field\(s\), the header has 5$/)
    const long = file("long.csv", 'ts_sec,market_id,price_bps,size,taker_side\n1,"a,b",5000,10,buy\n2,a,5000,10,sell,x\n')
    await expect(loadDataset(long)).rejects.toThrow(/long\.csv: data row 2 has 6 field\(s\), the header has 5$/)
  })

  it("ts_sec holding milliseconds is refused, naming the row", async () => {
    const ms = file("ms-in-sec.csv", "ts_sec,market_id,price_bps,size,taker_side\n1736899200,a,5000,10,buy\n1736899200123,a,5000,10,buy\n")
    await expect(loadDataset(ms)).rejects.toThrow(/data row 2: ts_sec 1736899200123 looks like milliseconds \(after the year 5000\); name the column ts_ms/)
    const book = file("ms-book.csv", "ts_sec,market_id,side,price_bps,size\n1736899200000,a,bid,4900,10\n")
    await expect(loadDataset(file("ok.csv", "ts_sec,market_id,price_bps,size,taker_side\n1736899200,a,5000,10,buy\n"), book)).rejects.toThrow(/ms-book\.csv: data row 1: ts_sec 1736899200000 looks like milliseconds/)
  })

  it("rows out of time order and duplicate rows load with a warning naming the row", async () => {
    const clean = await loadDataset(file("clean.csv", "ts_sec,market_id,price_bps,size,taker_side\n1,a,5000,10,buy\n1,a,5000,11,buy\n2,a,5000,10,buy\n"))
    expect(clean.warnings).toEqual([])
    const messy = await loadDataset(file("messy.csv", "ts_ms,market_id,price_bps,size,taker_side\n5000,a,5000,10,buy\n3000,a,5000,10,buy\n4000,a,5100,7,sell\n2000,a,5000,1,buy\n4000,a,5100,7,sell\n"))
    expect(messy.warnings).toEqual([
      "data row 2 is earlier than data row 1 (3 s < 5 s): 2 row(s) out of time order, replayed sorted by time",
      "data row 5 duplicates data row 3 (same time, market, price, size and side): 1 duplicate row(s), kept as separate trades; remove them if the feed repeats itself"
    ])
    expect([...messy.tMs]).toEqual([2000, 3000, 4000, 4000, 5000])
    expect(runBacktest(messy, CHEAP).report.assumptions.filter((a) => a.startsWith("INPUT WARNING"))).toHaveLength(2)
    // Whole seconds: two equal trades in one second are possible, so a repeat is a note, not a warning.
    const secs = await loadDataset(file("secs.csv", "ts_sec,market_id,price_bps,size,taker_side\n4,a,5100,7,sell\n4,a,5100,7,sell\n"))
    expect(secs.warnings).toEqual([])
    expect(secs.notes).toEqual(["data row 2 duplicates data row 1 (same time, market, price, size and side) within one second: 1 such row(s), kept as separate trades (whole-second data cannot tell a repeated record from two equal trades)"])
    // A tape names each trade: one taker order filling two makers' equal orders at one price is two
    // trades with two ids at one ts_ms, not a repeat; the same id twice still is.
    const tape = await loadDataset(file("ids.csv", "ts_ms,market_id,price_bps,size,taker_side,trade_id\n4000,a,5100,7,sell,1\n4000,a,5100,7,sell,2\n"))
    expect(tape.warnings).toEqual([])
    const repeated = await loadDataset(file("ids-rep.csv", "ts_ms,market_id,price_bps,size,taker_side,trade_id\n4000,a,5100,7,sell,1\n4000,a,5100,7,sell,1\n"))
    expect(repeated.warnings).toEqual(["data row 2 duplicates data row 1 (same time, market, price, size and side): 1 duplicate row(s), kept as separate trades; remove them if the feed repeats itself"])
  })

  it("missing files, unknown formats and crossed snapshots are refused", async () => {
    await expect(loadDataset(join(dir, "nope.csv"))).rejects.toThrow(/nope\.csv: no such file/)
    await expect(loadDataset(file("x.json", "{}"))).rejects.toThrow(/unsupported input format/)
    const trades = file("t.csv", "ts_sec,market_id,price_bps,size,taker_side\n1,a,5000,10,buy\n")
    const crossed = file("b.csv", "ts_sec,market_id,side,price_bps,size\n1,a,bid,5100,10\n1,a,ask,5000,10\n")
    await expect(loadDataset(trades, crossed)).rejects.toThrow(/snapshot a at 1s is crossed/)
  })

  it("a crossed snapshot, or a price listed twice, is named with its file and data rows", async () => {
    const trades = file("tx.csv", "ts_sec,market_id,price_bps,size,taker_side\n1,a,5000,10,buy\n")
    const crossed = file("bx.csv", "ts_sec,market_id,side,price_bps,size\n1,a,bid,4900,10\n1,a,ask,5000,10\n2,a,ask,5000,10\n2,a,bid,4800,10\n2,a,bid,5100,10\n")
    await expect(loadDataset(trades, crossed)).rejects.toThrow(
      /bx\.csv: data rows 3 and 5: snapshot a at 2s is crossed: best bid 5100 \(data row 5\) ≥ best ask 5000 \(data row 3\)$/
    )
    const twice = file("b2.csv", "ts_sec,market_id,side,price_bps,size\n1,a,bid,4900,10\n1,a,ask,5000,10\n1,a,bid,4900,3\n")
    await expect(loadDataset(trades, twice)).rejects.toThrow(/b2\.csv: data rows 1 and 3: snapshot a at 1s lists price 4900 twice on one side$/)
  })

  it("a time that is not an integer written as digits is refused, showing the value as written (CSV and Parquet)", async () => {
    const head = "ts_ms,market_id,price_bps,size,taker_side\n"
    // 1.74087e+12 is a whole number of ms, but the notation has dropped digits: refused, not rounded.
    await expect(loadDataset(file("exp.csv", `${head}1740870000000,a,5000,10,buy\n1.74087e+12,a,5000,10,buy\n`))).rejects.toThrow(
      /exp\.csv: data row 2: ts_ms "1\.74087e\+12" is in exponent notation; write the integer's every digit/
    )
    await expect(loadDataset(file("frac.csv", `${head}1740870000000.5,a,5000,10,buy\n`))).rejects.toThrow(/frac\.csv: data row 1: ts_ms "1740870000000\.5" has a fraction; write whole milliseconds/)
    await expect(loadDataset(file("iso.csv", "ts_sec,market_id,price_bps,size,taker_side\n1736899200,a,5000,10,buy\n2025-01-15T00:00:01Z,a,5000,10,buy\n"))).rejects.toThrow(
      /iso\.csv: data row 2: ts_sec "2025-01-15T00:00:01Z" is a date; write unix seconds as an integer/
    )
    await expect(loadDataset(file("neg.csv", `${head}-5,a,5000,10,buy\n`))).rejects.toThrow(/neg\.csv: data row 1: ts_ms "-5" is not a non-negative integer \(unix milliseconds\)/)
    await expect(loadDataset(file("empty.csv", `${head}1000,a,5000,10,buy\n,a,5000,10,buy\n`))).rejects.toThrow(/empty\.csv: data row 2: ts_ms is empty/)
    const ok = file("ok-ms.csv", `${head}1740870000000,a,5000,10,buy\n`)
    await expect(loadDataset(ok, file("bsec.csv", "ts_sec,market_id,side,price_bps,size\n1740870000.5,a,bid,4900,10\n"))).rejects.toThrow(
      /bsec\.csv: data row 1: ts_sec "1740870000\.5" has a fraction; write whole seconds \(ts_ms for finer times\)/
    )
    await expect(loadDataset(ok, null, file("oexp.csv", "ts_ms,market_id,order_id,event,side,price_bps,size,order_type,owner\n1.74087e12,a,1,add,bid,4900,10,gtc,m1\n"))).rejects.toThrow(
      /oexp\.csv: data row 1: ts_ms "1\.74087e12" is in exponent notation/
    )
    // Parquet: a float column holding a fraction, a timestamp column; integral values in a float column load as before.
    const db = await DuckDBInstance.create(":memory:")
    const conn = await db.connect()
    const pq = (name: string, select: string): Promise<string> => conn.run(`COPY (${select}) TO '${join(dir, name)}' (FORMAT parquet)`).then(() => join(dir, name))
    const cols = "'a' AS market_id, 5000 AS price_bps, 10 AS size, 'buy' AS taker_side"
    const fracPq = await pq("frac.parquet", `SELECT 1740870000000.0::DOUBLE AS ts_ms, ${cols} UNION ALL SELECT 1740870000000.25::DOUBLE, ${cols}`)
    const tsPq = await pq("ts.parquet", `SELECT TIMESTAMP '2025-01-15 00:00:00' AS ts_sec, ${cols}`)
    const dblPq = await pq("dbl.parquet", `SELECT 1740870000000.0::DOUBLE AS ts_ms, ${cols}`)
    const textPq = await pq("text.parquet", `SELECT '1.74087e+12' AS ts_ms, ${cols}`)
    conn.closeSync()
    db.closeSync()
    await expect(loadDataset(fracPq)).rejects.toThrow(/frac\.parquet: data row 2: ts_ms "1740870000000\.25" has a fraction/)
    await expect(loadDataset(tsPq)).rejects.toThrow(/ts\.parquet: ts_sec is a TIMESTAMP column; write unix seconds as integers/)
    await expect(loadDataset(textPq)).rejects.toThrow(/text\.parquet: data row 1: ts_ms "1\.74087e\+12" is in exponent notation/)
    expect([...(await loadDataset(dblPq)).tMs]).toEqual([1740870000000])
  })

  it("snapshots or order rows for a market without trades are refused, naming the file, row and id, unless the tape lists the market", async () => {
    const trades = file("tm.csv", "ts_sec,market_id,price_bps,size,taker_side\n1,btc-150k,5000,10,buy\n1,fed-cut,4000,10,sell\n")
    const typo = file("bm.csv", "ts_sec,market_id,side,price_bps,size\n1,btc-150k,bid,4900,10\n1,BTC-150K,bid,4900,10\n1,BTC-150K,ask,5100,10\n")
    await expect(loadDataset(trades, typo)).rejects.toThrow(
      /bm\.csv: data row 2: market_id "BTC-150K" has no trades in .*tm\.csv, whose markets are "btc-150k", "fed-cut": it would replay as a market of its own/
    )
    const orders = file("om.csv", "ts_ms,market_id,order_id,event,side,price_bps,size,order_type,owner\n1000,btc-150k,1,add,bid,4900,10,gtc,m1\n1000,eth,2,add,bid,4900,10,gtc,m1\n")
    await expect(loadDataset(trades, null, orders)).rejects.toThrow(/om\.csv: data row 2: market_id "eth" has no trades in .*tm\.csv/)
    // A tape lists every market its exchange had (src/store/tape.ts): one with a book and no trades is genuine.
    const tapeDir = join(dir, "tape-quiet-market")
    const meta: TapeMeta = {
      format: TAPE_FORMAT, version: 2, source: "inputs test", from_sec: 0, to_sec: 10, snapshot_interval_sec: 0, markets: ["busy", "quiet"],
      fees: { maker_rebate_bps: 0, default_taker_fee_bps: 0, taker_fee_bps: { busy: 0, quiet: 0 } }, rewards: null, excluded_users: [], trades: 1, snapshots: 1, orders: 0
    }
    await writeTape(tapeDir, {
      trades: [{ tsMs: 2000, marketId: "busy", priceBps: 5000, size: 10, takerSide: "buy", tradeId: 1, makerOrderId: 1, takerOrderId: 2 }],
      levels: [{ tsMs: 1000, marketId: "quiet", side: "bid", priceBps: 4000, size: 5 }], orders: [], meta
    }, "csv")
    expect((await loadTape(tapeDir)).dataset.markets).toEqual(["busy", "quiet"])
    writeFileSync(join(tapeDir, "tape.json"), JSON.stringify({ ...meta, markets: ["busy"] }))
    await expect(loadTape(tapeDir)).rejects.toThrow(/book\.csv: data row 1: market_id "quiet" has no trades in .*trades\.csv/)
    writeFileSync(join(tapeDir, "tape.json"), JSON.stringify({ ...meta, markets: "busy" }))
    await expect(loadTape(tapeDir)).rejects.toThrow(/tape\.json: markets must be a list of market ids/)
    expect(readFileSync(join(tapeDir, "book.csv"), "utf8")).toContain("quiet")
  })

  it("an order-level file's bad rows are named: event, order type, a missing column, milliseconds in ts_sec", async () => {
    const trades = file("t2.csv", "ts_ms,market_id,price_bps,size,taker_side\n1000,a,5000,10,buy\n")
    const head = "ts_ms,market_id,order_id,event,side,price_bps,size,order_type,owner\n"
    const good = "1000,a,1,new,bid,5000,10,gtc,m1\n"
    await expect(loadDataset(trades, null, file("o1.csv", `${head}${good}1000,a,1,amend,bid,5000,10,gtc,m1\n`))).rejects.toThrow(/o1\.csv: data row 2: event is not new, add or cancel/)
    await expect(loadDataset(trades, null, file("o2.csv", `${head}${good}1000,a,2,new,bid,5000,10,gtd,m1\n`))).rejects.toThrow(/o2\.csv: data row 2: order_type is not one of gtc, post_only, ioc, fok/)
    await expect(loadDataset(trades, null, file("o3.csv", "ts_ms,market_id,order_id,event,side,price_bps,size,owner\n1000,a,1,new,bid,5000,10,m1\n"))).rejects.toThrow(/o3\.csv: missing column order_type/)
    const secHead = head.replace("ts_ms", "ts_sec")
    await expect(loadDataset(trades, null, file("o4.csv", `${secHead}1736899200123,a,1,new,bid,5000,10,gtc,m1\n`))).rejects.toThrow(/o4\.csv: data row 1: ts_sec .* looks like milliseconds/)
    const d = await loadDataset(trades, null, file("o5.csv", `${head}${good}1000,a,1,add,bid,5000,10,gtc,m1\n`))
    expect([d.orders, d.owners]).toEqual([2, ["m1"]])
    // A trade's maker_order_id (a tape's) is read into the trade row's orderId; without it, NaN.
    const named = await loadDataset(file("t3.csv", "ts_ms,market_id,price_bps,size,taker_side,trade_id,maker_order_id\n2000,a,5000,10,buy,7,1\n"), null, file("o6.csv", `${head}${good}1000,a,1,add,bid,5000,10,gtc,m1\n`))
    const tradeRow = (x: Dataset) => [...x.kind].indexOf(KIND_TRADE)
    expect(named.orderId[tradeRow(named)]).toBe(1)
    expect(d.orderId[tradeRow(d)]).toBeNaN()
  })

  it("a bad preset, flag or params file is named", () => {
    expect(() => parseArgs(["--preset", "yolo"])).toThrow(/--preset: unknown preset "yolo"; known: conservative, balanced, aggressive/)
    expect(() => parseArgs(["--queue", "fifo"])).toThrow(/--queue: unknown model "fifo"/)
    expect(() => parseArgs(["--orders", "all"])).toThrow(/--orders: expected one of flow, adds, none, got "all"/)
    expect(parseArgs(["--orders", "adds"]).ordersMode).toBe("adds")
    expect(() => parseArgs(["--capital", "-5"])).toThrow(/--capital: expected an amount of USDC/)
    expect(() => parseArgs(["--frobnicate"])).toThrow(/unknown argument "--frobnicate"/)
    expect(() => parseArgs(["--preset", "balanced", "--params", "x.json"])).toThrow(/exclusive/)
    const bad = file("p.json", JSON.stringify({ mode: "advanced", capital_micro_usdc: 1e9, spread_bps: 1, levels_per_side: 1, contracts_per_level: 1, rebalance_interval_secs: 15, skew_tolerance_pct: 50, stop_loss_micro_usdc: 0, take_profit_micro_usdc: 0 }))
    expect(() => parseArgs(["--params", bad])).toThrow(/params file .*p\.json: params\.spread_bps: must be an integer in 2\.\.9998/)
    expect(() => parseArgs(["--params", file("j.json", "{ nope")])).toThrow(/params file .*j\.json: /)
  })

  it("bad sweep syntax, names and combinations are named", () => {
    expect(() => parseSweep("spread=100..400")).toThrow(/--sweep "spread=100\.\.400": a range needs a step/)
    expect(() => parseSweep("spread")).toThrow(/expected name=from\.\.to:step or name=v1,v2/)
    expect(() => parseSweep("sprd=1,2")).toThrow(/--sweep: unknown parameter "sprd"; known: spread, levels/)
    expect(() => parseSweep("spread=1x,2")).toThrow(/"1x" is not an integer/)
    expect(() => parseSweep("spread=400..100:50")).toThrow(/from 400 is above to 100/)
    expect(() => parseArgs(["--sweep", "spread=1,2", "--sweep", "spread_bps=3"])).toThrow(/swept twice/)
    const d = syntheticDataset({ seed: "s", trades: 100 })
    expect(() => sweepConfigs(DEFAULT_CONFIG, combinations([parseSweep("spread=1,200")]), d)).toThrow(/sweep combination spread=1: strategy parameter spreadBps must be an integer in 2\.\.9998/)
  })

  it("parses ranges, lists and the cartesian product", () => {
    expect(parseSweep("spread=100..400:50").values).toEqual([100, 150, 200, 250, 300, 350, 400])
    expect(parseSweep("levels_per_side=1,3,5")).toEqual({ name: "levels", values: [1, 3, 5] })
    expect(combinations([parseSweep("spread=100,200"), parseSweep("levels=1,2")])).toEqual([
      { spread: 100, levels: 1 }, { spread: 100, levels: 2 }, { spread: 200, levels: 1 }, { spread: 200, levels: 2 }
    ])
  })
})

describe("sweeps", () => {
  it("run on worker threads and match in-process runs, in combination order", async () => {
    const d = syntheticDataset({ seed: "sweep", trades: 2_000, durationSec: 3 * 3600 })
    const combos = combinations([parseSweep("spread=100,300"), parseSweep("entry_latency_ms=0,500")])
    const done: number[] = []
    const rows = await runSweep(d, DEFAULT_CONFIG, combos, 2, (n) => done.push(n))
    expect(done).toEqual([1, 2, 3, 4])
    expect(rows.map((r) => r.values)).toEqual(combos)
    for (const row of rows) expect(row.summary).toEqual(runBacktest(d, applyKnobs(DEFAULT_CONFIG, row.values)).report.summary)
    expect(new Set(rows.map((r) => r.summary.pnl_micro)).size).toBeGreaterThan(1)
  }, 30_000)
})
