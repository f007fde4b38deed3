// The chain guard over the in-memory chain: a reorg deeper than the confirmation depth and a
// chain that went back in time halt crediting and payouts, say why, and never credit the same
// tokens twice; shallow reorgs (within the confirmation depth) are normal and halt nothing; the
// checkpoint survives a restart of the watcher (a new process on the same store); an operator's
// resume re-anchors without crediting a re-included transfer again.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { Address } from "../../src/chain/chain.ts"
import { ChainGuard, fileCheckpointStore, memoryCheckpointStore } from "../../src/chain/guard.ts"
import { PayoutWorker } from "../../src/chain/payouts.ts"
import { SimChain } from "../../src/chain/sim.ts"
import { chainProbe } from "../../src/ops/chain-probe.ts"
import { DepositWatcher } from "../../src/chain/watcher.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { withdrawalId } from "../../src/service/withdrawals.ts"

const WALLET = "0x1111111111111111111111111111111111111111" as Address
const SENDER = "0x9999999999999999999999999999999999999999" as Address
const user = keyFromLabel("guard-user").user

const world = (confirmations: number) => {
  const clock = { ms: 1_795_305_600_000 }
  const chain = new SimChain({ seed: 7, now: () => Math.floor(clock.ms / 1000) })
  const exchange = new Exchange(() => clock.ms, memoryJournal())
  const rules = { token: chain.info.token, minMicro: 1_000_000, maxPerTxMicro: 100_000_000 }
  const address = chain.depositAddress(WALLET)
  exchange.submit({ type: "watch_address", wallet: WALLET, address })
  exchange.submit({ type: "link_wallet", user, wallet: WALLET })
  const store = memoryCheckpointStore()
  const logs: string[] = []
  /** One "process": a guard, a watcher and a payout worker on the shared store. */
  const boot = () => {
    const guard = new ChainGuard({ chain, exchange, store, confirmations, log: (l) => logs.push(l) })
    return {
      guard,
      watcher: new DepositWatcher({ chain, exchange, confirmations, rules, guard, rescanBlocks: 20 }),
      payouts: new PayoutWorker({ chain, exchange, guard })
    }
  }
  let proc = boot()
  const step = async () => {
    clock.ms += 2_000
    chain.mine()
    const report = await proc.watcher.poll()
    await proc.payouts.poll()
    return report
  }
  const fund = (amount: bigint) => {
    chain.mint(chain.info.token, SENDER, amount)
    chain.mine()
    return chain.transfer(chain.info.token, SENDER, address, amount)
  }
  const balance = () => exchange.engine.accounts.get(user)?.availableMicro ?? 0
  const credited = () => [...exchange.deposits.byKey.values()].filter((d) => d.stage === "credited").length
  return {
    clock,
    chain,
    exchange,
    store,
    logs,
    step,
    fund,
    balance,
    credited,
    proc: () => proc,
    restart: () => (proc = boot())
  }
}

describe("chain guard (sim chain)", () => {
  it("rides out reorgs within the confirmation depth without halting, and credits each deposit once", async () => {
    const w = world(4)
    w.chain.mine(5)
    for (let round = 0; round < 5; round++) {
      w.fund(2_000_000n)
      await w.step()
      w.chain.reorg(3) // shallower than the 4 confirmations: normal
      for (let i = 0; i < 6; i++) await w.step()
    }
    expect(w.proc().guard.status()).toMatchObject({ state: "ok", halt: null })
    expect(w.proc().guard.status().checkpoint).not.toBeNull()
    expect(w.balance()).toBe(10_000_000)
    expect(w.credited()).toBe(5)
    expect(w.logs).toEqual([])
  })

  it("halts on a reorg deeper than the confirmation depth: no more credits or payouts, and says why", async () => {
    const w = world(2)
    w.fund(3_000_000n)
    for (let i = 0; i < 4; i++) await w.step()
    expect(w.balance()).toBe(3_000_000)
    // A withdrawal waits for its payout when the deep reorg comes.
    w.exchange.submit({ type: "withdraw", user, amountMicro: 1_000_000, withdrawNonce: 1, recipient: WALLET })
    const id = withdrawalId(user, 1)
    const checkpoint = w.proc().guard.status().checkpoint!
    // Replaces the credited deposit's block and more: the same transfer lands in a new block.
    w.chain.reorg(Number(w.chain.tip.number - checkpoint.blockNumber) + 1)
    const report = await w.step()
    expect(report.halted).toBe(true)
    const status = w.proc().guard.status()
    expect(status.state).toBe("halted")
    expect(status.halt!.reason).toMatch(/reorg deeper than the confirmation depth \(2\) replaced block/)
    expect(status.halt!.expectedHash).toBe(checkpoint.hash)
    expect(status.halt!.foundHash).not.toBe(checkpoint.hash)
    expect(w.logs).toHaveLength(1)
    expect(w.logs[0]).toMatch(/^chain guard: HALTED/)
    // A new deposit and many more blocks: nothing is detected, credited or paid out.
    const depositsBefore = w.exchange.deposits.byKey.size
    w.fund(5_000_000n)
    for (let i = 0; i < 8; i++) await w.step()
    expect(w.exchange.deposits.byKey.size).toBe(depositsBefore)
    expect(w.balance()).toBe(2_000_000)
    expect(w.exchange.withdrawals.byId.get(id)!.status).toBe("pending")
    expect(w.chain.pending().filter((tx) => tx.kind === "payout")).toEqual([])
    expect(w.logs).toHaveLength(1) // one line, not one per pass
  })

  it("halts when the chain goes back in time below a credited deposit, also in a restarted process", async () => {
    const w = world(1)
    const before = w.chain.tip.number
    w.fund(4_000_000n)
    for (let i = 0; i < 3; i++) await w.step()
    expect(w.balance()).toBe(4_000_000)
    // The embedded chain restarted from an old state file: the deposit and its sweep are gone.
    const lost = w.chain.rollback(before)
    expect(lost.some((tx) => tx.kind === "transfer")).toBe(true)
    w.restart() // a new process: the checkpoint comes from the store
    // A block missing once could be a lagging RPC node: the pass only waits; the next one halts.
    // In between the chain is not checked, so /v1/ready's probe must not call it ready (test/ops/backup.test.ts).
    const probe = chainProbe({ chain: w.chain, watcher: w.proc().watcher, guard: w.proc().guard, timeoutMs: 1000 })
    expect((await w.step()).halted).toBe(false)
    expect(w.proc().guard.status().state).toBe("ok")
    expect(w.proc().watcher.passed).toBe(true)
    expect(await probe.probe()).toMatchObject({ halted: false, checked: false, deciding: true })
    expect((await w.step()).halted).toBe(true)
    expect(await probe.probe()).toMatchObject({ halted: true, deciding: false })
    const status = w.proc().guard.status()
    expect(status.state).toBe("halted")
    expect(status.halt!.reason).toMatch(/^the chain went back: block \d+ is gone/)
    // The depositor sends the same amount again (the chain gave it back): not credited.
    w.fund(4_000_000n)
    for (let i = 0; i < 6; i++) await w.step()
    expect(w.balance()).toBe(4_000_000)
    expect(w.credited()).toBe(1)
  })

  it("with no checkpoint yet, anchors on the newest credited deposit's block", async () => {
    const w = world(1)
    const before = w.chain.tip.number
    w.fund(2_000_000n)
    for (let i = 0; i < 3; i++) await w.step()
    expect(w.credited()).toBe(1)
    w.store.current = null // a data directory from before the guard
    w.chain.rollback(before)
    w.chain.mine(10) // the head is higher than before, but the deposit's block is another one
    w.restart()
    expect((await w.step()).halted).toBe(true)
    expect(w.proc().guard.status().halt!.blockNumber).toBe(before + 2n)
  })

  it("after an operator's resume, a re-included transfer at another log index is not credited again", async () => {
    const w = world(1)
    const tx = w.fund(6_000_000n)
    w.chain.mint(w.chain.info.token, SENDER, 1n) // mined in the deposit's block, after it
    for (let i = 0; i < 3; i++) await w.step()
    expect(w.balance()).toBe(6_000_000)
    const credited = [...w.exchange.deposits.byKey.values()].find((d) => d.txHash === tx)!
    expect(credited.key).toBe(`${tx}:0`)
    // A deep reorg re-includes the transfer behind the mint, so its log index changes.
    const depth = Number(w.chain.tip.number - BigInt(credited.blockNumber)) + 1
    w.chain.reorg(depth, { reorder: (txs) => [...txs].reverse() })
    const moved = w.chain.block(BigInt(credited.blockNumber))!.txs.find((m) => m.tx.hash === tx)!
    expect(moved.log!.logIndex).toBe(1)
    await w.step()
    expect(w.proc().guard.status().state).toBe("halted")
    const status = await w.proc().guard.resume()
    expect(status.state).toBe("ok")
    expect(w.logs.at(-1)).toMatch(/resumed by the operator/)
    for (let i = 0; i < 6; i++) await w.step()
    expect(w.balance()).toBe(6_000_000)
    // Deposits after the resume credit as usual.
    w.fund(1_000_000n)
    for (let i = 0; i < 4; i++) await w.step()
    expect(w.balance()).toBe(7_000_000)
  })
})

describe("the checkpoint file", () => {
  it("round-trips, and a damaged file is refused with a message saying what to do (never a bare parse error)", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "checkpoint-")), "chain-checkpoint.json")
    const store = fileCheckpointStore(path)
    expect(store.load()).toBeNull()
    await store.save({ blockNumber: 42n, hash: `0x${"ab".repeat(32)}` })
    expect(store.load()).toEqual({ blockNumber: 42n, hash: `0x${"ab".repeat(32)}` })
    for (const damaged of ['{"block_number":"42","hash":"0xab', "\u0000\u0000", '{"block_number":42}', "null"]) {
      writeFileSync(path, damaged)
      expect(() => store.load()).toThrow(/is malformed; restore it or remove it/)
    }
  })
})
