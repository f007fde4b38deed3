// Wallet-link floods (issue 31 item 7): every `POST /v1/wallet/link` is a journal record or a
// signature check (two: Ed25519 and secp256k1), and none needs a registration, so the route is
// charged per source address like registration (docs/api.md "Limits"): fresh users linked from
// one address and bad signatures from one address both meet 429 after the limit, nothing more
// is journaled, and a client at another address links as usual.
import { createHash } from "node:crypto"
import { privateKeyToAccount } from "viem/accounts"
import { afterEach, describe, expect, it } from "vitest"
import { walletLinkMessage } from "../../src/auth/messages.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { rawHttp } from "../support/reads.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let t: TestServer | null = null
afterEach(async () => {
  await t?.close()
  t = null
})

/** A deterministic EVM wallet per label (a sha256 is a valid secp256k1 key but for ~2^-128 of them). */
const evmWallet = (label: string) => privateKeyToAccount(`0x${createHash("sha256").update(`evm:${label}`).digest("hex")}`)

/** A link of a fresh user to a fresh wallet, both signatures valid unless `badSignature`. */
const linkBody = async (server: TestServer, label: string, badSignature = false) => {
  const key = keyFromLabel(label)
  const evm = evmWallet(label)
  const wallet = evm.address.toLowerCase()
  const ts = server.nowSec()
  const message = walletLinkMessage(key.user, wallet, ts)
  return {
    user: key.user,
    wallet,
    timestamp: ts,
    signature: badSignature ? "00".repeat(64) : key.sign(Buffer.from(message, "utf8")),
    evm_signature: await evm.signMessage({ message })
  }
}

const link = async (server: TestServer, label: string, from: string, badSignature = false) =>
  rawHttp(server, "POST", "/v1/wallet/link", { "content-type": "application/json" }, JSON.stringify(await linkBody(server, label, badSignature)), from)

describe("wallet-link floods", () => {
  it("fresh users linked from one address: 429 after the limit, nothing more journaled; another address links; time refills", async () => {
    t = await startTestServer({ limits: { registrationsPerMinute: 20 } })
    const linked = () => t!.service.exchange.walletOfUser.size
    for (let i = 0; i < 20; i++) expect((await link(t, `flood-${i}`, "127.0.0.2")).status, `link ${i + 1}`).toBe(200)
    expect(linked()).toBe(20)
    const refused = await link(t, "flood-20", "127.0.0.2")
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error: "rate_limited", detail: "ip_wallet_link: 20 per 60 s", retry_after: 3 })
    for (let i = 21; i < 60; i++) expect((await link(t, `flood-${i}`, "127.0.0.2")).status).toBe(429)
    expect(linked()).toBe(20)
    // Registration keeps its own bucket: the flood of links has not used it up.
    const register = await t.client("flood-registers").register("flood")
    expect(register.status).toBe(200)
    // A client elsewhere is not affected.
    expect((await link(t, "neighbour", "127.0.0.3")).status).toBe(200)
    expect(linked()).toBe(21)
    t.advance(3_000)
    expect((await link(t, "flood-20", "127.0.0.2")).status).toBe(200)
    expect((await link(t, "flood-21", "127.0.0.2")).status).toBe(429)
  })

  it("bad signatures from one address: 403 until the limit, then 429 before any verification", async () => {
    t = await startTestServer({ limits: { registrationsPerMinute: 20 } })
    for (let i = 0; i < 20; i++) {
      const res = await link(t, `forger-${i}`, "127.0.0.2", true)
      expect({ status: res.status, error: res.body.error }, `attempt ${i + 1}`).toEqual({ status: 403, error: "invalid_signature" })
    }
    for (let i = 20; i < 60; i++) {
      const res = await link(t, `forger-${i}`, "127.0.0.2", true)
      expect({ status: res.status, error: res.body.error }, `attempt ${i + 1}`).toEqual({ status: 429, error: "rate_limited" })
    }
    // A malformed body is charged too: the bucket comes before the body is read.
    const malformed = await rawHttp(t, "POST", "/v1/wallet/link", { "content-type": "application/json" }, "{}", "127.0.0.2")
    expect(malformed.status).toBe(429)
    // The forger's valid link is refused as well until the bucket refills; a neighbour's is not.
    expect((await link(t, "forger-honest", "127.0.0.2")).status).toBe(429)
    expect((await link(t, "neighbour", "127.0.0.3")).status).toBe(200)
    expect(t.service.exchange.walletOfUser.size).toBe(1)
    expect(t.service.ctx.limiter.hits.get("ip_wallet_link")).toBe(42)
  })
})
