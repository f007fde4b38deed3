// The backtester's own error, measured to zero: replaying the live tape of a simulated world with
// one server-managed bot's orders left out (every other order as it really arrived), the
// backtested bot must take the live bot's steps (same seconds, same decisions, same mids) and
// get its fills. Anything the two disagree on is the backtester's mechanics, not the market
// (docs/backtesting.md "Fidelity": the replay row).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadTape } from "../../sim/backtest/load.ts"
import { runBacktest } from "../../sim/backtest/runner.ts"
import { botBacktestConfig, LATENCY_MODELS } from "../../sim/fidelity/fidelity.ts"
import { realisedAttribution, realisedOf, realisedTradingPnlAt, userOfAgent } from "../../sim/fidelity/realised.ts"
import { runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { writeRunTape } from "../../sim/scenario/tape.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { SCENARIO_DIR } from "./support.ts"

const scenario = loadScenario(join(SCENARIO_DIR, "liquidity-midnight.json"))

// Seed 2's lp_bot-0-1 re-quotes in the same seconds as another bot whose user id sorts first: the
// runner steps that bot ahead of it in each pass, and it centres on that bot's fresh quotes
// (sim/backtest/pass.ts). Before the tape named the pass, its replay drifted 1 bps from its 17th
// step on: 30 fills against 14 live.
describe.each([
  { SEED: 3, AGENT: "lp_bot-0-0", botsAhead: 2 },
  { SEED: 2, AGENT: "lp_bot-0-1", botsAhead: 2 }
])("replaying the live tape without seed $SEED's $AGENT", ({ SEED, AGENT, botsAhead }) => {
  it("takes the live bot's every step and gets its fills: the backtester adds no error of its own", async () => {
    const summary = await runScenario(scenario, { seed: SEED, durationSec: 2 * 3600, expectations: false })
    const user = userOfAgent(SEED, AGENT)
    const records = summary.records as ReadonlyArray<JournalRecord>
    const [realised] = realisedOf(records, [{ agent: AGENT, user }])
    const dir = mkdtempSync(join(tmpdir(), "replay-bot-"))
    await writeRunTape(summary, { dir, intervalSec: 0, format: "parquet" }, [], [user])
    const { dataset, meta } = await loadTape(dir, null, "flow")
    rmSync(dir, { recursive: true, force: true })
    // The tape names the other bots in the runner's pass order; ours is left out with its orders.
    expect(meta.lp_bots).toHaveLength(2)
    expect(realised!.botsAheadInPass).toBe(botsAhead)

    // The live bot's acting steps, as journaled: second, market, decision, the mid it quoted around.
    const live = records.flatMap((r) =>
      r.cmd.type === "lp_bot_step" && r.cmd.user === user ? [`${r.tsSec} ${r.cmd.marketId.slice(0, 8)} ${r.cmd.decision} ${r.cmd.state.quotedMidBps}`] : []
    )
    const tick = LATENCY_MODELS.find((l) => l.name === "tick")!
    const stepped: string[] = []
    const { report } = runBacktest(dataset, botBacktestConfig(SEED, realised!, meta, "flow", tick), {
      onStep: (marketId, input, d) => {
        if (d.kind !== "hold") stepped.push(`${input.tsSec} ${marketId.slice(0, 8)} ${d.kind} ${input.midBps === null ? null : Math.round(input.midBps)}`)
      }
    })
    expect(live.length).toBeGreaterThan(800) // two markets re-quoted every 15 s for ~1.9 h
    // Within one second the live bot steps its markets in its own order, the backtester in the tape's: compare per second.
    expect([...stepped].sort()).toEqual([...live].sort())
    const ours = report.markets.filter((m) => realised!.markets.includes(m.market_id))
    expect(realised!.fills).toBeGreaterThan(10)
    expect(ours.reduce((s, m) => s + m.fills, 0)).toBe(realised!.fills)
    expect(ours.reduce((s, m) => s + m.filled_contracts, 0)).toBe(realised!.filledContracts)
    // Same fills at the same prices: the same trading PnL to the micro, at the same marks.
    const marks = new Map(ours.map((m) => [m.market_id, m.mark_bps]))
    expect(ours.reduce((s, m) => s + m.pnl_micro - m.maker_rebates_micro, 0)).toBe(realisedTradingPnlAt(realised!, marks))
    // The live market's final marks, read from the journal (everyone's book but the bot's, the last two-sided mid), are the
    // marks the exact replay ends on: the fidelity headline values the realised holdings at them.
    expect(new Map(Object.entries(realised!.liveMarksBps))).toEqual(marks)
    expect(realisedTradingPnlAt(realised!, new Map(Object.entries(realised!.liveMarksBps)))).toBe(realisedTradingPnlAt(realised!, marks))
    // The same fills against the same mids: the PnL split the same way on both sides (edge at the fills, inventory after them).
    const split = realisedAttribution(realised!, realisedTradingPnlAt(realised!, marks))
    expect(split.fills).toBe(realised!.fills)
    expect(split.edge_micro + split.inventory_micro).toBe(report.summary.trading_pnl_micro)
    expect({ ...split, by_cause: undefined }).toEqual({ ...report.stats.pnl_attribution, by_cause: undefined })
  }, 180_000)
})
