// The live Chain against a real Anvil started here (free port, chain id 4663), contracts deployed
// from the committed artifacts. Tests run in order and share the chain's state.
import { getAddress, getContractAddress, keccak256, type Hex } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ANVIL_KEYS, processAlive } from "../../src/chain/anvil.ts"
import { type Address, DEPOSIT_CHAIN_ID } from "../../src/chain/chain.ts"
import { depositForwarderAbi, depositForwarderBytecode, forwarderFactoryAbi, usdgAbi, vaultAbi } from "../../src/chain/contracts.ts"
import { liveChain } from "../../src/chain/live.ts"
import { type AnvilChain, anvilProcessesOn, lower, startAnvilChain } from "../support/anvil-chain.ts"

let t: AnvilChain
const timings: Record<string, number> = {}

beforeAll(async () => {
  const t0 = performance.now()
  t = await startAnvilChain()
  timings["anvil start + deploy ms"] = Math.round(performance.now() - t0)
})

afterAll(async () => {
  if (t === undefined) return
  const { pid, port } = t.anvil
  await t.stop()
  expect(processAlive(pid)).toBe(false)
  expect(anvilProcessesOn(port)).toEqual([])
  console.log("chain test timings", timings)
})

const USER_A = "0x1111111111111111111111111111111111111111" as Address
const USER_B = "0x00000000000000000000000000000000000000b2" as Address

const code = async (address: Address): Promise<Hex | undefined> => t.public.getCode({ address })
/** A withdrawal id for the vault's once-only payouts. */
const withdrawal = (n: number): Hex => `0x${n.toString(16).padStart(64, "0")}`
const balance = (token: Address, owner: Address): Promise<bigint> => t.chain.balanceOf(token, owner)

describe("deployment", () => {
  it("deploys USDG (6 decimals), the vault and the factory on chain 4663", async () => {
    const { info } = t
    expect(info.chainId).toBe(DEPOSIT_CHAIN_ID)
    for (const a of [info.token, info.vault, info.factory]) {
      expect(a).toMatch(/^0x[0-9a-f]{40}$/)
      expect((await code(a))?.length).toBeGreaterThan(2)
    }
    const read = <F extends "name" | "symbol" | "decimals" | "operator">(functionName: F) =>
      t.public.readContract({ address: info.token, abi: usdgAbi, functionName })
    expect(await read("name")).toBe("USDG")
    expect(await read("symbol")).toBe("USDG")
    expect(await read("decimals")).toBe(6)
    expect(lower(await read("operator"))).toBe(t.account(0))
    expect(lower(await t.public.readContract({ address: info.vault, abi: vaultAbi, functionName: "operator" }))).toBe(t.account(0))
    expect(lower(await t.public.readContract({ address: info.factory, abi: forwarderFactoryAbi, functionName: "vault" }))).toBe(info.vault)
    expect(t.chain.operator).toBe(t.account(0))
  })

  it("only the operator mints USDG", async () => {
    await expect(
      t.wallet(1).writeContract({ address: t.info.token, abi: usdgAbi, functionName: "mint", args: [t.account(1), 1n] })
    ).rejects.toThrow(/NotOperator/)
  })
})

describe("deposit addresses", () => {
  it("equal factory.addressOf(wallet), off-chain and case-insensitively, and exist before any contract", async () => {
    for (const wallet of [USER_A, USER_B, t.account(1), t.account(2)]) {
      const onChain = await t.public.readContract({ address: t.info.factory, abi: forwarderFactoryAbi, functionName: "addressOf", args: [wallet] })
      const computed = t.chain.depositAddress(wallet)
      expect(computed).toBe(lower(onChain))
      expect(t.chain.depositAddress(getAddress(wallet))).toBe(computed)
      // The same derivation spelled out: CREATE2(factory, bytes32(wallet), keccak(creation code ++ abi.encode(vault))).
      const initCode = `${depositForwarderBytecode}${t.info.vault.slice(2).padStart(64, "0")}` as Hex
      expect(lower(getContractAddress({ opcode: "CREATE2", from: t.info.factory, salt: `0x${wallet.slice(2).padStart(64, "0")}`, bytecode: initCode }))).toBe(computed)
      expect(await code(computed)).toBeUndefined()
    }
    expect(await t.public.readContract({ address: t.info.factory, abi: forwarderFactoryAbi, functionName: "initCodeHash" })).toBe(
      keccak256(`${depositForwarderBytecode}${t.info.vault.slice(2).padStart(64, "0")}`)
    )
    expect(new Set([USER_A, USER_B].map(t.chain.depositAddress)).size).toBe(2)
  })
})

describe("deposits, sweeps and payouts", () => {
  let fromBlock: bigint
  let firstDeposit: { hash: Hex; blockNumber: bigint; blockHash: Hex }

  it("a USDG transfer to a deposit address with no contract yet succeeds and shows in transfersTo", async () => {
    const deposit = t.chain.depositAddress(USER_A)
    fromBlock = (await t.chain.head()) + 1n
    await t.mint(t.account(1), 5_000_000n)
    firstDeposit = await t.transfer(1, t.info.token, deposit, 1_250_000n)
    expect(await code(deposit)).toBeUndefined()
    expect(await balance(t.info.token, deposit)).toBe(1_250_000n)

    const head = await t.chain.head()
    expect(head).toBe(firstDeposit.blockNumber)
    const logs = await t.chain.transfersTo([deposit], fromBlock, head)
    expect(logs).toEqual([
      {
        token: t.info.token,
        from: t.account(1),
        to: deposit,
        amount: 1_250_000n,
        txHash: firstDeposit.hash,
        logIndex: 0,
        blockNumber: firstDeposit.blockNumber,
        blockHash: firstDeposit.blockHash
      }
    ])
    expect(await t.chain.blockHash(firstDeposit.blockNumber)).toBe(firstDeposit.blockHash)
    // The mint (to account 1) is not a transfer to the deposit address.
    expect(await t.chain.transfersTo([t.account(1)], fromBlock, head)).toHaveLength(1)
    expect(await t.chain.transfersTo([], fromBlock, head)).toEqual([])
    expect(await t.chain.transfersTo([deposit], head + 1n, head)).toEqual([])
  })

  it("sweep deploys the forwarder and moves the whole balance into the vault", async () => {
    const deposit = t.chain.depositAddress(USER_A)
    const vaultBefore = await balance(t.info.token, t.info.vault)
    const tx = await t.chain.sweep(USER_A, t.info.token)
    const receipt = await t.public.waitForTransactionReceipt({ hash: tx, pollingInterval: 50 })
    expect(await t.chain.receipt(tx)).toEqual({ status: "success", blockNumber: receipt.blockNumber })
    expect((await code(deposit))?.length).toBeGreaterThan(2)
    expect(lower(await t.public.readContract({ address: deposit, abi: depositForwarderAbi, functionName: "vault" }))).toBe(t.info.vault)
    expect(await balance(t.info.token, deposit)).toBe(0n)
    expect(await balance(t.info.token, t.info.vault)).toBe(vaultBefore + 1_250_000n)
    // The sweep's own transfer (forwarder → vault) is not a transfer *to* the deposit address.
    expect(await t.chain.transfersTo([deposit], fromBlock, await t.chain.head())).toHaveLength(1)
    expect(await t.chain.transfersTo([t.info.vault], receipt.blockNumber, receipt.blockNumber)).toMatchObject([
      { token: t.info.token, from: deposit, to: t.info.vault, amount: 1_250_000n, txHash: tx }
    ])
  })

  it("a second deposit is swept by the deployed forwarder; an empty sweep moves nothing", async () => {
    const deposit = t.chain.depositAddress(USER_A)
    await t.transfer(1, t.info.token, deposit, 700_000n)
    await t.transfer(1, t.info.token, deposit, 50_001n)
    const vaultBefore = await balance(t.info.token, t.info.vault)
    const tx = await t.chain.sweep(USER_A, t.info.token)
    const receipt = await t.public.waitForTransactionReceipt({ hash: tx, pollingInterval: 50 })
    expect(receipt.status).toBe("success")
    // No second deployment: only the Swept event of the factory, no ForwarderDeployed.
    const factoryLogs = receipt.logs.filter((l) => lower(l.address) === t.info.factory)
    expect(factoryLogs).toHaveLength(1)
    expect(await balance(t.info.token, deposit)).toBe(0n)
    expect(await balance(t.info.token, t.info.vault)).toBe(vaultBefore + 750_001n)

    const empty = await t.chain.sweep(USER_A, t.info.token)
    expect((await t.public.waitForTransactionReceipt({ hash: empty, pollingInterval: 50 })).status).toBe("success")
    expect(await balance(t.info.token, t.info.vault)).toBe(vaultBefore + 750_001n)
    expect(await t.chain.transfersTo([deposit], fromBlock, await t.chain.head())).toHaveLength(3)
  })

  it("anyone may sweep, and the funds still go only to the vault", async () => {
    const deposit = t.chain.depositAddress(USER_B)
    await t.transfer(1, t.info.token, deposit, 10n)
    const vaultBefore = await balance(t.info.token, t.info.vault)
    const hash = await t.wallet(3).writeContract({ address: t.info.factory, abi: forwarderFactoryAbi, functionName: "sweep", args: [USER_B, t.info.token] })
    expect((await t.public.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe("success")
    expect(await balance(t.info.token, t.info.vault)).toBe(vaultBefore + 10n)
    expect(await balance(t.info.token, t.account(3))).toBe(0n)
  })

  it("payout moves deposit tokens from the vault to the recipient", async () => {
    const recipient = t.account(4)
    const vaultBefore = await balance(t.info.token, t.info.vault)
    const recipientBefore = await balance(t.info.token, recipient)
    const tx = await t.chain.payout(recipient, 600_000n, withdrawal(1))
    const receipt = await t.public.waitForTransactionReceipt({ hash: tx, pollingInterval: 50 })
    expect(receipt.status).toBe("success")
    expect(await balance(t.info.token, t.info.vault)).toBe(vaultBefore - 600_000n)
    expect(await balance(t.info.token, recipient)).toBe(recipientBefore + 600_000n)
    expect(await t.chain.transfersTo([recipient], receipt.blockNumber, receipt.blockNumber)).toMatchObject([
      { token: t.info.token, from: t.info.vault, to: recipient, amount: 600_000n, txHash: tx }
    ])
  })

  it("pays a withdrawal id at most once, and tells which transaction paid it", async () => {
    const recipient = "0x00000000000000000000000000000000000000c5" as Address
    const id = withdrawal(77)
    expect(await t.chain.paidOut(id)).toBeNull()
    const tx = await t.chain.payout(recipient, 250_000n, id)
    await t.public.waitForTransactionReceipt({ hash: tx, pollingInterval: 50 })
    const before = await balance(t.info.token, recipient)
    await expect(t.chain.payout(recipient, 250_000n, id)).rejects.toThrow(/AlreadyPaid/)
    expect(await balance(t.info.token, recipient)).toBe(before)
    expect(await t.chain.paidOut(id)).toBe(tx)
  })

  it("payouts sent concurrently all land (operator transactions are serialized)", async () => {
    const vaultBefore = await balance(t.info.token, t.info.vault)
    const hashes = await Promise.all([1n, 2n, 3n, 4n, 5n].map((n) => t.chain.payout(USER_B, n, withdrawal(100 + Number(n)))))
    expect(new Set(hashes).size).toBe(5)
    for (const hash of hashes) expect((await t.public.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe("success")
    expect(await balance(t.info.token, t.info.vault)).toBe(vaultBefore - 15n)
  })

  it("a payout beyond the vault's balance is refused and consumes no nonce", async () => {
    const vaultBalance = await balance(t.info.token, t.info.vault)
    // The vault's safe transfer reports the token's refusal as TransferFailed(token, to, amount),
    // as the chain's own tag (src/chain/errors.ts): the same one the SimChain gives (test/chain/payouts-sim.test.ts).
    const refused = t.chain.payout(USER_B, vaultBalance + 1n, withdrawal(200))
    await expect(refused).rejects.toThrow(/TransferFailed/)
    await expect(refused).rejects.toMatchObject({ _tag: "ChainReverted" })
    const tx = await t.chain.payout(USER_B, 1n, withdrawal(201))
    expect((await t.public.waitForTransactionReceipt({ hash: tx, pollingInterval: 50 })).status).toBe("success")
  })

  it("only the operator can withdraw from the vault", async () => {
    const vaultBefore = await balance(t.info.token, t.info.vault)
    const call = { address: t.info.vault, abi: vaultAbi, functionName: "withdraw", args: [withdrawal(202), t.info.token, t.account(2), 1n] } as const
    await expect(t.public.simulateContract({ ...call, account: t.account(2) })).rejects.toThrow(/NotOperator/)
    // Forced on chain with a fixed gas limit: mined, reverted, nothing moved.
    const hash = await t.wallet(2).writeContract({ ...call, gas: 200_000n })
    const r = await t.public.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    expect(await t.chain.receipt(hash)).toEqual({ status: "reverted", blockNumber: r.blockNumber })
    expect(await balance(t.info.token, t.info.vault)).toBe(vaultBefore)
    expect(await balance(t.info.token, t.account(2))).toBe(0n)
  })

  it("a different ERC-20 sent to a deposit address shows in transfersTo with its own token address", async () => {
    const wrong = await t.deployToken()
    expect(wrong).not.toBe(t.info.token)
    const deposit = t.chain.depositAddress(USER_A)
    const start = (await t.chain.head()) + 1n
    await t.mint(t.account(1), 999n, wrong)
    const tx = await t.transfer(1, wrong, deposit, 999n)
    await t.transfer(1, t.info.token, deposit, 3n)
    const logs = await t.chain.transfersTo([deposit, t.chain.depositAddress(USER_B)], start, await t.chain.head())
    expect(logs.map((l) => [l.token, l.amount])).toEqual([
      [wrong, 999n],
      [t.info.token, 3n]
    ])
    expect(logs[0]!.txHash).toBe(tx.hash)
    expect(await balance(wrong, deposit)).toBe(999n)
  })
})

describe("reads", () => {
  it("transfersTo gives the same logs, in order, with tiny block ranges and address batches", async () => {
    const head = await t.chain.head()
    const addresses = [t.chain.depositAddress(USER_A), t.chain.depositAddress(USER_B), t.info.vault, t.account(1), t.account(4)]
    const whole = await t.chain.transfersTo(addresses, 0n, head)
    expect(whole.length).toBeGreaterThan(8)
    const tiny = liveChain({ rpcUrl: t.anvil.rpcUrl, operatorKey: "0x" + "11".repeat(32) as Hex, info: t.info, logBlockRange: 2n, logAddressBatch: 1 })
    expect(await tiny.transfersTo(addresses, 0n, head)).toEqual(whole)
    const sorted = [...whole].sort((a, b) => Number(a.blockNumber - b.blockNumber) || a.logIndex - b.logIndex)
    expect(whole).toEqual(sorted)
    // Mixed-case and duplicate recipients change nothing.
    expect(await t.chain.transfersTo([...addresses.map((a) => getAddress(a)), addresses[0]!], 0n, head)).toEqual(whole)
  })

  it("an RPC endpoint that does not answer is ChainUnavailable", async () => {
    const down = liveChain({ rpcUrl: "http://127.0.0.1:9", operatorKey: ANVIL_KEYS[0], info: t.info })
    await expect(down.head()).rejects.toMatchObject({ _tag: "ChainUnavailable" })
  })

  it("head, blockHash and receipt answer null for what does not exist", async () => {
    const head = await t.chain.head()
    expect(await t.chain.blockHash(head)).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await t.chain.blockHash(head + 1n)).toBeNull()
    expect(await t.chain.blockHash(head + 1000n)).toBeNull()
    expect(await t.chain.receipt(`0x${"ab".repeat(32)}`)).toBeNull()
  })

  it("blockHash changes when Anvil reverts to an earlier snapshot and mines again (a reorg)", async () => {
    const base = await t.chain.head()
    const snapshot = await t.test.snapshot()
    await t.transfer(1, t.info.token, t.chain.depositAddress(USER_A), 4n)
    await t.test.mine({ blocks: 2 })
    const n = base + 1n
    const before = await t.chain.blockHash(n)
    expect(before).not.toBeNull()
    expect((await t.chain.transfersTo([t.chain.depositAddress(USER_A)], n, n)).map((l) => l.amount)).toEqual([4n])

    await t.test.revert({ id: snapshot })
    expect(await t.chain.head()).toBe(base)
    expect(await t.chain.blockHash(n)).toBeNull()
    // Re-mined without the deposit (and a second later): same height, another block.
    await t.test.increaseTime({ seconds: 1 })
    await t.test.mine({ blocks: 3 })
    const after = await t.chain.blockHash(n)
    expect(after).not.toBeNull()
    expect(after).not.toBe(before)
    expect(await t.chain.transfersTo([t.chain.depositAddress(USER_A)], n, n)).toEqual([])
    expect(await t.chain.head()).toBe(base + 3n)
  })
})
