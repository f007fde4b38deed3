// One chain from simulation to tape to backtest: `npm run sim -- --tape` and `npm run export`
// write the same tape (src/store/tape.ts), `npm run backtest -- --data DIR` loads it with no
// mapping, and every trade's taker side is right in YES terms (a taker who sold NO bought YES).
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { TAKER_BUY, TAKER_SELL } from "../../sim/backtest/dataset.ts"
import { loadTape } from "../../sim/backtest/load.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import { DEFAULT_CONFIG, withTapeMeta } from "../../sim/backtest/config.ts"
import { runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { writeRunTape } from "../../sim/scenario/tape.ts"
import type { FillEvent } from "../../src/engine/types.ts"
import { historyTrades, startDurable, tempDirs, trade } from "../support/history.ts"
import { SCENARIO_DIR } from "./support.ts"

const temp = tempDirs("twinbook-tape-")
afterEach(temp.cleanup)
const root = join(import.meta.dirname, "..", "..")

/** YES terms, worked out from the taker's own order (not by the tape's code). */
const yesSide = (side: "buy" | "sell", outcome: "yes" | "no"): number => {
  if (outcome === "yes") return side === "buy" ? TAKER_BUY : TAKER_SELL
  return side === "buy" ? TAKER_SELL : TAKER_BUY // buying NO sells YES; selling NO buys YES
}

type Book = Map<string, Map<string, number>> // market → "side:price" → contracts

/** Aggregates resting orders to L2, as a snapshot lists them. */
const levelsOf = (orders: Map<number, { m: string; key: string; size: number }>): Book => {
  const out: Book = new Map()
  for (const o of orders.values()) {
    if (o.size === 0) continue
    const m = out.get(o.m) ?? new Map<string, number>()
    m.set(o.key, (m.get(o.key) ?? 0) + o.size)
    out.set(o.m, m)
  }
  return out
}

describe("the order-level tape", () => {
  it("orders plus trades rebuild every L2 snapshot exactly: each add, cancel and fill of a resting order is there, in order", async () => {
    const scenario = loadScenario(join(SCENARIO_DIR, "liquidity-midnight.json"))
    const summary = await runScenario(scenario, { seed: 3, durationSec: 1_200, expectations: false })
    const { tape } = await writeRunTape(summary, { dir: join(temp.fresh(), "tape"), intervalSec: 0, format: "csv" })
    expect(tape.orders.filter((o) => o.event === "cancel").length).toBeGreaterThan(50)
    // Replay orders and trades in tape order (at one ms: cancels, trades, adds); at each
    // snapshot's ms, before that ms's events, the book must equal the snapshot.
    type Ev = { t: number; rank: number; apply: () => void }
    const resting = new Map<number, { m: string; key: string; size: number }>()
    // Every trade's taker arrived as a `new` order on the taker's side, with a limit at least as good as the print.
    const arrivals = new Map(tape.orders.filter((o) => o.event === "new").map((o) => [o.orderId, o]))
    for (const tr of tape.trades) {
      const o = arrivals.get(tr.takerOrderId)
      expect(o, `trade ${tr.tradeId}'s taker order arrived`).toBeDefined()
      expect(o!.side).toBe(tr.takerSide === "buy" ? "bid" : "ask")
      expect(o!.side === "bid" ? o!.priceBps >= tr.priceBps : o!.priceBps <= tr.priceBps).toBe(true)
      expect(o!.tsMs).toBe(tr.tsMs)
    }
    expect(tape.orders.some((o) => o.event === "new" && o.orderType === "ioc")).toBe(true)
    const evs: Ev[] = [
      ...tape.orders.filter((o) => o.event !== "new").map((o) => ({
        t: o.tsMs, rank: o.event === "cancel" ? 1 : 3,
        apply: () => {
          if (o.event === "add") resting.set(o.orderId, { m: o.marketId, key: `${o.side}:${o.priceBps}`, size: o.size })
          else {
            expect(resting.get(o.orderId)?.size).toBe(o.size)
            resting.delete(o.orderId)
          }
        }
      })),
      ...tape.trades.map((tr) => ({
        t: tr.tsMs, rank: 2,
        apply: () => {
          const o = resting.get(tr.makerOrderId)
          expect(o, `trade ${tr.tradeId} fills a resting order`).toBeDefined()
          expect(o!.key).toBe(`${tr.takerSide === "buy" ? "ask" : "bid"}:${tr.priceBps}`)
          o!.size -= tr.size
          expect(o!.size).toBeGreaterThanOrEqual(0)
          if (o!.size === 0) resting.delete(tr.makerOrderId)
        }
      }))
    ].sort((a, b) => a.t - b.t || a.rank - b.rank)
    const snaps = new Map<number, Book>()
    for (const l of tape.levels) {
      const b = snaps.get(l.tsMs) ?? new Map()
      const m = b.get(l.marketId) ?? new Map<string, number>()
      m.set(`${l.side}:${l.priceBps}`, l.size)
      b.set(l.marketId, m)
      snaps.set(l.tsMs, b)
    }
    let e = 0
    let checked = 0
    for (const [t, snap] of [...snaps.entries()].sort((a, b) => a[0] - b[0])) {
      while (e < evs.length && evs[e]!.t < t) evs[e++]!.apply()
      const rebuilt = levelsOf(resting)
      for (const [m, levels] of snap) {
        expect(Object.fromEntries(rebuilt.get(m) ?? []), `market ${m} at ${t} ms`).toEqual(Object.fromEntries(levels))
        checked++
      }
    }
    expect(checked).toBeGreaterThan(100)
  }, 120_000)
})

describe("the market tape", () => {
  it("from a simulated run: every fill in order, taker side in YES terms, snapshots, fees and rewards; backtest loads it as is", async () => {
    const scenario = loadScenario(join(SCENARIO_DIR, "liquidity-midnight.json"))
    const fills: FillEvent[] = []
    const summary = await runScenario(scenario, {
      seed: 2, durationSec: 1_500, expectations: false,
      onWorld: (world) => world.onBoot((x) => x.onApply((_r, res) => void fills.push(...res.events.filter((e): e is FillEvent => e.type === "fill"))))
    })
    expect(fills.length).toBeGreaterThan(10)
    // Both sides of YES terms occur, including takers of NO.
    expect(fills.some((f) => f.takerOutcome === "no")).toBe(true)
    for (const format of ["csv", "parquet"] as const) {
      const dir = join(temp.fresh(), "tape")
      const { files, tape } = await writeRunTape(summary, { dir, intervalSec: 0, format })
      expect(files.map((f) => f.slice(dir.length + 1)).sort()).toEqual([`book.${format}`, `orders.${format}`, "tape.json", `trades.${format}`])
      const { dataset: d, meta } = await loadTape(dir)
      expect(d.trades).toBe(fills.length)
      expect(d.orders).toBe(tape.orders.length)
      expect(meta.orders).toBe(tape.orders.length)
      expect(d.owners.length).toBeGreaterThan(3)
      expect(d.snapshots).toBeGreaterThan(10)
      expect(meta).toMatchObject({ trades: fills.length, snapshot_interval_sec: 0, rewards: { dailyBudgetMicro: 1_000_000_000, perWalletCapPct: 40 }, fees: { maker_rebate_bps: 5, default_taker_fee_bps: 0 } })
      const trades: Array<{ t: number; m: string; p: number; s: number; side: number }> = []
      for (let i = 0; i < d.count; i++) if (d.kind[i] === 0) trades.push({ t: d.tMs[i]!, m: d.markets[d.market[i]!]!, p: d.priceBps[i]!, s: d.size[i]!, side: d.side[i]! })
      expect(trades.map((t) => [t.m, t.p, t.s, t.side])).toEqual(fills.map((f) => [f.marketId, f.yesPriceBps, f.size, yesSide(f.takerSide, f.takerOutcome)]))
      expect(trades.every((t, i) => Math.floor(t.t / 1000) === fills[i]!.tsSec)).toBe(true)
      // The backtester reads it with no mapping, and takes the fee schedule and rewards from it.
      const config = withTapeMeta({ ...DEFAULT_CONFIG, endSec: null }, meta)
      expect(config.provenance).toEqual({ fees: "tape", rewards: "tape" })
      const { report } = runBacktest(d, config)
      expect(report.summary.trades).toBe(fills.length)
      expect(report.assumptions.some((a) => /assumed|synthetic/.test(a))).toBe(false)
    }
  }, 180_000)

  it("from a live DATA_DIR: npm run export writes the same tape, each trade's taker side in YES terms as the history records it", async () => {
    const dir = temp.fresh()
    const s = await startDurable(dir)
    await trade(s.exchange, 300, 61)
    const history = historyTrades(s.exchange)
    await s.close()
    expect(history.length).toBeGreaterThan(50)
    expect(history.some((t) => t.outcome === "no") && history.some((t) => t.side === "sell")).toBe(true)
    const out = join(dir, "exported")
    const r = spawnSync(process.execPath, ["scripts/run-ts.mjs", join(root, "scripts", "export.ts"), "--format", "csv", "--out", out], { cwd: root, env: { ...process.env, DATA_DIR: dir }, encoding: "utf8" })
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/tape for npm run backtest -- --data .*exported\/tape/)
    expect(existsSync(join(out, "tape", "book.csv"))).toBe(true)
    const { dataset: d } = await loadTape(join(out, "tape"))
    const trades: Array<[string, number, number, number]> = []
    for (let i = 0; i < d.count; i++) if (d.kind[i] === 0) trades.push([d.markets[d.market[i]!]!, d.priceBps[i]!, d.size[i]!, d.side[i]!])
    expect(trades).toEqual(history.map((t) => [t.market_id, t.yes_price, t.size, yesSide(t.side, t.outcome)]))
    expect(d.snapshots).toBeGreaterThan(0)
  }, 120_000)
})
