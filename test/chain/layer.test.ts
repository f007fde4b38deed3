// The Effect layer: an embedded Anvil for the scope's lifetime when no RPC URL is given, a checked
// connection otherwise, and the environment configuration.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, ConfigProvider, Effect, Either, Exit, Layer, Option } from "effect"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, describe, expect, it } from "vitest"
import { ANVIL_KEYS, type Anvil, processAlive, startAnvil } from "../../src/chain/anvil.ts"
import { type Chain, ChainService, DEPOSIT_CHAIN_ID } from "../../src/chain/chain.ts"
import { deployContracts } from "../../src/chain/deploy.ts"
import { type LiveChain, type LiveChainConfig, liveChainLayer } from "../../src/chain/live.ts"
import { liveChainConfigFromEnv } from "../../src/runtime/config.ts"
import { anvilProcessesOn } from "../support/anvil-chain.ts"

const ports: number[] = []
const anvils: Anvil[] = []
const dirs: string[] = []

afterAll(async () => {
  for (const a of anvils) await a.stop()
  for (const a of anvils) expect(processAlive(a.pid)).toBe(false)
  for (const port of ports) expect(anvilProcessesOn(port)).toEqual([])
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const portOf = (chain: Chain): number => Number(new URL((chain as LiveChain).rpcUrl).port)

/** Runs `f` with the layer's chain, inside a scope that closes when `f` is done. */
const withChain = <A>(config: LiveChainConfig, f: (chain: Chain) => Promise<A>): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const chain = yield* ChainService
      ports.push(portOf(chain))
      return yield* Effect.promise(() => f(chain))
    }).pipe(Effect.provide(liveChainLayer(config)))
  )

describe("liveChainLayer", () => {
  it("without an RPC URL runs an embedded Anvil with the contracts, and stops it with the scope", async () => {
    const { port, depositAddress, head } = await withChain({}, async (chain) => ({
      port: portOf(chain),
      depositAddress: chain.depositAddress("0x1111111111111111111111111111111111111111"),
      head: await chain.head()
    }))
    expect(head).toBe(3n) // the three deployments
    expect(depositAddress).toMatch(/^0x[0-9a-f]{40}$/)
    expect(anvilProcessesOn(port)).toEqual([])
    await expect(fetch(`http://127.0.0.1:${port}`, { method: "POST", body: "{}" })).rejects.toThrow()
  })

  it("funds a custom operator key on the embedded chain", async () => {
    const operatorKey = `0x${"42".repeat(32)}` as const
    const got = await withChain({ operatorKey }, async (chain) => ({ operator: (chain as LiveChain).operator, head: await chain.head() }))
    expect(got).toEqual({ operator: privateKeyToAccount(operatorKey).address.toLowerCase(), head: 3n })
  })

  it("with an RPC URL connects to the deployment it is given, after checking it", async () => {
    const anvil = await startAnvil()
    anvils.push(anvil)
    ports.push(anvil.port)
    const info = await deployContracts({ rpcUrl: anvil.rpcUrl, operatorKey: ANVIL_KEYS[1] })
    const got = await withChain({ rpcUrl: anvil.rpcUrl, operatorKey: ANVIL_KEYS[1], info }, async (chain) => ({ info: chain.info, head: await chain.head() }))
    expect(got).toEqual({ info, head: 3n })
    // The external node is not the layer's to stop.
    expect(processAlive(anvil.pid)).toBe(true)

    /** The layer's start-up failure: "<tag>: <message>". */
    const failure = async (config: LiveChainConfig): Promise<string> => {
      const exit = await Effect.runPromiseExit(Effect.provide(ChainService, liveChainLayer(config)))
      if (Exit.isSuccess(exit)) return "succeeded"
      const error = Cause.failureOption(exit.cause)
      return Option.isSome(error) ? `${error.value._tag}: ${error.value.message}` : Cause.pretty(exit.cause)
    }
    expect(await failure({ rpcUrl: anvil.rpcUrl, info })).toMatch(/^ChainStartError: an operator key is required/)
    expect(await failure({ rpcUrl: anvil.rpcUrl, operatorKey: ANVIL_KEYS[1], info: { ...info, vault: info.token } })).toMatch(/^ChainStartError: .*not the vault/)
    expect(await failure({ rpcUrl: anvil.rpcUrl, operatorKey: ANVIL_KEYS[1], info: { ...info, chainId: 1 } })).toMatch(/^ChainStartError: .*chain id is 4663, expected 1/)
    expect(await failure({ rpcUrl: "http://127.0.0.1:1", operatorKey: ANVIL_KEYS[1], info })).toMatch(/^ChainStartError: /)
  })

  it("refuses a chain whose id is not the deposit chain's (4663)", async () => {
    const other = await startAnvil({ chainId: 1 })
    anvils.push(other)
    ports.push(Number(new URL(other.rpcUrl).port))
    const exit = await Effect.runPromiseExit(Effect.provide(ChainService, liveChainLayer({ rpcUrl: other.rpcUrl, operatorKey: ANVIL_KEYS[0] })))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toMatch(/chain id 1; twinbook's deposit chain is 4663/)
  })

  it("with a state file the embedded chain and its deposit addresses survive a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "twinbook-anvil-state-"))
    dirs.push(dir)
    const config: LiveChainConfig = { anvilStatePath: join(dir, "anvil.json") }
    const wallet = "0x2222222222222222222222222222222222222222"
    const first = await withChain(config, async (chain) => {
      const tx = await chain.payout(wallet, 0n, `0x${"11".repeat(32)}`) // one more block on top of the deployments
      while ((await chain.receipt(tx)) === null) await new Promise((resolve) => setTimeout(resolve, 10))
      return { info: chain.info, address: chain.depositAddress(wallet), head: await chain.head() }
    })
    const second = await withChain(config, async (chain) => ({ info: chain.info, address: chain.depositAddress(wallet), head: await chain.head() }))
    expect(second).toEqual(first)
    expect(first.head).toBe(4n)
  })

  it("is a Layer that provides the ChainService", () => {
    const layer: Layer.Layer<ChainService, unknown> = liveChainLayer({})
    expect(Layer.isLayer(layer)).toBe(true)
  })
})

describe("liveChainConfigFromEnv", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(liveChainConfigFromEnv, ConfigProvider.fromMap(new Map(Object.entries(env))))))

  it("defaults to the embedded chain", () => {
    expect(read({})).toEqual(Either.right({}))
  })

  it("reads an RPC URL, key and deployment (addresses lowercased)", () => {
    const key = ANVIL_KEYS[2]
    const r = read({
      CHAIN_RPC_URL: "http://10.0.0.1:8545",
      CHAIN_OPERATOR_KEY: key,
      CHAIN_TOKEN_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      CHAIN_VAULT_ADDRESS: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
      CHAIN_FACTORY_ADDRESS: "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
      CHAIN_ANVIL_STATE: "/data/anvil.json"
    })
    expect(r).toEqual(
      Either.right({
        rpcUrl: "http://10.0.0.1:8545",
        operatorKey: key,
        info: {
          chainId: DEPOSIT_CHAIN_ID,
          token: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
          vault: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
          factory: "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0"
        },
        anvilStatePath: "/data/anvil.json"
      })
    )
  })

  it("rejects a malformed key or address and a partial deployment", () => {
    expect(Either.isLeft(read({ CHAIN_OPERATOR_KEY: "0x1234" }))).toBe(true)
    expect(Either.isLeft(read({ CHAIN_TOKEN_ADDRESS: "0x12" }))).toBe(true)
    expect(Either.isLeft(read({ CHAIN_TOKEN_ADDRESS: "0x5fbdb2315678afecb367f032d93f642f64180aa3" }))).toBe(true)
  })
})
