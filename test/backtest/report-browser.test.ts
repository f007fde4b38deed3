// The report page and the sweep index in a real Chromium, served over http://127.0.0.1 from
// the files the backtester wrote: no console errors, the charts draw (canvases of non-zero
// size), hovering moves the legend's values, the heatmap links to run pages that exist and
// open, and clicking a table header re-sorts the runs. Screenshots go to out/backtest/.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { extname, join, normalize } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { renderHtml } from "../../sim/backtest/html.ts"
import { combinations, parseSweep } from "../../sim/backtest/params.ts"
import { renderSweepIndex } from "../../sim/backtest/report-html/sweep-index.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
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
  const { report } = runBacktest(d, CHART_CONFIG)
  fills = report.summary.fills
  writeFileSync(join(dir, "report.html"), renderHtml(report, "twinbook backtest: generated two days"))
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
