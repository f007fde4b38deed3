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
  it("takes a deposit from detected through confirming to credited, once, then sweeps it into the vault", async () => {
    const { chain, exchange, address, w, step, fund, balance } = world(3)
    fund(5_000_000n)
    expect((await step()).detected).toBe(1)
    expect(depositProgress(exchange, WALLET)).toMatchObject({ stage: "confirming", amount_micro: 5_000_000 })
    await step() // 2 deep
    expect(balance()).toBe(0)
    // 3 deep: credited in this pass, while the funds are still at the forwarder; the sweep is sent.
    expect(await step()).toMatchObject({ confirmed: 1, swept: 0 })
    expect(depositProgress(exchange, WALLET).stage).toBe("credited")
    expect(balance()).toBe(5_000_000)
    expect(chain.balance(chain.info.token, address)).toBe(5_000_000n)
    expect(w.vaultFilling).toBe(true)
    expect(await step()).toMatchObject({ confirmed: 0, swept: 1 }) // sweep mined
    expect(w.vaultFilling).toBe(false)
    expect(chain.balance(chain.info.token, chain.info.vault)).toBe(5_000_000n)
    expect(chain.balance(chain.info.token, address)).toBe(0n)
    for (let i = 0; i < 10; i++) await step()
    expect(balance()).toBe(5_000_000)
  })

  it("credits with 1 confirmation in the pass that first sees the block: detected, confirming and credited together", async () => {
    const { exchange, journal, step, fund, balance } = world(1)
    fund(2_000_000n)
    expect(await step()).toMatchObject({ detected: 1, confirmed: 1 })
    expect(balance()).toBe(2_000_000)
    expect(journal.records.map((r) => r.cmd.type).filter((t) => t.startsWith("deposit_"))).toEqual(["deposit_detected", "deposit_confirming", "deposit_confirmed"])
    expect(depositProgress(exchange, WALLET).stage).toBe("credited")
  })

  it("writes a pass's records without waiting for each, and resolves the pass only once all are durable (a journal failure fails the pass)", async () => {
    const clock = { ms: 1_795_305_600_000 }
    const chain = new SimChain({ seed: 3 })
    const held: Array<{ resolve: () => void; reject: (e: unknown) => void }> = []
    let holding = false
    const exchange = new Exchange(() => clock.ms, {
      append: () => (holding ? new Promise<void>((resolve, reject) => held.push({ resolve, reject })) : Promise.resolve())
    })
    const address = chain.depositAddress(WALLET)
    exchange.submit({ type: "watch_address", wallet: WALLET, address })
    exchange.submit({ type: "link_wallet", user, wallet: WALLET })
    const rules = { token: chain.info.token, minMicro: 1_000_000, maxPerTxMicro: 100_000_000 }
    const w = new DepositWatcher({ chain, exchange, confirmations: 1, rules })
    chain.mint(chain.info.token, SENDER, 4_000_000n)
    chain.mine()
    chain.transfer(chain.info.token, SENDER, address, 4_000_000n)
    chain.mine()
    holding = true
    let done = false
    const pass = w.poll().finally(() => (done = true))
    for (let i = 0; i < 50 && held.length < 3; i++) await new Promise((resolve) => setImmediate(resolve))
    // All three stages were written in this one pass before any was durable; the pass waits for them.
    expect(held).toHaveLength(3)
    expect(done).toBe(false)
    for (const h of held.splice(0)) h.resolve()
    expect(await pass).toMatchObject({ detected: 1, confirmed: 1 })
    // A write that fails fails the pass, after the pass has run its course.
    chain.mint(chain.info.token, SENDER, 2_000_000n)
    chain.mine()
    chain.transfer(chain.info.token, SENDER, address, 2_000_000n)
    chain.mine()
    const failing = w.poll()
    for (let i = 0; i < 50 && held.length < 3; i++) await new Promise((resolve) => setImmediate(resolve))
    held[0]!.reject(new Error("disk full"))
    for (const h of held.slice(1)) h.resolve()
    await expect(failing).rejects.toThrow(/disk full/)
  })

  it("a restarted watcher sweeps a forwarder whose credited funds were never swept (died between credit and sweep)", async () => {
    const { chain, exchange, address, rules, step, fund, balance } = world(1)
    const first = new DepositWatcher({ chain, exchange, confirmations: 1, rules })
    fund(3_000_000n)
    chain.failNext("sweep", "rpc down")
    await expect(step(first)).rejects.toThrow(/rpc down/) // credited, then the sweep failed
    expect(balance()).toBe(3_000_000)
    // The process dies here: the new watcher knows nothing of the owed sweep but finds the tokens.
    const restarted = new DepositWatcher({ chain, exchange, confirmations: 1, rules })
    expect(restarted.vaultFilling).toBe(true) // until it has looked
    await step(restarted)
    await step(restarted)
    expect(chain.balance(chain.info.token, address)).toBe(0n)
    expect(chain.balance(chain.info.token, chain.info.vault)).toBe(3_000_000n)
    expect(restarted.vaultFilling).toBe(false)
    expect(balance()).toBe(3_000_000)
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
