import { startAnvil, ANVIL_KEYS } from "../src/chain/anvil.ts"
import { deployContracts } from "../src/chain/deploy.ts"
import { createPublicClient, http } from "viem"
const path = "/tmp/anvil-state-test.json"
const a = await startAnvil({ args: ["--state", path] })
const info = await deployContracts({ rpcUrl: a.rpcUrl, operatorKey: ANVIL_KEYS[0] })
await a.stop()
const b = await startAnvil({ args: ["--state", path] })
const c = createPublicClient({ transport: http(b.rpcUrl) })
console.log(await c.getBlockNumber(), (await c.getCode({ address: info.factory }))?.length)
await b.stop()
