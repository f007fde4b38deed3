// Deposits and withdrawals in the history store: a change log per journal record,
// whose latest state equals the service's own reads, survives restarts without
// duplicates, and is rebuilt identically from the journal.
import { afterEach, describe, expect, it } from "vitest"
import { keyFromLabel } from "../../src/client/keys.ts"
import type { Service } from "../../src/runtime/boot.ts"
import { depositRows, withdrawalRows } from "../../src/service/views.ts"
import { withdrawalId } from "../../src/service/withdrawals.ts"
import { HistoryStore } from "../../src/store/history-db.ts"
import { historyPath, rebuildHistory } from "../../src/store/history-rebuild.ts"
import { startDurable, tempDirs } from "../support/history.ts"

const temp = tempDirs("twinbook-ledger-history-")
afterEach(() => temp.cleanup())

const WALLET = "0x5555555555555555555555555555555555555555"
const ADDR = "0x6666666666666666666666666666666666666666"
const TOKEN = "0x00000000000000000000000000000000000000aa"
const rules = { token: TOKEN, minMicro: 1_000_000, maxPerTxMicro: 100_000_000 }
const user = keyFromLabel("ledger-history").user

const activity = async (s: Service) => {
  const x = s.exchange
  const run = (cmd: Parameters<typeof x.submit>[0]) => x.submit(cmd).durable
  const detect = (tx: string, amountMicro: number, token = TOKEN) =>
    run({ type: "deposit_detected", txHash: tx, logIndex: 0, address: ADDR, token, amountMicro, blockNumber: 5, blockHash: "0xb5", rules })
  await run({ type: "watch_address", wallet: WALLET, address: ADDR })
  await detect("0xd1", 8_000_000) // credited once the wallet is linked
  await run({ type: "deposit_confirmed", key: "0xd1:0" })
  await run({ type: "link_wallet", user, wallet: WALLET })
  await detect("0xd2", 3_000_000) // reorged away
  await run({ type: "deposit_reorged", key: "0xd2:0" })
  await detect("0xd3", 5_000_000, "0x00000000000000000000000000000000000000bb") // wrong token
  await run({ type: "withdraw", user, amountMicro: 2_000_000, withdrawNonce: 1, recipient: WALLET })
  const id = withdrawalId(user, 1)
  await run({ type: "withdrawal_sent", id, txHash: "0xpay" })
  await run({ type: "withdrawal_confirmed", id })
  await run({ type: "withdraw", user, amountMicro: 1_000_000, withdrawNonce: 2, recipient: WALLET })
  await run({ type: "withdrawal_refunded", id: withdrawalId(user, 2), reason: "vault underfunded" })
}

const latest = async (path: string) => {
  const store = await HistoryStore.open(path, { readOnly: true })
  try {
    return {
      deposits: await store.run("SELECT tx_signature, amount_micro, seen_at, credited_at, status, stage, error FROM deposits_latest ORDER BY seq DESC"),
      withdrawals: await store.run("SELECT recipient, chain, amount_micro, status, tx_signature, created_at, confirmed_at, error FROM withdrawals_latest ORDER BY seq DESC"),
      changes: await store.run("SELECT count(*) FROM deposits"),
      reorged: await store.run("SELECT count(*) FROM deposits WHERE stage = 'reorged'")
    }
  } finally {
    await store.close()
  }
}

describe("deposits and withdrawals in the history store", () => {
  it("project every change; the latest state equals the service's reads, across restart and rebuild", async () => {
    const dir = temp.fresh()
    const s = await startDurable(dir)
    await activity(s)
    const wantDeposits = depositRows(s.exchange, user).map((d) => [d.tx_signature, d.amount_micro, d.seen_at, d.credited_at, d.status, d.stage, d.error])
    const wantWithdrawals = withdrawalRows(s.exchange, user).map((w) => [w.recipient, w.chain, w.amount_micro, w.status, w.tx_signature, w.created_at, w.confirmed_at, w.error])
    expect(wantDeposits.map((d) => d[4])).toEqual(["error", "credited"])
    expect(wantWithdrawals.map((w) => w[3])).toEqual(["refunded", "confirmed"])
    await s.close()

    const big = (rows: unknown[][]) => rows.map((r) => r.map((v) => (typeof v === "bigint" ? Number(v) : v)))
    const live = await latest(historyPath(dir))
    expect(big(live.deposits)).toEqual(wantDeposits)
    expect(big(live.withdrawals)).toEqual(wantWithdrawals)
    // detected + confirmed + credited-at-link for d1, detected + reorged for d2, detected for d3.
    expect(Number(live.changes[0]![0])).toBe(6)
    expect(Number(live.reorged[0]![0])).toBe(1)

    // A restart projects nothing twice.
    const again = await startDurable(dir)
    await again.close()
    expect(await latest(historyPath(dir))).toEqual(live)

    // Rebuilt from the journal alone: the same rows.
    const rebuilt = `${dir}/rebuilt.duckdb`
    await rebuildHistory(dir, { path: rebuilt })
    expect(await latest(rebuilt)).toEqual(live)
  })
})
