// The sweep's index page and each run's own page (sim/backtest/report-html/sweep-index.ts,
// sweep.ts): a real 2×2 sweep on worker threads writes its run pages; the heatmap has one cell
// per combination, each showing that run's figure and linking to a page that exists; each run
// page's command reruns exactly that combination; --heatmap picks the figure.
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { parseArgs } from "../../sim/backtest/args.ts"
import { combinations, parseSweep, type SweepAxis } from "../../sim/backtest/params.ts"
import type { BacktestSummary } from "../../sim/backtest/report.ts"
import { heatmaps, type IndexRun, renderSweepIndex } from "../../sim/backtest/report-html/sweep-index.ts"
import { runArgv, runHref, runSweep, sweepNoteLines, sweepNotes, type SweepRow, sweepTable } from "../../sim/backtest/sweep.ts"
import { runProcess } from "../support/run-process.ts"
import { chartDataset } from "./report-fixture.ts"

// The sweep as a user would type it (the dataset below is what --synthetic 6000 over two days gives).
const ARGV = ["--synthetic", "6000", "--seed", "4", "--set", "interval=30", "--sweep", "spread=100,300", "--sweep=levels=1,3", "--workers", "2", "--heatmap", "fills", "--out", "out/x"]

let out: string
let axes: ReadonlyArray<SweepAxis>
let rows: SweepRow[]
let runs: IndexRun[]

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), "backtest-sweep-index-"))
  const opts = parseArgs(ARGV)
  axes = opts.sweeps
  rows = await runSweep(chartDataset(6_000), opts.config, combinations(axes), 2, undefined, { outDir: out, argv: ARGV, inputs: [] })
  const table = sweepTable(rows)
  runs = rows.map((r, i) => ({ values: r.values, row: table[i]!, href: runHref(i, rows.length, r.values) }))
}, 120_000)

describe("sweep heatmap", () => {
  it("has one cell per combination, each with its run's figure and a link to a page that exists", () => {
    for (const figure of ["pnl_micro", "fills", "max_drawdown_micro"] as const) {
      const maps = heatmaps(axes, runs, figure)
      expect(maps).toHaveLength(1)
      const cells = maps[0]!.cells.flat()
      expect(cells).toHaveLength(2 * 2)
      expect(maps[0]!.rows!.values).toEqual([100, 300])
      expect(maps[0]!.cols.values).toEqual([1, 3])
      for (const c of cells) {
        const row = rows[c.run]!
        expect(c.values).toEqual(row.values)
        expect(c.value).toBe(row.summary[figure as keyof BacktestSummary])
        expect(existsSync(join(out, c.href!))).toBe(true)
      }
    }
  })

  it("renders the map and a table linking every run; every link on the page points at a file that exists", () => {
    const html = renderSweepIndex({ axes, runs, figure: "pnl_micro", note: "test" })
    const cells = [...html.matchAll(/<td class="cell[^"]*" data-run="(\d+)" data-value="(-?\d+)"[^>]*><a href="([^"]+)">/g)]
    expect(cells).toHaveLength(4)
    for (const [, run, value] of cells) expect(Number(value)).toBe(rows[Number(run) - 1]!.summary.pnl_micro)
    const links = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!)
    expect(links).toHaveLength(4 + 4)
    for (const href of links) expect(existsSync(join(out, href)), href).toBe(true)
    expect(html).not.toMatch(/<(script|img|link|iframe)[^>]+(src|href)=/i)
  })

  it("gives one row with one swept parameter, and one map per value of a third", () => {
    const one = [parseSweep("spread=100,200,300")]
    const fake = (values: Record<string, number>, i: number): IndexRun => ({ values, row: { ...values, pnl_micro: i }, href: null })
    const single = heatmaps(one, combinations(one).map(fake), "pnl_micro")
    expect(single).toHaveLength(1)
    expect(single[0]!.rows).toBeNull()
    expect(single[0]!.cells.map((r) => r.map((c) => c.value))).toEqual([[0, 1, 2]])
    const three = [parseSweep("spread=100,300"), parseSweep("levels=1,2,3"), parseSweep("size=10,20")]
    const combos = combinations(three)
    const maps = heatmaps(three, combos.map(fake), "pnl_micro")
    expect(maps.map((m) => m.title)).toEqual(["size=10", "size=20"])
    const cells = maps.flatMap((m) => m.cells.flat())
    expect(cells).toHaveLength(2 * 3 * 2)
    expect(new Set(cells.map((c) => c.run)).size).toBe(combos.length)
    for (const c of cells) expect(c.values).toEqual(combos[c.value])
  })
})

describe("each run's page", () => {
  it("carries the command that reruns that combination alone, into the run's folder", () => {
    const base = parseArgs(ARGV)
    rows.forEach((r, i) => {
      const html = readFileSync(join(out, runHref(i, rows.length, r.values)), "utf8")
      const command = /<pre id="command">([^<]*)<\/pre>/.exec(html)![1]!.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))
      const dir = join(out, "runs", runHref(i, rows.length, r.values).split("/")[1]!)
      expect(command).toBe(["npm run -s backtest --", ...runArgv(ARGV, r.values, dir)].join(" "))
      const args = command.split(" ").slice(5)
      expect(args).not.toContain("--sweep")
      const alone = parseArgs(args)
      expect(alone.sweeps).toEqual([])
      expect(alone.out).toBe(dir)
      expect(alone.config).toEqual({ ...base.config, overrides: { ...base.config.overrides, spreadBps: r.values["spread"], levelsPerSide: r.values["levels"] } })
      expect(html).toContain(`<td>strategy.spreadBps</td><td>${r.values["spread"]}</td>`)
    })
  })
})

describe("a sweep's NOTE lines", () => {
  it("are said once when every run has them, and with the runs' numbers when only some do", () => {
    const rows = [{ assumptions: ["fees assumed", "rewards assumed", "queue never mattered"] }, { assumptions: ["fees assumed", "rewards assumed"] }, { assumptions: ["rewards assumed", "fees assumed", "queue never mattered"] }]
    const notes = sweepNotes(rows)
    expect(notes).toEqual({ common: ["fees assumed", "rewards assumed"], some: [{ note: "queue never mattered", runs: [1, 3] }] })
    expect(sweepNoteLines(notes, 3)).toEqual(["NOTE  fees assumed", "NOTE  rewards assumed", "NOTE  in runs 1, 3 (2 of 3): queue never mattered"])
    expect(sweepNoteLines(sweepNotes(Array.from({ length: 12 }, (_, i) => ({ assumptions: i === 11 ? [] : ["x"] }))), 12)).toEqual(["NOTE  in runs 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … (11 of 12): x"])
  })
})

describe("--heatmap", () => {
  it("takes a figure's short, _micro or _usdc name, defaults to pnl, and names the known ones on a typo", () => {
    expect(parseArgs([]).heatmap).toBe("pnl_micro")
    expect(parseArgs(["--heatmap", "fills"]).heatmap).toBe("fills")
    expect(parseArgs(["--heatmap", "lp_rewards_usdc"]).heatmap).toBe("lp_rewards_micro")
    expect(parseArgs(["--heatmap=max_drawdown"]).heatmap).toBe("max_drawdown_micro")
    expect(() => parseArgs(["--heatmap", "sharpe"])).toThrow(/--heatmap: unknown figure "sharpe"; known: pnl, realised_pnl/)
  })
})

describe("npm run backtest -- --sweep", () => {
  it("writes the index with its heatmap and each run's page, and says where", async () => {
    const dir = mkdtempSync(join(tmpdir(), "backtest-sweep-cli-"))
    const r = await runProcess(process.execPath, ["scripts/run-ts.mjs", "sim/backtest/cli.ts", "--synthetic", "3000", "--sweep", "spread=100,300", "--heatmap", "fills", "--out", dir], {
      cwd: join(import.meta.dirname, "..", ".."), timeoutMs: 60_000
    })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain(`wrote ${join(dir, "sweep.duckdb")} and ${join(dir, "sweep.html")} (each run's page in ${join(dir, "runs")})`)
    // What the runs assumed comes first, once for the sweep (every run assumed the fees and rewards here), then the table.
    const [head, table] = r.stdout.split("\n\n")
    const notes = head!.split("\n")
    expect(notes.every((l) => l.startsWith("NOTE  "))).toBe(true)
    expect(notes.filter((l) => /^NOTE {2}fee schedule assumed \(the data has none\)/.test(l))).toHaveLength(1)
    expect(notes.filter((l) => /^NOTE {2}LP rewards configuration assumed \(the data has none\)/.test(l))).toHaveLength(1)
    expect(notes.filter((l) => /^NOTE {2}competitor depth is synthetic/.test(l))).toHaveLength(1)
    expect(table!.split("\n")[0]).toMatch(/^spread +pnl_usdc/)
    const html = readFileSync(join(dir, "sweep.html"), "utf8")
    for (const n of notes) expect(html.split(`<p class="note">${n.slice("NOTE  ".length).replaceAll("'", "&#39;")}</p>`)).toHaveLength(2)
    expect(html.indexOf('<p class="note">')).toBeLessThan(html.indexOf("<h2>Heatmap: fills</h2>"))
    expect(html).toContain("<h2>Heatmap: fills</h2>")
    for (const href of ["runs/1_spread=100/report.html", "runs/2_spread=300/report.html"]) {
      expect(html).toContain(`href="${href}"`)
      expect(readFileSync(join(dir, href), "utf8")).toContain("npm run -s backtest -- --synthetic 3000 --set spread=")
    }
  }, 60_000)
})
