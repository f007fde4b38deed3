// The report as a DuckDB file (bulk rows through the Appender, as src/store does):
//   summary (one row), markets, fills, equity, market_series, rewards, run (config JSON).
// A sweep writes `sweep` (one row per combination) instead.
import { mkdirSync, rmSync } from "node:fs"
import { dirname } from "node:path"
import type { DuckDBAppender, DuckDBConnection, DuckDBInstance } from "@duckdb/node-api"
import { duckdb } from "../../src/store/duckdb.ts"
import type { BacktestReport } from "./report.ts"
import { MARKOUT_HORIZONS_SEC } from "./stats.ts"

type Value = string | number | boolean | null

const sqlType = (v: Value): string =>
  typeof v === "number" ? (Number.isInteger(v) ? "BIGINT" : "DOUBLE") : typeof v === "boolean" ? "BOOLEAN" : "VARCHAR"

/** A one-or-more-row table whose columns follow the first row's keys and value types. */
const writeObjects = async (conn: DuckDBConnection, table: string, rows: ReadonlyArray<Record<string, Value>>, types?: Record<string, string>): Promise<void> => {
  if (rows.length === 0) return
  const cols = Object.keys(rows[0]!)
  const colType = (c: string): string => types?.[c] ?? sqlType(rows.find((r) => r[c] !== null)?.[c] ?? null)
  await conn.run(`CREATE TABLE ${table} (${cols.map((c) => `"${c}" ${colType(c)}`).join(", ")})`)
  await appendAll(conn, table, rows, (app, r) => {
    for (const c of cols) {
      const v = r[c] ?? null
      const t = colType(c)
      if (v === null) app.appendNull()
      else if (t === "BIGINT") app.appendBigInt(BigInt(v as number))
      else if (t === "DOUBLE") app.appendDouble(v as number)
      else if (t === "BOOLEAN") app.appendBoolean(v as boolean)
      else app.appendVarchar(String(v))
    }
  })
}

const appendAll = async <R>(conn: DuckDBConnection, table: string, rows: ReadonlyArray<R>, row: (app: DuckDBAppender, r: R) => void): Promise<void> => {
  const app = await conn.createAppender(table)
  try {
    for (const r of rows) {
      row(app, r)
      app.endRow()
    }
    app.flushSync()
  } finally {
    app.closeSync()
  }
}

const openFresh = async (path: string): Promise<{ instance: DuckDBInstance; conn: DuckDBConnection }> => {
  mkdirSync(dirname(path), { recursive: true })
  rmSync(path, { force: true })
  rmSync(`${path}.wal`, { force: true })
  const instance = await duckdb().DuckDBInstance.create(path)
  return { instance, conn: await instance.connect() }
}

export const writeReportDb = async (path: string, report: BacktestReport, configJson: string): Promise<void> => {
  const { instance, conn } = await openFresh(path)
  try {
    await conn.run("BEGIN TRANSACTION")
    await writeObjects(conn, "summary", [report.summary as unknown as Record<string, Value>], { fill_ratio: "DOUBLE", max_drawdown_pct: "DOUBLE" })
    await writeObjects(
      conn, "markets",
      report.markets.map(({ params, paused_spans_ms, ...m }) => ({ ...m, params: JSON.stringify(params), paused_spans_ms: JSON.stringify(paused_spans_ms) })),
      { mark_bps: "DOUBLE", stop_reason: "VARCHAR" }
    )
    const ids = report.markets.map((m) => m.market_id)
    await conn.run(`CREATE TABLE fills (t_ms BIGINT, market_id VARCHAR, side VARCHAR, outcome VARCHAR, price_bps INTEGER, yes_price_bps INTEGER,
      size BIGINT, rebate_micro BIGINT, cause VARCHAR, ${MARKOUT_HORIZONS_SEC.map((h) => `markout_${h}s_bps DOUBLE`).join(", ")})`)
    await appendAll(conn, "fills", report.fills.map((f, i) => ({ f, m: report.fill_markouts_bps[i]! })), (app, { f, m }) => {
      app.appendBigInt(BigInt(f.tMs))
      app.appendVarchar(ids[f.market]!)
      app.appendVarchar(f.side)
      app.appendVarchar(f.outcome)
      app.appendInteger(f.priceBps)
      app.appendInteger(f.yesPriceBps)
      app.appendBigInt(BigInt(f.size))
      app.appendBigInt(BigInt(f.rebateMicro))
      app.appendVarchar(f.cause)
      for (const x of m) x === null ? app.appendNull() : app.appendDouble(x)
    })
    const s = report.series
    await conn.run("CREATE TABLE equity (t_sec BIGINT, equity_micro BIGINT, cash_micro BIGINT, pnl_micro BIGINT)")
    await appendAll(conn, "equity", s.tSec.map((_, i) => i), (app, i) => {
      app.appendBigInt(BigInt(s.tSec[i]!))
      app.appendBigInt(BigInt(s.equityMicro[i]!))
      app.appendBigInt(BigInt(s.cashMicro[i]!))
      app.appendBigInt(BigInt(s.pnlMicro[i]!))
    })
    await conn.run("CREATE TABLE market_series (t_sec BIGINT, market_id VARCHAR, mid_bps DOUBLE, net_yes BIGINT, our_bid_bps INTEGER, our_ask_bps INTEGER)")
    const cells: Array<[number, number]> = []
    for (let m = 0; m < ids.length; m++) for (let i = 0; i < s.tSec.length; i++) cells.push([m, i])
    await appendAll(conn, "market_series", cells, (app, [m, i]) => {
      app.appendBigInt(BigInt(s.tSec[i]!))
      app.appendVarchar(ids[m]!)
      const mid2 = s.mid2[m]![i]!
      if (mid2 < 0) app.appendNull()
      else app.appendDouble(mid2 / 2)
      app.appendBigInt(BigInt(s.netYes[m]![i]!))
      for (const v of [s.bidBps[m]![i]!, s.askBps[m]![i]!]) {
        if (v < 0) app.appendNull()
        else app.appendInteger(v)
      }
    })
    await conn.run(`CREATE TABLE rewards (day DATE, pool_micro BIGINT, paid_micro BIGINT, lp_micro BIGINT, lp_raw_micro BIGINT,
      lp_score DOUBLE, lp_capped BOOLEAN, minutes INTEGER)`)
    for (const r of report.rewardDays) {
      await conn.run("INSERT INTO rewards VALUES (DATE '1970-01-01' + CAST($1 AS INTEGER), $2, $3, $4, $5, $6, $7, $8)", [
        r.day, BigInt(r.poolMicro), BigInt(r.paidMicro), BigInt(r.lpMicro), BigInt(r.lpRawMicro), r.lpScore, r.lpCapped, r.minutes
      ])
    }
    await conn.run("CREATE TABLE rejects (reason VARCHAR, count BIGINT)")
    for (const [reason, count] of Object.entries(report.rejects)) await conn.run("INSERT INTO rejects VALUES ($1, $2)", [reason, BigInt(count)])
    await conn.run("CREATE TABLE run (config_json VARCHAR)")
    await conn.run("INSERT INTO run VALUES ($1)", [configJson])
    await conn.run("COMMIT")
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}

/** One row per sweep combination: its parameter values, then the headline figures. */
export const writeSweepDb = async (path: string, rows: ReadonlyArray<Record<string, Value>>): Promise<void> => {
  const { instance, conn } = await openFresh(path)
  try {
    await writeObjects(conn, "sweep", rows, { fill_ratio: "DOUBLE", max_drawdown_pct: "DOUBLE" })
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}
