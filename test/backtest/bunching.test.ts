// Loud on tapes it cannot trust (docs/backtesting.md "Sanity checks"): a second holding far more
// records than the data's typical second (a clock step put minutes of records into it) is named,
// with its count, in a `backtest: WARNING` line on stderr and an INPUT WARNING at the top of the
// report, and a strategy starting inside such a stretch is told so; a tape without one gets no warning.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { BUNCH_FACTOR, BUNCH_MIN_EVENTS, bunchingWarning, findBunching, startWarning } from "../../sim/backtest/bunching.ts"
import { type Tape, type TapeOrderEvent, type TapeTrade, TAPE_FORMAT, writeTape } from "../../src/store/tape.ts"
import { runProcess, type ProcessResult } from "../support/run-process.ts"

const root = join(import.meta.dirname, "..", "..")
const cli = (args: ReadonlyArray<string>): Promise<ProcessResult> =>
  runProcess(process.execPath, ["scripts/run-ts.mjs", "sim/backtest/cli.ts", ...args], { cwd: root, timeoutMs: 120_000 })

const T0 = 1_767_398_400 // 2026-01-03T00:00:00Z
const BUNCHED = T0 + 150 // 2026-01-03T00:02:30Z
const M = "m1"

/**
 * Five minutes of a market: a competitor resting 4800 / 5200 and one taker a second (an order
 * arriving and its trade: 2 events a second), and, with `burst`, 300 more takers stamped in one
 * second as a tape stamps the records of one journal second (ts_ms offsets 0, 1, 2 … ms): 600 events there.
 */
const tape = (burst: boolean): Tape => {
  const orders: TapeOrderEvent[] = [
    { tsMs: T0 * 1000, marketId: M, orderId: 1, event: "add", side: "bid", priceBps: 4800, size: 100_000, orderType: "gtc", owner: "m1" },
    { tsMs: T0 * 1000 + 1, marketId: M, orderId: 2, event: "add", side: "ask", priceBps: 5200, size: 100_000, orderType: "gtc", owner: "m1" }
  ]
  const trades: TapeTrade[] = []
  let id = 3
  const taker = (tsMs: number): void => {
    const buy = id % 2 === 0
    orders.push({ tsMs, marketId: M, orderId: id, event: "new", side: buy ? "bid" : "ask", priceBps: buy ? 5200 : 4800, size: 1, orderType: "ioc", owner: "t1" })
    trades.push({ tsMs, marketId: M, priceBps: buy ? 5200 : 4800, size: 1, takerSide: buy ? "buy" : "sell", tradeId: id, makerOrderId: buy ? 2 : 1, takerOrderId: id })
    id++
  }
  for (let s = T0 + 1; s < T0 + 300; s++) {
    taker(s * 1000)
    if (burst && s === BUNCHED) for (let k = 1; k <= 300; k++) taker(s * 1000 + k)
  }
  return {
    trades, levels: [], orders,
    meta: {
      format: TAPE_FORMAT, version: 2, source: "bunching test", from_sec: T0, to_sec: T0 + 300, snapshot_interval_sec: null, markets: [M],
      fees: { maker_rebate_bps: 5, default_taker_fee_bps: 0, taker_fee_bps: { [M]: 0 } }, rewards: null,
      excluded_users: [], trades: trades.length, snapshots: 0, orders: orders.length
    }
  }
}

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const written = async (burst: boolean): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "bunching-"))
  dirs.push(dir)
  await writeTape(join(dir, "tape"), tape(burst), "csv")
  return dir
}

describe("bunched timestamps", () => {
  it("finds seconds above max(100, 10× the median events of active seconds), merging consecutive ones into a stretch", () => {
    // 20 seconds of 3 events (median 3, threshold max(100, 30) = 100); seconds 10 and 11 hold 101 and 150, second 15 exactly 100.
    const t: number[] = []
    for (let s = 0; s < 20; s++) {
      const k = s === 10 ? 101 : s === 11 ? 150 : s === 15 ? 100 : 3
      for (let j = 0; j < k; j++) t.push((1000 + s) * 1000 + Math.min(j, 999))
    }
    const b = findBunching(t, t.length)
    expect(b.medianEvents).toBe(3)
    expect(b.thresholdEvents).toBe(BUNCH_MIN_EVENTS)
    expect(b.stretches).toEqual([{ fromSec: 1010, toSec: 1011, events: 251 }]) // 100 is not more than the threshold
    expect(bunchingWarning(b)).toMatch(/^timestamps bunch: 1 stretch\(es\) of seconds each holding more than 100 events \(10× the median of 3 per active second, at least 100\): seconds 1010–1011 \(1970-01-01T00:16:50Z to 1970-01-01T00:16:51Z\): 251 events\./)
    expect(startWarning(b, 1011)).toMatch(/^the strategy starts at 1011 \(1970-01-01T00:16:51Z\), inside bunched seconds 1010–1011 .*\(251 events\)/)
    expect(startWarning(b, 1012)).toBeNull()
    expect(startWarning(b, null)).toBeNull()
    // A busy tape: the threshold follows its median (20 a second → 200), so 150 in a second is not bunched.
    const busy = Array.from({ length: 30 }, (_, s) => Array.from({ length: s === 7 ? 150 : 20 }, (_, j) => s * 1000 + j)).flat()
    expect(findBunching(busy, busy.length)).toEqual({ medianEvents: 20, thresholdEvents: BUNCH_FACTOR * 20, stretches: [] })
    expect(bunchingWarning(findBunching(busy, busy.length))).toBeNull()
  })

  it("warns on stderr and at the top of the report, naming the second and its count, and says when the bot starts inside it", async () => {
    const dir = await written(true)
    const r = await cli(["--data", join(dir, "tape"), "--start-sec", String(BUNCHED), "--out", join(dir, "out"), "--json", "--no-html"])
    expect(r.status).toBe(0)
    const warnings = r.stderr.split("\n").filter((l) => l.startsWith("backtest: WARNING"))
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toMatch(/timestamps bunch: 1 stretch\(es\) .*: second 1767398550 \(2026-01-03T00:02:30Z\): 602 events\./)
    expect(warnings[1]).toMatch(/the strategy starts at 1767398550 \(2026-01-03T00:02:30Z\), inside bunched second 1767398550 .*\(602 events\).*quotes none of them/)
    const json = JSON.parse(r.stdout) as { assumptions: string[] }
    expect(json.assumptions[0]).toMatch(/^INPUT WARNING .*: timestamps bunch: .*second 1767398550 .*602 events/)
    expect(json.assumptions[1]).toMatch(/^INPUT WARNING .*: the strategy starts at 1767398550 .*inside bunched second/)

    // Started before the stretch: the stretch is still named, the start is not.
    const early = await cli(["--data", join(dir, "tape"), "--start-sec", String(T0 + 10), "--out", join(dir, "out2"), "--json", "--no-html"])
    expect(early.stderr.split("\n").filter((l) => l.startsWith("backtest: WARNING"))).toEqual([expect.stringMatching(/timestamps bunch: .*602 events/)])
  }, 240_000)

  it("gives no warning on the same tape without the burst", async () => {
    const dir = await written(false)
    const r = await cli(["--data", join(dir, "tape"), "--start-sec", String(BUNCHED), "--out", join(dir, "out"), "--json", "--no-html"])
    expect(r.status).toBe(0)
    expect(r.stderr).not.toMatch(/WARNING/)
    const json = JSON.parse(r.stdout) as { assumptions: string[] }
    expect(json.assumptions.filter((a) => a.startsWith("INPUT WARNING"))).toEqual([])
  }, 240_000)
})
