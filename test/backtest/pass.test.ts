// The bot runner's pass (sim/backtest/pass.ts, docs/backtesting.md "The bot runner's pass"): in a
// second the bots ahead of ours open, their rows (and whatever landed among them) move to just
// before it, so a bot ticked at that second sees them; nothing after a bot behind ours moves, and
// nothing moves when no bot is ahead.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { DEFAULT_CONFIG, withTapeMeta } from "../../sim/backtest/config.ts"
import { loadTape } from "../../sim/backtest/load.ts"
import { ownersAhead, ownersBehind, passTimes } from "../../sim/backtest/pass.ts"
import { type TapeOrderEvent, TAPE_FORMAT, writeTape } from "../../src/store/tape.ts"

const S = 1_767_398_400
const M = "m1"
const row = (tsMs: number, orderId: number, event: TapeOrderEvent["event"], side: "bid" | "ask", priceBps: number, owner: string): TapeOrderEvent => ({
  tsMs, marketId: M, orderId, event, side, priceBps, size: 20, orderType: event === "new" && owner === "t1" ? "ioc" : "post_only", owner
})

// Second S: bot b1 (ahead) re-quotes first, and while it awaits its orders another maker's (k2)
// lands among them; then bot b2 (behind ours), then b1 once more. Second S+1 opens with a taker,
// then b1: the pass did not lead that second, so nothing there moves.
const orders: TapeOrderEvent[] = [
  row(S * 1000 - 5000, 1, "add", "bid", 4000, "k1"),
  row(S * 1000 - 4999, 2, "add", "ask", 6000, "k1"),
  row(S * 1000, 3, "new", "bid", 4900, "b1"),
  row(S * 1000, 3, "add", "bid", 4900, "b1"),
  row(S * 1000 + 1, 8, "add", "ask", 5200, "k2"),
  row(S * 1000 + 2, 4, "new", "ask", 5100, "b1"),
  row(S * 1000 + 2, 4, "add", "ask", 5100, "b1"),
  row(S * 1000 + 3, 5, "new", "bid", 4950, "b2"),
  row(S * 1000 + 3, 5, "add", "bid", 4950, "b2"),
  row(S * 1000 + 4, 6, "cancel", "bid", 4900, "b1"),
  row((S + 1) * 1000, 7, "new", "ask", 3000, "t1"),
  row((S + 1) * 1000 + 1, 4, "cancel", "ask", 5100, "b1")
]

const dir = mkdtempSync(join(tmpdir(), "pass-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const load = async (lpBots: unknown) => {
  await writeTape(dir, {
    trades: [], levels: [], orders,
    meta: {
      format: TAPE_FORMAT, version: 2, source: "pass test", from_sec: S - 10, to_sec: S + 2, snapshot_interval_sec: null, markets: [M],
      fees: { maker_rebate_bps: 0, default_taker_fee_bps: 0, taker_fee_bps: { [M]: 0 } }, rewards: null,
      excluded_users: ["ours"], trades: 0, snapshots: 0, orders: orders.length, ...(lpBots === undefined ? {} : { lp_bots: lpBots as string[] }) // a hostile tape.json may hold anything here
    }
  }, "csv")
  return loadTape(dir, null, "flow")
}

describe("the bot runner's pass", () => {
  it("moves the opening rows of the bots ahead to the millisecond before their second, and nothing else", async () => {
    const { dataset, meta } = await load(["b1", "b2"])
    const config = { ...withTapeMeta(DEFAULT_CONFIG, meta), botsAheadInPass: 1 }
    expect(config.lpBotsInPass).toEqual(["b1", "b2"])
    const ahead = ownersAhead(dataset, config)
    expect([...ahead].map((i) => dataset.owners[i])).toEqual(["b1"])
    expect([...ownersBehind(dataset, config)].map((i) => dataset.owners[i])).toEqual(["b2"])
    const t = [...passTimes(dataset, ahead, ownersBehind(dataset, config))].map((x) => x - S * 1000)
    const orig = [...dataset.tMs].map((x) => x - S * 1000)
    // b1's rows and k2's among them move to −1 ms (our bot stepped after all of them, live: seed 12
    // of liquidity-midnight-fees, where the old rule stopped at such a row and the replay saw b1's
    // book cancelled and not yet re-placed); b2's rows show ours had stepped, so b1's later cancel
    // stays; the next second opens with the taker.
    expect(orig.slice(2, 7)).toEqual([0, 0, 1, 2, 2])
    expect(t).toEqual(orig.map((x, i) => (i >= 2 && i <= 6 ? -1 : x)))
    // With both bots ahead (ours steps last), b2's rows and b1's cancel behind them move too.
    const both = { ...config, botsAheadInPass: 2 }
    const all = [...passTimes(dataset, ownersAhead(dataset, both), ownersBehind(dataset, both))].map((x) => x - S * 1000)
    expect(all).toEqual(orig.map((x, i) => (i >= 2 && i <= 9 ? -1 : x)))
  })

  it("changes nothing when no bot is ahead or the tape names no bots", async () => {
    const { dataset, meta } = await load(undefined)
    const config = { ...withTapeMeta(DEFAULT_CONFIG, meta), botsAheadInPass: 2 }
    expect(config.lpBotsInPass).toEqual([])
    expect(passTimes(dataset, ownersAhead(dataset, config))).toBe(dataset.tMs)
    const named = await load(["b1", "b2"])
    expect(passTimes(named.dataset, ownersAhead(named.dataset, withTapeMeta(DEFAULT_CONFIG, named.meta)))).toBe(named.dataset.tMs)
  })

  it("refuses a tape.json whose lp_bots is not a list of owner names, naming the file", async () => {
    await expect(load("b1")).rejects.toThrow(/tape\.json: lp_bots must be a list of owner names/)
    await expect(load([1, 2])).rejects.toThrow(/lp_bots must be a list of owner names/)
  })
})
