// The deposit service over real HTTP (SPEC §4 "Deposit service"), on the
// in-memory chain: address derivation, normalisation, idempotent registration
// for watching, progress, the retired route, limits and failure codes.
import { afterEach, describe, expect, it } from "vitest"
import { RateLimiter } from "../../src/usecase/rate-limit.ts"
import { listen, type RunningServer } from "../../src/api/node-server.ts"
import type { Chain } from "../../src/chain/chain.ts"
import { SimChain } from "../../src/chain/sim.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { makeDepositApp } from "../../src/deposit/app.ts"
import { Exchange, type JournalSink, memoryJournal } from "../../src/service/exchange.ts"

const servers: RunningServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const CHECKSUMMED = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
const start = async (opts: { journal?: JournalSink; chain?: Pick<Chain, "depositAddress" | "info"> } = {}) => {
  const clock = { ms: 1_795_305_600_000 }
  const chain = opts.chain ?? new SimChain({ seed: 3 })
  const exchange = new Exchange(() => clock.ms, opts.journal ?? memoryJournal())
  const app = makeDepositApp({
    exchange,
    chain,
    limiter: new RateLimiter(() => clock.ms),
    config: { minUsdgMicro: 1_000_000, maxPerTxMicro: 100_000_000, corsOrigins: new Set() }
  })
  const http = await listen({ app, hub: null, host: "127.0.0.1", port: 0, secret: new Uint8Array(32), nowMs: () => clock.ms, corsOrigins: new Set() })
  servers.push(http)
  const get = async (path: string) => {
    const res = await fetch(`${http.url}${path}`)
    return { status: res.status, body: (await res.json()) as any }
  }
  return { clock, chain, exchange, get }
}

describe("deposit service", () => {
  it("derives one address for checksummed and lowercase forms, with the full record, and registers it once", async () => {
    const { chain, exchange, get } = await start()
    const a = await get(`/v1/deposit/native-address/${CHECKSUMMED}`)
    const b = await get(`/v1/deposit/native-address/${CHECKSUMMED.toLowerCase()}`)
    expect(a.status).toBe(200)
    expect(b.body).toEqual(a.body)
    expect(a.body).toEqual({
      address: chain.depositAddress(CHECKSUMMED.toLowerCase() as `0x${string}`),
      chain: "native",
      chain_id: 4663,
      token: "USDG",
      token_address: chain.info.token,
      min_usdg_micro: 1_000_000,
      max_usdc_per_tx_micro: 100_000_000,
      instructions: expect.stringContaining(a.body.address)
    })
    expect(a.body.address).toMatch(/^0x[0-9a-f]{40}$/)
    expect(exchange.watched.get(a.body.address)).toBe(CHECKSUMMED.toLowerCase())
    expect(exchange.lastSeq).toBe(1) // the second call journaled nothing
    // Anyone may derive anyone's address: a different wallet, a different address.
    const other = await get(`/v1/deposit/native-address/${"0x" + "ab".repeat(20)}`)
    expect(other.body.address).not.toBe(a.body.address)
  })

  it("rejects malformed addresses with 400 invalid_address", async () => {
    const { get } = await start()
    for (const bad of ["0x123", "8ba1f109551bD432803012645Ac136ddd64DBA72", `${CHECKSUMMED}00`, "0xZZa1f109551bD432803012645Ac136ddd64DBA72"]) {
      expect(await get(`/v1/deposit/native-address/${bad}`)).toMatchObject({ status: 400, body: { error: "invalid_address" } })
    }
  })

  it("limits native-address to 30 per 60 s per IP", async () => {
    const { get, clock } = await start()
    for (let i = 0; i < 30; i++) expect((await get(`/v1/deposit/native-address/${CHECKSUMMED}`)).status).toBe(200)
    const limited = await get(`/v1/deposit/native-address/${CHECKSUMMED}`)
    expect(limited).toMatchObject({ status: 429, body: { error: "rate_limited", retry_after: 2 } })
    clock.ms += 2_000
    expect((await get(`/v1/deposit/native-address/${CHECKSUMMED}`)).status).toBe(200)
  })

  it("answers 503 registration_failed when the address cannot be journaled, 500 derivation_failed when it cannot be derived", async () => {
    const failing: JournalSink = { append: () => Promise.reject(new Error("disk full")) }
    const a = await start({ journal: failing })
    expect(await a.get(`/v1/deposit/native-address/${CHECKSUMMED}`)).toMatchObject({ status: 503, body: { error: "registration_failed" } })
    const sim = new SimChain({ seed: 3 })
    const broken = { info: sim.info, depositAddress: () => { throw new Error("no init code") } }
    const b = await start({ chain: broken })
    expect(await b.get(`/v1/deposit/native-address/${CHECKSUMMED}`)).toMatchObject({ status: 500, body: { error: "derivation_failed" } })
  })

  it("reports progress (idle by default), and keeps the retired bridge-address route retired", async () => {
    const { get } = await start()
    expect(await get(`/v1/deposit/progress/${CHECKSUMMED}`)).toEqual({ status: 200, body: { data: { stage: "idle" } } })
    expect(await get("/v1/deposit/progress/not-an-address")).toMatchObject({ status: 400, body: { error: "invalid_pubkey" } })
    expect(await get(`/v1/deposit/bridge-address/${CHECKSUMMED}`)).toMatchObject({ status: 400, body: { error: "invalid_pubkey" } })
    expect(await get(`/v1/deposit/bridge-address/${keyFromLabel("bridge").user}`)).toMatchObject({ status: 410, body: { error: "retired" } })
    expect(await get("/v1/deposit/nope")).toMatchObject({ status: 404, body: { error: "not_found" } })
  })
})
