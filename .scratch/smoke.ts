import { startAnvil, ANVIL_KEYS, processAlive } from "/work/main/src/chain/anvil.ts"
import { deployContracts } from "/work/main/src/chain/deploy.ts"
import { createPublicClient, http } from "viem"
const t0 = performance.now()
const a = await startAnvil()
const t1 = performance.now()
console.log("anvil", a.rpcUrl, a.pid, (t1-t0).toFixed(0), "ms")
const info = await deployContracts({ rpcUrl: a.rpcUrl, operatorKey: ANVIL_KEYS[0] })
const t2 = performance.now()
console.log(info, (t2-t1).toFixed(0), "ms")
const c = createPublicClient({ transport: http(a.rpcUrl) })
for (let i = 1n; i <= await c.getBlockNumber(); i++) { const b = await c.getBlock({ blockNumber: i, includeTransactions: true }); for (const tx of b.transactions) { const r = await c.getTransactionReceipt({ hash: tx.hash }); console.log(i, r.gasUsed, r.contractAddress) } }
await a.stop()
console.log("alive after stop", processAlive(a.pid))
