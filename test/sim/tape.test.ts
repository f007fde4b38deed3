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
import { runScenario } from "../../sim/run.ts"
import { loadScenario } from "../../sim/scenario.ts"
import { writeRunTape } from "../../sim/tape.ts"
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
      const { files } = await writeRunTape(summary, { dir, intervalSec: 0, format })
      expect(files.map((f) => f.slice(dir.length + 1)).sort()).toEqual([`book.${format}`, "tape.json", `trades.${format}`])
      const { dataset: d, meta } = await loadTape(dir)
      expect(d.trades).toBe(fills.length)
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
    const r = spawnSync(process.execPath, ["--import", "tsx", join(root, "scripts", "export.ts"), "--format", "csv", "--out", out], { cwd: root, env: { ...process.env, DATA_DIR: dir }, encoding: "utf8" })
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
