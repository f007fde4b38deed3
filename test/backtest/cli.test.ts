// `npm run backtest` as a user runs it: the default sample with --json, its DuckDB file
// and HTML page, and a bad input's exit code and message.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DuckDBInstance } from "@duckdb/node-api"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
const cli = (args: ReadonlyArray<string>): { status: number | null; stdout: string; stderr: string } => {
  const r = spawnSync(process.execPath, ["--import", "tsx", "sim/backtest/cli.ts", ...args], { cwd: root, encoding: "utf8", timeout: 60_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe("backtest CLI", () => {
  it("runs the shipped sample with no data flags and writes the report, DuckDB file and HTML page", async () => {
    const out = mkdtempSync(join(tmpdir(), "backtest-cli-"))
    const r = cli(["--json", "--out", out, "--set", "interval=120"])
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    const lines = r.stdout.trim().split("\n")
    // What the data does not say comes first: synthetic competitor depth, assumed fees and rewards.
    expect(lines[0]).toMatch(/^NOTE  competitor depth is synthetic \(no book snapshots\) in every market/)
    expect(lines.filter((l) => l.startsWith("NOTE  ")).join("\n")).toMatch(/fee schedule assumed[\s\S]*LP rewards configuration assumed/)
    expect(lines.find((l) => l.startsWith("data"))).toMatch(/^data\s+fixtures\/backtest\/sample-trades\.csv \(20,000 trades/)
    const json = JSON.parse(lines.at(-1)!) as { summary: Record<string, number>; markets: unknown[]; events_per_sec: number }
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
    expect((html.match(/<svg /g) ?? []).length).toBe(2 + 4) // equity, inventory, quotes vs mid per market
    expect(html).not.toMatch(/<script|https?:\/\//)
  }, 60_000)

  it("exits 2 with one line naming the problem on bad input", () => {
    const r = cli(["--data", "fixtures/backtest/none.csv"])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe("backtest: fixtures/backtest/none.csv: no such file\n")
    expect(existsSync(join(root, "fixtures/backtest/none.csv"))).toBe(false)
    const s = cli(["--sweep", "spread=1..9"])
    expect(s.status).toBe(2)
    expect(s.stderr).toMatch(/a range needs a step/)
  })
})
