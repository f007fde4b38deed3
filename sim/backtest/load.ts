// Historical input through DuckDB: CSV (header row) or Parquet, chosen by extension.
// Trades:    ts_sec | ts_ms, market_id, price_bps (YES), size, taker_side (buy | sell)
// Snapshots: ts_sec | ts_ms, market_id, side (bid | ask), price_bps (YES), size
// Orders:    ts_ms, market_id, order_id, event (new | add | cancel), side (bid | ask), price_bps, size, order_type, owner
// Extra columns are ignored. Every value is checked; the first bad row is named with its
// 1-based data row number, so a bad file fails with a message rather than a wrong backtest.
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { TAPE_FORMAT, type TapeMeta } from "../../src/store/tape.ts"
import type { DuckDBConnection } from "@duckdb/node-api"
import { duckdb } from "../../src/store/duckdb.ts"
import { BacktestInputError, buildDataset, type Dataset, type LevelColumns, ORDER_TYPES, type OrderColumns, type TradeColumns } from "./dataset.ts"

const MAX_SIZE = 100_000_000

const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`

const isText = (path: string): boolean => {
  const lower = path.toLowerCase()
  return lower.endsWith(".csv") || lower.endsWith(".csv.gz") || lower.endsWith(".tsv")
}

/**
 * The table expression for a file, by extension. `textColumn` is read as written (VARCHAR), not
 * as DuckDB's sniffer types it, so a time written `1.74087e+12` or as a date can be named as written.
 */
export const sourceSql = (path: string, textColumn: string | null = null): string => {
  const lower = path.toLowerCase()
  if (lower.endsWith(".parquet")) return `read_parquet(${sqlString(path)})`
  if (isText(path)) return `read_csv(${sqlString(path)}, header = true${textColumn === null ? "" : `, types = {${sqlString(textColumn)}: 'VARCHAR'}`})`
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

/** A file's columns: names, and each one's type as DuckDB reads it. */
interface Columns {
  readonly names: ReadonlyArray<string>
  readonly types: ReadonlyMap<string, string>
}

const columnsOf = async (conn: DuckDBConnection, path: string, src: string): Promise<Columns> => {
  try {
    const rows = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`)).getRows()
    return { names: rows.map((r) => String(r[0])), types: new Map(rows.map((r) => [String(r[0]), String(r[1])])) }
  } catch (err) {
    throw new BacktestInputError(`${path}: cannot read (${err instanceof Error ? err.message.split("\n")[0] : String(err)})`)
  }
}

const requireColumns = (path: string, have: ReadonlyArray<string>, need: ReadonlyArray<string>): void => {
  for (const c of need) {
    if (!have.includes(c)) throw new BacktestInputError(`${path}: missing column ${c} (columns: ${have.join(", ")})`)
  }
}

/**
 * The time column and how it is read. `select` is three expressions: the value as a number, whether
 * it is written as digits only (checked on the text for CSV and string columns; a numeric Parquet
 * column is checked for a whole value instead), and the text as written (null for a numeric column).
 */
interface TimeColumn {
  readonly name: "ts_ms" | "ts_sec"
  readonly exactMs: boolean
  /** The table expression to scan: a CSV's time column read as text. */
  readonly src: string
  readonly select: string
}

const NUMERIC_TYPE = /^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL.*)$/

const timeColumn = (path: string, cols: Columns): TimeColumn => {
  const name = cols.names.includes("ts_ms") ? "ts_ms" : cols.names.includes("ts_sec") ? "ts_sec" : null
  if (name === null) throw new BacktestInputError(`${path}: missing column ts_sec (or ts_ms) (columns: ${cols.names.join(", ")})`)
  const type = cols.types.get(name) ?? ""
  const textual = isText(path) || type === "VARCHAR"
  if (!textual && !NUMERIC_TYPE.test(type)) {
    throw new BacktestInputError(`${path}: ${name} is a ${type} column; write unix ${name === "ts_ms" ? "milliseconds" : "seconds"} as integers`)
  }
  const select = textual
    ? `TRY_CAST(${name} AS DOUBLE), regexp_full_match(trim(CAST(${name} AS VARCHAR)), '[0-9]+'), CAST(${name} AS VARCHAR)`
    : `TRY_CAST(${name} AS DOUBLE), TRUE, NULL`
  return { name, exactMs: name === "ts_ms", src: sourceSql(path, isText(path) ? name : null), select }
}

const distinctMarkets = async (conn: DuckDBConnection, path: string, src: string): Promise<string[]> => {
  const rows = (await conn.runAndReadAll(`SELECT DISTINCT CAST(market_id AS VARCHAR) FROM ${src} ORDER BY 1`)).getRows()
  const names = rows.map((r) => r[0])
  if (names.some((n) => n === null || n === "")) throw new BacktestInputError(`${path}: market_id is empty on some row`)
  const bad = names.find((n) => String(n).length > 128)
  if (bad !== undefined) throw new BacktestInputError(`${path}: market_id longer than 128 characters: ${String(bad).slice(0, 40)}…`)
  return names.map(String)
}

/** Streams `sql` chunk by chunk; `row(get, i)` sees each row's column values (numbers, or as read: `raw`). */
const scan = async (
  conn: DuckDBConnection, sql: string, width: number, row: (get: (c: number) => number | null, i: number, raw: (c: number) => unknown) => void
): Promise<number> => {
  const result = await conn.stream(sql)
  let i = 0
  for (;;) {
    const chunk = await result.fetchChunk()
    if (chunk === null || chunk.rowCount === 0) break
    const vectors = Array.from({ length: width }, (_, c) => chunk.getColumnVector(c))
    for (let r = 0; r < chunk.rowCount; r++) {
      row((c) => vectors[c]!.getItem(r) as number | null, i, (c) => vectors[c]!.getItem(r))
      i++
    }
  }
  return i
}

const check = (ok: boolean, path: string, row: number, what: string): void => {
  if (!ok) throw new BacktestInputError(`${path}: data row ${row + 1}: ${what}`)
}

/** Why a time value is refused, showing it as written. */
export const badTime = (name: "ts_ms" | "ts_sec", written: unknown): string => {
  if (written === null || written === undefined || String(written).trim() === "") return `${name} is empty`
  const text = String(written).trim()
  const shown = JSON.stringify(text)
  const unit = name === "ts_ms" ? "milliseconds" : "seconds"
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) return `${name} ${shown} is a date; write unix ${unit} as an integer (dates and ISO timestamps are not read)`
  if (/^[+-]?(\d+\.?\d*|\.\d+)e[+-]?\d+$/i.test(text)) return `${name} ${shown} is in exponent notation; write the integer's every digit (the notation may have dropped some)`
  if (/^\+?(\d+\.\d*|\.\d+)$/.test(text)) return `${name} ${shown} has a fraction; write whole ${unit}${name === "ts_sec" ? " (ts_ms for finer times)" : ""}`
  return `${name} ${shown} is not a non-negative integer (unix ${unit})`
}

/**
 * The row's time in ms, checked: a non-negative integer written as digits (no exponent, no
 * fraction: `1.74087e+12` has lost digits), and in a `ts_sec` column not a millisecond value.
 * `at` is the column of the time's digits flag (its text follows).
 */
const timeOf = (get: (c: number) => number | null, raw: (c: number) => unknown, at: number, time: TimeColumn, path: string, i: number): number => {
  const v = get(0)
  const ok = v !== null && Number.isFinite(v) && v >= 0 && Number.isInteger(v) && raw(at) === true
  check(ok, path, i, ok ? "" : badTime(time.name, raw(at + 1) ?? v))
  check(time.exactMs || v! * 1000 < MS_IN_SEC_COLUMN, path, i, `ts_sec ${v!} looks like milliseconds (after the year 5000); name the column ts_ms`)
  return time.exactMs ? v! : v! * 1000
}

const isInt = (v: number | null, lo: number, hi: number): v is number => v !== null && Number.isInteger(v) && v >= lo && v <= hi

const readTrades = async (conn: DuckDBConnection, path: string): Promise<TradeColumns> => {
  const src = sourceSql(path)
  const have = await columnsOf(conn, path, src)
  const time = timeColumn(path, have)
  requireColumns(path, have.names, ["market_id", "price_bps", "size", "taker_side"])
  const names = await distinctMarkets(conn, path, src)
  const n = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${src}`)).getRows()[0]![0])
  const cols = {
    tMs: new Float64Array(n), market: new Uint16Array(n), priceBps: new Uint16Array(n), size: new Int32Array(n), side: new Uint8Array(n)
  }
  // A tape's trades carry their trade id: two fills of one order at one price are two trades, not a repeat.
  const tradeId = have.names.includes("trade_id") ? new Float64Array(n) : null
  // A tape's trades name the resting order they filled: an order-level replay knows when the tape's order was used up.
  const makerOrderId = have.names.includes("maker_order_id") ? new Float64Array(n) : null
  const sql = `SELECT ${time.select}, CAST(list_position([${names.map(sqlString).join(", ")}], CAST(market_id AS VARCHAR)) - 1 AS INTEGER),
      TRY_CAST(price_bps AS DOUBLE), TRY_CAST(size AS DOUBLE),
      CAST(CASE lower(trim(CAST(taker_side AS VARCHAR))) WHEN 'buy' THEN 0 WHEN 'sell' THEN 1 ELSE 9 END AS INTEGER),
      ${tradeId === null ? "NULL" : "TRY_CAST(trade_id AS DOUBLE)"}, ${makerOrderId === null ? "NULL" : "TRY_CAST(maker_order_id AS DOUBLE)"}
    FROM ${time.src}`
  // Columns: the time's three (0..2), then market, price, size, side, trade id, maker order id.
  await scan(conn, sql, 9, (get, i, raw) => {
    const t = timeOf(get, raw, 1, time, path, i)
    const price = get(4)
    check(isInt(price, 1, 9999), path, i, `price_bps ${String(price)} is not an integer in 1..9999`)
    const size = get(5)
    check(isInt(size, 1, MAX_SIZE), path, i, `size ${String(size)} is not an integer in 1..${MAX_SIZE}`)
    const side = get(6)
    check(side === 0 || side === 1, path, i, "taker_side is not buy or sell")
    cols.tMs[i] = t
    cols.market[i] = get(3)!
    cols.priceBps[i] = price as number
    cols.size[i] = size as number
    cols.side[i] = side!
    if (tradeId !== null) tradeId[i] = get(7) ?? Number.NaN
    if (makerOrderId !== null) makerOrderId[i] = get(8) ?? Number.NaN
  })
  return { n, exactMs: time.exactMs, marketNames: names, ...cols, tradeId, makerOrderId }
}

/** Snapshot or order rows as loaded, and the first data row (0-based) of each of their markets. */
interface Loaded<T> {
  readonly cols: T
  readonly firstRow: Int32Array
}

const readLevels = async (conn: DuckDBConnection, path: string): Promise<Loaded<LevelColumns>> => {
  const src = sourceSql(path)
  const have = await columnsOf(conn, path, src)
  const time = timeColumn(path, have)
  requireColumns(path, have.names, ["market_id", "side", "price_bps", "size"])
  const names = await distinctMarkets(conn, path, src)
  const n = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${src}`)).getRows()[0]![0])
  const cols = { tMs: new Float64Array(n), market: new Uint16Array(n), isAsk: new Uint8Array(n), priceBps: new Uint16Array(n), size: new Int32Array(n) }
  const firstRow = new Int32Array(names.length).fill(-1)
  const sql = `SELECT ${time.select}, CAST(list_position([${names.map(sqlString).join(", ")}], CAST(market_id AS VARCHAR)) - 1 AS INTEGER),
      CAST(CASE lower(trim(CAST(side AS VARCHAR))) WHEN 'bid' THEN 0 WHEN 'ask' THEN 1 ELSE 9 END AS INTEGER),
      TRY_CAST(price_bps AS DOUBLE), TRY_CAST(size AS DOUBLE)
    FROM ${time.src}`
  // Columns: the time's three (0..2), then market, side, price, size.
  await scan(conn, sql, 7, (get, i, raw) => {
    const t = timeOf(get, raw, 1, time, path, i)
    const side = get(4)
    check(side === 0 || side === 1, path, i, "side is not bid or ask")
    const price = get(5)
    check(isInt(price, 1, 9999), path, i, `price_bps ${String(price)} is not an integer in 1..9999`)
    const size = get(6)
    check(isInt(size, 1, MAX_SIZE), path, i, `size ${String(size)} is not an integer in 1..${MAX_SIZE}`)
    const market = get(3)!
    if (firstRow[market]! < 0) firstRow[market] = i
    cols.tMs[i] = t
    cols.market[i] = market
    cols.isAsk[i] = side!
    cols.priceBps[i] = price as number
    cols.size[i] = size as number
  })
  return { cols: { n, source: path, marketNames: names, ...cols }, firstRow }
}

/** How much of an orders file a backtest reads: all of it (replay the order flow), adds and cancels only (the book, with trades replayed at the print), or none. */
export type OrdersMode = "flow" | "adds" | "none"
export const ORDERS_MODES: ReadonlyArray<OrdersMode> = ["flow", "adds", "none"]

const readOrders = async (conn: DuckDBConnection, path: string, mode: OrdersMode): Promise<Loaded<OrderColumns>> => {
  const only = (all: string): string => (mode === "adds" ? `(SELECT * FROM ${all} WHERE lower(trim(CAST(event AS VARCHAR))) <> 'new')` : all)
  const src = only(sourceSql(path))
  const have = await columnsOf(conn, path, src)
  const time = timeColumn(path, have)
  requireColumns(path, have.names, ["market_id", "order_id", "event", "side", "price_bps", "size", "order_type", "owner"])
  const names = await distinctMarkets(conn, path, src)
  const owners = (await conn.runAndReadAll(`SELECT DISTINCT CAST(owner AS VARCHAR) FROM ${src} ORDER BY 1`)).getRows().map((r) => String(r[0]))
  const n = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${src}`)).getRows()[0]![0])
  const cols = {
    tMs: new Float64Array(n), market: new Uint16Array(n), orderId: new Float64Array(n), event: new Uint8Array(n), orderType: new Uint8Array(n),
    isAsk: new Uint8Array(n), priceBps: new Uint16Array(n), size: new Int32Array(n), owner: new Int32Array(n)
  }
  const firstRow = new Int32Array(names.length).fill(-1)
  const sql = `SELECT ${time.select}, CAST(list_position([${names.map(sqlString).join(", ")}], CAST(market_id AS VARCHAR)) - 1 AS INTEGER),
      TRY_CAST(order_id AS DOUBLE),
      CAST(CASE lower(trim(CAST(event AS VARCHAR))) WHEN 'add' THEN 0 WHEN 'cancel' THEN 1 WHEN 'new' THEN 2 ELSE 9 END AS INTEGER),
      CAST(CASE lower(trim(CAST(side AS VARCHAR))) WHEN 'bid' THEN 0 WHEN 'ask' THEN 1 ELSE 9 END AS INTEGER),
      TRY_CAST(price_bps AS DOUBLE), TRY_CAST(size AS DOUBLE),
      CAST(list_position([${owners.map(sqlString).join(", ")}], CAST(owner AS VARCHAR)) - 1 AS INTEGER),
      CAST(list_position([${ORDER_TYPES.map(sqlString).join(", ")}], lower(trim(CAST(order_type AS VARCHAR)))) - 1 AS INTEGER)
    FROM ${only(time.src)}`
  // Columns: the time's three (0..2), then market, order id, event, side, price, size, owner, order type.
  await scan(conn, sql, 11, (get, i, raw) => {
    const t = timeOf(get, raw, 1, time, path, i)
    const id = get(4)
    check(isInt(id, 0, Number.MAX_SAFE_INTEGER), path, i, `order_id ${String(id)} is not a non-negative integer`)
    const event = get(5)
    check(event === 0 || event === 1 || event === 2, path, i, "event is not new, add or cancel")
    const side = get(6)
    check(side === 0 || side === 1, path, i, "side is not bid or ask")
    const price = get(7)
    check(isInt(price, 1, 9999), path, i, `price_bps ${String(price)} is not an integer in 1..9999`)
    const size = get(8)
    check(isInt(size, 0, MAX_SIZE), path, i, `size ${String(size)} is not an integer in 0..${MAX_SIZE}`)
    const owner = get(9)
    check(owner !== null && owner >= 0, path, i, "owner is empty")
    const type = get(10)
    check(type !== null && type >= 0, path, i, `order_type is not one of ${ORDER_TYPES.join(", ")}`)
    const market = get(3)!
    if (firstRow[market]! < 0) firstRow[market] = i
    cols.tMs[i] = t
    cols.market[i] = market
    cols.orderId[i] = id as number
    cols.event[i] = event!
    cols.orderType[i] = type!
    cols.isAsk[i] = side!
    cols.priceBps[i] = price as number
    cols.size[i] = size as number
    cols.owner[i] = owner!
  })
  return { cols: { n, marketNames: names, ownerNames: owners, ...cols }, firstRow }
}

/**
 * Snapshot or order rows for a market that has no trades would replay as a market of its own (a
 * typo'd or differently spelt id gives a second market and a silently wrong run): refused, naming
 * the file, the first row and the id, unless the market is listed (a tape's tape.json `markets`:
 * every market its exchange had, traded or not).
 */
const checkMarketsKnown = (path: string, loaded: Loaded<{ readonly marketNames: ReadonlyArray<string> }>, tradesPath: string, traded: ReadonlyArray<string>, listed: ReadonlyArray<string>): void => {
  const known = new Set([...traded, ...listed])
  const unknown = loaded.cols.marketNames.map((name, m) => ({ name, row: loaded.firstRow[m]! })).filter((x) => !known.has(x.name)).sort((a, b) => a.row - b.row)
  if (unknown.length === 0) return
  const first = unknown[0]!
  const some = traded.slice(0, 5).map((m) => JSON.stringify(m)).join(", ") + (traded.length > 5 ? `, … (${traded.length} in all)` : "")
  const others = unknown.length > 1 ? ` (${unknown.length} such ids: ${unknown.slice(0, 5).map((x) => JSON.stringify(x.name)).join(", ")}${unknown.length > 5 ? ", …" : ""})` : ""
  throw new BacktestInputError(
    `${path}: data row ${first.row + 1}: market_id ${JSON.stringify(first.name)} has no trades in ${tradesPath}${others}, whose markets are ${some}: ` +
      "it would replay as a market of its own; check the id (a tape lists its markets without trades in tape.json markets)"
  )
}

/**
 * Loads trades (and optionally snapshots and order-level events) into one time-ordered Dataset.
 * `listedMarkets`: markets the source names besides those with trades (a tape's tape.json `markets`),
 * which snapshots and orders may have; any other market without trades is refused.
 */
export const loadDataset = async (
  tradesPath: string, snapshotsPath: string | null = null, ordersPath: string | null = null, ordersMode: OrdersMode = "flow",
  listedMarkets: ReadonlyArray<string> = []
): Promise<Dataset> => {
  const extra = [snapshotsPath, ordersPath].filter((p): p is string => p !== null)
  for (const p of [tradesPath, ...extra]) {
    if (!existsSync(p)) throw new BacktestInputError(`${p}: no such file`)
  }
  // Validate the extensions before starting DuckDB, so the error names the file.
  for (const p of [tradesPath, ...extra]) sourceSql(p)
  for (const p of [tradesPath, ...extra]) checkFieldCounts(p)
  const instance = await duckdb().DuckDBInstance.create(":memory:")
  const conn = await instance.connect()
  try {
    const trades = await readTrades(conn, tradesPath)
    const levels = snapshotsPath === null ? null : await readLevels(conn, snapshotsPath)
    if (levels !== null) checkMarketsKnown(snapshotsPath!, levels, tradesPath, trades.marketNames, listedMarkets)
    const orders = ordersPath === null || ordersMode === "none" ? null : await readOrders(conn, ordersPath, ordersMode)
    if (orders !== null) checkMarketsKnown(ordersPath!, orders, tradesPath, trades.marketNames, listedMarkets)
    return buildDataset([tradesPath, ...extra].join(" + "), trades, levels?.cols ?? null, orders?.cols ?? null)
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
  const markets: unknown = meta.markets
  if (!Array.isArray(markets) || markets.some((m) => typeof m !== "string")) throw new BacktestInputError(`${metaPath}: markets must be a list of market ids`)
  const trades = firstIn(dir, ["trades.parquet", "trades.csv", "trades.csv.gz"])
  if (trades === null) throw new BacktestInputError(`${dir}: no trades.parquet or trades.csv`)
  const book = snapshotsOverride ?? firstIn(dir, ["book.parquet", "book.csv", "book.csv.gz"])
  const orders = ordersMode === "none" ? null : firstIn(dir, ["orders.parquet", "orders.csv", "orders.csv.gz"])
  return { dataset: await loadDataset(trades, book, orders, ordersMode, meta.markets), meta }
}
