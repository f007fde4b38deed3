// The report page and the sweep index in a real Chromium, served over http://127.0.0.1 from
// the files the backtester wrote: no console errors, the charts draw (canvases of non-zero
// size), hovering moves the legend's values, the heatmap links to run pages that exist and
// open, and clicking a table header re-sorts the runs; a quote line stops where the quote does
// (no stale level drawn through a pause, read from the canvas's pixels), the markout chart and the
// sortable fills table, and no part of the page wider than the window. Screenshots go to out/backtest/.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { extname, join, normalize } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { renderHtml } from "../../sim/backtest/html.ts"
import { chartData, type QuoteChart } from "../../sim/backtest/report-html/data.ts"
import type { BacktestReport } from "../../sim/backtest/report.ts"
import { commandOf, settingsOf } from "../../sim/backtest/reproduce.ts"
import { combinations, parseSweep } from "../../sim/backtest/params.ts"
import { renderSweepIndex } from "../../sim/backtest/report-html/sweep-index.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import type { BacktestConfig } from "../../sim/backtest/config.ts"
import { paramsToJson } from "../../src/lp/strategy-spec.ts"
import { runHref, runSweep, sweepTable } from "../../sim/backtest/sweep.ts"
import { launchChromium } from "../web/harness.ts"
import { CHART_CONFIG, chartDataset } from "./report-fixture.ts"

// The DOM shapes read in the page (the tests compile without the DOM library).
interface Canvas { readonly width: number; readonly height: number }
interface Row { readonly cells: ReadonlyArray<{ readonly textContent: string | null; getAttribute(name: string): string | null }> }

const SHOTS = join(process.cwd(), "out", "backtest")
const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8" }

let dir: string
let server: Server
let base: string
let browser: Browser
let fills: number
let report: BacktestReport

/** A static file server for `dir` on loopback (GET only, no directory listings). */
const serve = (root: string): Promise<Server> =>
  new Promise((resolve) => {
    const s = createServer((req, res) => {
      const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)))
      if (!path.startsWith(root)) return void res.writeHead(403).end()
      try {
        const body = readFileSync(path)
        res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" }).end(body)
      } catch {
        res.writeHead(404).end()
      }
    })
    s.listen(0, "127.0.0.1", () => resolve(s))
  })

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "backtest-pages-"))
  const d = chartDataset()
  report = runBacktest(d, CHART_CONFIG).report
  fills = report.summary.fills
  // The Reproduce section as a run with a --params file has it: the spec's JSON, one unbroken
  // string, once widened the settings table to 2,619 px.
  const params = report.markets[0]!.params
  const config: BacktestConfig = { ...CHART_CONFIG, strategy: { kind: "spec", spec: paramsToJson(params, CHART_CONFIG.capitalMicro), params } }
  const reproduce = {
    command: commandOf(["--data", "/data/tape", "--params", "strategy.json"]),
    inputs: [{ path: "/data/tape/trades.csv", bytes: 123_456_789, sha256: "ab".repeat(32) }],
    settings: settingsOf(config, params)
  }
  writeFileSync(join(dir, "report.html"), renderHtml(report, "twinbook backtest: generated two days", reproduce))
  // A 2×2 sweep on a smaller tape, each run writing its page as the CLI has it do.
  const small = chartDataset(6_000)
  const axes = [parseSweep("spread=100,300"), parseSweep("levels=1,3")]
  const sweepDir = join(dir, "sweep")
  mkdirSync(sweepDir)
  const rows = await runSweep(small, CHART_CONFIG, combinations(axes), 2, undefined, { outDir: sweepDir, argv: ["--synthetic", "6000"], inputs: [] })
  const table = sweepTable(rows)
  const runs = rows.map((r, i) => ({ values: r.values, row: table[i]!, href: runHref(i, rows.length, r.values) }))
  writeFileSync(join(sweepDir, "sweep.html"), renderSweepIndex({ axes, runs, figure: "pnl_micro", note: "4 runs (test)" }))
  server = await serve(dir)
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await new Promise((r) => server?.close(r))
  rmSync(dir, { recursive: true, force: true })
})

/** A page that records console errors and uncaught exceptions. */
const open = async (url: string): Promise<{ page: Page; errors: string[] }> => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const errors: string[] = []
  page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())))
  page.on("pageerror", (e) => void errors.push(e.message))
  await page.goto(url)
  return { page, errors }
}

const legendOf = (page: Page, id: string): Promise<string> => page.locator(`#${id} .legend`).innerText()

describe("report page in Chromium", () => {
  it("draws every chart, and hovering moves the legend's values", async () => {
    const { page, errors } = await open(`${base}/report.html`)
    await page.waitForSelector("body[data-charts=ready]", { timeout: 30_000 })
    // equity, drawdown, inventory, one quotes chart per market, daily PnL
    const ids = await page.locator("#charts section.chart").evaluateAll((els) => els.map((e) => e.id))
    expect(ids).toEqual(["chart-equity", "chart-drawdown", "chart-inventory", "chart-quotes-0", "chart-quotes-1", "chart-quotes-2", "chart-quotes-3", "chart-daily"])
    // The charts size themselves to their boxes (ResizeObserver) and draw on the next frames.
    await page
      .waitForFunction('[...document.querySelectorAll("#charts section.chart")].every((s) => [...s.querySelectorAll("canvas")].some((c) => c.width > 300 && c.height > 150))', null, { timeout: 15_000 })
      .catch(() => {})
    for (const id of ids) {
      const sizes = await page.locator(`#${id} canvas`).evaluateAll((cs) => cs.map((c) => [(c as unknown as Canvas).width, (c as unknown as Canvas).height]))
      expect(sizes.length, id).toBeGreaterThan(0)
      expect(sizes.some(([w, h]) => w! > 300 && h! > 150), id).toBe(true)
    }
    // The legend shows the last values until the cursor moves over the plot.
    const plot = page.locator("#chart-equity .plot")
    await plot.scrollIntoViewIfNeeded()
    const box = (await plot.boundingBox())!
    const idle = await legendOf(page, "chart-equity")
    expect(idle).toMatch(/equity [\d,]+\.\d\d/)
    await plot.hover({ position: { x: box.width * 0.25, y: box.height / 2 } })
    const early = await legendOf(page, "chart-equity")
    await plot.hover({ position: { x: box.width * 0.6, y: box.height / 2 } })
    const later = await legendOf(page, "chart-equity")
    expect(early).not.toBe(idle)
    expect(later).not.toBe(early)
    expect(early).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC/)
    // The quotes chart lists the fills it marks: the page counts every one of the run's fills.
    const notes = await page.locator("#charts section.chart p.small").allInnerTexts()
    const marked = notes.map((t) => /our fills \((\d+)\)/.exec(t)).filter((m) => m !== null).reduce((s, m) => s + Number(m[1]), 0)
    expect(marked).toBe(fills)
    await page.mouse.move(0, 0)
    await page.screenshot({ path: join(SHOTS, "report.png"), fullPage: true })
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})

/** The longest run of samples [from, to] where a quotes chart's ask is null between two quoted samples. */
const longestAskGap = (quotes: ReadonlyArray<QuoteChart>): { k: number; from: number; to: number } => {
  let best = { k: -1, from: 0, to: -1 }
  quotes.forEach((q, k) => {
    for (let i = 1; i < q.ask.length; i++) {
      if (q.ask[i] !== null || q.ask[i - 1] === null) continue
      let j = i
      while (j < q.ask.length && q.ask[j] === null) j++
      if (j < q.ask.length && j - i > best.to - best.from + 1) best = { k, from: i, to: j - 1 }
    }
  })
  return best
}

describe("report page details in Chromium", () => {
  it("draws no ask line through a gap in our ask: the line stops where the quote does", async () => {
    const q = chartData(report).quotes
    const gap = longestAskGap(q)
    expect(gap.k, "the fixture has a pause with our ask withdrawn").toBeGreaterThanOrEqual(0)
    expect(gap.to - gap.from + 1).toBeGreaterThanOrEqual(4)
    const t = q[gap.k]!.t
    const { page, errors } = await open(`${base}/report.html`)
    await page.waitForSelector("body[data-charts=ready]", { timeout: 30_000 })
    const id = `chart-quotes-${gap.k}`
    await page.locator(`#${id}`).scrollIntoViewIfNeeded()
    // Zoomed to the gap's start (three samples either side); then, along the row of the last ask
    // before it, which columns hold the ask's red: the sample before the gap (the control) and the
    // gap's first three samples.
    const probe = await page.evaluate(
      async ({ id, lastAsk, before, before1, start, inside, after }) => {
        const c = (globalThis as any).TwinbookReport.charts[id]
        c.chart.timeScale().setVisibleRange({ from: before, to: after })
        const raf = (globalThis as any).requestAnimationFrame
        await new Promise((r) => raf(() => raf(r)))
        const canvases = [...(globalThis as any).document.querySelectorAll(`#${id} .plot canvas`)]
        const pane = canvases.reduce((a: any, b: any) => (b.width * b.height > a.width * a.height ? b : a))
        const ratio = pane.width / pane.getBoundingClientRect().width
        const img = pane.getContext("2d").getImageData(0, 0, pane.width, pane.height)
        const y = Math.round(c.ask.priceToCoordinate(lastAsk) * ratio)
        const red = (x: number): boolean => {
          for (let dy = -2; dy <= 2; dy++) {
            const o = ((y + dy) * img.width + x) * 4
            if (Math.abs(img.data[o] - 214) < 25 && img.data[o + 1] < 80 && img.data[o + 2] < 80) return true
          }
          return false
        }
        const count = (fromT: number, toT: number): { columns: number; red: number } => {
          const x0 = Math.ceil(c.chart.timeScale().timeToCoordinate(fromT) * ratio) + 3
          const x1 = Math.floor(c.chart.timeScale().timeToCoordinate(toT) * ratio) - 3
          let n = 0
          for (let x = x0; x <= x1; x++) if (red(x)) n++
          return { columns: Math.max(0, x1 - x0 + 1), red: n }
        }
        return { control: count(before1, start), inside: count(start, inside) }
      },
      { id, lastAsk: q[gap.k]!.ask[gap.from - 1]!, before: t[gap.from - 3]!, before1: t[gap.from - 1]!, start: t[gap.from]!, inside: t[gap.from + 3]!, after: t[gap.from + 3]! }
    )
    // The control: the ask's last level is drawn up to the gap, so the probe sees the line.
    expect(probe.control.columns).toBeGreaterThan(10)
    expect(probe.control.red).toBeGreaterThan(probe.control.columns * 0.8)
    // Inside the gap: nothing on that row (a stale line would fill every column).
    expect(probe.inside.columns).toBeGreaterThan(30)
    expect(probe.inside.red).toBe(0)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("shows the markout chart by side, and a fills table that sorts and pages", async () => {
    const { page, errors } = await open(`${base}/report.html`)
    await page.waitForSelector("body[data-fills=ready]", { timeout: 30_000 })
    // Six bars: 1, 10, 60 s × bought / sold YES, each the report's own figure; adverse ones below zero.
    const bars = await page.locator("svg.markouts rect.bar").evaluateAll((rs) =>
      rs.map((r) => ({ side: r.getAttribute("data-side"), h: Number(r.getAttribute("data-horizon")), bps: Number(r.getAttribute("data-bps")), y: Number(r.getAttribute("y")), height: Number(r.getAttribute("height")) }))
    )
    const expected = report.stats.markouts_by_side.filter((m) => m.mean_bps !== null)
    const key = (x: [unknown, number, number]): string => `${x[0]} ${x[1]}`
    expect(bars.map((b): [unknown, number, number] => [b.side, b.h, b.bps]).sort((a, b) => key(a).localeCompare(key(b))))
      .toEqual(expected.map((m): [unknown, number, number] => [m.side, m.horizon_sec, m.mean_bps!]).sort((a, b) => key(a).localeCompare(key(b))))
    expect(bars.length).toBe(6)
    // Bars hang from one zero line: a negative bar starts there and goes down, a positive one ends there.
    const zeroY = bars.map((b) => (b.bps < 0 ? b.y : b.y + b.height))
    expect(new Set(zeroY.map((y) => y.toFixed(3))).size).toBe(1)
    // The table: 100 rows, then 200; the run's fill count said; a header click sorts by 60 s markout.
    const rows = page.locator("#fills-table tbody tr")
    expect(await rows.count()).toBe(100)
    expect(await page.locator("#fills p").first().innerText()).toContain(`of ${fills.toLocaleString("en-US")} fills`)
    await page.getByRole("button", { name: /^Show 100 more$/ }).click()
    expect(await rows.count()).toBe(200)
    const col = 9 // time, market, side, price, contracts, cause, rebate, 1 s, 10 s, 60 s
    const values = (): Promise<Array<number | null>> =>
      rows.evaluateAll((trs, c) => trs.map((tr) => { const v = (tr as any).cells[c].textContent; return v === "n/a" ? null : Number(v) }), col)
    const header = page.locator("#fills-table thead th").nth(col)
    expect(await header.innerText()).toMatch(/markout 60 s/)
    await header.getByRole("button").click()
    const up = (await values()).filter((v): v is number => v !== null)
    expect(up.length).toBe(100)
    expect(up).toEqual([...up].sort((a, b) => a - b))
    expect(up[0]).toBe(Math.min(...report.fill_markouts_bps.map((m) => m[2]).filter((v): v is number => v !== null).map((v) => Number(v.toFixed(1)))))
    expect(await header.getAttribute("aria-sort")).toBe("ascending")
    await header.getByRole("button").click()
    const down = (await values()).filter((v): v is number => v !== null)
    expect(down).toEqual([...down].sort((a, b) => b - a))
    expect(await header.getAttribute("aria-sort")).toBe("descending")
    await page.locator("#fills").screenshot({ path: join(SHOTS, "report-fills.png") })
    // Nothing wider than the window: long settings and paths wrap.
    const widths = await page.evaluate(() => ({ page: (globalThis as any).document.documentElement.scrollWidth, window: (globalThis as any).innerWidth }))
    expect(widths.page).toBeLessThanOrEqual(widths.window)
    await page.locator("#markouts").scrollIntoViewIfNeeded()
    await page.screenshot({ path: join(SHOTS, "report-markouts.png") })
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})

describe("sweep index in Chromium", () => {
  it("links each heatmap cell to a run page that opens, and sorts the runs by a clicked header", async () => {
    const { page, errors } = await open(`${base}/sweep/sweep.html`)
    expect(await page.locator(".heat td.cell").count()).toBe(4)
    const runOrder = (): Promise<string[]> => page.locator("#runs tbody tr").evaluateAll((trs) => trs.map((tr) => (tr as unknown as Row).cells[0]!.textContent ?? ""))
    const pnls = (): Promise<number[]> =>
      page.locator("#runs tbody tr").evaluateAll((trs, col) => trs.map((tr) => Number((tr as unknown as Row).cells[col]!.getAttribute("data-v"))), 3)
    expect(await runOrder()).toEqual(["1", "2", "3", "4"])
    expect(await page.locator("#runs thead th").nth(3).innerText()).toMatch(/pnl_usdc/)
    await page.locator("#runs thead th").nth(3).click()
    const up = await pnls()
    expect(up).toEqual([...up].sort((a, b) => a - b))
    await page.locator("#runs thead th").nth(3).click()
    const down = await pnls()
    const downOrder = await runOrder()
    expect(down).toEqual([...up].reverse())
    await page.locator("#runs thead th").nth(3).click()
    expect(await runOrder()).toEqual([...downOrder].reverse())
    expect(await page.locator("#runs thead th").nth(3).getAttribute("aria-sort")).toBe("ascending")
    await page.screenshot({ path: join(SHOTS, "sweep.png"), fullPage: true })
    // A cell opens its run's own report, which draws.
    await page.locator(".heat td.cell a").first().click()
    await page.waitForSelector("body[data-charts=ready]", { timeout: 30_000 })
    expect(page.url()).toMatch(/\/sweep\/runs\/1_spread=100_levels=1\/report\.html$/)
    expect(await page.locator("h1").innerText()).toMatch(/sweep run 1 of 4 \(spread=100, levels=1\)/)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})
