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
  runProcess(process.execPath, ["scripts/run-ts.mjs", "sim/backtest/cli.ts", ...args], { cwd: root, timeoutMs: 60_000 })

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
    const json = JSON.parse(r.stdout) as { summary: Record<string, number>; markets: unknown[]; rejects: Record<string, number>; stats: Record<string, unknown>; assumptions: string[] }
    expect(json.summary["trades"]).toBe(20_000)
    expect(json.markets).toHaveLength(4)
    // No wall-clock figure without --timings (the next test).
    for (const k of ["timings", "wall_ms", "replay_ms", "interval_ms", "events_per_sec"]) expect(json).not.toHaveProperty(k)

    // Our rejected orders by reason, each with its share of the orders placed: the sample's capital cannot fund the whole ladder.
    const placed = json.summary["orders_placed"]!
    const rejected = json.summary["orders_rejected"]!
    const pct = (n: number): string => (n / placed < 0.00005 ? "<0.01%" : `${((n / placed) * 100).toFixed(2)}%`)
    expect(Object.values(json.rejects).reduce((s, n) => s + n, 0)).toBe(rejected)
    expect(json.rejects["insufficient_balance"]! / placed).toBeGreaterThan(0.2)
    expect(lines.find((l) => l.startsWith("orders"))!.replace(/^orders +/, "")).toBe(`${placed.toLocaleString("en-US")} placed, ${rejected.toLocaleString("en-US")} rejected (${pct(rejected)}), by reason:`)
    for (const [reason, n] of Object.entries(json.rejects)) expect(r.stderr).toContain(`  ${reason} ${n.toLocaleString("en-US")} (${pct(n)} of placed): `)
    expect(r.stderr).toMatch(/^ {2}rejected +insufficient_balance [\d,]+ \([\d.]+% of placed\): the capital could not fund the ladder/m)
    // Sharpe and Sortino on one day's 24 hourly returns: not given, and said why, with the sampling.
    expect(json.stats).toMatchObject({ hourly_returns: 24, sharpe_annualised: null, sortino_annualised: null, ratios_unavailable: "not enough data (24 hourly returns; at least 30 needed)" })
    expect(lines.find((l) => l.startsWith("Sharpe / Sortino"))).toMatch(/not enough data \(24 hourly returns; at least 30 needed\); hourly simple returns of the sampled equity, annualised by √\(24·365\)/)

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
    // The rejections table is on the first screen: after the notes, before the figures.
    const rejections = html.indexOf('<h2 id="rejections">Rejected orders</h2>')
    expect(html.slice(0, rejections).split('<p class="note">')).toHaveLength(json.assumptions.length + 1)
    expect(rejections).toBeLessThan(html.indexOf('<table class="kv">'))
    expect(html).toContain(`<p>${rejected.toLocaleString("en-US")} of our ${placed.toLocaleString("en-US")} orders placed (${pct(rejected)}) were rejected:</p>`)
    for (const [reason, n] of Object.entries(json.rejects)) expect(html).toContain(`<tr><td>${reason}</td><td>${n.toLocaleString("en-US")}</td><td>${pct(n)}</td><td>`)
  }, 60_000)

  it("--json prints the same bytes for the same run (single and sweep); --timings adds the wall-clock figures under one key", async () => {
    const out = mkdtempSync(join(tmpdir(), "backtest-cli-bytes-"))
    const single = ["--json", "--no-html", "--set", "interval=120", "--out", out]
    const a = await cli(single)
    const b = await cli(single)
    expect([a.status, b.status]).toEqual([0, 0])
    expect(b.stdout).toBe(a.stdout)
    const timed = await cli([...single, "--timings"])
    expect(timed.status).toBe(0)
    const t = JSON.parse(timed.stdout) as Record<string, unknown> & { timings: Record<string, number> }
    expect(Object.keys(t.timings).sort()).toEqual(["events_per_sec", "interval_ms", "load_ms", "replay_ms", "wall_ms"])
    expect(t.timings["events_per_sec"]).toBeGreaterThan(0)
    expect(t.timings["wall_ms"]).toBeGreaterThanOrEqual(t.timings["replay_ms"]!)
    // Apart from the timings and the command that asked for them, the object is the untimed one.
    const { timings: _t, reproduce: _r, ...rest } = t
    const { reproduce: _r2, ...untimed } = JSON.parse(a.stdout) as Record<string, unknown>
    expect(rest).toEqual(untimed)

    const sweep = ["--synthetic", "2000", "--sweep", "spread=100,300", "--json", "--no-html", "--out", join(out, "sweep")]
    const s1 = await cli(sweep)
    const s2 = await cli(sweep)
    expect([s1.status, s2.status]).toEqual([0, 0])
    expect(s2.stdout).toBe(s1.stdout)
    expect(Object.keys(JSON.parse(s1.stdout) as object)).toEqual(["sweep", "assumptions", "run_assumptions", "out"])
    const st = await cli([...sweep, "--timings"])
    expect(st.status).toBe(0)
    expect(Object.keys((JSON.parse(st.stdout) as { timings: object }).timings)).toEqual(["wall_ms"])

    const alone = await cli(["--timings", "--no-html", "--out", out])
    expect(alone.status).toBe(2)
    expect(alone.stderr).toBe("backtest: --timings adds the wall-clock figures to --json's object; give --json (the console prints them anyway)\n")
  }, 300_000)

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
  }, 300_000)

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
