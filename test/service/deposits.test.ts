// The deposit ledger inside the exchange: stages, exactly-once crediting keyed on
// (tx hash, log index), reorgs before confirmation, funds that cannot credit, and
// deposits waiting for a wallet link — all through journaled service commands.
import { describe, expect, it } from "vitest"
import { keyFromLabel } from "../../src/client/keys.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"
import { exchangeHash, restoreExchange, takeExchangeSnapshot } from "../../src/service/exchange-snapshot.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { depositProgress, depositRows } from "../../src/service/views.ts"

const TOKEN = "0x00000000000000000000000000000000000000aa"
const OTHER = "0x00000000000000000000000000000000000000bb"
const WALLET = "0x1111111111111111111111111111111111111111"
const ADDR = "0x2222222222222222222222222222222222222222"
const rules = { token: TOKEN, minMicro: 1_000_000, maxPerTxMicro: 100_000_000 }
const user = keyFromLabel("dep-user").user

const world = () => {
  const clock = { ms: 1_795_305_600_000 }
  const journal = memoryJournal()
  const x = new Exchange(() => clock.ms, journal)
  const run = (cmd: ServiceCommand) => {
    clock.ms += 1000
    return x.submit(cmd).result
  }
  const detect = (tx: string, amountMicro: number, opts: { logIndex?: number; token?: string; address?: string } = {}) =>
    run({
      type: "deposit_detected",
      txHash: tx,
      logIndex: opts.logIndex ?? 0,
      address: opts.address ?? ADDR,
      token: opts.token ?? TOKEN,
      amountMicro,
      blockNumber: 10,
      blockHash: "0xblock10",
      rules
    })
  run({ type: "watch_address", wallet: WALLET, address: ADDR })
  return { x, run, detect, journal, clock }
}
const balance = (x: Exchange) => x.engine.accounts.get(user)?.availableMicro ?? 0

describe("deposit ledger", () => {
  it("detected → confirming → credited once, whatever is replayed", () => {
    const { x, run, detect } = world()
    run({ type: "link_wallet", user, wallet: WALLET })
    detect("0xaaa", 5_000_000)
    expect(depositProgress(x, WALLET)).toMatchObject({ stage: "detected", amount_micro: 5_000_000, tx_signature: "0xaaa" })
    run({ type: "deposit_confirming", key: "0xaaa:0" })
    expect(depositProgress(x, WALLET).stage).toBe("confirming")
    const credited = run({ type: "deposit_confirmed", key: "0xaaa:0" })
    expect(credited.events.filter((e) => e.type === "credited")).toEqual([{ type: "credited", user, amountMicro: 5_000_000, ref: "deposit:0xaaa:0" }])
    expect(balance(x)).toBe(5_000_000)
    // Re-scans and repeated watcher messages change nothing.
    detect("0xaaa", 5_000_000)
    run({ type: "deposit_confirmed", key: "0xaaa:0" })
    run({ type: "deposit_reorged", key: "0xaaa:0" })
    expect(balance(x)).toBe(5_000_000)
    // Same tx, another log: a different deposit.
    detect("0xaaa", 2_000_000, { logIndex: 1 })
    run({ type: "deposit_confirmed", key: "0xaaa:1" })
    expect(balance(x)).toBe(7_000_000)
    expect(depositRows(x, user).map((r) => [r.tx_signature, r.log_index, r.status, r.amount_micro])).toEqual([
      ["0xaaa", 1, "credited", 2_000_000],
      ["0xaaa", 0, "credited", 5_000_000]
    ])
    expect(depositRows(x, user)[1]).toMatchObject({ seen_at: expect.any(Number), credited_at: expect.any(Number) })
  })

  it("credits a deposit that arrived before the wallet was linked, at the link", () => {
    const { x, run, detect } = world()
    detect("0xbbb", 3_000_000)
    run({ type: "deposit_confirmed", key: "0xbbb:0" })
    expect(depositProgress(x, WALLET).stage).toBe("confirming")
    expect(balance(x)).toBe(0)
    const linked = run({ type: "link_wallet", user, wallet: WALLET })
    expect(linked.events.some((e) => e.type === "credited")).toBe(true)
    expect(balance(x)).toBe(3_000_000)
    expect(depositProgress(x, WALLET).stage).toBe("credited")
  })

  it("ends wrong tokens and out-of-range amounts in error with the reason, and never credits them", () => {
    const { x, run, detect } = world()
    run({ type: "link_wallet", user, wallet: WALLET })
    detect("0xc01", 5_000_000, { token: OTHER })
    detect("0xc02", 999_999)
    detect("0xc03", 100_000_001)
    for (const tx of ["0xc01", "0xc02", "0xc03"]) run({ type: "deposit_confirmed", key: `${tx}:0` })
    const rows = depositRows(x, user)
    expect(rows.map((r) => [r.tx_signature, r.status])).toEqual([["0xc03", "error"], ["0xc02", "error"], ["0xc01", "error"]])
    expect(rows.map((r) => r.error)).toEqual([
      expect.stringMatching(/above the per-transfer maximum/),
      expect.stringMatching(/below the minimum/),
      expect.stringMatching(/wrong token/)
    ])
    expect(balance(x)).toBe(0)
    // Bounds are inclusive: exactly the minimum and the maximum credit.
    detect("0xc04", 1_000_000)
    detect("0xc05", 100_000_000)
    run({ type: "deposit_confirmed", key: "0xc04:0" })
    run({ type: "deposit_confirmed", key: "0xc05:0" })
    expect(balance(x)).toBe(101_000_000)
  })

  it("un-detects on a reorg before confirmation; the re-included transfer is detected again", () => {
    const { x, run, detect } = world()
    run({ type: "link_wallet", user, wallet: WALLET })
    detect("0xddd", 4_000_000)
    run({ type: "deposit_reorged", key: "0xddd:0" })
    expect(depositProgress(x, WALLET)).toEqual({ stage: "idle" })
    expect(depositRows(x, user)).toEqual([])
    detect("0xddd", 4_000_000)
    run({ type: "deposit_confirmed", key: "0xddd:0" })
    expect(balance(x)).toBe(4_000_000)
  })

  it("ignores transfers to addresses nobody was given", () => {
    const { x, detect } = world()
    detect("0xeee", 4_000_000, { address: "0x3333333333333333333333333333333333333333" })
    expect(x.deposits.byKey.size).toBe(0)
  })

  it("replays from the journal and from a snapshot to the same state", () => {
    const { x, run, detect, journal, clock } = world()
    detect("0xf01", 2_000_000)
    run({ type: "deposit_confirmed", key: "0xf01:0" })
    run({ type: "link_wallet", user, wallet: WALLET })
    detect("0xf02", 9_000_000)
    const replayed = new Exchange(() => clock.ms, memoryJournal())
    for (const r of journal.records) replayed.apply(r)
    expect(exchangeHash(replayed)).toBe(exchangeHash(x))
    const restored = restoreExchange(JSON.parse(JSON.stringify(takeExchangeSnapshot(x))), () => clock.ms, memoryJournal())
    expect(exchangeHash(restored)).toBe(exchangeHash(x))
    expect(depositRows(restored, user)).toEqual(depositRows(x, user))
  })
})
