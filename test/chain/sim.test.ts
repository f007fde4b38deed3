import { describe, expect, it } from "vitest"
import type { Address, Hash } from "../../src/chain/chain.ts"
import { SIM_CHAIN_INFO, SimChain, SimRpcError, ZERO_ADDRESS } from "../../src/chain/sim.ts"

/** A distinct withdrawal id per payout (the vault pays each id once). */
const wid = (n: number): `0x${string}` => `0x${n.toString(16).padStart(64, "0")}`

const USDG = SIM_CHAIN_INFO.token
const VAULT = SIM_CHAIN_INFO.vault
const OTHER = "0x00000000000000000000000000000000000000ee" as Address
const alice = "0xa11ce00000000000000000000000000000000001" as Address
const bob = "0xb0b0000000000000000000000000000000000002" as Address
const carol = "0xca201000000000000000000000000000000000c3" as Address

/** A chain where alice holds 100 USDG (6 decimals) and 5 OTHER, mined in block 1. */
const funded = (seed: string | number = "t") => {
  const chain = new SimChain({ seed })
  chain.mint(USDG, alice, 100_000_000n)
  chain.mint(OTHER, alice, 5n)
  chain.mine()
  return chain
}

const rejection = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => expect.unreachable("expected a rejection"),
    (error: unknown) => error
  )

describe("SimChain: blocks, transfers and logs", () => {
  it("starts at genesis with the configured info", async () => {
    const chain = new SimChain()
    expect(chain.info).toEqual({ chainId: 4663, token: USDG, vault: VAULT, factory: SIM_CHAIN_INFO.factory })
    expect(await chain.head()).toBe(0n)
    expect(await chain.blockHash(0n)).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await chain.blockHash(1n)).toBeNull()
    expect(await chain.blockHash(-1n)).toBeNull()
    expect(chain.mine(3)).toBe(3n)
    expect(new Set(await Promise.all([0n, 1n, 2n, 3n].map((n) => chain.blockHash(n)))).size).toBe(4)
  })

  it("a transfer waits for the next block, then emits a Transfer log", async () => {
    const chain = funded()
    const tx = chain.transfer(USDG, alice, bob, 1_500_000n)
    expect(chain.pending().map((t) => t.hash)).toEqual([tx])
    expect(await chain.receipt(tx)).toBeNull()
    expect(await chain.transfersTo([bob], 0n, 10n)).toEqual([])
    expect(await chain.balanceOf(USDG, bob)).toBe(0n)

    expect(chain.mine()).toBe(2n)
    expect(chain.pending()).toEqual([])
    expect(await chain.receipt(tx)).toEqual({ status: "success", blockNumber: 2n })
    expect(await chain.transfersTo([bob], 0n, 2n)).toEqual([
      { token: USDG, from: alice, to: bob, amount: 1_500_000n, txHash: tx, logIndex: 0, blockNumber: 2n, blockHash: await chain.blockHash(2n) }
    ])
    expect(await chain.balanceOf(USDG, bob)).toBe(1_500_000n)
    expect(await chain.balanceOf(USDG, alice)).toBe(98_500_000n)
  })

  it("transfersTo returns logs of any token to the given recipients, by (block, logIndex), within range", async () => {
    const chain = funded()
    const t1 = chain.transfer(USDG, alice, bob, 1n)
    const t2 = chain.transfer(USDG, alice, carol, 2n)
    const t3 = chain.transfer(OTHER, alice, bob, 3n)
    chain.mine()
    const t4 = chain.transfer(USDG, alice, carol, 4n)
    chain.mine(2)
    const t5 = chain.transfer(USDG, alice, bob, 5n)
    chain.mine()

    const logs = await chain.transfersTo([bob, carol.toUpperCase().replace("0X", "0x") as Address], 0n, 100n)
    expect(logs.map((l) => [l.txHash, l.blockNumber, l.logIndex, l.token])).toEqual([
      [t1, 2n, 0, USDG],
      [t2, 2n, 1, USDG],
      [t3, 2n, 2, OTHER],
      [t4, 3n, 0, USDG],
      [t5, 5n, 0, USDG]
    ])
    expect((await chain.transfersTo([carol], 3n, 4n)).map((l) => l.txHash)).toEqual([t4])
    expect((await chain.transfersTo([bob], 3n, 4n)).map((l) => l.txHash)).toEqual([])
    expect(await chain.transfersTo([bob], 5n, 4n)).toEqual([])
    expect(await chain.transfersTo([], 0n, 100n)).toEqual([])
    // Mints are Transfer logs from the zero address.
    expect((await chain.transfersTo([alice], 0n, 1n)).map((l) => [l.from, l.amount])).toEqual([
      [ZERO_ADDRESS, 100_000_000n],
      [ZERO_ADDRESS, 5n]
    ])
  })

  it("an uncovered transfer is mined as reverted, with no log and no balance change", async () => {
    const chain = funded()
    const tx = chain.transfer(USDG, bob, carol, 1n)
    chain.mine()
    expect(await chain.receipt(tx)).toEqual({ status: "reverted", blockNumber: 2n })
    expect(await chain.transfersTo([carol], 0n, 2n)).toEqual([])
    expect(await chain.balanceOf(USDG, bob)).toBe(0n)
    expect(await chain.balanceOf(USDG, carol)).toBe(0n)
  })

  it("conserves balances: the holders' sum stays what was minted", async () => {
    const chain = funded()
    const holders = [alice, bob, carol, VAULT]
    const moves: Array<[Address, Address, bigint]> = [
      [alice, bob, 30_000_000n],
      [bob, carol, 10_000_000n],
      [carol, bob, 20_000_000n], // uncovered: reverts
      [alice, VAULT, 25_000_000n],
      [bob, bob, 5n]
    ]
    for (const [i, [from, to, amount]] of moves.entries()) {
      chain.transfer(USDG, from, to, amount)
      if (i % 2 === 1) chain.mine()
    }
    chain.mine()
    const balances = await Promise.all(holders.map((h) => chain.balanceOf(USDG, h)))
    expect(balances).toEqual([45_000_000n, 20_000_000n, 10_000_000n, 25_000_000n])
    expect(balances.reduce((a, b) => a + b, 0n)).toBe(100_000_000n)
    expect(await chain.balanceOf(OTHER, alice)).toBe(5n)
  })

  it("rejects malformed addresses and negative amounts", async () => {
    const chain = new SimChain()
    expect(() => chain.transfer(USDG, alice, "0x1234" as Address, 1n)).toThrow(/invalid address/)
    expect(() => chain.mint(USDG, alice, -1n)).toThrow(RangeError)
    expect(await rejection(chain.payout(bob, -1n, wid(1)))).toBeInstanceOf(RangeError)
    expect(await rejection(chain.balanceOf(USDG, "nope" as Address))).toBeInstanceOf(TypeError)
    // A watch list's addresses are checked once and remembered: a malformed one is refused every time it is asked for.
    const logs = funded()
    for (let i = 0; i < 2; i++) expect(await rejection(logs.transfersTo([bob, "0x1234" as Address], 0n, 1n))).toBeInstanceOf(TypeError)
    expect(await logs.transfersTo([alice.toUpperCase().replace("0X", "0x") as Address], 0n, 1n)).toHaveLength(2)
  })

  it("stamps blocks with blockTimeSec or the injected clock", () => {
    const plain = new SimChain({ genesisTimeSec: 1000, blockTimeSec: 12 })
    plain.mine(2)
    expect([0n, 1n, 2n].map((n) => plain.block(n)?.timestampSec)).toEqual([1000, 1012, 1024])
    let clock = 5000
    const timed = new SimChain({ genesisTimeSec: 1000, now: () => clock })
    timed.mine()
    clock = 4000 // never runs backwards
    timed.mine()
    expect([1n, 2n].map((n) => timed.block(n)?.timestampSec)).toEqual([5000, 5000])
  })
})

describe("SimChain: deposit addresses, sweep and payout", () => {
  it("depositAddress is a lowercase, deterministic function of (factory, wallet)", () => {
    const a = new SimChain({ seed: 1 })
    const b = new SimChain({ seed: 2 })
    const address = a.depositAddress(alice)
    expect(address).toMatch(/^0x[0-9a-f]{40}$/)
    expect(b.depositAddress(alice)).toBe(address)
    expect(a.depositAddress(alice.toUpperCase().replace("0X", "0x") as Address)).toBe(address)
    expect(a.depositAddress(bob)).not.toBe(address)
    expect(new SimChain({ info: { factory: "0x00000000000000000000000000000000000f0f0f" } }).depositAddress(alice)).not.toBe(address)
    expect(() => a.depositAddress("0xabc" as Address)).toThrow(/invalid address/)
  })

  it("a deposit address takes funds with nothing deployed; sweep moves its whole balance of any token to the vault", async () => {
    const chain = funded()
    const forwarder = chain.depositAddress(bob)
    chain.transfer(USDG, alice, forwarder, 3_000_000n)
    chain.transfer(USDG, alice, forwarder, 2_000_000n)
    chain.transfer(OTHER, alice, forwarder, 5n)
    chain.mine()
    expect(await chain.balanceOf(USDG, forwarder)).toBe(5_000_000n)

    const sweep = await chain.sweep(bob, USDG)
    const sweepOther = await chain.sweep(bob, OTHER)
    expect(await chain.receipt(sweep)).toBeNull()
    chain.mine()
    expect(await chain.receipt(sweep)).toEqual({ status: "success", blockNumber: 3n })
    expect(await chain.receipt(sweepOther)).toEqual({ status: "success", blockNumber: 3n })
    expect(await chain.balanceOf(USDG, forwarder)).toBe(0n)
    expect(await chain.balanceOf(OTHER, forwarder)).toBe(0n)
    expect(await chain.balanceOf(USDG, VAULT)).toBe(5_000_000n)
    expect(await chain.balanceOf(OTHER, VAULT)).toBe(5n)
    const [log] = await chain.transfersTo([VAULT], 3n, 3n)
    expect(log).toMatchObject({ token: USDG, from: forwarder, to: VAULT, amount: 5_000_000n, txHash: sweep, logIndex: 0 })

    // Nothing left to sweep: success without a log.
    const empty = await chain.sweep(bob, USDG)
    chain.mine()
    expect(await chain.receipt(empty)).toEqual({ status: "success", blockNumber: 4n })
    expect(await chain.transfersTo([VAULT], 4n, 4n)).toEqual([])
  })

  it("payout pays the deposit token from the vault once mined; reverted when the vault is short", async () => {
    const chain = funded()
    chain.transfer(USDG, alice, VAULT, 10_000_000n)
    chain.mine()
    const paid = await chain.payout(carol, 7_000_000n, wid(2))
    expect(await chain.receipt(paid)).toBeNull()
    chain.mine()
    expect(await chain.receipt(paid)).toEqual({ status: "success", blockNumber: 3n })
    expect(await chain.balanceOf(USDG, carol)).toBe(7_000_000n)
    expect(await chain.balanceOf(USDG, VAULT)).toBe(3_000_000n)

    const short = await chain.payout(carol, 3_000_001n, wid(3))
    chain.mine()
    expect(await chain.receipt(short)).toEqual({ status: "reverted", blockNumber: 4n })
    expect(await chain.balanceOf(USDG, carol)).toBe(7_000_000n)
    expect(await chain.balanceOf(USDG, VAULT)).toBe(3_000_000n)
    expect(await chain.transfersTo([carol], 4n, 4n)).toEqual([])
    expect(await chain.receipt("0x1234" as Hash)).toBeNull()
  })

  it("paidOut names the one successful payout of an id, across a repeat, a reorg that drops it and a rollback", async () => {
    const chain = funded()
    chain.transfer(USDG, alice, VAULT, 10_000_000n)
    chain.mine()
    expect(await chain.paidOut(wid(9))).toBeNull()
    const first = await chain.payout(carol, 1_000_000n, wid(9))
    expect(await chain.paidOut(wid(9))).toBeNull() // pending
    chain.mine()
    expect(await chain.paidOut(wid(9))).toBe(first)
    // A second payout of the same id reverts (the vault pays each id once): still the first.
    const again = await chain.payout(carol, 1_000_000n, wid(9))
    chain.mine()
    expect(await chain.receipt(again)).toMatchObject({ status: "reverted" })
    expect(await chain.paidOut(wid(9))).toBe(first)
    // A reorg that drops the first: the repeat, re-executed, is now the payout.
    chain.reorg(2, { dropTx: (tx) => tx.hash === first })
    expect(await chain.receipt(again)).toMatchObject({ status: "success" })
    expect(await chain.paidOut(wid(9))).toBe(again)
    // Back before both: no payout of the id on the chain.
    chain.rollback(2n)
    expect(await chain.paidOut(wid(9))).toBeNull()
    const third = await chain.payout(carol, 1_000_000n, wid(9))
    chain.mine()
    expect(await chain.paidOut(wid(9))).toBe(third)
  })

  it("delay keeps a payout pending across mines; delayNext and release hold future payouts", async () => {
    const chain = funded()
    chain.transfer(USDG, alice, VAULT, 10_000_000n)
    chain.mine()
    const late = await chain.payout(carol, 1n, wid(4))
    chain.delay(late, 2)
    chain.mine(2)
    expect(await chain.receipt(late)).toBeNull()
    chain.mine()
    expect(await chain.receipt(late)).toEqual({ status: "success", blockNumber: 5n })

    chain.delayNext("payout", Infinity)
    const held = await chain.payout(carol, 2n, wid(5))
    const free = await chain.payout(carol, 3n, wid(6))
    chain.mine(5)
    expect(await chain.receipt(held)).toBeNull()
    expect(await chain.receipt(free)).toEqual({ status: "success", blockNumber: 6n })
    chain.release(held)
    chain.mine()
    expect(await chain.receipt(held)).toEqual({ status: "success", blockNumber: 11n })
    expect(() => chain.delay(held, 1)).toThrow(/not pending/)
  })
})

describe("SimChain: faults", () => {
  it("reorg replaces the last blocks with new hashes and re-includes their txs", async () => {
    const chain = funded()
    const t1 = chain.transfer(USDG, alice, bob, 1n)
    chain.mine()
    const t2 = chain.transfer(USDG, alice, bob, 2n)
    chain.mine()
    const before = await Promise.all([1n, 2n, 3n].map((n) => chain.blockHash(n)))
    expect(chain.reorg(2)).toEqual([])
    const after = await Promise.all([1n, 2n, 3n].map((n) => chain.blockHash(n)))
    expect(after[0]).toBe(before[0])
    expect(after[1]).not.toBe(before[1])
    expect(after[2]).not.toBe(before[2])
    expect(chain.block(3n)?.parentHash).toBe(after[1])
    expect(await chain.head()).toBe(3n)
    expect(await chain.receipt(t1)).toEqual({ status: "success", blockNumber: 2n })
    expect(await chain.receipt(t2)).toEqual({ status: "success", blockNumber: 3n })
    const logs = await chain.transfersTo([bob], 0n, 3n)
    expect(logs.map((l) => [l.txHash, l.blockHash])).toEqual([
      [t1, after[1]],
      [t2, after[2]]
    ])
    expect(await chain.balanceOf(USDG, bob)).toBe(3n)
    // The same block at the same height, reorged twice, still gets a fresh hash each time.
    chain.reorg(1)
    expect(await chain.blockHash(3n)).not.toBe(after[2])
    expect(() => chain.reorg(4)).toThrow(RangeError)
    expect(() => chain.reorg(0)).toThrow(RangeError)
  })

  it("reorg with dropTx makes a deposit disappear: log gone, receipt null, balances rolled back, later txs re-executed", async () => {
    const chain = funded()
    const forwarder = chain.depositAddress(bob)
    const keep = chain.transfer(USDG, alice, forwarder, 1_000_000n)
    const lose = chain.transfer(USDG, alice, forwarder, 4_000_000n)
    chain.mine()
    const sweep = await chain.sweep(bob, USDG)
    chain.mine()
    expect(await chain.balanceOf(USDG, VAULT)).toBe(5_000_000n)

    const dropped = chain.reorg(2, { dropTx: (tx) => tx.hash === lose })
    expect(dropped.map((tx) => [tx.hash, tx.kind, tx.from, tx.to, tx.amount])).toEqual([[lose, "transfer", alice, forwarder, 4_000_000n]])
    expect((await chain.transfersTo([forwarder], 0n, 3n)).map((l) => l.txHash)).toEqual([keep])
    expect(await chain.receipt(lose)).toBeNull()
    expect(await chain.receipt(keep)).toEqual({ status: "success", blockNumber: 2n })
    expect(await chain.balanceOf(USDG, alice)).toBe(99_000_000n)
    // The sweep re-executes against the smaller balance.
    expect(await chain.balanceOf(USDG, VAULT)).toBe(1_000_000n)
    expect((await chain.transfersTo([VAULT], 3n, 3n)).map((l) => [l.txHash, l.amount])).toEqual([[sweep, 1_000_000n]])
    // A dropped tx is gone for good, not returned to the pool.
    expect(chain.pending()).toEqual([])
    chain.mine()
    expect(await chain.receipt(lose)).toBeNull()
  })

  it("rollback takes the chain back in time: later blocks, their txs and the pending pool are gone; new blocks hash differently", async () => {
    const chain = funded()
    const forwarder = chain.depositAddress(bob)
    const deposit = chain.transfer(USDG, alice, forwarder, 3_000_000n)
    chain.mine()
    const lostBlock = chain.block(2n)!.hash
    const sweep = await chain.sweep(bob, USDG)
    chain.mine()
    const pending = chain.transfer(USDG, alice, carol, 1n)
    expect(await chain.balanceOf(USDG, VAULT)).toBe(3_000_000n)

    const lost = chain.rollback(1n)
    expect(lost.map((tx) => tx.hash)).toEqual([deposit, sweep, pending])
    expect(await chain.head()).toBe(1n)
    expect(await chain.blockHash(2n)).toBeNull()
    expect(await chain.receipt(deposit)).toBeNull()
    expect(await chain.balanceOf(USDG, alice)).toBe(100_000_000n)
    expect(await chain.balanceOf(USDG, VAULT)).toBe(0n)
    expect(chain.pending()).toEqual([])
    chain.mine()
    expect(await chain.blockHash(2n)).not.toBe(lostBlock)
    expect(() => chain.rollback(5n)).toThrow(RangeError)
  })

  it("failNext makes exactly the next N calls of that method reject", async () => {
    const chain = funded()
    chain.failNext("head", "header not found", 2)
    chain.failNext("head", new Error("custom"))
    const error = await rejection(chain.head())
    expect(error).toBeInstanceOf(SimRpcError)
    expect(error).toMatchObject({ message: "header not found", code: -32000 })
    expect(await chain.blockHash(1n)).not.toBeNull() // other methods unaffected
    expect(await rejection(chain.head())).toMatchObject({ message: "header not found" })
    expect(await rejection(chain.head())).toMatchObject({ message: "custom" })
    expect(await chain.head()).toBe(1n)
    expect(await chain.head()).toBe(1n)

    // A failed payout submits nothing.
    chain.failNext("payout")
    expect(await rejection(chain.payout(bob, 1n, wid(7)))).toBeInstanceOf(SimRpcError)
    expect(chain.pending()).toEqual([])
  })

  it("failNext afterSubmit loses the reply of a submitted payout", async () => {
    const chain = funded()
    chain.transfer(USDG, alice, VAULT, 1_000n)
    chain.mine()
    chain.failNext("payout", "timeout", 1, { afterSubmit: true })
    expect(await rejection(chain.payout(bob, 400n, wid(8)))).toMatchObject({ message: "timeout" })
    expect(chain.pending().map((tx) => [tx.kind, tx.to, tx.amount])).toEqual([["payout", bob, 400n]])
    chain.mine()
    expect(await chain.balanceOf(USDG, bob)).toBe(400n)
  })

  it("faultRate fails calls at random, reproducibly from the seed", async () => {
    const pattern = async (seed: number) => {
      const chain = new SimChain({ seed })
      chain.faultRate("balanceOf", 0.5)
      const outcomes: boolean[] = []
      for (let i = 0; i < 40; i++) outcomes.push(await chain.balanceOf(USDG, alice).then(() => true, () => false))
      chain.faultRate("balanceOf", 0)
      outcomes.push(await chain.balanceOf(USDG, alice).then(() => true, () => false))
      return outcomes
    }
    const first = await pattern(7)
    expect(await pattern(7)).toEqual(first)
    expect(first.at(-1)).toBe(true)
    expect(first.slice(0, 40)).toContain(true)
    expect(first.slice(0, 40)).toContain(false)
    expect(await pattern(8)).not.toEqual(first)
  })

  it("dropLog omits a log from transfersTo once", async () => {
    const chain = funded()
    const a = chain.transfer(USDG, alice, bob, 1n)
    const b = chain.transfer(USDG, alice, bob, 2n)
    chain.mine()
    chain.dropLog(b)
    expect((await chain.transfersTo([carol], 0n, 2n)).length).toBe(0) // not in this result: not consumed
    expect((await chain.transfersTo([bob], 0n, 2n)).map((l) => l.txHash)).toEqual([a])
    expect((await chain.transfersTo([bob], 0n, 2n)).map((l) => l.txHash)).toEqual([a, b])
  })

  it("maxLogRange rejects wide log queries like a public RPC", async () => {
    const chain = new SimChain({ maxLogRange: 10 })
    expect(await chain.transfersTo([bob], 0n, 9n)).toEqual([])
    expect(await rejection(chain.transfersTo([bob], 0n, 10n))).toMatchObject({ code: -32005 })
  })
})

describe("SimChain: determinism", () => {
  const run = async (seed: string) => {
    const chain = funded(seed)
    const hashes: string[] = [chain.transfer(USDG, alice, chain.depositAddress(bob), 9n)]
    chain.mine()
    hashes.push(await chain.sweep(bob, USDG), await chain.payout(carol, 0n, wid(9)))
    chain.mine(2)
    chain.reorg(2, { dropTx: (tx) => tx.kind === "payout" })
    chain.mine()
    for (let n = 0n; n <= (await chain.head()); n++) hashes.push((await chain.blockHash(n))!)
    return hashes
  }

  it("identical seeds give identical tx and block hashes; different seeds differ", async () => {
    const first = await run("seed-a")
    expect(await run("seed-a")).toEqual(first)
    const other = await run("seed-b")
    expect(other).toHaveLength(first.length)
    expect(other.every((hash, i) => hash !== first[i])).toBe(true)
  })
})
