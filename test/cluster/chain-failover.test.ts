// The chain side across a failover (docs/cluster.md "The chain side"): a real Anvil as the
// external chain (contracts deployed by the test, as an operator would), three real nats-server
// nodes, two sequencer processes with CHAIN_RPC_URL, two gateways. Each sequencer reaches the
// chain through its own JSON-RPC proxy (test/support/rpc-proxy.ts), which SIGKILLs it at an exact
// point: right after a transaction it sent is mined, before it hears back and can journal it.
//  1. A deposit detected by the leader; when it confirms, the leader credits it and sends the
//     sweep into the vault — killed there. The new leader credits it: once.
//  2. A withdrawal; the leader pays it from the vault — killed once the payout is mined, before
//     `withdrawal_sent` is journaled. The next leader finds the payment on chain (the vault's
//     record of the withdrawal id) and confirms it: paid once on chain, confirmed once in the ledger.
// Money is conserved on chain and in the ledger; the log has one holder per term, and a replay of it
// holds the same balances. Every wait is for an event (a log line, HTTP state, a process exit).
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, describe, expect, it } from "vitest"
import { ANVIL_KEYS, processAlive } from "../../src/chain/anvil.ts"
import type { Address, Hash } from "../../src/chain/chain.ts"
import { vaultAbi } from "../../src/chain/contracts.ts"
import { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { openJetStreamLog } from "../../src/cluster/jetstream-log.ts"
import { type AnvilChain, anvilProcessesOn, startAnvilChain } from "../support/anvil-chain.ts"
import { type ClusterEnv, clusterEnv, holdersByTerm, readWholeLog, replay, type RoleProcess, spawnRole, stopRole } from "../support/cluster-procs.ts"
import { freePort } from "../support/free-port.ts"
import { type NatsCluster, startNatsCluster } from "../support/nats-cluster.ts"
import { type RpcProxy, startRpcProxy } from "../support/rpc-proxy.ts"

const MINTED = 100_000_000n
const DEPOSIT = 40_000_000n
const WITHDRAW = 15_000_000n
const CONFIRMATIONS = 2

let anvil: AnvilChain | null = null
let nats: NatsCluster | null = null
const procs: RoleProcess[] = []
const proxies: RpcProxy[] = []

afterAll(async () => {
  await Promise.all(procs.splice(0).map((p) => stopRole(p)))
  await Promise.all(proxies.splice(0).map((p) => p.close()))
  await nats?.close()
  if (anvil !== null) {
    const { pid, port } = anvil.anvil
    await anvil.stop()
    expect(processAlive(pid)).toBe(false)
    expect(anvilProcessesOn(port)).toEqual([])
  }
}, 120_000)

/** Polls `probe` (an HTTP read) until it yields a value: waiting for the state, not for a time. */
const until = async <A>(what: string, probe: () => Promise<A | null>, timeoutMs = 180_000): Promise<A> => {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const v = await probe().catch(() => null)
    if (v !== null) return v
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** A sequencer on the chain, through its own proxy; its deposit service on its own port. */
const sequencer = async (name: string, c: ClusterEnv, chain: AnvilChain) => {
  const proxy = await startRpcProxy(chain.anvil.rpcUrl)
  proxies.push(proxy)
  const depositPort = await freePort()
  const p = await spawnRole("sequencer", name, c, {
    CHAIN_RPC_URL: proxy.url,
    CHAIN_OPERATOR_KEY: ANVIL_KEYS[0]!,
    CHAIN_TOKEN_ADDRESS: chain.info.token,
    CHAIN_VAULT_ADDRESS: chain.info.vault,
    CHAIN_FACTORY_ADDRESS: chain.info.factory,
    DEPOSIT_PORT: String(depositPort),
    DEPOSIT_CONFIRMATIONS: String(CONFIRMATIONS),
    CHAIN_POLL_MS: "250",
    CHAIN_HEAD_POLL_MS: "100"
  })
  procs.push(p)
  return { p, proxy, depositUrl: `http://127.0.0.1:${depositPort}` }
}

const killed = (p: RoleProcess) => async (): Promise<void> => {
  p.signal("SIGKILL")
  await p.exited
}

describe("the chain side in a cluster", () => {
  it("refuses the embedded chain, and an external one without its contract addresses, in a cluster role, in one line", async () => {
    const c = clusterEnv("nats://127.0.0.1:1")
    const refused = async (name: string, env: Record<string, string>): Promise<string> => {
      const p = await spawnRole("sequencer", name, c, env)
      procs.push(p)
      expect((await p.exited).code).toBe(1)
      return p.stderrText.trim()
    }
    expect(await refused("seq-embedded", { CHAIN: "embedded" })).toBe(
      "twinbook: CHAIN=embedded cannot run in a cluster role: each sequencer would start its own chain. Set CHAIN_RPC_URL (with CHAIN_OPERATOR_KEY and the contract addresses) to one external chain, or CHAIN=off"
    )
    expect(await refused("seq-deploying", { CHAIN_RPC_URL: "http://127.0.0.1:1", CHAIN_OPERATOR_KEY: ANVIL_KEYS[0]! })).toBe(
      "twinbook: CHAIN_RPC_URL in a cluster role needs CHAIN_TOKEN_ADDRESS, CHAIN_VAULT_ADDRESS and CHAIN_FACTORY_ADDRESS: every sequencer must use the same deployed contracts (none are deployed at start-up)"
    )
  }, 120_000)

  it("credits a deposit and pays a withdrawal exactly once across two leader SIGKILLs, each right after its transaction was mined", async () => {
    const t = (anvil = await startAnvilChain())
    nats = await startNatsCluster(3)
    const c = clusterEnv(nats.urls)
    const a = await sequencer("seq-a", c, t)
    await a.p.waitLog("leading", (l) => l.msg === "leading")
    await a.p.waitOut("its deposit service", (l) => l.startsWith("deposit service"))
    const b = await sequencer("seq-b", c, t)
    await b.p.waitLog("standby", (l) => l.msg === "standby")
    const gws: RoleProcess[] = []
    for (const name of ["gw-1", "gw-2"]) {
      const g = await spawnRole("gateway", name, c)
      procs.push(g)
      gws.push(g)
      await g.waitOut("its URL", (l) => l.startsWith("twinbook API"))
    }
    const [g1, g2] = gws as [RoleProcess, RoleProcess]

    // Alice: an Ed25519 key on the exchange, Anvil account 1 as her wallet, linked through a gateway.
    const evm = privateKeyToAccount(ANVIL_KEYS[1]!)
    const wallet = evm.address.toLowerCase() as Address
    const alice = new ApiClient(g1.url, keyFromLabel(`chain-failover-${c.sessionSecret.slice(0, 6)}`))
    expect((await alice.register("alice")).status).toBe(200)
    expect((await alice.linkWallet(wallet, (message) => evm.signMessage({ message }))).status).toBe(200)
    await t.mint(wallet, MINTED)
    const address = await alice.request("GET", `/v1/deposit/native-address/${wallet}`, undefined, {}, a.depositUrl)
    expect(address.status).toBe(200)
    const forwarder = address.body.address as Address
    expect(forwarder).toBe(t.chain.depositAddress(wallet))
    const onChain = (owner: Address): Promise<bigint> => t.chain.balanceOf(t.info.token, owner)
    const read = async (gw: RoleProcess, path: string) => {
      // Read-your-writes across gateways: the client sends the highest seq it was told.
      const res = await alice.request("GET", path, undefined, {}, gw.url)
      return res.status === 200 ? res.body : null
    }

    // --- 1. the deposit: A is killed once its sweep of the confirmed deposit is mined
    const sweepSent = a.proxy.killAfterSend(t.info.factory, killed(a.p))
    const transfer = await t.transfer(1, t.info.token, forwarder, DEPOSIT)
    await until("the deposit detected by A", async () => ((await read(g1, `/v1/deposits/all/${alice.user}`))?.total === 1 ? true : null))
    // The checkpoint A's chain guard vouches for now (read on A's own port: the guard is the leader's).
    const adminA = await fetch(`${a.p.url}/v1/admin/chain`, { headers: { authorization: `Bearer ${c.adminToken}` } })
    const checkpointA = ((await adminA.json()) as { checkpoint: { block_number: number; hash: string } | null }).checkpoint
    expect(checkpointA).not.toBeNull()
    expect(await read(g1, `/v1/balance/${alice.user}`)).toMatchObject({ available: 0 })
    await t.test.mine({ blocks: CONFIRMATIONS - 1 }) // deep enough: A confirms, credits and sweeps
    const sweepTx = await sweepSent
    expect(a.p.child.signalCode).toBe("SIGKILL")
    expect(await t.public.getTransactionReceipt({ hash: sweepTx as Hash })).toMatchObject({ status: "success" })
    expect(await onChain(forwarder)).toBe(0n)
    expect(await onChain(t.info.vault)).toBe(DEPOSIT)

    await b.p.waitLog("leading", (l) => l.msg === "leading")
    // B's guard starts from A's checkpoint (the KV key), not from nothing.
    const carried = await b.p.waitLog("its chain checkpoint", (l) => l.msg === "chain checkpoint")
    expect(carried.block_number).toBeGreaterThanOrEqual(checkpointA!.block_number)
    const credited = await until("the deposit credited", async () => {
      const rows = await read(g2, `/v1/deposits/all/${alice.user}`)
      return rows?.deposits?.[0]?.status === "credited" ? rows : null
    })
    expect(credited).toMatchObject({ total: 1, deposits: [{ tx_signature: transfer.hash, amount_micro: Number(DEPOSIT), status: "credited" }] })
    // More passes of B's watcher (its guard vouching for blocks past a new one) credit nothing more.
    await t.test.mine({ blocks: 2 })
    const head = await t.public.getBlockNumber()
    const adminB = { authorization: `Bearer ${c.adminToken}` }
    await until("B's chain guard past the new blocks", async () => {
      const res = await fetch(`${b.p.url}/v1/admin/chain`, { headers: adminB })
      const body = (await res.json()) as { checkpoint: { block_number: number } | null }
      return (body.checkpoint?.block_number ?? -1) >= Number(head) - CONFIRMATIONS + 1 ? true : null
    })
    expect(await read(g1, `/v1/balance/${alice.user}`)).toEqual({ user: alice.user, available: Number(DEPOSIT), locked: 0, total: Number(DEPOSIT) })
    expect((await read(g1, `/v1/deposits/all/${alice.user}`)).total).toBe(1)
    expect(b.proxy.sent.filter((s) => s.to === t.info.factory)).toEqual([]) // nothing left to sweep
    expect(await onChain(t.info.vault)).toBe(DEPOSIT)

    // A comes back as the standby.
    const a2 = await sequencer("seq-a2", c, t)
    await a2.p.waitLog("standby", (l) => l.msg === "standby")

    // --- 2. the withdrawal: B is killed once its payout is mined, before it journals that it sent it
    const payoutSent = b.proxy.killAfterSend(t.info.vault, killed(b.p))
    const w = await alice.withdraw(Number(WITHDRAW))
    expect(w).toMatchObject({ status: 200, body: { status: "pending", recipient: wallet, amount_micro: Number(WITHDRAW) } })
    const id = w.body.withdrawal_id as Hash
    const payoutTx = await payoutSent
    expect(b.p.child.signalCode).toBe("SIGKILL")
    expect(await t.public.getTransactionReceipt({ hash: payoutTx as Hash })).toMatchObject({ status: "success" })
    expect(await onChain(wallet)).toBe(MINTED - DEPOSIT + WITHDRAW)

    await a2.p.waitLog("leading", (l) => l.msg === "leading")
    const settled = await until("the withdrawal settled", async () => {
      const rows = await read(g1, `/v1/withdrawals/all/${alice.user}`)
      const s = rows?.withdrawals?.[0]?.status
      return s === "confirmed" || s === "refunded" ? rows : null
    })
    // Confirmed with the transaction B sent (found on chain by the vault's record of the id), never refunded.
    expect(settled).toMatchObject({ total: 1, withdrawals: [{ id, status: "confirmed", tx_signature: payoutTx, amount_micro: Number(WITHDRAW), recipient: wallet }] })
    expect(a2.proxy.sent.filter((s) => s.to === t.info.vault)).toEqual([]) // A2 sent no payout of its own
    const paidEvents = await t.public.getContractEvents({ address: t.info.vault, abi: vaultAbi, eventName: "Withdrawn", args: { id }, fromBlock: 0n })
    expect(paidEvents.map((e) => e.transactionHash)).toEqual([payoutTx])

    // Further passes of A2 pay nothing more and change nothing.
    await t.test.mine({ blocks: 2 })
    const head2 = await t.public.getBlockNumber()
    await until("A2's chain guard past the new blocks", async () => {
      const res = await fetch(`${a2.p.url}/v1/admin/chain`, { headers: adminB })
      const body = (await res.json()) as { checkpoint: { block_number: number } | null }
      return (body.checkpoint?.block_number ?? -1) >= Number(head2) - CONFIRMATIONS + 1 ? true : null
    })
    expect((await read(g2, `/v1/withdrawals/all/${alice.user}`)).withdrawals[0].status).toBe("confirmed")

    // Money conserved: on chain (wallet + forwarder + vault = what was minted) and in the ledger (her total = the vault).
    const left = DEPOSIT - WITHDRAW
    expect(await onChain(wallet)).toBe(MINTED - DEPOSIT + WITHDRAW)
    expect(await onChain(forwarder)).toBe(0n)
    expect(await onChain(t.info.vault)).toBe(left)
    expect(await read(g2, `/v1/balance/${alice.user}`)).toEqual({ user: alice.user, available: Number(left), locked: 0, total: Number(left) })
    expect(await read(g1, `/v1/deposits/all/${alice.user}`)).toMatchObject({ total: 1, deposits: [{ status: "credited" }] })

    // The log: one holder per term (A, B, A2), and its full replay holds the same ledger.
    const nc = await nats.connect()
    const log = await openJetStreamLog(nc, { replicas: 3 })
    const batches = await readWholeLog(log)
    const terms = holdersByTerm(batches)
    for (const [, holders] of terms) expect(holders).toHaveLength(1)
    expect(terms.map(([, h]) => h[0])).toEqual(["seq-a", "seq-b", "seq-a2"])
    const replayed = replay(batches)
    expect(replayed.deposits.byKey.size).toBe(1)
    expect([...replayed.withdrawals.byId.values()].map((x) => [x.status, x.txHash])).toEqual([["confirmed", payoutTx]])
  }, 600_000)
})
