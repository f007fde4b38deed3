// The embedded Anvil process: start on a free or given port, answer JSON-RPC at once, stop by PID.
import { afterAll, describe, expect, it } from "vitest"
import { type Anvil, anvilBinary, processAlive, startAnvil } from "../../src/chain/anvil.ts"
import { freePort } from "../support/free-port.ts"
import { DEPOSIT_CHAIN_ID } from "../../src/chain/chain.ts"
import { anvilProcessesOn } from "../support/anvil-chain.ts"

const started: Anvil[] = []
const start = async (options?: Parameters<typeof startAnvil>[0]): Promise<Anvil> => {
  const a = await startAnvil(options)
  started.push(a)
  return a
}

afterAll(async () => {
  for (const a of started) await a.stop()
  for (const a of started) {
    expect(processAlive(a.pid)).toBe(false)
    expect(anvilProcessesOn(a.port)).toEqual([])
  }
})

const rpc = async (url: string, method: string, params: unknown[] = []): Promise<unknown> => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })
  return ((await res.json()) as { result: unknown }).result
}

describe("startAnvil", () => {
  it("runs the platform binary directly (not the node wrapper)", () => {
    expect(anvilBinary()).toMatch(/@foundry-rs\/anvil-[a-z0-9]+-[a-z0-9]+\/bin\/anvil(\.exe)?$/)
  })

  it("answers JSON-RPC on loopback with chain id 4663 as soon as it resolves, and stop() ends the process", async () => {
    const a = await start()
    expect(a.rpcUrl).toBe(`http://127.0.0.1:${a.port}`)
    expect(Number.parseInt((await rpc(a.rpcUrl, "eth_chainId")) as string, 16)).toBe(DEPOSIT_CHAIN_ID)
    expect(await rpc(a.rpcUrl, "eth_blockNumber")).toBe("0x0")
    expect(anvilProcessesOn(a.port)).toEqual([a.pid])
    await a.stop()
    expect(processAlive(a.pid)).toBe(false)
    expect(anvilProcessesOn(a.port)).toEqual([])
    await expect(rpc(a.rpcUrl, "eth_chainId")).rejects.toThrow()
    await a.stop() // idempotent
  })

  it("uses a given port, runs side by side with another, and fails clearly on a taken port", async () => {
    const port = await freePort()
    const a = await start({ port })
    expect(a.port).toBe(port)
    const b = await start()
    expect(b.port).not.toBe(port)
    expect(b.pid).not.toBe(a.pid)
    await expect(start({ port })).rejects.toThrow(/anvil failed to start/)
    expect(anvilProcessesOn(port)).toEqual([a.pid])
  })

  it("mines a block per transaction by default (automine)", async () => {
    const a = await start()
    expect(await rpc(a.rpcUrl, "anvil_getAutomine")).toBe(true)
  })
})
