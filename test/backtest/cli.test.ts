// `npm run backtest` as a user runs it: the default sample with --json, its DuckDB file
// and HTML page, and a bad input's exit code and message.
import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DuckDBInstance } from "@duckdb/node-api"
import { describe, expect, it } from "vitest"
import { runProcess, type ProcessResult } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const cli = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
  runProcess(process.execPath, ["--import", "tsx", "sim/backtest/cli.ts", ...args], { cwd: root, timeoutMs: 60_000 })

describe("backtest CLI", () => {
  it("runs the shipped sample with no data flags and writes the report, DuckDB file and HTML page", async () => {
    const out = mkdtempSync(join(tmpdir(), "backtest-cli-"))
    const r = await cli(["--json", "--out", out, "--set", "interval=120"])
    expect(r.status).toBe(0)
    // --json: stdout is the JSON object alone (`| jq` works); the human summary goes to stderr.
    expect(r.stdout.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).not.toMatch(/WARNING/)
    const lines = r.stderr.trim().split("\n")
    // What the data does not say comes first: synthetic competitor depth, assumed fees and rewards.
    expect(lines[0]).toMatch(/^NOTE  competitor depth is synthetic \(no book snapshots\) in every market/)
    expect(lines.filter((l) => l.startsWith("NOTE  ")).join("\n")).toMatch(/fee schedule assumed[\s\S]*LP rewards configuration assumed/)
    expect(lines.find((l) => l.startsWith("data"))).toMatch(/^data\s+fixtures\/backtest\/sample-trades\.csv \(20,000 trades/)
    expect(lines.at(-1)).toMatch(/^wrote .*backtest\.duckdb and .*report\.html$/)
    const json = JSON.parse(r.stdout) as { summary: Record<string, number>; markets: unknown[]; events_per_sec: number }
    expect(json.summary["trades"]).toBe(20_000)
    expect(json.markets).toHaveLength(4)
    expect(json.events_per_sec).toBeGreaterThan(0)

    const db = await DuckDBInstance.create(join(out, "backtest.duckdb"), { access_mode: "READ_ONLY" })
    const conn = await db.connect()
    const one = async (sql: string): Promise<unknown> => (await conn.runAndReadAll(sql)).getRows()[0]![0]
    expect(Number(await one("SELECT count(*) FROM fills"))).toBe(json.summary["fills"])
    expect(Number(await one("SELECT pnl_micro FROM summary"))).toBe(json.summary["pnl_micro"])
    expect(Number(await one("SELECT count(DISTINCT market_id) FROM market_series"))).toBe(4)
    expect(Number(await one("SELECT count(*) FROM equity"))).toBeGreaterThan(1000)
    expect(Number(await one("SELECT sum(lp_micro) FROM rewards"))).toBe(json.summary["lp_rewards_micro"])
    conn.closeSync()
    db.closeSync()

    const html = readFileSync(join(out, "report.html"), "utf8")
    expect(html).toMatch(/^<!doctype html>/)
    // One file: the chart data, the inlined chart library and the drawing code; nothing loaded from elsewhere
    // (test/backtest/report-data.test.ts checks the data, report-browser.test.ts the drawing).
    expect(html).toContain('<script type="application/json" id="chart-data">')
    expect(html).toContain("TradingView Lightweight Charts™ v5.2.1")
    expect(html).not.toMatch(/<(script|img|link|iframe)[^>]+(src|href)=/i)
  }, 60_000)

  it("warns loudly on stderr, naming the row, when rows are out of order or repeated", async () => {
    const out = mkdtempSync(join(tmpdir(), "backtest-cli-warn-"))
    const data = join(out, "t.csv")
    writeFileSync(data, "ts_ms,market_id,price_bps,size,taker_side\n1736899260000,a,5000,10,buy\n1736899200000,a,5100,10,sell\n1736899200000,a,5100,10,sell\n")
    const r = await cli(["--data", data, "--out", out, "--json", "--no-html"])
    expect(r.status).toBe(0)
    expect(r.stderr).toMatch(/backtest: WARNING .*t\.csv: data row 2 is earlier than data row 1 \(1736899200 s < 1736899260 s\): 1 row\(s\) out of time order/)
    expect(r.stderr).toMatch(/backtest: WARNING .*t\.csv: data row 3 duplicates data row 2 .*: 1 duplicate row\(s\)/)
    const json = JSON.parse(r.stdout) as { assumptions: string[] }
    expect(json.assumptions.filter((a) => a.startsWith("INPUT WARNING"))).toHaveLength(2)
  })

  it("puts the exact command, the input's sha256 and every setting on the page; running that command gives the same figures", async () => {
    const out = mkdtempSync(join(tmpdir(), "backtest-cli-repro-"))
    const r = await cli(["--queue", "prob", "--seed", "9", "--set", "interval=120", "--taker-fee-bps", "10", "--out", out, "--json"])
    expect(r.status).toBe(0)
    const first = JSON.parse(r.stdout) as { summary: Record<string, unknown>; markets: unknown; rewardDays: unknown; reproduce: { command: string } }
    const html = readFileSync(join(out, "report.html"), "utf8")
    const unescape = (t: string): string => t.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))
    const command = unescape(/<pre id="command">([^<]*)<\/pre>/.exec(html)![1]!)
    expect(command).toBe(`npm run -s backtest -- --queue prob --seed 9 --set interval=120 --taker-fee-bps 10 --out ${out} --json`)
    expect(first.reproduce.command).toBe(command)
    const sha = createHash("sha256").update(readFileSync(join(root, "fixtures/backtest/sample-trades.csv"))).digest("hex")
    expect(html).toContain(`<td>fixtures/backtest/sample-trades.csv</td><td>${statSync(join(root, "fixtures/backtest/sample-trades.csv")).size}</td><td>${sha}</td>`)
    for (const setting of ["seed</td><td>9", "queue model</td><td>prob, power 3", "strategy.spreadBps", "strategy.rebalanceIntervalSec</td><td>120", "order-entry latency", "feed latency", "taker fee (bps)</td><td>10 (given)", "maker rebate (bps)", "rewards</td><td>pool 1000 USDC a day"]) {
      expect(html).toContain(setting)
    }
    const again = await runProcess("sh", ["-c", command], { cwd: root, timeoutMs: 60_000 })
    expect(again.status).toBe(0)
    const second = JSON.parse(again.stdout) as typeof first
    expect(second.summary).toEqual(first.summary)
    expect(second.markets).toEqual(first.markets)
    expect(second.rewardDays).toEqual(first.rewardDays)
  }, 120_000)

  it("exits 2 with one line naming the problem on bad input", async () => {
    const r = await cli(["--data", "fixtures/backtest/none.csv"])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe("backtest: fixtures/backtest/none.csv: no such file\n")
    expect(existsSync(join(root, "fixtures/backtest/none.csv"))).toBe(false)
    const s = await cli(["--sweep", "spread=1..9"])
    expect(s.status).toBe(2)
    expect(s.stderr).toMatch(/a range needs a step/)
  })
})
