// POST /v1/withdraw-signed over real HTTP: every check in its order, the engine
// debit with its per-user nonce, and the withdrawal row. (Payouts on chain are
// covered in test/chain/.)
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { walletLinkMessage, withdrawMessage } from "../../src/auth/messages.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let t: TestServer
let alice: ApiClient
const evm = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a")
const wallet = evm.address.toLowerCase()

beforeAll(async () => {
  t = await startTestServer()
  alice = await t.funded("wd-alice", 10_000_000)
  const ts = t.nowSec()
  const message = walletLinkMessage(alice.user, wallet, ts)
  const res = await fetch(`${t.url}/v1/wallet/link`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: alice.user, wallet, timestamp: ts, signature: alice.key.sign(Buffer.from(message)), evm_signature: await evm.signMessage({ message }) })
  })
  expect(res.status).toBe(200)
})
afterAll(() => t.close())

const body = (c: ApiClient, amount: number | string, nonce: number, signedAmount = Number(amount)) => ({
  user: c.user,
  amount_micro: amount,
  nonce,
  signature: c.key.sign(Buffer.from(withdrawMessage(c.user, wallet, signedAmount, nonce)))
})
const post = async (c: ApiClient, b: unknown) => {
  const r = await c.request("POST", "/v1/withdraw-signed", b)
  return { status: r.status, error: r.body?.error, body: r.body }
}

describe("POST /v1/withdraw-signed", () => {
  it("debits the engine and records a pending withdrawal to the linked wallet", async () => {
    const res = await post(alice, body(alice, 2_500_000, 1))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: "pending", recipient: wallet, chain: "native", amount_micro: 2_500_000, withdrawal_id: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    expect((await alice.balance()).body).toMatchObject({ available: 7_500_000, total: 7_500_000 })
    const rows = await fetch(`${t.url}/v1/withdrawals/all/${alice.user}`).then((r) => r.json() as Promise<any>)
    expect(rows).toMatchObject({ total: 1, limit: 50, offset: 0 })
    expect(rows.withdrawals[0]).toMatchObject({ recipient: wallet, chain: "native", amount_micro: 2_500_000, status: "pending", tx_signature: null, confirmed_at: null })
    // Amounts may come as decimal strings.
    expect((await post(alice, body(alice, "1000000", 2))).status).toBe(200)
    expect((await alice.balance()).body.available).toBe(6_500_000)
  })

  it("lets the engine reject reused nonces and overdrafts with 422 engine_rejected and its detail", async () => {
    expect(await post(alice, body(alice, 1_000_000, 2))).toMatchObject({ status: 422, error: "engine_rejected", body: { detail: "withdraw_nonce_stale" } })
    expect(await post(alice, body(alice, 99_000_000, 3))).toMatchObject({ status: 422, error: "engine_rejected", body: { detail: "insufficient_balance" } })
    expect((await alice.balance()).body.available).toBe(6_500_000)
  })

  it("checks, in order: pause, cookie, JSON, shape, session user, amount, signature format, wallet, signature", async () => {
    const bob = await t.funded("wd-bob", 1_000_000)
    const noCookie = t.client("wd-alice")
    expect(await post(noCookie, body(alice, 1, 10))).toMatchObject({ status: 401, error: "unauthorized" })
    expect((await alice.request("POST", "/v1/withdraw-signed", "{nope")).body.error).toBe("invalid_json")
    expect(await post(alice, { user: alice.user, amount_micro: 1 })).toMatchObject({ status: 400, error: "invalid_shape" })
    expect(await post(bob, body(alice, 1_000_000, 10))).toMatchObject({ status: 403, error: "session_user_mismatch" })
    for (const amount of [0, -5, 1.5, "abc", "1e6", null]) {
      expect(await post(alice, { ...body(alice, 1, 10), amount_micro: amount })).toMatchObject({ status: 400, error: "invalid_amount" })
    }
    expect(await post(alice, { ...body(alice, 1_000_000, 10), signature: "ab" })).toMatchObject({ status: 400, error: "invalid_signature_format" })
    expect(await post(bob, body(bob, 100_000, 1))).toMatchObject({ status: 422, error: "engine_rejected", body: { detail: expect.stringMatching(/no wallet linked/) } })
    expect(await post(alice, body(alice, 1_000_000, 10, 2_000_000))).toMatchObject({ status: 403, error: "invalid_signature" })
    // Paused trading blocks withdrawals before anything else, even an unauthenticated call.
    expect((await t.admin("POST", "/v1/admin/trading", { state: "paused" })).status).toBe(200)
    expect(await post(noCookie, { junk: true })).toMatchObject({ status: 403, error: "trading_disabled" })
    expect((await t.admin("POST", "/v1/admin/trading", { state: "open" })).status).toBe(200)
    expect((await alice.balance()).body.available).toBe(6_500_000)
  })

  it("answers 502 engine_unreachable and 503 engine_binding_disabled when the binding is down, changing nothing", async () => {
    expect((await t.admin("POST", "/v1/admin/engine-binding", { withdraw: "unreachable" })).body).toEqual({ withdraw: "unreachable" })
    expect(await post(alice, body(alice, 1_000_000, 20))).toMatchObject({ status: 502, error: "engine_unreachable" })
    await t.admin("POST", "/v1/admin/engine-binding", { withdraw: "disabled" })
    expect(await post(alice, body(alice, 1_000_000, 20))).toMatchObject({ status: 503, error: "engine_binding_disabled" })
    await t.admin("POST", "/v1/admin/engine-binding", { withdraw: "up" })
    // The nonce was not consumed by the failed attempts.
    expect((await post(alice, body(alice, 1_000_000, 20))).status).toBe(200)
    expect((await alice.balance()).body.available).toBe(5_500_000)
  })
})
