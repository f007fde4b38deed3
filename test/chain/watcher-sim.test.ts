// The deposit watcher over the in-memory chain: stages, exactly-once crediting
// across re-scans and restarts, reorgs before confirmation, RPC faults, missed
// logs, and transfers that must not credit.
import { describe, expect, it } from "vitest"
import type { Address } from "../../src/chain/chain.ts"
import { SimChain } from "../../src/chain/sim.ts"
import { DepositWatcher } from "../../src/chain/watcher.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { depositProgress } from "../../src/service/views.ts"

const WALLET = "0x1111111111111111111111111111111111111111" as Address
const SENDER = "0x9999999999999999999999999999999999999999" as Address
const OTHER_TOKEN = "0x0000000000000000000000000000000000007777" as Address
const user = keyFromLabel("watch-user").user

const world = (confirmations = 3, seed = 1) => {
  const clock = { ms: 1_795_305_600_000 }
  const chain = new SimChain({ seed, now: () => Math.floor(clock.ms / 1000) })
  const journal = memoryJournal()
  const exchange = new Exchange(() => clock.ms, journal)
  const rules = { token: chain.info.token, minMicro: 1_000_000, maxPerTxMicro: 100_000_000 }
  const address = chain.depositAddress(WALLET)
  exchange.submit({ type: "watch_address", wallet: WALLET, address })
  exchange.submit({ type: "link_wallet", user, wallet: WALLET })
  const watcher = () => new DepositWatcher({ chain, exchange, confirmations, rules, rescanBlocks: 6 })
  const w = watcher()
  /** Mines a block, advances time, polls. */
  const step = async (watch = w) => {
    clock.ms += 2_000
    chain.mine()
    return watch.poll()
  }
  const fund = (amount: bigint, token: Address = chain.info.token) => {
    chain.mint(token, SENDER, amount)
    chain.mine()
    return chain.transfer(token, SENDER, address, amount)
  }
  const balance = () => exchange.engine.accounts.get(user)?.availableMicro ?? 0
  return { clock, chain, journal, exchange, rules, address, watcher, w, step, fund, balance }
}

describe("deposit watcher (sim chain)", () => {
  it("takes a deposit from detected through confirming to credited, once, and sweeps it into the vault", async () => {
    const { chain, exchange, address, w, step, fund, balance } = world(3)
    fund(5_000_000n)
    expect((await step()).detected).toBe(1)
    expect(depositProgress(exchange, WALLET)).toMatchObject({ stage: "confirming", amount_micro: 5_000_000 })
    await step() // 2 deep
    await step() // 3 deep: the sweep is sent
    expect(balance()).toBe(0)
    expect((await step()).confirmed).toBe(1) // sweep mined
    expect(depositProgress(exchange, WALLET).stage).toBe("credited")
    expect(balance()).toBe(5_000_000)
    expect(chain.balance(chain.info.token, chain.info.vault)).toBe(5_000_000n)
    expect(chain.balance(chain.info.token, address)).toBe(0n)
    for (let i = 0; i < 10; i++) await step()
    expect(balance()).toBe(5_000_000)
    void w
  })

  it("never double-credits across re-scans, a restarted watcher, or a replay of the journal", async () => {
    const { clock, exchange, journal, watcher, step, fund, balance } = world(1)
    fund(2_000_000n)
    for (let i = 0; i < 3; i++) await step()
    expect(balance()).toBe(2_000_000)
    // A fresh watcher starts scanning from block 0 again.
    const again = watcher()
    for (let i = 0; i < 3; i++) await step(again)
    expect(balance()).toBe(2_000_000)
    const replayed = new Exchange(() => clock.ms, memoryJournal())
    for (const r of journal.records) replayed.apply(r)
    expect(exchangeHash(replayed)).toBe(exchangeHash(exchange))
  })

  it("un-detects a deposit whose block is reorged away before confirmation, and never credits it", async () => {
    const { chain, exchange, step, fund, balance } = world(3)
    const tx = fund(4_000_000n)
    await step()
    expect(depositProgress(exchange, WALLET).stage).toBe("confirming")
    chain.reorg(1, { dropTx: (t) => t.hash === tx })
    const report = await step()
    expect(report.reorged).toBe(1)
    expect(depositProgress(exchange, WALLET)).toEqual({ stage: "idle" })
    for (let i = 0; i < 6; i++) await step()
    expect(balance()).toBe(0)
  })

  it("re-detects a transfer re-included in a new block after a reorg, and credits it once", async () => {
    const { chain, step, fund, balance } = world(3)
    fund(3_000_000n)
    await step()
    chain.reorg(2) // same txs, new block hashes
    for (let i = 0; i < 6; i++) await step()
    expect(balance()).toBe(3_000_000)
  })

  it("sends one sweep for deposits to an address that are ready together; a later deposit gets its own", async () => {
    const { chain, exchange, step, fund, balance } = world(1)
    const sweepTxs = () => {
      let n = 0
      for (let b = 0n; chain.block(b) !== null; b++) n += chain.block(b)!.txs.filter((m) => m.tx.kind === "sweep").length
      return n + chain.pending().filter((tx) => tx.kind === "sweep").length
    }
    fund(1_000_000n)
    fund(2_000_000n)
    fund(3_000_000n)
    for (let i = 0; i < 3; i++) await step()
    expect(balance()).toBe(6_000_000)
    expect(sweepTxs()).toBe(1)
    fund(4_000_000n)
    for (let i = 0; i < 3; i++) await step()
    expect(balance()).toBe(10_000_000)
    expect(sweepTxs()).toBe(2)
    expect(chain.balance(chain.info.token, chain.info.vault)).toBe(10_000_000n)
    expect(exchange.deposits.ofWallet(WALLET).map((d) => d.stage)).toEqual(["credited", "credited", "credited", "credited"])
  })

  it("sweeps again when a reorg drops its sweep, and then credits once", async () => {
    const { chain, exchange, rules, step, fund, balance } = world(1)
    const w = new DepositWatcher({ chain, exchange, confirmations: 1, rules, maxPendingPolls: 3 })
    fund(2_000_000n)
    chain.mine()
    await w.poll() // 1 deep: the sweep is sent
    chain.mine() // and mined
    // A reorg keeps the deposit but drops the sweep: its receipt never comes.
    expect(chain.reorg(1, { dropTx: (t) => t.kind === "sweep" })).toHaveLength(1)
    for (let i = 0; i < 5; i++) await step(w)
    expect(depositProgress(exchange, WALLET).stage).toBe("credited")
    expect(balance()).toBe(2_000_000)
    expect(chain.balance(chain.info.token, chain.info.vault)).toBe(2_000_000n)
    for (let i = 0; i < 5; i++) await step(w)
    expect(balance()).toBe(2_000_000)
  })

  it("ends wrong tokens and out-of-range amounts in error with the reason and leaves the funds unswept", async () => {
    const { chain, exchange, address, step, fund, balance } = world(1)
    fund(5_000_000n, OTHER_TOKEN)
    await step()
    fund(500_000n)
    await step()
    fund(200_000_000n)
    for (let i = 0; i < 4; i++) await step()
    const stages = exchange.deposits.ofWallet(WALLET).map((d) => [d.amountMicro, d.stage, d.error?.split(" ")[0]])
    expect(stages).toEqual([
      [5_000_000, "error", "wrong"],
      [500_000, "error", "amount"],
      [200_000_000, "error", "amount"]
    ])
    expect(balance()).toBe(0)
    expect(chain.balance(OTHER_TOKEN, address)).toBe(5_000_000n)
    expect(chain.balance(chain.info.token, address)).toBe(200_500_000n)
    expect(chain.balance(chain.info.token, chain.info.vault)).toBe(0n)
  })

  it("rides out RPC faults and a missed log: the next polls catch up, credit exactly once", async () => {
    const { chain, w, step, fund, balance } = world(1)
    const tx = fund(7_000_000n)
    chain.dropLog(tx) // the first scan misses it; the re-scan window catches it
    await step()
    expect(balance()).toBe(0)
    chain.failNext("sweep", "rpc down")
    chain.failNext("head", "rpc down")
    await expect(step()).rejects.toThrow(/rpc down/)
    await step().catch(() => undefined)
    for (let i = 0; i < 4; i++) await step()
    expect(balance()).toBe(7_000_000)
    void w
  })
})
