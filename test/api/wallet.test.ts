// Linking a user key to its EVM wallet: both keys sign one message; a wallet
// belongs to one user and a user to one wallet; the link survives snapshots.
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { walletLinkMessage } from "../../src/auth/messages.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { restoreExchange, takeExchangeSnapshot } from "../../src/service/exchange-snapshot.ts"
import { memoryJournal } from "../../src/service/exchange.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let t: TestServer
beforeAll(async () => {
  t = await startTestServer()
})
afterAll(() => t.close())

// Anvil's well-known development keys: deterministic EVM wallets for tests.
const evmA = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
const evmB = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9c86dae88c7b7412f3a1c7b35d6c7c")

const link = async (label: string, evm = evmA, opts: { ts?: number; evmSigner?: typeof evmA; edMessageTs?: number; wallet?: string } = {}) => {
  const key = keyFromLabel(label)
  const ts = opts.ts ?? t.nowSec()
  const wallet = (opts.wallet ?? evm.address).toLowerCase()
  const message = walletLinkMessage(key.user, wallet, ts)
  const body = {
    user: key.user,
    wallet: opts.wallet ?? evm.address, // checksummed on the wire: the server lowercases
    timestamp: ts,
    signature: key.sign(Buffer.from(opts.edMessageTs === undefined ? message : walletLinkMessage(key.user, wallet, opts.edMessageTs))),
    evm_signature: await (opts.evmSigner ?? evm).signMessage({ message })
  }
  const res = await fetch(`${t.url}/v1/wallet/link`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as any, user: key.user }
}

describe("wallet link", () => {
  it("links when both keys sign, is idempotent, and reads back", async () => {
    const first = await link("wl-alice")
    expect(first).toMatchObject({ status: 200, body: { user: first.user, wallet: evmA.address.toLowerCase() } })
    expect((await link("wl-alice")).status).toBe(200)
    const read = await fetch(`${t.url}/v1/wallet/${first.user}`).then(async (r) => ({ status: r.status, body: await r.json() }))
    expect(read).toEqual({ status: 200, body: { user: first.user, wallet: evmA.address.toLowerCase() } })
  })

  it("keeps one wallet per user and one user per wallet", async () => {
    expect((await link("wl-alice", evmB)).body.error).toBe("wallet_already_linked")
    const bob = await link("wl-bob", evmA)
    expect({ status: bob.status, error: bob.body.error }).toEqual({ status: 409, error: "wallet_taken" })
    expect((await link("wl-bob", evmB)).status).toBe(200)
  })

  it("rejects a wrong EVM signer, a wrong Ed25519 message, stale timestamps and malformed input", async () => {
    const wrongEvm = await link("wl-carol", evmB, { evmSigner: evmA })
    expect({ status: wrongEvm.status, error: wrongEvm.body.error }).toEqual({ status: 403, error: "invalid_signature" })
    const wrongEd = await link("wl-carol", evmB, { edMessageTs: t.nowSec() - 1 })
    expect({ status: wrongEd.status, error: wrongEd.body.error }).toEqual({ status: 403, error: "invalid_signature" })
    const stale = await link("wl-carol", evmB, { ts: t.nowSec() - 61 })
    expect({ status: stale.status, error: stale.body.error }).toEqual({ status: 400, error: "stale_timestamp" })
    const badAddress = await link("wl-carol", evmB, { wallet: "0x1234" })
    expect({ status: badAddress.status, error: badAddress.body.error }).toEqual({ status: 400, error: "invalid_address" })
    const unknown = await fetch(`${t.url}/v1/wallet/${keyFromLabel("wl-nobody").user}`)
    expect(unknown.status).toBe(404)
  })

  it("survives a snapshot round trip", () => {
    const x = t.service.exchange
    const restored = restoreExchange(JSON.parse(JSON.stringify(takeExchangeSnapshot(x))), () => t.nowMs, memoryJournal())
    expect([...restored.walletOfUser.entries()].sort()).toEqual([...x.walletOfUser.entries()].sort())
    expect(restored.userOfWallet.get(evmA.address.toLowerCase())).toBe(keyFromLabel("wl-alice").user)
  })
})
