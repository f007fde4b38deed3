// Rebuilding the history store from the journal alone gives, trade for trade, the file
// the live service wrote (through restarts, snapshots and crashes); `npm run
// rebuild-history` replaces the file atomically; `npm run export` writes Parquet and CSV
// that DuckDB reads back with the tables' row counts.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { DuckDBInstance } from "@duckdb/node-api"
import { afterEach, describe, expect, it } from "vitest"
import { INTERVALS } from "../../src/service/history.ts"
import { HistoryStore } from "../../src/store/history-db.ts"
import { exportHistory } from "../../src/store/history-export.ts"
import { historyPath, rebuildHistory } from "../../src/store/history-rebuild.ts"
import { crash, startDurable, tempDirs, trade } from "../support/history.ts"

const temp = tempDirs("twinbook-rebuild-")
afterEach(temp.cleanup)

const root = join(import.meta.dirname, "..", "..")
const script = (name: string, args: string[], dataDir: string) => {
  const r = spawnSync(process.execPath, ["scripts/run-ts.mjs", join(root, "scripts", name), ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir },
    encoding: "utf8"
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Everything a history file holds that a rebuild must reproduce. */
const contents = async (path: string) => {
  const store = await HistoryStore.open(path, { readOnly: true })
  try {
    const candles: Record<string, unknown> = {}
    for (const [name, width] of Object.entries(INTERVALS)) candles[name] = await store.run(`SELECT * FROM candles(${width})`)
    return { projectedSeq: store.projectedSeq, trades: await store.tradeRows(), candles }
  } finally {
    await store.close()
  }
}

/** A live history written across a snapshot, a crash with the store ahead of it, a restart and a clean close. */
const liveRun = async (): Promise<string> => {
  const dir = temp.fresh()
  const a = await startDurable(dir)
  await trade(a.exchange, 250, 51)
  await a.durable!.snapshot()
  await trade(a.exchange, 150, 52)
  await a.flushHistory()
  await trade(a.exchange, 50, 53)
  await crash(a, dir)
  const b = await startDurable(dir)
  await trade(b.exchange, 200, 54)
  await b.close()
  return dir
}

describe("rebuild-history", () => {
  it("replays the whole journal into a file equal to the live one, trade for trade", async () => {
    const dir = await liveRun()
    const live = await contents(historyPath(dir))
    expect(live.trades.length).toBeGreaterThan(150)

    // In-process, flushing in small chunks, to another path.
    const other = join(dir, "rebuilt.duckdb")
    const progress: number[] = []
    const report = await rebuildHistory(dir, { path: other, flushEveryRecords: 37, onProgress: (p) => progress.push(p.records) })
    expect(report).toMatchObject({ records: live.projectedSeq, lastSeq: live.projectedSeq, trades: live.trades.length, tornTail: null })
    expect(progress.length).toBeGreaterThan(10)
    const rebuilt = await contents(other)
    expect(rebuilt.projectedSeq).toBe(live.projectedSeq)
    expect(rebuilt.trades.length).toBe(live.trades.length)
    for (let i = 0; i < live.trades.length; i++) expect(rebuilt.trades[i]).toEqual(live.trades[i])
    expect(rebuilt.candles).toEqual(live.candles)
  })

  it("npm run rebuild-history replaces DATA_DIR/history.duckdb atomically, with progress and a summary", async () => {
    const dir = await liveRun()
    const path = historyPath(dir)
    const live = await contents(path)
    const inode = statSync(path).ino

    const r = script("rebuild-history.ts", [], dir)
    expect(r.stderr).toMatch(/read \d+ journal records/)
    expect(r.stderr).toMatch(new RegExp(`${live.projectedSeq}/${live.projectedSeq} records \\(100%\\), ${live.trades.length} trades`))
    expect(r.status).toBe(0)
    expect(r.stdout.trim().split("\n")).toHaveLength(1)
    expect(r.stdout).toMatch(new RegExp(`rebuilt .*history\\.duckdb: ${live.projectedSeq} journal records through seq ${live.projectedSeq}, ${live.trades.length} trades in `))
    // A new file took the old one's name; no temp file or stray log is left.
    expect(statSync(path).ino).not.toBe(inode)
    expect(readdirSync(dir).filter((n) => n.includes("tmp") || n.endsWith(".wal"))).toEqual([])
    expect(await contents(path)).toEqual(live)

    // And the service starts on the rebuilt file without replaying or re-projecting anything.
    const s = await startDurable(dir)
    expect(s.historyStartup).toMatchObject({ rebuilt: null, projectedSeq: live.projectedSeq, seededTrades: live.trades.length })
    // While it holds the directory, a rebuild is refused rather than racing it: the service's lock, named.
    const busy = script("rebuild-history.ts", [], dir)
    expect(busy.status).toBe(75)
    expect(busy.stderr).toMatch(new RegExp(`in use by another twinbook service \\(pid ${process.pid}\\)`))
    await s.close()
  })

  it("says so when there is no journal to rebuild from", () => {
    const dir = temp.fresh()
    const r = script("rebuild-history.ts", [], dir)
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/no journal under/)
  })
})

describe("export", () => {
  it("writes trades, fills and candles for all four intervals as Parquet and CSV that DuckDB reads back", async () => {
    const dir = await liveRun()
    const path = historyPath(dir)
    const db = await DuckDBInstance.create(":memory:")
    const conn = await db.connect()
    const count = async (sql: string): Promise<number> => Number((await conn.runAndReadAll(sql)).getRows()[0]![0])
    const store = await HistoryStore.open(path, { readOnly: true })
    const expected: Record<string, number> = {
      trades: Number((await store.run("SELECT count(*) FROM trades"))[0]![0]),
      fills: Number((await store.run("SELECT count(*) FROM fills"))[0]![0]),
      deposits: Number((await store.run("SELECT count(*) FROM deposits_latest"))[0]![0]),
      withdrawals: Number((await store.run("SELECT count(*) FROM withdrawals_latest"))[0]![0])
    }
    for (const [name, width] of Object.entries(INTERVALS)) expected[`candles_${name}`] = Number((await store.run(`SELECT count(*) FROM candles(${width})`))[0]![0])
    await store.close()
    expect(expected["fills"]).toBe(2 * expected["trades"]!)
    expect(expected["candles_1m"]).toBeGreaterThan(expected["candles_1d"]!)

    for (const format of ["parquet", "csv"] as const) {
      const out = join(dir, `out-${format}`)
      const report = await exportHistory(path, out, format)
      expect(report.fromCopy).toBe(false)
      expect(Object.fromEntries(report.files.map((f) => [f.file.slice(out.length + 1), f.rows]))).toEqual(
        Object.fromEntries(Object.entries(expected).map(([name, n]) => [`${name}.${format}`, n]))
      )
      for (const [name, n] of Object.entries(expected)) {
        const file = join(out, `${name}.${format}`)
        expect(await count(`SELECT count(*) FROM ${format === "parquet" ? "read_parquet" : "read_csv"}('${file}')`)).toBe(n)
      }
    }
    // The Parquet trades are the table, row for row.
    await conn.run(`ATTACH '${path}' AS h (READ_ONLY)`)
    await conn.run("USE h")
    expect(await count(`SELECT count(*) FROM (SELECT * FROM read_parquet('${join(dir, "out-parquet", "trades.parquet")}') EXCEPT ALL SELECT * FROM trades)`)).toBe(0)
    expect(await count(`SELECT count(*) FROM (SELECT * FROM read_parquet('${join(dir, "out-parquet", "candles_1h.parquet")}') EXCEPT ALL SELECT * FROM candles(3600))`)).toBe(0)
    conn.closeSync()
    db.closeSync()
  })

  it("npm run export: Parquet into --out, from a copy while the service holds the file; clear errors", async () => {
    const dir = await liveRun()
    const s = await startDurable(dir)
    const out = join(dir, "exported")
    const r = script("export.ts", ["--format", "parquet", "--out", out], dir)
    expect(r.status).toBe(0)
    expect(r.stderr).toMatch(/running service holds .*exported a copy/)
    expect(r.stdout).toMatch(/exported 8 parquet files through journal seq \d+/)
    expect(readdirSync(out).sort()).toEqual(
      [...["candles_1d", "candles_1h", "candles_1m", "candles_5m", "deposits", "fills"].map((n) => `${n}.parquet`), "tape", ...["trades", "withdrawals"].map((n) => `${n}.parquet`)]
    )
    await s.close()

    const bad = script("export.ts", ["--format", "xml"], dir)
    expect(bad.status).toBe(2)
    expect(bad.stderr).toMatch(/unknown format "xml"; known: parquet, csv/)
    const flag = script("export.ts", ["--fromat", "csv"], dir)
    expect(flag.status).toBe(2)
    expect(flag.stderr).toMatch(/unknown argument --fromat/)
    const empty = temp.fresh()
    const missing = script("export.ts", ["--format", "parquet", "--out", join(empty, "x")], empty)
    expect(missing.status).toBe(1)
    expect(missing.stderr).toMatch(/no history store at .*history\.duckdb/)
    expect(existsSync(join(empty, "x"))).toBe(false)
    const noDir = script("export.ts", ["--format=csv"], join(empty, "nope"))
    expect(noDir.status).toBe(1)
    expect(noDir.stderr).toMatch(/DATA_DIR .*nope does not exist/)
  })
})
