// Hand-built cases for the fill models: the two queue models on one book history, and
// order-entry and feed latency each delaying our first fill.
import { describe, expect, it } from "vitest"
import type { EngineEvent, FillEvent, OrderAcceptedEvent } from "../../src/engine/types.ts"
import type { StrategyParams } from "../../src/lp/strategy.ts"
import { type BacktestConfig, DEFAULT_CONFIG } from "../../sim/backtest/config.ts"
import { datasetFromRows, type LevelRow, type OrderRow, type TradeRow } from "../../sim/backtest/dataset.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"

const T0 = 1_736_899_200_000
const M = "m"

// One bid and one ask of 10 contracts at mid ± 100, never re-quoted within the test, no lean,
// no pause, no stops: the only thing that moves is the queue.
const PARAMS: StrategyParams = {
  spreadBps: 200, levelsPerSide: 1, levelStepBps: 100, contractsPerLevel: 10, rebalanceIntervalSec: 3600,
  maxInventory: 1_000, skewLeanBps: 0, skewTolerancePct: 100, volWidenPct: 0, stopLossMicro: 0, takeProfitMicro: 0
}
const SPEC = {
  mode: "advanced", capital_micro_usdc: 1_000_000_000, spread_bps: 200, levels_per_side: 1, contracts_per_level: 10,
  rebalance_interval_secs: 3600, skew_tolerance_pct: 100, stop_loss_micro_usdc: 0, take_profit_micro_usdc: 0
} as const
const BASE: BacktestConfig = {
  ...DEFAULT_CONFIG,
  strategy: { kind: "spec", spec: SPEC, params: PARAMS },
  entryLatency: { baseMs: 0, jitterMs: 0 },
  feedLatency: { baseMs: 0, jitterMs: 0 }
}

const book = (tMs: number, bid: number, ask = 100): LevelRow[] => [
  { tsMs: T0 + tMs, marketId: M, side: "bid", priceBps: 4900, size: bid },
  { tsMs: T0 + tMs, marketId: M, side: "ask", priceBps: 5100, size: ask }
]
const sell = (tMs: number, size: number): TradeRow => ({ tsMs: T0 + tMs, marketId: M, priceBps: 4900, size, takerSide: "sell" })
const firstFillMs = (fills: ReadonlyArray<{ tMs: number }>): number | null => (fills.length === 0 ? null : fills[0]!.tMs - T0)
/** An order-level row of market M, `tMs` after T0. */
const order = (tMs: number, orderId: number, event: "new" | "add" | "cancel", side: "bid" | "ask", priceBps: number, size: number, owner: string, orderType: "gtc" | "ioc" = "gtc"): OrderRow =>
  ({ tsMs: T0 + tMs, marketId: M, orderId, event, side, priceBps, size, owner, orderType })
/** Started 1 s in and re-quoting every 5 s: the mids it quotes around show what it saw. */
const REQUOTING: BacktestConfig = { ...BASE, startSec: T0 / 1000 + 1, strategy: { kind: "spec", spec: { ...SPEC, rebalance_interval_secs: 5 }, params: { ...PARAMS, rebalanceIntervalSec: 5 } } }
/** A REQUOTING run's report and the [ms after T0, mid] of each quoting step. */
const quotedMids = (trades: TradeRow[], levels: LevelRow[], orders: OrderRow[]) => {
  const mids: Array<[number, number | null]> = []
  const { report } = runBacktest(datasetFromRows("requoting", trades, levels, orders), REQUOTING, { onStep: (_m, input, d) => { if (d.kind === "quote") mids.push([input.tsSec * 1000 - T0, input.midBps]) } })
  return { report, mids }
}

describe("queue position models", () => {
  // Our bid joins behind 900 at 4900; 100 more join behind us; then 100 are cancelled.
  // Risk-averse: the cancel came from behind us (900 still ahead). Probabilistic (power 3):
  // ahead with probability 900³ / (900³ + 100³) ≈ 0.999. Then 850 and 100 trade at 4900.
  const data = datasetFromRows("queue", [sell(3000, 850), sell(4000, 100)], [...book(0, 900), ...book(1000, 1000), ...book(2000, 900)])

  it("risk-averse fills later than probabilistic on the same history", () => {
    const averse = runBacktest(data, { ...BASE, queueModel: "risk-averse" }).report
    const prob = runBacktest(data, { ...BASE, queueModel: "prob", queuePower: 3 }).report
    expect(firstFillMs(prob.fills)).toBe(3000)
    expect(firstFillMs(averse.fills)).toBe(4000)
    expect(prob.summary.queue_decreases_ahead).toBe(1)
    expect(averse.summary.queue_decreases_ahead).toBe(0)
    expect(averse.summary.queue_decreases_at_our_level).toBe(1)
    // Both fill the whole bid in the end, at our price.
    for (const r of [averse, prob]) {
      expect(r.summary.filled_contracts).toBe(10)
      expect(r.fills.every((f) => f.yesPriceBps === 4900 && f.side === "buy" && f.outcome === "yes")).toBe(true)
    }
  })

  it("a cancel with nobody behind us always comes from ahead, in both models", () => {
    // 900 ahead, nobody behind, 300 cancelled: both models must take them from ahead.
    const d = datasetFromRows("front", [sell(3000, 610)], [...book(0, 900), ...book(2000, 600)])
    for (const queueModel of ["risk-averse", "prob"] as const) {
      const r = runBacktest(d, { ...BASE, queueModel }).report
      expect(firstFillMs(r.fills)).toBe(3000)
      expect(r.summary.filled_contracts).toBe(10)
    }
  })
})

describe("order-level tape: the queue ahead of us is a record, not a model", () => {
  // The L2 history of the first test above (900 → 1000 → 900 at 4900), told order by order:
  // A (900) rests first, our bid joins behind it, B (100) joins behind us; then one of them
  // is cancelled. The snapshots cannot say which; the orders can.
  const order = (tMs: number, orderId: number, event: "add" | "cancel", side: "bid" | "ask", priceBps: number, size: number, owner: string): OrderRow =>
    ({ tsMs: T0 + tMs, marketId: M, orderId, event, side, priceBps, size, owner })
  const history = (cancelled: number): OrderRow[] => [
    order(0, 1, "add", "bid", 4900, 900, "m1"),
    order(0, 2, "add", "ask", 5100, 100, "m2"),
    order(1000, 3, "add", "bid", 4900, 100, "m3"),
    order(2000, cancelled, "cancel", "bid", 4900, cancelled === 1 ? 900 : 100, cancelled === 1 ? "m1" : "m3")
  ]
  const trades = [sell(3000, 850), sell(4000, 100)]
  const snapshots = [...book(0, 900), ...book(1000, 1000), ...book(2000, 900)]

  it("a cancel from ahead of us moves us up; one from behind does not; both queue models agree", () => {
    const ahead = datasetFromRows("ahead", trades, snapshots, history(1))
    const behind = datasetFromRows("behind", trades, snapshots, history(3))
    for (const queueModel of ["risk-averse", "prob"] as const) {
      const a = runBacktest(ahead, { ...BASE, queueModel }).report
      const b = runBacktest(behind, { ...BASE, queueModel }).report
      // A gone: we are first at 4900 and the 850 sell fills our 10 at once.
      expect(firstFillMs(a.fills)).toBe(3000)
      // B gone: A's 900 is still ahead; 850 leave 50 of it, and the 100 sell reaches us.
      expect(firstFillMs(b.fills)).toBe(4000)
      for (const r of [a, b]) {
        expect(r.summary.filled_contracts).toBe(10)
        expect(r.summary.queue_model).toBe("exact (order-level tape)")
        expect(r.summary.book).toBe("orders (L3)")
        expect(r.summary.queue_decreases_at_our_level).toBe(1)
      }
      expect(a.summary.queue_decreases_ahead).toBe(1)
      expect(b.summary.queue_decreases_ahead).toBe(0)
    }
  })

  it("the tape's owners keep separate wallets, and book snapshots are not applied on top of the orders", () => {
    const events: EngineEvent[] = []
    const r = runBacktest(datasetFromRows("owners", trades, snapshots, history(1)), BASE, { tap: (out) => void events.push(...out) })
    const placedBy = events.filter((e): e is OrderAcceptedEvent => e.type === "order_accepted" && e.user.startsWith("bg")).map((e) => e.user)
    expect(placedBy).toEqual(["bg0", "bg1", "bg2"]) // m1, m2, m3
    // The 850 sell meets our 10 and B's 100 only: the snapshot's 900 at 4900 is not re-added.
    const sold = events.filter((e): e is FillEvent => e.type === "fill" && e.takerUser === "taker")
    expect(sold.map((f) => [f.makerUser, f.size])).toEqual([["lp", 10], ["bg2", 100]])
    expect(r.report.assumptions.some((a) => a.startsWith("queue position exact in every market"))).toBe(true)
  })
})

describe("order-flow tape: takers trade with our quotes up to their own limit and size", () => {
  // Without us: 5 asked at 5300 and 5 bid at 4700. We quote 4900 / 5100 (mid 5000 ± 100).
  const rows: OrderRow[] = [
    order(0, 1, "new", "ask", 5300, 5, "m1"), order(0, 1, "add", "ask", 5300, 5, "m1"),
    order(0, 2, "new", "bid", 4700, 5, "m2"), order(0, 2, "add", "bid", 4700, 5, "m2"),
    // A taker wanting 30 up to 5300 finds only those 5 (the print); the rest of its IOC dies.
    order(3000, 3, "new", "bid", 5300, 30, "m3", "ioc"),
    // A taker wanting 10 up to 5150 finds nothing and leaves no print at all.
    order(4000, 4, "new", "bid", 5150, 10, "m3", "ioc")
  ]
  const prints: TradeRow[] = [{ tsMs: T0 + 3000, marketId: M, priceBps: 5300, size: 5, takerSide: "buy" }]

  it("replaying the flow, a taker's unfilled demand reaches our better quote; replaying the prints, it cannot", () => {
    const flow = runBacktest(datasetFromRows("flow", prints, [], rows), BASE).report
    const adds = runBacktest(datasetFromRows("adds", prints, [], rows.filter((o) => o.event !== "new")), BASE).report
    // Flow: the first taker takes our whole ask (10 at 5100) before the 5 at 5300; the second finds nothing left of ours.
    expect(flow.fills.map((f) => [f.tMs - T0, f.yesPriceBps, f.size])).toEqual([[3000, 5100, 10]])
    expect(flow.summary.book).toBe("order flow (L3)")
    expect(flow.assumptions.some((a) => a.startsWith("order flow replayed in every market") && a.endsWith("takers still do not react to our quotes (--response adds a fitted market-response model's takers)"))).toBe(true)
    // Prints: the 5-contract print at 5300 fills 5 of ours at 5100, and the second taker left no print.
    expect(adds.fills.map((f) => [f.tMs - T0, f.yesPriceBps, f.size])).toEqual([[3000, 5100, 5]])
    expect(adds.summary.book).toBe("orders (L3)")
  })

  it("a taker that left no print in the tape still trades with our quote when it would have", () => {
    // Without the first taker, only the 5150 one: it buys our 10 at 5100.
    const flow = runBacktest(datasetFromRows("flow2", [], [], rows.filter((o) => o.orderId !== 3)), BASE).report
    expect(flow.fills.map((f) => [f.tMs - T0, f.yesPriceBps, f.size])).toEqual([[4000, 5100, 10]])
  })
})

describe("a tape order the tape used up, while it still rests here, is withdrawn at its owner's next order event in the market", () => {
  // Without us: m1 asks 5 at 5200, m2 bids 5 at 4800 (mid 5000; we quote 4900 / 5100). At 3 s a taker
  // buys 5 up to 5200: in the tape it fills m1's order 1 (the trade names it); here it buys our 5 at
  // 5100 and order 1 keeps its 5. At 4 s m1, which saw order 1 filled, asks again at 5400. Its order 1
  // would still stand at 5200 here, m1's liquidity twice: it is withdrawn as m1 acts, so the others'
  // mid is 5100 (4800 / 5400), as the world with us would show it.
  const rows: OrderRow[] = [
    order(0, 1, "new", "ask", 5200, 5, "m1"), order(0, 1, "add", "ask", 5200, 5, "m1"), order(0, 2, "new", "bid", 4800, 5, "m2"), order(0, 2, "add", "bid", 4800, 5, "m2"),
    order(3000, 3, "new", "bid", 5200, 5, "m3", "ioc"),
    order(4000, 4, "new", "ask", 5400, 5, "m1"), order(4000, 4, "add", "ask", 5400, 5, "m1"),
    order(12_000, 5, "new", "bid", 1000, 1, "m4"), order(12_000, 5, "add", "bid", 1000, 1, "m4")
  ]
  const print = (makerOrderId?: number): TradeRow => ({ tsMs: T0 + 3000, marketId: M, priceBps: 5200, size: 5, takerSide: "buy", ...(makerOrderId === undefined ? {} : { makerOrderId }) })
  const run = (trades: TradeRow[], orders: OrderRow[], levels: LevelRow[] = []) => quotedMids(trades, levels, orders)

  it("withdraws it when the owner acts again, and counts it", () => {
    const { report, mids } = run([print(1)], rows)
    expect(report.fills.map((f) => [f.tMs - T0, f.yesPriceBps, f.size])).toEqual([[3000, 5100, 5]])
    expect(mids).toEqual([[1000, 5000], [6000, 5100], [11_000, 5100]])
    expect([report.summary.tape_orders_spent_withdrawn, report.summary.tape_contracts_spent_withdrawn]).toEqual([1, 5])
  })

  it("keeps it while the owner does not act, and when the tape does not say which order a trade filled or names another market's", () => {
    // A book snapshot is nobody's action (m1 is the tape's first owner: a snapshot row's owner column reads 0).
    const snapshot: LevelRow[] = [{ tsMs: T0 + 3500, marketId: M, side: "bid", priceBps: 4800, size: 5 }, { tsMs: T0 + 3500, marketId: M, side: "ask", priceBps: 5200, size: 5 }]
    const quiet = run([print(1)], rows.filter((r) => r.orderId !== 4), snapshot)
    expect(quiet.mids).toEqual([[1000, 5000], [6000, 5000], [11_000, 5000]])
    expect(quiet.report.summary.tape_orders_spent_withdrawn).toBe(0)
    const unnamed = run([print()], rows)
    expect(unnamed.mids).toEqual([[1000, 5000], [6000, 5000], [11_000, 5000]])
    expect(unnamed.report.summary.tape_orders_spent_withdrawn).toBe(0)
    // A bad tape: the trade is in another order-level market ("x", where m1 then acts) but names order 1 of M.
    const elsewhere: OrderRow[] = [order(0, 9, "add", "bid", 3000, 1, "m9"), order(4000, 10, "add", "bid", 3100, 1, "m1")].map((r) => ({ ...r, marketId: "x" }))
    const misnamed = run([{ ...print(1), marketId: "x" }], [...rows.filter((r) => r.orderId !== 4), ...elsewhere])
    expect(misnamed.mids).toEqual([[1000, 5000], [6000, 5000], [11_000, 5000]])
    expect(misnamed.report.summary.tape_orders_spent_withdrawn).toBe(0)
  })

  it("never withdraws an order the replay used up itself (our quote not ahead of it)", () => {
    // The taker's limit is 5200 but it comes before we quote (0.5 s): it fills order 1 here as in the tape.
    const early = rows.map((r) => (r.orderId === 3 ? { ...r, tsMs: T0 + 500 } : r))
    const { report, mids } = run([{ ...print(1), tsMs: T0 + 500 }], early)
    expect(report.fills).toEqual([])
    expect(report.summary.tape_orders_spent_withdrawn).toBe(0)
    // At 1 s no ask stands (the last trade, 5200, is the mid); then m1 asks at 5400.
    expect(mids).toEqual([[1000, 5200], [6000, 5100], [11_000, 5100]])
  })
})

describe("the mid the strategy sees, as the live bot computes it (src/service/lp-bot-market.ts)", () => {
  it("with one side of the others' book empty, it is the last trade's price; with both, their mid", () => {
    // An order-flow tape: a bid at 4900 and one ask at 6000 rest; a taker buys that ask at 500 ms,
    // leaving no ask. The live bot then quotes around the last trade (6000), not nothing, until an
    // ask arrives (6300 at 10 s: mid 5600).
    const rows: OrderRow[] = [
      order(0, 1, "new", "bid", 4900, 10, "m1"), order(0, 1, "add", "bid", 4900, 10, "m1"), order(0, 2, "new", "ask", 6000, 1, "m2"), order(0, 2, "add", "ask", 6000, 1, "m2"),
      order(500, 3, "new", "bid", 6000, 1, "m3", "ioc"),
      order(10_000, 4, "new", "ask", 6300, 10, "m2"), order(10_000, 4, "add", "ask", 6300, 10, "m2"),
      order(12_000, 5, "new", "bid", 1000, 10, "m1"), order(12_000, 5, "add", "bid", 1000, 10, "m1")
    ]
    const print: TradeRow = { tsMs: T0 + 500, marketId: M, priceBps: 6000, size: 1, takerSide: "buy" }
    const { mids } = quotedMids([print], [], rows)
    expect(mids).toEqual([[1000, 6000], [6000, 6000], [11_000, 5600]])
  })
})

describe("latency", () => {
  // 10 resting at 4900 ahead of our bid; a 20-contract sell at 4900 every second.
  const trades = Array.from({ length: 10 }, (_, i) => sell((i + 1) * 1000, 20))
  const data = datasetFromRows("latency", trades, book(0, 10))

  it("fills at the first trade with no latency", () => {
    expect(firstFillMs(runBacktest(data, BASE).report.fills)).toBe(1000)
  })

  it("order-entry latency delays the first fill until the quote reaches the book", () => {
    const r = runBacktest(data, { ...BASE, entryLatency: { baseMs: 2500, jitterMs: 0 } }).report
    expect(firstFillMs(r.fills)).toBe(3000)
  })

  it("feed latency delays it too: the strategy sees the book late", () => {
    const r = runBacktest(data, { ...BASE, feedLatency: { baseMs: 2500, jitterMs: 0 } }).report
    expect(firstFillMs(r.fills)).toBe(3000)
  })

  it("a ticked strategy (the server-managed bot) sees the book only at the next whole tick", () => {
    // A sell at 500 ms: with no latency our bid (quoted at the first event, t=0) is there; stepped
    // once a second on whole seconds, it is placed at 1000 and the first fill is the sell at 2000.
    const early = datasetFromRows("tick-early", [sell(500, 20), ...trades.slice(1)], book(0, 10))
    expect(firstFillMs(runBacktest(early, BASE).report.fills)).toBe(500)
    expect(firstFillMs(runBacktest(early, { ...BASE, feedLatency: { baseMs: 0, jitterMs: 0, tickMs: 1000 } }).report.fills)).toBe(2000)
  })

  it("a tick sees every event before it: many events within one second are not pushed to later ticks", () => {
    // Re-quoted every second. Book events every 100 ms from 1100 to 1900; only the last moves the
    // mid (to 6000). The tick at 2000 must see it and bid 5900, which the sell at 2500 fills.
    const requoting: BacktestConfig = { ...BASE, strategy: { kind: "spec", spec: { ...SPEC, rebalance_interval_secs: 1, vol_widen_pct: 0 }, params: { ...PARAMS, rebalanceIntervalSec: 1 } } }
    const at = (tMs: number, bidBps: number): LevelRow[] => [
      { tsMs: T0 + tMs, marketId: M, side: "bid", priceBps: bidBps, size: 10 },
      { tsMs: T0 + tMs, marketId: M, side: "ask", priceBps: bidBps + 200, size: 100 }
    ]
    const levels = [...book(0, 10), ...Array.from({ length: 8 }, (_, i) => at(1100 + i * 100, 4900 + (i % 2) * 10)).flat(), ...at(1900, 5900)]
    const moved = datasetFromRows("tick-many", [{ tsMs: T0 + 2500, marketId: M, priceBps: 5900, size: 20, takerSide: "sell" }], levels)
    const r = runBacktest(moved, { ...requoting, feedLatency: { baseMs: 0, jitterMs: 0, tickMs: 1000 } }).report
    expect(r.fills.map((f) => [f.tMs - T0, f.yesPriceBps, f.size])).toEqual([[2500, 5900, 10]])
  })

  it("a ticked bot started within a second takes its first step at the next tick, as the live runner does", () => {
    // The bot starts at 3 s exactly, on a tick: live, its start is journaled inside that second and
    // the worker's next pass, at 4 s, is its first step. So the sell at 3500 finds no quote of ours.
    const started: BacktestConfig = { ...BASE, startSec: T0 / 1000 + 3, feedLatency: { baseMs: 0, jitterMs: 0, tickMs: 1000 } }
    const steps: number[] = []
    const r = runBacktest(datasetFromRows("tick-start", [sell(3500, 20), sell(5000, 20)], book(0, 10)), started, { onStep: (_m, input) => steps.push(input.tsSec * 1000 - T0) }).report
    expect(steps[0]).toBe(4000)
    expect(firstFillMs(r.fills)).toBe(5000)
  })

  it("jitter is seeded: same seed, same fills; each latency only ever delays", () => {
    const c: BacktestConfig = { ...BASE, entryLatency: { baseMs: 200, jitterMs: 1500 }, feedLatency: { baseMs: 100, jitterMs: 1500 } }
    const a = runBacktest(data, c).report
    expect(runBacktest(data, c).report).toEqual(a)
    expect(firstFillMs(a.fills)!).toBeGreaterThanOrEqual(1000)
  })
})
