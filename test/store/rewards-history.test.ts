// Paid LP rewards in the history store: one `rewards` row per maker of a paid day,
// written by the `pay_rewards` record, flushed like every other row, and the same
// after a rebuild from the journal.
import { afterEach, describe, expect, it } from "vitest"
import { keyFromLabel } from "../../src/client/keys.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"
import { HistoryStore } from "../../src/store/history-db.ts"
import { historyPath, rebuildHistory } from "../../src/store/history-rebuild.ts"
import { clock, startDurable, T0_MS, tempDirs } from "../support/history.ts"

const temp = tempDirs("twinbook-rewards-history-")
afterEach(() => temp.cleanup())

const DAY0 = T0_MS / 1000 / 86_400

describe("rewards rows in the history store", () => {
  it("projects each paid maker once, and a rebuild writes the same rows", async () => {
    clock.ms = T0_MS
    const dir = temp.fresh()
    const s = await startDurable(dir)
    const x = s.exchange
    const submit = (cmd: ServiceCommand) => x.submit(cmd)
    submit({ type: "set_rewards_config", config: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40, minSizeContracts: 10 } })
    const market = x.catalog.events[0]!.outcomes[0]!.market_id
    const makers = ["hr-alice", "hr-bob"].map((l) => keyFromLabel(l).user)
    let nonce = 0
    for (const [i, user] of makers.entries()) {
      submit({ type: "credit", user, amountMicro: 100_000_000, ref: `seed:${user}` })
      for (const outcome of ["yes", "no"] as const) {
        submit({ type: "place_order", order: { user, marketId: market, side: "buy", outcome, priceBps: 4_950 - 50 * i, size: 100 - 50 * i, orderType: "gtc", nonce: ++nonce } })
      }
    }
    // Ten minutes of the LP worker's samples (docs/rewards.md), then the day is over.
    for (let m = 1; m <= 10; m++) {
      clock.ms = T0_MS + m * 60_000
      submit({ type: "rewards_sample" })
    }
    clock.ms = T0_MS + 86_400_000 + 5_000
    const paid = submit({ type: "pay_rewards", day: DAY0 })
    expect(paid.result.paid?.payouts.length).toBe(2)
    await paid.durable
    await s.flushHistory()
    const query = "SELECT strftime(day, '%Y-%m-%d'), maker, micro_usdc, score FROM rewards ORDER BY maker"
    const live = await s.history()!.run(query)
    expect(live).toEqual(
      [...makers].sort().map((maker) => ["2026-11-22", maker, 400_000_000n, maker === makers[0] ? 7.575757 : 2.424242])
    )
    await s.close()

    await rebuildHistory(dir)
    const rebuilt = await HistoryStore.open(historyPath(dir))
    expect(await rebuilt.run(query)).toEqual(live)
    await rebuilt.close()
  })
})
