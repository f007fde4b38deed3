// The market-response model in a backtest (sim/backtest/response/flow.ts): response takers come
// only while our quote betters the tape's touch, hit it through the engine, are told apart in
// the report, follow the tape's future mid when informed, and the run stays deterministic.
// Version 2 (the edge form): they come exactly while our quote improves the edge against the
// tape's mid H later; version 1 files (the spread form) still apply as before.
import { describe, expect, it } from "vitest"
import type { StrategyParams } from "../../src/lp/strategy.ts"
import { type BacktestConfig, DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import { datasetFromRows, type LevelRow } from "../../sim/backtest/dataset.ts"
import { formatSummary } from "../../sim/backtest/report.ts"
import { renderHtml } from "../../sim/backtest/html.ts"
import { edgeRate, validateModel } from "../../sim/backtest/response/model.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"

const T0 = 1_767_225_600_000
const M = "m"
const HOURS = 2

const params = (spreadBps: number): StrategyParams => ({
  spreadBps, levelsPerSide: 1, levelStepBps: 100, contractsPerLevel: 10, rebalanceIntervalSec: 60,
  maxInventory: 100_000, skewLeanBps: 0, skewTolerancePct: 100, volWidenPct: 0, stopLossMicro: 0, takeProfitMicro: 0
})
const config = (spreadBps: number, response: BacktestConfig["response"]): BacktestConfig => ({
  ...DEFAULT_CONFIG,
  strategy: {
    kind: "spec",
    spec: { mode: "advanced", capital_micro_usdc: 1_000_000_000, spread_bps: spreadBps, levels_per_side: 1, contracts_per_level: 10, rebalance_interval_secs: 60, skew_tolerance_pct: 100, stop_loss_micro_usdc: 0, take_profit_micro_usdc: 0 },
    params: params(spreadBps)
  },
  overrides: params(spreadBps),
  entryLatency: { baseMs: 0, jitterMs: 0 },
  feedLatency: { baseMs: 0, jitterMs: 0 },
  response
})

// λ(2 ticks) − λ(4 ticks) = 0.02·(e^−1 − e^−2) ≈ 0.0047 takers/s a side: about 34 a side in two hours.
const model = (informedShare: number) =>
  validateModel("test-model", {
    format: "twinbook-response-model", version: 1, sources: [],
    arrival: { buy: { a_per_sec: 0.02, b_per_tick: 0.5 }, sell: { a_per_sec: 0.02, b_per_tick: 0.5 } },
    size: { quantiles: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
    information: { markouts: [], horizon_sec: 30, informed_share: informedShare }
  })

/** The tape's book: bid at mid − 200, ask at mid + 200 (a 400 bps touch, tick 100: no trades), a new mid every `stepSec`. */
const tape = (stepSec: number, midAt: (k: number) => number) => {
  const levels: LevelRow[] = []
  for (let k = 0; k < (HOURS * 3600) / stepSec; k++) {
    const mid = midAt(k)
    levels.push({ tsMs: T0 + k * stepSec * 1000, marketId: M, side: "bid", priceBps: mid - 200, size: 100 })
    levels.push({ tsMs: T0 + k * stepSec * 1000, marketId: M, side: "ask", priceBps: mid + 200, size: 100 })
  }
  return datasetFromRows("response", [], levels)
}
const flat = tape(600, () => 5000)

describe("response takers in a backtest", () => {
  it("a quote inside the tape's touch attracts them: fills told apart, deterministic run to run", () => {
    const a = runBacktest(flat, config(200, model(0.3))).report
    const b = runBacktest(flat, config(200, model(0.3))).report
    expect(a.summary.fills_from_response).toBeGreaterThan(20)
    expect(a.summary.fills_from_response).toBe(a.fills.filter((f) => f.cause === "response").length)
    expect(a.summary.response_filled_contracts).toBe(a.fills.filter((f) => f.cause === "response").reduce((s, f) => s + f.size, 0))
    expect(a.summary.response_takers).toBeGreaterThan(20)
    expect([a.summary.fills_from_trades, a.summary.fills_from_book_moves]).toEqual([0, 0])
    // Each response taker hit our quote, at our price, inside the tape's touch.
    expect(a.fills.every((f) => f.yesPriceBps % 100 === 0 && f.cause === "response")).toBe(true)
    expect(JSON.stringify({ s: b.summary, f: b.fills })).toBe(JSON.stringify({ s: a.summary, f: a.fills }))
    // Another seed draws other takers.
    const c = runBacktest(flat, { ...config(200, model(0.3)), seed: "2" }).report
    expect(JSON.stringify(c.fills)).not.toBe(JSON.stringify(a.fills))
  })

  it("a quote at or behind the tape's touch attracts none, and without a model there are none", () => {
    for (const spread of [400, 1000]) {
      const r = runBacktest(flat, config(spread, model(0.3))).report
      expect(r.summary.quoted_contracts, `spread ${spread}`).toBeGreaterThan(0)
      expect([r.summary.response_takers, r.summary.fills_from_response, r.fills.length], `spread ${spread}`).toEqual([0, 0, 0])
    }
    const none = runBacktest(flat, config(200, null)).report
    expect([none.summary.response_takers, none.summary.fills_from_response, none.fills.length]).toEqual([0, 0, 0])
    expect(none.response_model).toBeNull()
  })

  it("informed takers trade the way the tape's mid is about to move", () => {
    // The tape's mid rises 1 bps every 20 s (within every 30 s horizon): every informed taker buys (lifts our ask).
    const rising = tape(20, (k) => 4000 + k)
    const r = runBacktest(rising, config(200, model(1))).report
    const sold = (f: { side: string; outcome: string }): boolean => (f.side === "sell" && f.outcome === "yes") || (f.side === "buy" && f.outcome === "no")
    expect(r.summary.fills_from_response).toBeGreaterThan(10)
    expect(r.fills.every(sold)).toBe(true)
    expect(r.summary.response_informed_takers).toBe(r.summary.response_takers)
    // With no informed share both sides are hit.
    const noise = runBacktest(rising, config(200, model(0))).report
    expect(noise.fills.some(sold) && noise.fills.some((f) => !sold(f))).toBe(true)
    expect(noise.summary.response_informed_takers).toBe(0)
  })

  it("the report's first page shows the model's parameters and fit", () => {
    const r = runBacktest(flat, config(200, model(0.3))).report
    expect(r.response_model?.arrival.buy.a_per_sec).toBe(0.02)
    const text = formatSummary(r)
    expect(text).toMatch(/^RESPONSE {2}arrival: takers\/s at the touch = a·exp\(−b·spread ticks\): buy a 0\.02 /m)
    expect(text).toMatch(/^RESPONSE {2}information: .*applied: informed share 0\.30 at 30 s/m)
    expect(text).toContain(`${r.summary.fills_from_response} by response takers`)
    const html = renderHtml(r)
    expect(html.indexOf("<h2>Market-response model</h2>")).toBeGreaterThan(0)
    expect(html.indexOf("<h2>Market-response model</h2>")).toBeLessThan(html.indexOf("<h2>Charts</h2>"))
    expect(html).toContain(`${r.summary.response_takers} sent`)
  })
})

// The edge form: no takers at an edge ≤ 0 ticks, then 0.1/s more per tick (tick 100 bps here: no trades).
const H_SEC = 30
const edgeModel = () =>
  validateModel("edge-model", {
    format: "twinbook-response-model", version: 2,
    size: { quantiles: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
    edge: {
      horizon_sec: H_SEC,
      buy: { buckets: [{ at_ticks: -10, rate_per_sec: 0 }, { at_ticks: 0, rate_per_sec: 0 }, { at_ticks: 10, rate_per_sec: 1 }] },
      sell: { buckets: [{ at_ticks: -10, rate_per_sec: 0 }, { at_ticks: 0, rate_per_sec: 0 }, { at_ticks: 10, rate_per_sec: 1 }] }
    }
  })

/** The tape's mid: 5000, then 5400 from the 5th minute, back to 5000 from the 10th, and so on (the touch ±200 around it). */
const STEP_SEC = 300
const jumpMid = (k: number): number => (k % 2 === 0 ? 5000 : 5400)
const jumping = tape(STEP_SEC, jumpMid)
const midAt = (tMs: number): number => jumpMid(Math.max(0, Math.floor((tMs - T0) / (STEP_SEC * 1000))))

const weSold = (f: { side: string; outcome: string }): boolean => (f.side === "sell" && f.outcome === "yes") || (f.side === "buy" && f.outcome === "no")

/** Every response fill offered the taker an edge above 0 (where the model's rate starts) and above the tape's own touch: a buyer at our ask, a seller at our bid. */
const edgesOf = (r: ReturnType<typeof runBacktest>["report"]): Array<{ ours: number; book: number }> =>
  r.fills.filter((f) => f.cause === "response").map((f) => {
    const later = midAt(f.tMs + H_SEC * 1000)
    const now = midAt(f.tMs)
    return weSold(f) ? { ours: (later - f.yesPriceBps) / 100, book: (later - (now + 200)) / 100 } : { ours: (f.yesPriceBps - later) / 100, book: (now - 200 - later) / 100 }
  })

describe("response takers by edge (model version 2)", () => {
  it("come exactly while our quote improves the edge against the tape's mid H later, on the side it favours", () => {
    // Spread 200 quotes inside the touch; spread 400 at it, inside only while stale after a jump (the mid moved, our quote not yet).
    for (const spread of [200, 400]) {
      const r = runBacktest(jumping, config(spread, edgeModel())).report
      const response = r.fills.filter((f) => f.cause === "response")
      expect(response.length, `spread ${spread}`).toBeGreaterThan(5)
      expect(r.summary.fills_from_response).toBe(response.length)
      for (const [k, e] of edgesOf(r).entries()) {
        expect(e.ours, `spread ${spread}, fill at ${response[k]!.tMs - T0} ms`).toBeGreaterThan(Math.max(0, e.book))
      }
      // Both directions of jump were picked off: up (takers bought our ask) and down (they sold to our bid).
      expect(response.some(weSold) && response.some((f) => !weSold(f)), `spread ${spread}`).toBe(true)
      // Every response taker had a positive edge against our price: all count as informed.
      expect(r.summary.response_informed_takers).toBe(r.summary.response_takers)
    }
  })

  it("none while the edge does not improve: a flat tape, a quote too wide to offer an edge, or no model", () => {
    // On the flat tape our quote betters the book (the spread form sends takers there) but offers no edge.
    const flatRun = runBacktest(flat, config(200, edgeModel())).report
    expect(flatRun.summary.quoted_contracts).toBeGreaterThan(0)
    expect([flatRun.summary.response_takers, flatRun.summary.fills_from_response]).toEqual([0, 0])
    expect(runBacktest(flat, config(200, model(0))).report.summary.fills_from_response).toBeGreaterThan(0)
    // Quoting ±500 around the mid: even stale after a 400 bps jump, our price stays 100 bps on the wrong side of the mid to come.
    const wide = runBacktest(jumping, config(1000, edgeModel())).report
    expect(wide.summary.quoted_contracts).toBeGreaterThan(0)
    expect([wide.summary.response_takers, wide.summary.fills_from_response]).toEqual([0, 0])
    expect(runBacktest(jumping, config(200, null)).report.summary.fills_from_response).toBe(0)
  })

  it("the same seed gives the same takers; another seed others", () => {
    const a = runBacktest(jumping, config(200, edgeModel())).report
    const b = runBacktest(jumping, config(200, edgeModel())).report
    expect(a.summary.fills_from_response).toBeGreaterThan(0)
    expect(JSON.stringify({ s: b.summary, f: b.fills })).toBe(JSON.stringify({ s: a.summary, f: a.fills }))
    const c = runBacktest(jumping, { ...config(200, edgeModel()), seed: "2" }).report
    expect(JSON.stringify(c.fills)).not.toBe(JSON.stringify(a.fills))
  })

  it("the report's first page shows the edge form and its table", () => {
    const m = edgeModel()
    expect(edgeRate(m.edge!.buy, 3)).toBeCloseTo(0.3, 12)
    const r = runBacktest(jumping, config(200, m)).report
    const text = formatSummary(r)
    expect(text).toMatch(/^RESPONSE {2}arrival: takers\/s by edge e \(ticks\) = \(tape's mid 30 s later − ask\) for buyers/m)
    expect(text).toMatch(/^RESPONSE {2}information: .*not applied: the edge carries the information/m)
    expect(text).toMatch(/^RESPONSE {2}side +edge ticks +knot +exposure s +observed +fitted +fitted \/h/m)
    expect(text).toMatch(/^RESPONSE {2}buy +0 … 0 +10\.0 /m)
    const html = renderHtml(r)
    expect(html.indexOf("<h3>Arrival by edge: observed vs fitted takers per bucket</h3>")).toBeGreaterThan(html.indexOf("<h2>Market-response model</h2>"))
    expect(html.indexOf("<h3>Arrival by edge")).toBeLessThan(html.indexOf("<h2>Charts</h2>"))
  })
})

// Version 3: the same arrivals, sizes by the edge our price offers against the tape's mid `hLongSec` later (1 contract below 0 ticks, 3 from 0).
const sizedModel = (hLongSec: number | null) =>
  validateModel("sized-model", {
    format: "twinbook-response-model", version: 3,
    size: { quantiles: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
    edge: edgeModel().edge,
    size_by_edge: hLongSec === null ? null : { horizon_sec: hLongSec, buckets: [{ from_ticks: -100, quantiles: [1, 1] }, { from_ticks: 0, quantiles: [3, 3] }] }
  })

/** Each response fill's edge (ticks of 100 bps) against the tape's mid h later, from the tape itself. */
const longEdgesOf = (r: ReturnType<typeof runBacktest>["report"], hSec: number): number[] =>
  r.fills.filter((f) => f.cause === "response").map((f) => {
    const later = midAt(f.tMs + hSec * 1000)
    return weSold(f) ? (later - f.yesPriceBps) / 100 : (f.yesPriceBps - later) / 100
  })

describe("response takers' sizes by the longer-horizon edge (model version 3)", () => {
  it("take the size of the takers whose edge against the mid that far ahead was like ours", () => {
    // Right after a jump, 150 s ahead is mostly the same step (the mid went the taker's way: the
    // large takers' bucket), 300 s ahead the next step, back where it came from (the small ones').
    const sizes = { small: [] as number[], large: [] as number[] }
    for (const h of [150, 300]) {
      const r = runBacktest(jumping, config(200, sizedModel(h))).report
      const fills = r.fills.filter((f) => f.cause === "response")
      expect(fills.length, `${h} s`).toBeGreaterThan(5)
      longEdgesOf(r, h).forEach((e, k) => (e >= 0 ? sizes.large : sizes.small).push(fills[k]!.size))
      if (h === 150) expect(formatSummary(r)).toMatch(/^RESPONSE {2}sizes by edge: e \(ticks\) = \(tape's mid 150 s later − ask\) for buyers.*: below … 0: /m)
    }
    // The small bucket draws 1 contract; the large one 3 (less only where our quote had less left).
    expect(sizes.small.length).toBeGreaterThan(5)
    expect(sizes.small.every((x) => x === 1)).toBe(true)
    expect(sizes.large.length).toBeGreaterThan(5)
    expect(sizes.large.every((x) => x <= 3)).toBe(true)
    expect(sizes.large.filter((x) => x === 3).length).toBeGreaterThan(sizes.large.length / 2)
  })

  it("without sizes by edge, a version 3 model takes exactly the takers and sizes of version 2", () => {
    const v2 = runBacktest(jumping, config(200, edgeModel())).report
    const v3 = runBacktest(jumping, config(200, sizedModel(null))).report
    expect(v2.summary.fills_from_response).toBeGreaterThan(0)
    expect(JSON.stringify(v3.fills)).toBe(JSON.stringify(v2.fills))
  })
})
