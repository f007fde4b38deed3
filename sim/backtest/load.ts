// Historical input through DuckDB: CSV (header row) or Parquet, chosen by extension.
// Trades:    ts_sec | ts_ms, market_id, price_bps (YES), size, taker_side (buy | sell)
// Snapshots: ts_sec | ts_ms, market_id, side (bid | ask), price_bps (YES), size
// Orders:    ts_ms, market_id, order_id, event (new | add | cancel), side (bid | ask), price_bps, size, order_type, owner
// Extra columns are ignored. Every value is checked; the first bad row is named with its
// 1-based data row number, so a bad file fails with a message rather than a wrong backtest.
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { TAPE_FORMAT, type TapeMeta } from "../../src/store/tape.ts"
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import { BacktestInputError, buildDataset, type Dataset, type LevelColumns, ORDER_TYPES, type OrderColumns, type TradeColumns } from "./dataset.ts"

const MAX_SIZE = 100_000_000

const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`

/** The table expression for a file, by extension. */
export const sourceSql = (path: string): string => {
  const lower = path.toLowerCase()
  if (lower.endsWith(".parquet")) return `read_parquet(${sqlString(path)})`
  if (lower.endsWith(".csv") || lower.endsWith(".csv.gz") || lower.endsWith(".tsv")) return `read_csv(${sqlString(path)}, header = true)`
  throw new BacktestInputError(`${path}: unsupported input format (use .csv, .csv.gz or .parquet)`)
}

/** ts_sec at or above this (in ms: 10^11 s, the year 5138) is a millisecond timestamp in the wrong column. */
const MS_IN_SEC_COLUMN = 1e14

/**
 * A plain CSV/TSV row with fewer or more fields than the header is named before DuckDB reads
 * the file: its sniffer would otherwise fall back to one column and report a present column missing.
 */
export const checkFieldCounts = (path: string): void => {
  const lower = path.toLowerCase()
  if (!lower.endsWith(".csv") && !lower.endsWith(".tsv")) return
  const buf = readFileSync(path)
  const delim = lower.endsWith(".tsv") ? 9 : 44
  let fields = 1
  let header = -1
  let row = 0
  let quoted = false
  let blank = true
  for (let i = 0; i <= buf.length; i++) {
    const c = i < buf.length ? buf[i]! : 10
    if (c === 34) quoted = !quoted
    else if (quoted) continue
    else if (c === delim) fields++
    else if (c === 10) {
      if (!blank) {
        if (header < 0) header = fields
        else {
          row++
          if (fields !== header) throw new BacktestInputError(`${path}: data row ${row} has ${fields} field(s), the header has ${header}`)
        }
      }
      fields = 1
      blank = true
      continue
    }
    if (c !== 13) blank = false
  }
}

const columnsOf = async (conn: DuckDBConnection, path: string, src: string): Promise<string[]> => {
  try {
    const rows = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`)).getRows()
    return rows.map((r) => String(r[0]))
  } catch (err) {
    throw new BacktestInputError(`${path}: cannot read (${err instanceof Error ? err.message.split("\n")[0] : String(err)})`)
  }
}

const requireColumns = (path: string, have: ReadonlyArray<string>, need: ReadonlyArray<string>): void => {
  for (const c of need) {
    if (!have.includes(c)) throw new BacktestInputError(`${path}: missing column ${c} (columns: ${have.join(", ")})`)
  }
}

const timeColumn = (path: string, have: ReadonlyArray<string>): { sql: string; exactMs: boolean } => {
  if (have.includes("ts_ms")) return { sql: "TRY_CAST(ts_ms AS DOUBLE)", exactMs: true }
  if (have.includes("ts_sec")) return { sql: "TRY_CAST(ts_sec AS DOUBLE) * 1000", exactMs: false }
  throw new BacktestInputError(`${path}: missing column ts_sec (or ts_ms) (columns: ${have.join(", ")})`)
}

const distinctMarkets = async (conn: DuckDBConnection, path: string, src: string): Promise<string[]> => {
  const rows = (await conn.runAndReadAll(`SELECT DISTINCT CAST(market_id AS VARCHAR) FROM ${src} ORDER BY 1`)).getRows()
  const names = rows.map((r) => r[0])
  if (names.some((n) => n === null || n === "")) throw new BacktestInputError(`${path}: market_id is empty on some row`)
  const bad = names.find((n) => String(n).length > 128)
  if (bad !== undefined) throw new BacktestInputError(`${path}: market_id longer than 128 characters: ${String(bad).slice(0, 40)}…`)
  return names.map(String)
}

/** Streams `sql` chunk by chunk; `row(values, i)` sees each row's column values. */
const scan = async (conn: DuckDBConnection, sql: string, width: number, row: (get: (c: number) => number | null, i: number) => void): Promise<number> => {
  const result = await conn.stream(sql)
  let i = 0
  for (;;) {
    const chunk = await result.fetchChunk()
    if (chunk === null || chunk.rowCount === 0) break
    const vectors = Array.from({ length: width }, (_, c) => chunk.getColumnVector(c))
    for (let r = 0; r < chunk.rowCount; r++) {
      row((c) => vectors[c]!.getItem(r) as number | null, i)
      i++
    }
  }
  return i
}

const check = (ok: boolean, path: string, row: number, what: string): void => {
  if (!ok) throw new BacktestInputError(`${path}: data row ${row + 1}: ${what}`)
}

/** The row's time in ms, checked: non-negative, and in a `ts_sec` column not a millisecond value. */
const timeOf = (t: number | null, time: { exactMs: boolean }, path: string, i: number): number => {
  check(t !== null && Number.isFinite(t) && t >= 0, path, i, `${time.exactMs ? "ts_ms" : "ts_sec"} is not a non-negative number`)
  check(time.exactMs || t! < MS_IN_SEC_COLUMN, path, i, `ts_sec ${t! / 1000} looks like milliseconds (after the year 5000); name the column ts_ms`)
  return Math.round(t!)
}

const isInt = (v: number | null, lo: number, hi: number): v is number => v !== null && Number.isInteger(v) && v >= lo && v <= hi

const readTrades = async (conn: DuckDBConnection, path: string): Promise<TradeColumns> => {
  const src = sourceSql(path)
  const have = await columnsOf(conn, path, src)
  const time = timeColumn(path, have)
  requireColumns(path, have, ["market_id", "price_bps", "size", "taker_side"])
  const names = await distinctMarkets(conn, path, src)
  const n = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${src}`)).getRows()[0]![0])
  const cols = {
    tMs: new Float64Array(n), market: new Uint16Array(n), priceBps: new Uint16Array(n), size: new Int32Array(n), side: new Uint8Array(n)
  }
  // A tape's trades carry their trade id: two fills of one order at one price are two trades, not a repeat.
  const tradeId = have.includes("trade_id") ? new Float64Array(n) : null
  const sql = `SELECT ${time.sql}, CAST(list_position([${names.map(sqlString).join(", ")}], CAST(market_id AS VARCHAR)) - 1 AS INTEGER),
      TRY_CAST(price_bps AS DOUBLE), TRY_CAST(size AS DOUBLE),
      CAST(CASE lower(trim(CAST(taker_side AS VARCHAR))) WHEN 'buy' THEN 0 WHEN 'sell' THEN 1 ELSE 9 END AS INTEGER)${tradeId === null ? "" : ", TRY_CAST(trade_id AS DOUBLE)"}
    FROM ${src}`
  await scan(conn, sql, tradeId === null ? 5 : 6, (get, i) => {
    const t = timeOf(get(0), time, path, i)
    check(time.exactMs || Number.isInteger(t / 1000), path, i, "ts_sec is not a whole number of seconds (use ts_ms for finer times)")
    const price = get(2)
    check(isInt(price, 1, 9999), path, i, `price_bps ${String(price)} is not an integer in 1..9999`)
    const size = get(3)
    check(isInt(size, 1, MAX_SIZE), path, i, `size ${String(size)} is not an integer in 1..${MAX_SIZE}`)
    const side = get(4)
    check(side === 0 || side === 1, path, i, "taker_side is not buy or sell")
    cols.tMs[i] = t
    cols.market[i] = get(1)!
    cols.priceBps[i] = price as number
    cols.size[i] = size as number
    cols.side[i] = side!
    if (tradeId !== null) tradeId[i] = get(5) ?? Number.NaN
  })
  return { n, exactMs: time.exactMs, marketNames: names, ...cols, tradeId }
}

const readLevels = async (conn: DuckDBConnection, path: string): Promise<LevelColumns> => {
  const src = sourceSql(path)
  const have = await columnsOf(conn, path, src)
  const time = timeColumn(path, have)
  requireColumns(path, have, ["market_id", "side", "price_bps", "size"])
  const names = await distinctMarkets(conn, path, src)
  const n = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${src}`)).getRows()[0]![0])
  const cols = { tMs: new Float64Array(n), market: new Uint16Array(n), isAsk: new Uint8Array(n), priceBps: new Uint16Array(n), size: new Int32Array(n) }
  const sql = `SELECT ${time.sql}, CAST(list_position([${names.map(sqlString).join(", ")}], CAST(market_id AS VARCHAR)) - 1 AS INTEGER),
      CAST(CASE lower(trim(CAST(side AS VARCHAR))) WHEN 'bid' THEN 0 WHEN 'ask' THEN 1 ELSE 9 END AS INTEGER),
      TRY_CAST(price_bps AS DOUBLE), TRY_CAST(size AS DOUBLE)
    FROM ${src}`
  await scan(conn, sql, 5, (get, i) => {
    const t = timeOf(get(0), time, path, i)
    const side = get(2)
    check(side === 0 || side === 1, path, i, "side is not bid or ask")
    const price = get(3)
    check(isInt(price, 1, 9999), path, i, `price_bps ${String(price)} is not an integer in 1..9999`)
    const size = get(4)
    check(isInt(size, 1, MAX_SIZE), path, i, `size ${String(size)} is not an integer in 1..${MAX_SIZE}`)
    cols.tMs[i] = t
    cols.market[i] = get(1)!
    cols.isAsk[i] = side!
    cols.priceBps[i] = price as number
    cols.size[i] = size as number
  })
  return { n, marketNames: names, ...cols }
}

/** How much of an orders file a backtest reads: all of it (replay the order flow), adds and cancels only (the book, with trades replayed at the print), or none. */
export type OrdersMode = "flow" | "adds" | "none"
export const ORDERS_MODES: ReadonlyArray<OrdersMode> = ["flow", "adds", "none"]

const readOrders = async (conn: DuckDBConnection, path: string, mode: OrdersMode): Promise<OrderColumns> => {
  const all = sourceSql(path)
  const src = mode === "adds" ? `(SELECT * FROM ${all} WHERE lower(trim(CAST(event AS VARCHAR))) <> 'new')` : all
  const have = await columnsOf(conn, path, src)
  const time = timeColumn(path, have)
  requireColumns(path, have, ["market_id", "order_id", "event", "side", "price_bps", "size", "order_type", "owner"])
  const names = await distinctMarkets(conn, path, src)
  const owners = (await conn.runAndReadAll(`SELECT DISTINCT CAST(owner AS VARCHAR) FROM ${src} ORDER BY 1`)).getRows().map((r) => String(r[0]))
  const n = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${src}`)).getRows()[0]![0])
  const cols = {
    tMs: new Float64Array(n), market: new Uint16Array(n), orderId: new Float64Array(n), event: new Uint8Array(n), orderType: new Uint8Array(n),
    isAsk: new Uint8Array(n), priceBps: new Uint16Array(n), size: new Int32Array(n), owner: new Int32Array(n)
  }
  const sql = `SELECT ${time.sql}, CAST(list_position([${names.map(sqlString).join(", ")}], CAST(market_id AS VARCHAR)) - 1 AS INTEGER),
      TRY_CAST(order_id AS DOUBLE),
      CAST(CASE lower(trim(CAST(event AS VARCHAR))) WHEN 'add' THEN 0 WHEN 'cancel' THEN 1 WHEN 'new' THEN 2 ELSE 9 END AS INTEGER),
      CAST(CASE lower(trim(CAST(side AS VARCHAR))) WHEN 'bid' THEN 0 WHEN 'ask' THEN 1 ELSE 9 END AS INTEGER),
      TRY_CAST(price_bps AS DOUBLE), TRY_CAST(size AS DOUBLE),
      CAST(list_position([${owners.map(sqlString).join(", ")}], CAST(owner AS VARCHAR)) - 1 AS INTEGER),
      CAST(list_position([${ORDER_TYPES.map(sqlString).join(", ")}], lower(trim(CAST(order_type AS VARCHAR)))) - 1 AS INTEGER)
    FROM ${src}`
  await scan(conn, sql, 9, (get, i) => {
    const t = timeOf(get(0), time, path, i)
    const id = get(2)
    check(isInt(id, 0, Number.MAX_SAFE_INTEGER), path, i, `order_id ${String(id)} is not a non-negative integer`)
    const event = get(3)
    check(event === 0 || event === 1 || event === 2, path, i, "event is not new, add or cancel")
    const side = get(4)
    check(side === 0 || side === 1, path, i, "side is not bid or ask")
    const price = get(5)
    check(isInt(price, 1, 9999), path, i, `price_bps ${String(price)} is not an integer in 1..9999`)
    const size = get(6)
    check(isInt(size, 0, MAX_SIZE), path, i, `size ${String(size)} is not an integer in 0..${MAX_SIZE}`)
    const owner = get(7)
    check(owner !== null && owner >= 0, path, i, "owner is empty")
    const type = get(8)
    check(type !== null && type >= 0, path, i, `order_type is not one of ${ORDER_TYPES.join(", ")}`)
    cols.tMs[i] = t
    cols.market[i] = get(1)!
    cols.orderId[i] = id as number
    cols.event[i] = event!
    cols.orderType[i] = type!
    cols.isAsk[i] = side!
    cols.priceBps[i] = price as number
    cols.size[i] = size as number
    cols.owner[i] = owner!
  })
  return { n, marketNames: names, ownerNames: owners, ...cols }
}

/** Loads trades (and optionally snapshots and order-level events) into one time-ordered Dataset. */
export const loadDataset = async (tradesPath: string, snapshotsPath: string | null = null, ordersPath: string | null = null, ordersMode: OrdersMode = "flow"): Promise<Dataset> => {
  const extra = [snapshotsPath, ordersPath].filter((p): p is string => p !== null)
  for (const p of [tradesPath, ...extra]) {
    if (!existsSync(p)) throw new BacktestInputError(`${p}: no such file`)
  }
  // Validate the extensions before starting DuckDB, so the error names the file.
  for (const p of [tradesPath, ...extra]) sourceSql(p)
  for (const p of [tradesPath, ...extra]) checkFieldCounts(p)
  const instance = await DuckDBInstance.create(":memory:")
  const conn = await instance.connect()
  try {
    const trades = await readTrades(conn, tradesPath)
    const levels = snapshotsPath === null ? null : await readLevels(conn, snapshotsPath)
    const orders = ordersPath === null || ordersMode === "none" ? null : await readOrders(conn, ordersPath, ordersMode)
    return buildDataset([tradesPath, ...extra].join(" + "), trades, levels, orders)
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}

/** The first of `names` that exists in `dir`, or null. */
const firstIn = (dir: string, names: ReadonlyArray<string>): string | null => {
  for (const n of names) if (existsSync(join(dir, n))) return join(dir, n)
  return null
}

export const isTapeDir = (path: string): boolean => existsSync(path) && statSync(path).isDirectory()

/**
 * A tape directory (src/store/tape.ts): trades.{parquet,csv}, book.{parquet,csv} when it has
 * snapshots, orders.{parquet,csv} when it has order-level events (version 2; read as `ordersMode`
 * says), and tape.json with the fee schedule, the rewards configuration and the time span.
 */
export const loadTape = async (dir: string, snapshotsOverride: string | null = null, ordersMode: OrdersMode = "flow"): Promise<{ dataset: Dataset; meta: TapeMeta }> => {
  const metaPath = join(dir, "tape.json")
  if (!existsSync(metaPath)) throw new BacktestInputError(`${dir}: not a tape (no tape.json; write one with npm run sim -- <scenario> --tape ${dir} or npm run export)`)
  let meta: TapeMeta
  try {
    meta = JSON.parse(readFileSync(metaPath, "utf8")) as TapeMeta
  } catch (err) {
    throw new BacktestInputError(`${metaPath}: ${err instanceof Error ? err.message : String(err)}`)
  }
  if (meta.format !== TAPE_FORMAT) throw new BacktestInputError(`${metaPath}: format is ${String(meta.format)}, expected ${TAPE_FORMAT}`)
  const bots: unknown = meta.lp_bots
  if (bots !== undefined && (!Array.isArray(bots) || bots.some((b) => typeof b !== "string"))) throw new BacktestInputError(`${metaPath}: lp_bots must be a list of owner names`)
  const trades = firstIn(dir, ["trades.parquet", "trades.csv", "trades.csv.gz"])
  if (trades === null) throw new BacktestInputError(`${dir}: no trades.parquet or trades.csv`)
  const book = snapshotsOverride ?? firstIn(dir, ["book.parquet", "book.csv", "book.csv.gz"])
  const orders = ordersMode === "none" ? null : firstIn(dir, ["orders.parquet", "orders.csv", "orders.csv.gz"])
  return { dataset: await loadDataset(trades, book, orders, ordersMode), meta }
}
