// Makers that follow the book (sim/backtest/follow.ts, response/follow-fit.ts): which owners of a
// tape re-quote, how far a follower's order moves, the slope fitted from tapes alone, and the
// replay: with a version 4 model a re-quoting maker's orders move with the book our quotes change,
// without one (or in a replay of the live tape, which has none) they stay where the tape put them.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { parseArgs } from "../../sim/backtest/args.ts"
import type { StrategyParams } from "../../src/lp/strategy.ts"
import { type BacktestConfig, DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import { datasetFromRows, type OrderRow } from "../../sim/backtest/dataset.ts"
import { FOLLOWER_MIN_ORDERS, followedPrice, followersOf } from "../../sim/backtest/follow.ts"
import { fitFollow } from "../../sim/backtest/response/follow-fit.ts"
import { validateModel } from "../../sim/backtest/response/model.ts"
import { formatSummary } from "../../sim/backtest/report.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"

const T0 = 1_736_899_200_000
const M = "m"
const order = (tMs: number, orderId: number, event: "new" | "add" | "cancel", side: "bid" | "ask", priceBps: number, size: number, owner: string, orderType: "gtc" | "post_only" | "ioc" = "post_only"): OrderRow =>
  ({ tsMs: T0 + tMs, marketId: M, orderId, event, side, priceBps, size, owner, orderType })

/** `owner` re-quotes a bid and an ask every second for `n` seconds from `fromMs`, each centred where `centre(k)` says (half-spread 100): cancel, arrive, rest. */
const requotes = (owner: string, firstId: number, n: number, centre: (k: number) => number, fromMs = 0): OrderRow[] => {
  const rows: OrderRow[] = []
  for (let k = 0; k < n; k++) {
    const t = fromMs + k * 1000
    const id = firstId + 2 * k
    if (k > 0) rows.push(order(t, id - 2, "cancel", "bid", centre(k - 1) - 100, 5, owner), order(t, id - 1, "cancel", "ask", centre(k - 1) + 100, 5, owner))
    rows.push(order(t, id, "new", "bid", centre(k) - 100, 5, owner), order(t, id, "add", "bid", centre(k) - 100, 5, owner))
    rows.push(order(t, id + 1, "new", "ask", centre(k) + 100, 5, owner), order(t, id + 1, "add", "ask", centre(k) + 100, 5, owner))
  }
  return rows
}

describe("who follows the book: owners that re-quote resting limit orders", () => {
  it("a maker with enough resting orders follows; a taker, a maker with too few orders, or one whose orders mostly trade at once does not", () => {
    const takerIocs = Array.from({ length: 80 }, (_, k) => order(k * 1000 + 500, 10_000 + k, "new", "bid", 9000, 1, "taker", "ioc"))
    // A gtc trader whose limit orders cross and never rest (no add row).
    const crosser = Array.from({ length: 80 }, (_, k) => order(k * 1000 + 600, 20_000 + k, "new", "ask", 100, 1, "crosser", "gtc"))
    const rows = [...requotes("maker", 1, 40, () => 5000), ...requotes("few", 1001, 20, () => 5000), ...takerIocs, ...crosser].sort((a, b) => a.tsMs - b.tsMs)
    const d = datasetFromRows("who", [], [], rows)
    const f = followersOf(d)
    const is = (name: string): number => f[d.owners.indexOf(name)]!
    expect(FOLLOWER_MIN_ORDERS).toBe(50)
    // 80 orders, all resting; 40, too few; 80 IOCs; 80 limit orders none of which rested.
    expect([is("maker"), is("few"), is("taker"), is("crosser")]).toEqual([1, 0, 0, 0])
  })
})

describe("where a follower's order goes", () => {
  it("moves by slope × the difference of the mids, whole ticks, inside the price range; not without both mids", () => {
    // Mids as twice the mid: here 9900 (4950), tape 10200 (5100): −150 bps.
    expect(followedPrice(5000, 1, 9900, 10_200, 1)).toBe(4850)
    expect(followedPrice(5000, 0.5, 9900, 10_200, 1)).toBe(4925)
    expect(followedPrice(5000, 1, 9900, 10_200, 100)).toBe(4900) // −1.5 ticks rounds to −1
    expect(followedPrice(5000, 1, 10_200, 10_200, 1)).toBe(5000)
    expect(followedPrice(5000, 1, -1, 10_200, 1)).toBe(5000)
    expect(followedPrice(5000, 1, 9900, -1, 1)).toBe(5000)
    expect(followedPrice(300, 1, 2000, 10_000, 100)).toBe(100)
    expect(followedPrice(9700, 1, 19_000, 10_000, 100)).toBe(9900)
  })
})

describe("fit: how far a maker's centre moves with the rest of the book, from tapes alone", () => {
  // "other" walks its centre 5000 → 5000 + 20·k (and back) in 24 re-quotes a second apart (48 orders: it is
  // no follower); the maker re-quotes 30 times, each half a second after "other" (then "other" stands still).
  const walk = (k: number): number => 5000 + 20 * (k % 10 < 5 ? k % 10 : 10 - (k % 10))
  const tape = (makerCentre: (k: number) => number) =>
    datasetFromRows("fit", [], [], [...requotes("other", 1, 24, walk), ...requotes("maker", 10_001, 30, (k) => makerCentre(Math.min(k, 23)), 500)].sort((a, b) => a.tsMs - b.tsMs))

  it("finds slope 1 for a maker centred on the others' mid, 0.5 for one that moves half as far, 0 for one that stays", () => {
    const full = fitFollow([tape((k) => walk(k) + 30)])!
    expect(full.slope).toBe(1)
    expect(full.slope_se).toBe(0)
    expect(full.r_squared).toBe(1)
    expect([full.makers, full.requotes, full.pairs]).toEqual([1, 30, 29])
    const half = fitFollow([tape((k) => 5000 + (walk(k) - 5000) / 2)])!
    expect(half.slope).toBe(0.5)
    expect(fitFollow([tape(() => 5000)])!.slope).toBe(0)
    // Two tapes pool: the slope lies between theirs.
    const both = fitFollow([tape((k) => walk(k) + 30), tape((k) => 5000 + (walk(k) - 5000) / 2)])!
    expect(both.slope).toBeGreaterThan(0.5)
    expect(both.slope).toBeLessThan(1)
    expect(both.pairs).toBe(58)
    // A maker alone never sees a rest of the book: nothing to fit.
    expect(fitFollow([datasetFromRows("alone", [], [], requotes("maker", 1, 120, walk))])).toBeNull()
  })
})

describe("--response: a version 4 file's follow is checked", () => {
  const good = {
    format: "twinbook-response-model", version: 4, size: { quantiles: [1, 2, 3] },
    edge: { horizon_sec: 15, buy: { buckets: [{ at_ticks: 0, rate_per_sec: 0 }] }, sell: { buckets: [{ at_ticks: 0, rate_per_sec: 0 }] } },
    size_by_edge: null, follow: { slope: 0.97 }
  }
  it("reads a slope in 0..2 or null; refuses anything else in one line", () => {
    expect(validateModel("good", good).follow?.slope).toBe(0.97)
    expect(validateModel("none", { ...good, follow: null }).follow).toBeNull()
    // A version 3 file has no follow, whatever it holds.
    expect(validateModel("v3", { ...good, version: 3 }).follow).toBeNull()
    expect(() => validateModel("bad", { ...good, follow: { slope: -0.1 } })).toThrow(/bad: follow.slope is not a number ≥ 0/)
    expect(() => validateModel("bad", { ...good, follow: { slope: 2.5 } })).toThrow(/bad: follow.slope must be in 0..2/)
    expect(() => validateModel("bad", { ...good, follow: "yes" })).toThrow(/bad: follow must be an object or null/)
  })
})

describe("--follow-makers: a version 4 model's makers follow the book only when asked", () => {
  it("--response alone leaves them; with --follow-makers they follow; --follow-makers without a fitted slope is refused in one line", () => {
    const dir = mkdtempSync(join(tmpdir(), "follow-args-"))
    try {
      const model = {
        format: "twinbook-response-model", version: 4, size: { quantiles: [1, 2, 3] },
        edge: { horizon_sec: 15, buy: { buckets: [{ at_ticks: 0, rate_per_sec: 0 }] }, sell: { buckets: [{ at_ticks: 0, rate_per_sec: 0 }] } },
        size_by_edge: null, follow: { slope: 0.97 }
      }
      const file = join(dir, "model.json")
      writeFileSync(file, JSON.stringify(model))
      const none = join(dir, "none.json")
      writeFileSync(none, JSON.stringify({ ...model, follow: null }))
      expect(parseArgs(["--response", file]).config.response!.follow).toBeNull()
      expect(parseArgs(["--response", file, "--follow-makers"]).config.response!.follow!.slope).toBe(0.97)
      expect(() => parseArgs(["--follow-makers"])).toThrow(/^--follow-makers: give --response with a version 4 model that fitted re-quoting makers/)
      expect(() => parseArgs(["--response", none, "--follow-makers"])).toThrow(/^--follow-makers: give --response/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("replaying the flow, a re-quoting maker's orders move with the book our quotes change", () => {
  // m2 bids 4900 and asks 5300 all along (two orders: no follower). m1 re-quotes 5000 / 5200 every
  // second for a minute (the tape's rest of the book for it: m2's, mid 5100). We quote one level
  // 100 either side of the others' mid, re-quoting every 5 s, and lean 200 bps away from a full
  // inventory of 10. At 2.5 s a taker sells 10 down to 5000: ours (ahead of m1's order, re-queued at
  // 2 s) fill, we are long 10, and from 6 s we quote 100 bps lower than the others' mid.
  const PARAMS: StrategyParams = {
    spreadBps: 200, levelsPerSide: 1, levelStepBps: 100, contractsPerLevel: 10, rebalanceIntervalSec: 5,
    maxInventory: 10, skewLeanBps: 200, skewTolerancePct: 100, volWidenPct: 0, stopLossMicro: 0, takeProfitMicro: 0
  }
  const SPEC = {
    mode: "advanced", capital_micro_usdc: 1_000_000_000, spread_bps: 200, levels_per_side: 1, contracts_per_level: 10,
    rebalance_interval_secs: 5, skew_tolerance_pct: 100, stop_loss_micro_usdc: 0, take_profit_micro_usdc: 0
  } as const
  const config = (follow: { slope: number } | null): BacktestConfig => ({
    ...DEFAULT_CONFIG, startSec: T0 / 1000 + 1,
    strategy: { kind: "spec", spec: SPEC, params: PARAMS },
    entryLatency: { baseMs: 0, jitterMs: 0 }, feedLatency: { baseMs: 0, jitterMs: 0 },
    response: validateModel("follow", {
      format: "twinbook-response-model", version: follow === null ? 3 : 4, size: { quantiles: [1, 1] },
      edge: { horizon_sec: 15, buy: { buckets: [{ at_ticks: 0, rate_per_sec: 0 }] }, sell: { buckets: [{ at_ticks: 0, rate_per_sec: 0 }] } },
      size_by_edge: null, follow
    })
  })
  const rows = [
    order(0, 1, "new", "bid", 4900, 50, "m2"), order(0, 1, "add", "bid", 4900, 50, "m2"),
    order(0, 2, "new", "ask", 5300, 50, "m2"), order(0, 2, "add", "ask", 5300, 50, "m2"),
    ...requotes("m1", 101, 60, () => 5100),
    order(2500, 9, "new", "ask", 5000, 10, "taker", "ioc")
  ].sort((a, b) => a.tsMs - b.tsMs)
  const run = (follow: { slope: number } | null) => {
    const mids: Array<[number, number | null]> = []
    const { report } = runBacktest(datasetFromRows("follow", [], [], rows), config(follow), { onStep: (_m, input, d) => { if (d.kind === "quote") mids.push([input.tsSec * 1000 - T0, input.midBps]) } })
    return { report, mids }
  }

  it("without the follow fit they stay: the others' mid stays 5100", () => {
    const { report, mids } = run(null)
    expect(report.fills.map((f) => [f.tMs - T0, f.yesPriceBps, f.size])).toEqual([[2500, 5000, 10]])
    expect(mids.slice(0, 4)).toEqual([[1000, 5100], [6000, 5100], [11_000, 5100], [16_000, 5100]])
    expect([report.summary.follower_orders, report.summary.follower_orders_moved]).toEqual([0, 0])
  })

  it("with it, m1 follows our leaning quotes down, and the summary counts its moved orders", () => {
    const { report, mids } = run({ slope: 1 })
    expect(report.fills.map((f) => [f.tMs - T0, f.yesPriceBps, f.size])).toEqual([[2500, 5000, 10]])
    // From 6 s we quote 4900 / 5100 (others' mid 5100, leaning 200 down); m1's next re-quote (7 s)
    // sees the rest of the book 4900 / 5100 (m2's bid, our ask): mid 5000 against the tape's 5100,
    // so it quotes 4900 / 5100 and the others' mid we see at 11 s is 5000.
    expect(mids.slice(0, 3)).toEqual([[1000, 5100], [6000, 5100], [11_000, 5000]])
    expect(report.summary.follower_orders).toBe(120)
    expect(report.summary.follower_orders_moved).toBeGreaterThan(0)
    expect(report.assumptions.some((a) => a.startsWith("makers follow the book: the tape's 1 re-quoting maker"))).toBe(true)
    // The report's first page shows the fit (here a hand-written slope).
    expect(formatSummary(report)).toMatch(/^RESPONSE {2}follow: makers re-quote centred on the rest of the book: a maker's centre moves 1\.000 ± 0\.000 × /m)
  })
})
