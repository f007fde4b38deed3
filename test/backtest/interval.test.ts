// The backtest's interval for trading PnL and fills (sim/backtest/interval.ts, interval-run.ts;
// docs/backtesting.md "Intervals and coverage"): the circular block bootstrap against series whose
// sum has a known distribution, and the interval of a real backtest on a simulated world's tape:
// deterministic for a seed, around the run's own figures, made of the response model's draws
// when there is a model, and on the report's first page.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import type { BacktestConfig } from "../../sim/backtest/config.ts"
import type { Dataset } from "../../sim/backtest/dataset.ts"
import { renderHtml } from "../../sim/backtest/html.ts"
import { blockBootstrapTotals, centralRange, DEFAULT_INTERVAL, incrementsOf } from "../../sim/backtest/interval.ts"
import { runWithInterval } from "../../sim/backtest/interval-run.ts"
import { loadTape } from "../../sim/backtest/load.ts"
import { formatSummary } from "../../sim/backtest/report.ts"
import { drawResponseModel } from "../../sim/backtest/response/draw.ts"
import { type ResponseModel, validateModel } from "../../sim/backtest/response/model.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import { botBacktestConfig, LATENCY_MODELS } from "../../sim/fidelity/fidelity.ts"
import { realisedOf, userOfAgent } from "../../sim/fidelity/realised.ts"
import { Rng } from "../../sim/world/random.ts"
import { runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { writeRunTape } from "../../sim/scenario/tape.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { SCENARIO_DIR } from "../sim/support.ts"

const sd = (xs: ReadonlyArray<number>): number => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) * (b - m), 0) / (xs.length - 1))
}
const mean = (xs: ReadonlyArray<number>): number => xs.reduce((a, b) => a + b, 0) / xs.length

describe("the circular block bootstrap", () => {
  it("of independent normal increments: totals ≈ N(the series' sum, n·s²), so the 90% range is the sum ± 1.645·√n·s", () => {
    const g = new Rng("iid")
    const n = 2000
    const xs = Array.from({ length: n }, () => 3 + 2 * g.normal())
    const sum = xs.reduce((a, b) => a + b, 0)
    const scale = Math.sqrt(n) * sd(xs)
    const totals = blockBootstrapTotals(xs, 10, 8000, new Rng("boot"))
    // Each block is a uniform start, wrapping: every increment is equally likely, so the totals' mean is the sum.
    expect(Math.abs(mean(totals) - sum)).toBeLessThan(0.05 * scale)
    expect(sd(totals) / scale).toBeGreaterThan(0.85)
    expect(sd(totals) / scale).toBeLessThan(1.15)
    const [lo, hi] = centralRange(totals, 0.9)
    expect(Math.abs(lo - (sum - 1.645 * scale))).toBeLessThan(0.2 * scale)
    expect(Math.abs(hi - (sum + 1.645 * scale))).toBeLessThan(0.2 * scale)
  })

  it("has exactly the circular block bootstrap's variance: blocks/resample × the variance of the n wrapped block sums", () => {
    // Any series (here a trend with a burst): with n a multiple of the block, a resample is n/L independent uniform blocks.
    const g = new Rng("exact")
    const n = 600
    const L = 15
    const xs = Array.from({ length: n }, (_, i) => (i > 200 && i < 260 ? 40 : 0) + i / 100 + g.normal())
    const blockSums = Array.from({ length: n }, (_, s) => Array.from({ length: L }, (_, j) => xs[(s + j) % n]!).reduce((a, b) => a + b, 0))
    const exactVar = (n / L) * sd(blockSums) ** 2 * ((n - 1) / n)
    const totals = blockBootstrapTotals(xs, L, 8000, new Rng("boot"))
    expect(sd(totals) ** 2 / exactVar).toBeGreaterThan(0.94)
    expect(sd(totals) ** 2 / exactVar).toBeLessThan(1.06)
    expect(Math.abs(mean(totals) - xs.reduce((a, b) => a + b, 0))).toBeLessThan((4 * Math.sqrt(exactVar)) / Math.sqrt(8000))
  })

  it("of dependent increments (AR(1), φ = 0.8): blocks keep the dependence; one-sample blocks (a plain bootstrap) do not", () => {
    // The sum's variance is n·σ²/(1 − φ)² = 25·n for unit shocks: five times the sd a plain bootstrap sees.
    const g = new Rng("ar1")
    const n = 3000
    const xs: number[] = []
    let x = 0
    for (let i = 0; i < n; i++) xs.push((x = 0.8 * x + g.normal()))
    const truth = Math.sqrt(25 * n)
    const blocks = sd(blockBootstrapTotals(xs, 60, 3000, new Rng("boot")))
    const plain = sd(blockBootstrapTotals(xs, 1, 3000, new Rng("boot")))
    expect(blocks / truth).toBeGreaterThan(0.75)
    expect(blocks / truth).toBeLessThan(1.25)
    expect(plain / truth).toBeLessThan(0.45)
  })

  it("has no spread when nothing varies or one block is the whole series, and lays blocks end to end to the series' length", () => {
    expect(new Set(blockBootstrapTotals([5, 5, 5, 5, 5, 5, 5], 3, 200, new Rng("c")))).toEqual(new Set([35]))
    expect(new Set(blockBootstrapTotals([1, -4, 9, 2, 0], 5, 200, new Rng("c")))).toEqual(new Set([8]))
    expect(new Set(blockBootstrapTotals([1, -4, 9, 2, 0], 50, 200, new Rng("c")))).toEqual(new Set([8]))
    // Blocks of 2 over 5 increments: 2 + 2 + 1 of them a resample; the series [0, 0, 0, 0, 1] wrapped gives totals 0…3.
    const t = blockBootstrapTotals([0, 0, 0, 0, 1], 2, 4000, new Rng("c"))
    expect(Math.min(...t)).toBe(0)
    expect(Math.max(...t)).toBeLessThanOrEqual(3)
    expect(Math.abs(mean(t) - 1)).toBeLessThan(0.05)
    expect(blockBootstrapTotals([], 3, 4, new Rng("c"))).toEqual([0, 0, 0, 0])
  })

  it("takes the increments from the strategy's start, the first from zero", () => {
    const path = { fromSec: 100, tSec: [60, 100, 120, 180, 200], tradingPnlMicro: [0, 0, 7, 4, 10], fills: [0, 0, 1, 1, 3] }
    expect(incrementsOf(path, path.tradingPnlMicro)).toEqual([7, -3, 6])
    expect(incrementsOf(path, path.fills)).toEqual([1, 0, 2])
  })

  it("ranges are the level's central quantiles, rounded outward", () => {
    const xs = Array.from({ length: 101 }, (_, i) => i) // quantiles at 5% and 95% are 5 and 95
    expect(centralRange(xs, 0.9)).toEqual([5, 95])
    expect(centralRange([0, 1], 0.9)).toEqual([0, 1]) // 0.05 and 0.95 → floor 0, ceil 1
    expect(centralRange([...xs].reverse(), 0.5)).toEqual([25, 75])
  })
})

describe("a response model's parameters drawn from their standard errors", () => {
  const model = (extra: Record<string, unknown> = {}): ResponseModel => ({
    ...validateModel("m", {
      format: "twinbook-response-model", version: 1, sources: [],
      arrival: { buy: { a_per_sec: 0.02, b_per_tick: 0.5, a_se: 0.002, b_se: 0.05 }, sell: { a_per_sec: 0.03, b_per_tick: 0.4, a_se: 0.003, b_se: 0 } },
      size: { quantiles: [1, 2, 3] },
      information: { markouts: [{ horizon_sec: 30, n: 100, mean_bps: 10, se_bps: 1, per_contract_bps: 10, informed_share: 0.3, informed_share_se: 0.05 }], horizon_sec: 30, informed_share: 0.3 }
    }),
    ...extra
  })

  it("draws each parameter with a stated error around its value, keeps the rest, and is the same for the same stream", () => {
    const m = model()
    const draws = Array.from({ length: 2000 }, (_, i) => drawResponseModel(m, new Rng("draw", String(i))))
    const a = draws.map((d) => d.arrival.buy.a_per_sec)
    const b = draws.map((d) => d.arrival.buy.b_per_tick)
    const pi = draws.map((d) => d.information.informed_share)
    expect(Math.abs(mean(a) - 0.02)).toBeLessThan(0.0003)
    expect(Math.abs(sd(a) - 0.002)).toBeLessThan(0.0002)
    expect(a.every((x) => x > 0)).toBe(true)
    expect(Math.abs(mean(b) - 0.5)).toBeLessThan(0.005)
    expect(Math.abs(sd(b) - 0.05)).toBeLessThan(0.005)
    expect(Math.abs(sd(pi) - 0.05)).toBeLessThan(0.005)
    // No error stated (sell b_se 0), or nothing to draw (sizes, horizon): unchanged.
    expect(new Set(draws.map((d) => d.arrival.sell.b_per_tick))).toEqual(new Set([0.4]))
    expect(draws.every((d) => d.size.quantiles.join() === "1,2,3" && d.information.horizon_sec === 30)).toBe(true)
    expect(m.arrival.buy.a_per_sec).toBe(0.02) // the input is not changed
    expect(drawResponseModel(m, new Rng("x"))).toEqual(drawResponseModel(m, new Rng("x")))
  })

  it("keeps an informed share in 0..1", () => {
    const m = model()
    const wide = { ...m, information: { ...m.information, informed_share: 0.95, markouts: [{ ...m.information.markouts[0]!, informed_share_se: 0.5 }] } }
    const pi = Array.from({ length: 500 }, (_, i) => drawResponseModel(wide, new Rng("pi", String(i))).information.informed_share)
    expect(pi.every((x) => x >= 0 && x <= 1)).toBe(true)
    expect(pi.some((x) => x === 1) && pi.some((x) => x < 0.95)).toBe(true)
  })

  it("is tolerant of fields it does not know: a new part with its own errors is drawn, anything else is copied", () => {
    const m = model({ edge: { form: "future mid vs quote", c_per_bps: 0.1, c_se: 0.01, knots: [1, 2, 3], note: { text: "kept" } } })
    const d = drawResponseModel(m, new Rng("edge")) as ResponseModel & { edge: { form: string; c_per_bps: number; c_se: number; knots: number[]; note: { text: string } } }
    expect(d.edge.form).toBe("future mid vs quote")
    expect(d.edge.c_per_bps).not.toBe(0.1)
    expect(Math.abs(d.edge.c_per_bps - 0.1)).toBeLessThan(0.06)
    expect([d.edge.c_se, d.edge.knots, d.edge.note]).toEqual([0.01, [1, 2, 3], { text: "kept" }])
  })
})

describe("the interval of a backtest on a simulated world's tape", () => {
  const SEED = 3
  const AGENT = "lp_bot-0-0"
  let data: Dataset
  let config: BacktestConfig

  beforeAll(async () => {
    // Two hours of liquidity-midnight; the bot backtested on the live tape without it (every other order as it arrived).
    const scenario = loadScenario(join(SCENARIO_DIR, "liquidity-midnight.json"))
    const summary = await runScenario(scenario, { seed: SEED, durationSec: 2 * 3600, expectations: false })
    const user = userOfAgent(SEED, AGENT)
    const [realised] = realisedOf(summary.records as ReadonlyArray<JournalRecord>, [{ agent: AGENT, user }])
    const dir = mkdtempSync(join(tmpdir(), "interval-"))
    try {
      await writeRunTape(summary, { dir, intervalSec: 0, format: "parquet" }, [], [user])
      const tape = await loadTape(dir, null, "flow")
      data = tape.dataset
      config = botBacktestConfig(SEED, realised!, tape.meta, "flow", LATENCY_MODELS.find((l) => l.name === "tick")!)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)

  it("is the same for a seed, stands around the run's own trading PnL and fills, and differs for another seed", () => {
    const a = runWithInterval(data, config, DEFAULT_INTERVAL).report
    const b = runWithInterval(data, config, DEFAULT_INTERVAL).report
    const x = a.interval!
    expect(b.interval).toEqual(x)
    // The point is the run's own: its trading PnL and fills in the quoted markets, as the fidelity comparison takes them.
    const ours = a.markets.filter((m) => config.quoteMarkets!.includes(m.market_id))
    expect(x.point).toEqual({ trading_pnl_micro: ours.reduce((s, m) => s + m.pnl_micro - m.maker_rebates_micro, 0), fills: a.summary.fills })
    expect(x.point.trading_pnl_micro).toBe(a.summary.trading_pnl_micro)
    expect(a.summary.fills).toBeGreaterThan(20)
    expect(x.trading_pnl_micro[0]).toBeLessThan(x.point.trading_pnl_micro)
    expect(x.trading_pnl_micro[1]).toBeGreaterThan(x.point.trading_pnl_micro)
    expect(x.fills[0]).toBeLessThan(x.point.fills)
    expect(x.fills[1]).toBeGreaterThan(x.point.fills)
    expect(Number.isInteger(x.fills[0]) && Number.isInteger(x.fills[1]) && Number.isInteger(x.trading_pnl_micro[0])).toBe(true)
    // About two hours from the bot's start, one increment a minute, in 10-minute blocks; no response model, no draws.
    expect(x.increments).toBeGreaterThan(100)
    expect(x.increments).toBeLessThanOrEqual(120)
    expect(x.blocks).toBe(Math.ceil(x.increments / 10))
    expect([x.level, x.draws, x.resamples, x.block_sec, x.sample_sec]).toEqual([0.9, 0, 1000, 600, 60])
    // The bootstrap changes nothing of the run itself.
    expect(a.summary).toEqual(runBacktest(data, config).report.summary)
    const other = runWithInterval(data, { ...config, seed: "another" }, DEFAULT_INTERVAL).report.interval!
    expect(other.point).toEqual(x.point) // this bot's run draws nothing from the seed…
    expect([other.trading_pnl_micro, other.fills]).not.toEqual([x.trading_pnl_micro, x.fills]) // …the bootstrap does
  })

  it("narrows to the run's own figures as the block grows to the whole run, and widens with a higher level", () => {
    const whole = runWithInterval(data, config, { ...DEFAULT_INTERVAL, blockSec: 4 * 3600 }).report.interval!
    expect(whole.trading_pnl_micro).toEqual([whole.point.trading_pnl_micro, whole.point.trading_pnl_micro])
    expect(whole.fills).toEqual([whole.point.fills, whole.point.fills])
    const at90 = runWithInterval(data, config, DEFAULT_INTERVAL).report.interval!
    const at50 = runWithInterval(data, config, { ...DEFAULT_INTERVAL, level: 0.5 }).report.interval!
    expect(at50.trading_pnl_micro[0]).toBeGreaterThan(at90.trading_pnl_micro[0])
    expect(at50.trading_pnl_micro[1]).toBeLessThan(at90.trading_pnl_micro[1])
  })

  it("with a response model: R runs with drawn parameters and their own arrival streams, each bootstrapped, pooled", () => {
    const model = validateModel("m", {
      format: "twinbook-response-model", version: 1, sources: [],
      // This tape's tick is 1 bps (the gcd of its prices), its touch some 100–200 ticks wide.
      arrival: { buy: { a_per_sec: 0.05, b_per_tick: 0.005, a_se: 0.01, b_se: 0.002 }, sell: { a_per_sec: 0.05, b_per_tick: 0.005, a_se: 0.01, b_se: 0.002 } },
      size: { quantiles: [1, 5, 10, 20] },
      information: { markouts: [{ horizon_sec: 30, n: 100, mean_bps: 10, se_bps: 1, per_contract_bps: 10, informed_share: 0.3, informed_share_se: 0.05 }], horizon_sec: 30, informed_share: 0.3 }
    })
    // A tight spread, so the bot's quote often stands alone inside the tape's touch, where response takers come.
    const withModel = { ...config, overrides: { spreadBps: 100 }, response: model }
    const spec = { ...DEFAULT_INTERVAL, draws: 4, resamples: 300 }
    const r = runWithInterval(data, withModel, spec).report
    const x = r.interval!
    expect(r.summary.fills_from_response).toBeGreaterThan(0)
    expect([x.draws, x.resamples]).toEqual([4, 300])
    expect(x.method).toContain("4 market-response model draws")
    expect(runWithInterval(data, withModel, spec).report.interval).toEqual(x)
    // Each draw is its own run: the draws' own outcomes differ from the run's and from each other.
    const drawn = [1, 2].map((i) => runBacktest(data, { ...withModel, response: drawResponseModel(model, new Rng(withModel.seed, `interval/model/${i}`)), responseDraw: i }).report.summary)
    expect(new Set([r.summary, ...drawn].map((s) => `${s.fills_from_response}/${s.trading_pnl_micro}`)).size).toBe(3)
    // Without draws, the same model's interval is the run's own bootstrap.
    const own = runWithInterval(data, withModel, { ...spec, draws: 0 }).report.interval!
    expect(own.draws).toBe(0)
    expect(own).not.toEqual(x)
  })

  it("is on the report's first page: console summary and HTML, before the charts", () => {
    const r = runWithInterval(data, config, DEFAULT_INTERVAL).report
    const usdc = (m: number): string => (m / 1e6).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })
    const x = r.interval!
    const line = `trading PnL ${usdc(x.trading_pnl_micro[0])} … ${usdc(x.trading_pnl_micro[1])} USDC (run ${usdc(x.point.trading_pnl_micro)}), fills ${x.fills[0]} … ${x.fills[1]}`
    const text = formatSummary(r)
    expect(text).toMatch(/^90% interval {2,}trading PnL /m)
    expect(text).toContain(line)
    expect(text).toMatch(/^ {2}made by +90% central range of 1,000 totals: a circular block bootstrap of the run's \d+ per-60-s increments from the strategy's start, \d+ blocks of 600 s a resample, 1,000 resamples$/m)
    const html = renderHtml(r)
    expect(html.indexOf(line)).toBeGreaterThan(0)
    expect(html.indexOf(line)).toBeLessThan(html.indexOf("<h2>Charts</h2>"))
    expect(html).toContain("circular block bootstrap")
    // A run made without an interval (a sweep's) says nothing of one.
    expect(formatSummary(runBacktest(data, config).report)).not.toMatch(/% interval|made by/)
  })
})
