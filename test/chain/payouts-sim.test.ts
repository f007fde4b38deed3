// Withdrawals end to end on the in-memory chain: debit first, pay the linked
// wallet once, confirm automatically; lost replies and crashes never pay twice;
// a payout that keeps failing is refunded; nothing is lost.
import { describe, expect, it } from "vitest"
import type { Address, Hash } from "../../src/chain/chain.ts"
import { PayoutWorker } from "../../src/chain/payouts.ts"
import { SimChain } from "../../src/chain/sim.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { withdrawalRows } from "../../src/service/views.ts"

const WALLET = "0x4444444444444444444444444444444444444444" as Address
const user = keyFromLabel("payout-user").user

const world = (vaultFunds = 50_000_000n, estimateGas = false) => {
  const clock = { ms: 1_795_305_600_000 }
  const chain = new SimChain({ seed: 9, estimateGas })
  chain.mint(chain.info.token, chain.info.vault, vaultFunds)
  chain.mine()
  const journal = memoryJournal()
  const exchange = new Exchange(() => clock.ms, journal)
  exchange.submit({ type: "link_wallet", user, wallet: WALLET })
  exchange.submit({ type: "credit", user, amountMicro: 20_000_000, ref: "seed" })
  const worker = new PayoutWorker({ chain, exchange, maxAttempts: 3 })
  const step = async (w = worker) => {
    clock.ms += 1_000
    const report = await w.poll()
    chain.mine()
    return report
  }
  const withdraw = (amountMicro: number, nonce: number) =>
    exchange.submit({ type: "withdraw", user, amountMicro, withdrawNonce: nonce, recipient: WALLET }).result
  const available = () => exchange.engine.accounts.get(user)?.availableMicro ?? 0
  return { clock, chain, exchange, journal, worker, step, withdraw, available }
}

describe("withdrawals (sim chain)", () => {
  it("debits first, pays the linked wallet once, and confirms automatically", async () => {
    const { chain, exchange, step, withdraw, available } = world()
    expect(withdraw(7_000_000, 1).events[0]).toMatchObject({ type: "debited", amountMicro: 7_000_000, withdrawNonce: 1 })
    expect(available()).toBe(13_000_000)
    expect(withdrawalRows(exchange, user)[0]).toMatchObject({ status: "pending", tx_signature: null, recipient: WALLET, chain: "native" })
    await step() // sent
    expect(withdrawalRows(exchange, user)[0]!.status).toBe("sent")
    await step() // receipt: confirmed
    const [row] = withdrawalRows(exchange, user)
    expect(row).toMatchObject({ status: "confirmed", amount_micro: 7_000_000, tx_signature: expect.stringMatching(/^0x/) })
    expect(row!.confirmed_at).toEqual(expect.any(Number))
    expect(chain.balance(chain.info.token, WALLET)).toBe(7_000_000n)
    for (let i = 0; i < 5; i++) await step()
    expect(chain.balance(chain.info.token, WALLET)).toBe(7_000_000n)
  })

  it("rejects a reused withdraw nonce or an overdraft in the engine and changes nothing", () => {
    const { withdraw, available, exchange } = world()
    withdraw(1_000_000, 5)
    expect(withdraw(1_000_000, 5).events[0]).toMatchObject({ type: "rejected", reason: "withdraw_nonce_stale" })
    expect(withdraw(1_000_000, 4).events[0]).toMatchObject({ type: "rejected", reason: "withdraw_nonce_stale" })
    expect(withdraw(25_000_000, 6).events[0]).toMatchObject({ type: "rejected", reason: "insufficient_balance" })
    expect(available()).toBe(19_000_000)
    expect(exchange.withdrawals.byId.size).toBe(1)
  })

  it("never pays twice when the reply is lost or the worker restarts mid-payout", async () => {
    const { chain, exchange, worker, step, withdraw } = world()
    withdraw(3_000_000, 1)
    // The payout is submitted but its reply is lost: the worker sees an error.
    chain.failNext("payout", "reply lost", 1, { afterSubmit: true })
    await step().catch(() => undefined)
    // A fresh worker (a restart) finds the withdrawal still pending and sends again.
    const restarted = new PayoutWorker({ chain, exchange })
    for (let i = 0; i < 4; i++) await step(restarted)
    expect(chain.balance(chain.info.token, WALLET)).toBe(3_000_000n)
    expect(withdrawalRows(exchange, user)[0]!.status).toBe("confirmed")
    void worker
  })

  it("refunds a payout the vault cannot make, exactly once", async () => {
    const { exchange, step, withdraw, available } = world(1_000_000n)
    withdraw(5_000_000, 1)
    expect(available()).toBe(15_000_000)
    for (let i = 0; i < 10; i++) await step()
    const [row] = withdrawalRows(exchange, user)
    expect(row).toMatchObject({ status: "refunded", error: expect.stringMatching(/reverted 3 times/) })
    expect(available()).toBe(20_000_000)
    // Money conserved: nothing left the vault, the user has it all back.
    let held = 0
    for (const a of exchange.engine.accounts.values()) held += a.availableMicro + a.lockedMicro
    expect(held).toBe(exchange.engine.netDepositsMicro)
  })

  it("a payout the vault cannot make while credited deposits are still being swept in waits for them instead of counting attempts", async () => {
    const { chain, exchange, withdraw, clock } = world(1_000_000n, true)
    let filling = true
    const worker = new PayoutWorker({ chain, exchange, maxAttempts: 3, vaultFilling: () => filling })
    const step = async () => {
      clock.ms += 1_000
      await worker.poll()
      chain.mine()
    }
    withdraw(5_000_000, 1)
    for (let i = 0; i < 6; i++) await step() // twice the attempts: none counted
    expect(withdrawalRows(exchange, user)[0]).toMatchObject({ status: "pending", tx_signature: null })
    // The sweep lands: the vault can pay now.
    chain.mint(chain.info.token, chain.info.vault, 10_000_000n)
    chain.mine()
    filling = false
    await step() // sent
    await step() // confirmed
    expect(withdrawalRows(exchange, user)[0]).toMatchObject({ status: "confirmed" })
    expect(chain.balance(chain.info.token, WALLET)).toBe(5_000_000n)
  })

  it("a payout refused before sending (ChainReverted, as a live chain's gas estimate refuses it) is refunded without anything sent", async () => {
    const { chain, exchange, step, withdraw, available } = world(1_000_000n, true)
    // The same tag a live chain gives for a real revert (test/chain/live.test.ts, on Anvil).
    await expect(chain.payout(WALLET, 5_000_000n, `0x${"cd".repeat(32)}` as Hash)).rejects.toMatchObject({ _tag: "ChainReverted" })
    withdraw(5_000_000, 1)
    for (let i = 0; i < 2; i++) await step()
    expect(withdrawalRows(exchange, user)[0]).toMatchObject({ status: "pending", tx_signature: null })
    await step() // the third refused attempt: refunded
    expect(withdrawalRows(exchange, user)[0]).toMatchObject({ status: "refunded", tx_signature: null, error: expect.stringMatching(/reverted 3 times/) })
    expect(chain.pending()).toEqual([])
    expect(chain.balance(chain.info.token, WALLET)).toBe(0n)
    expect(available()).toBe(20_000_000)
  })

  it("an unavailable chain (ChainUnavailable) is not a revert: the pass fails, the payout stays pending and is retried", async () => {
    const { chain, exchange, worker } = world()
    exchange.submit({ type: "withdraw", user, amountMicro: 1_000_000, withdrawNonce: 1, recipient: WALLET })
    chain.failNext("payout", "rpc down")
    await expect(worker.poll()).rejects.toMatchObject({ _tag: "ChainUnavailable", message: "rpc down" })
    expect(withdrawalRows(exchange, user)[0]!.status).toBe("pending")
  })

  it("one failing payout does not hold up the others in the pass", async () => {
    const { chain, exchange, worker, step, available } = world()
    const other = keyFromLabel("payout-user-2").user
    const OTHER_WALLET = "0x5555555555555555555555555555555555555555" as Address
    exchange.submit({ type: "link_wallet", user: other, wallet: OTHER_WALLET })
    exchange.submit({ type: "credit", user: other, amountMicro: 5_000_000, ref: "seed-2" })
    exchange.submit({ type: "withdraw", user, amountMicro: 1_000_000, withdrawNonce: 1, recipient: WALLET })
    exchange.submit({ type: "withdraw", user: other, amountMicro: 2_000_000, withdrawNonce: 1, recipient: OTHER_WALLET })
    chain.failNext("payout", "rpc down") // the first withdrawal's send fails
    await expect(worker.poll()).rejects.toThrow(/rpc down/)
    expect(withdrawalRows(exchange, user)[0]!.status).toBe("pending")
    expect(withdrawalRows(exchange, other)[0]!.status).toBe("sent")
    for (let i = 0; i < 3; i++) await step()
    expect(chain.balance(chain.info.token, WALLET)).toBe(1_000_000n)
    expect(chain.balance(chain.info.token, OTHER_WALLET)).toBe(2_000_000n)
    expect(available()).toBe(19_000_000)
  })

  it("pays only ids it has not paid: a repeated payout id reverts on chain", async () => {
    const { chain } = world()
    const id = `0x${"ab".repeat(32)}` as Hash
    const first = await chain.payout(WALLET, 1_000_000n, id)
    chain.mine()
    const second = await chain.payout(WALLET, 1_000_000n, id)
    chain.mine()
    expect((await chain.receipt(first))?.status).toBe("success")
    expect((await chain.receipt(second))?.status).toBe("reverted")
    expect(await chain.paidOut(id)).toBe(first)
    expect(chain.balance(chain.info.token, WALLET)).toBe(1_000_000n)
  })
})

describe("payouts wait for the journal", () => {
  // A withdrawal applied in memory but not yet on disk must not be paid: a crash would lose
  // the debit while the vault had already paid (found by the storage-chaos review).
  it("sends nothing until the withdrawal's debit is durable, and nothing at all if the journal fails", async () => {
    const chain = new SimChain({ seed: 9 })
    chain.mint(chain.info.token, chain.info.vault, 50_000_000n)
    chain.mine()
    const held: Array<{ resolve: () => void; reject: (e: unknown) => void }> = []
    let holding = false
    const exchange = new Exchange(() => 1_795_305_600_000, {
      append: () => (holding ? new Promise<void>((resolve, reject) => held.push({ resolve, reject })) : Promise.resolve())
    })
    exchange.submit({ type: "link_wallet", user, wallet: WALLET })
    exchange.submit({ type: "credit", user, amountMicro: 20_000_000, ref: "seed" })
    const worker = new PayoutWorker({ chain, exchange, maxAttempts: 3 })
    holding = true
    exchange.submit({ type: "withdraw", user, amountMicro: 5_000_000, withdrawNonce: 1, recipient: WALLET })
    const pass = worker.poll()
    for (let i = 0; i < 20; i++) await Promise.resolve()
    chain.mine()
    expect(chain.balance(chain.info.token, WALLET)).toBe(0n)
    holding = false
    held.shift()!.resolve()
    await pass
    chain.mine()
    expect(chain.balance(chain.info.token, WALLET)).toBe(5_000_000n)
    await worker.poll() // confirms the first one, so only the next withdrawal is open
    expect(withdrawalRows(exchange, user)[0]!.status).toBe("confirmed")

    holding = true
    const lost = exchange.submit({ type: "withdraw", user, amountMicro: 3_000_000, withdrawNonce: 2, recipient: WALLET })
    lost.durable.catch(() => {}) // the service would fail-stop here; the worker must not pay meanwhile
    const failing = worker.poll()
    for (let i = 0; i < 20; i++) await Promise.resolve()
    held.shift()!.reject(new Error("EIO"))
    await expect(failing).rejects.toThrow("EIO")
    chain.mine()
    expect(chain.balance(chain.info.token, WALLET)).toBe(5_000_000n)
  })
})
