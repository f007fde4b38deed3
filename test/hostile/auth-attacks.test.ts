// Every authentication path attacked, as one table over the real server: forged,
// flipped, short and malleable (S ≥ L) signatures, replayed nonces, stale
// timestamps, another user's cookie, cross-user WebSocket subscriptions, a foreign
// Origin, expired and out-of-scope delegated keys — and all eight small-order keys
// (with their non-canonical encodings) at every entry point that takes a user key.
// Each attack must be refused with its SPEC code and change nothing.
import { createPublicKey, verify } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sessionMessage, walletLinkMessage, withdrawMessage } from "../../src/auth/messages.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { forgedSignature, keyOf, NON_CANONICAL_HEX, SMALL_ORDER_HEX, withSPlusL } from "../support/forgery.ts"
import { delegatedSession, LADDER, startBot } from "../support/lp.ts"
import { call, registerBody, signedOrder } from "../support/raw-http.ts"
import { ALLOWED_ORIGIN, startTestServer, type TestServer } from "../support/server.ts"
import { WsClient } from "../support/ws-client.ts"

const BTC = "btc-above-120k-2027-03-31"
const WALLET = "0x8ba1f109551bd432803012645ac136ddd64dba72"

let t: TestServer
let alice: ApiClient
let bob: ApiClient

beforeAll(async () => {
  // Attacks come from one address: registrations must not hit the per-address limit here.
  t = await startTestServer({ limits: { registrationsPerMinute: 10_000 } })
  alice = await t.funded("attack-alice", 100_000_000)
  bob = await t.funded("attack-bob", 100_000_000)
})
afterAll(() => t.close())

const refused = (r: { status: number; body: any }) => ({ status: r.status, error: r.body?.error })

/** A POST with exactly these headers (the shared helpers always add `content-type: application/json`). */
const raw = async (path: string, body: string, headers: Record<string, string>) => {
  const res = await fetch(`${t.url}${path}`, { method: "POST", headers, body })
  return { status: res.status, body: (await res.json()) as any }
}

describe("small-order and non-canonical keys", () => {
  it("node:crypto alone accepts the forged identity-key signature for any message (the hole being closed)", () => {
    const identity = Buffer.from(SMALL_ORDER_HEX[0], "hex")
    const key = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), identity]), format: "der", type: "spki" })
    for (const text of ["anything", "Service Session\nUser: x\nTimestamp: 1"]) {
      expect(verify(null, Buffer.from(text), key, Buffer.from(forgedSignature(SMALL_ORDER_HEX[0]), "hex"))).toBe(true)
    }
  })

  const all = [...SMALL_ORDER_HEX.map((hex) => ({ hex, kind: "small order" })), ...NON_CANONICAL_HEX.map((hex) => ({ hex, kind: "non-canonical" }))]

  it.each(all)("register refuses $hex ($kind) for every timestamp, with a 400 saying why", async ({ hex, kind }) => {
    const user = keyOf(hex)
    for (let i = 0; i < 6; i++) {
      const timestamp = t.nowSec() + i
      const res = await call(t, "POST", "/v1/builders/register", { body: { user, name: "forger", signature: forgedSignature(hex), timestamp } })
      expect(refused(res)).toEqual({ status: 400, error: "invalid_shape" })
      expect(res.body.detail).toMatch(kind === "small order" ? /small order/ : /non-canonical|small order/)
    }
    expect((await call(t, "GET", `/v1/balance/${user}`)).status).toBe(400)
  })

  it("every other entry point that takes a user key refuses the identity key with a 400", async () => {
    const forger = keyOf(SMALL_ORDER_HEX[0])
    const sig = forgedSignature(SMALL_ORDER_HEX[0])
    const now = t.nowSec()
    const cases: Array<[string, Promise<{ status: number; body: any }>, string]> = [
      ["order as forger", call(t, "POST", "/v1/orders", { body: { market_id: t.market(BTC), user: forger, side: "buy", outcome: "yes", price: 5000, size: 1, nonce: 1, signature: sig }, cookie: alice.cookie }), "invalid_order_shape"],
      ["order via a forged session key", call(t, "POST", "/v1/orders", { body: { ...signedOrder(alice.key, { market_id: t.market(BTC), side: "buy", outcome: "yes", price: 5000, size: 1, nonce: 9_000 }), session_pub: forger, signature: sig }, cookie: alice.cookie }), "invalid_pubkey"],
      ["wallet link", call(t, "POST", "/v1/wallet/link", { body: { user: forger, wallet: WALLET, timestamp: now, signature: sig, evm_signature: `0x${"11".repeat(65)}` } }), "invalid_shape"],
      ["withdraw", call(t, "POST", "/v1/withdraw-signed", { body: { user: forger, amount_micro: 1, nonce: 1, signature: sig }, cookie: alice.cookie }), "invalid_shape"],
      ["lp delegate (user)", call(t, "POST", "/v1/lp-bot/delegate", { body: { user: forger, session_pub: alice.user, expires_at_unix: now + 3_600, nonce: 1, signature: sig, scope: "orders" } }), "invalid_pubkey"],
      ["lp delegate (session key)", call(t, "POST", "/v1/lp-bot/delegate", { body: { user: alice.user, session_pub: forger, expires_at_unix: now + 3_600, nonce: 1, signature: sig, scope: "orders" } }), "invalid_pubkey"],
      ["lp start (session key)", call(t, "POST", "/v1/lp-bot/start", { body: { user: alice.user, session_pub: forger, markets: [BTC], strategy: LADDER }, cookie: alice.cookie }), "invalid_pubkey"],
      ["account read", call(t, "GET", `/v1/positions/all/${forger}`), "invalid_pubkey"],
      ["rewards read", call(t, "GET", `/v1/rewards/me?user=${forger}`), "invalid_pubkey"]
    ]
    for (const [name, pending, code] of cases) {
      const res = await pending
      expect(refused(res), name).toEqual({ status: 400, error: code })
      expect(res.body.detail, name).toMatch(/small order/)
    }
  })

  it("the WebSocket user: channel refuses a small-order key before any signature is tried", async () => {
    const ws = await WsClient.open(t.wsUrl)
    try {
      for (const hex of SMALL_ORDER_HEX) {
        const channel = `user:${keyOf(hex)}`
        ws.send({ type: "subscribe", channel, signature: forgedSignature(hex), timestamp: t.nowSec() })
        expect(await ws.next((f) => f.channel === channel)).toEqual({ type: "portfolio_error", channel, error: "bad_request" })
      }
    } finally {
      ws.ws.close()
    }
  })
})

describe("signatures", () => {
  it("a signature with S ≥ L (malleated) is refused even though it is equal modulo L", async () => {
    const key = keyFromLabel("attack-malleable")
    const body = registerBody(key, t.nowSec())
    const res = await call(t, "POST", "/v1/builders/register", { body: { ...body, signature: withSPlusL(body.signature) } })
    expect(refused(res)).toEqual({ status: 403, error: "invalid_signature" })
    // The unmodified signature is fine: only S was changed.
    expect((await call(t, "POST", "/v1/builders/register", { body })).status).toBe(200)
  })

  const flip = (hex: string, i: number) => hex.slice(0, i) + (hex[i] === "0" ? "1" : "0") + hex.slice(i + 1)
  const order = (nonce: number) => signedOrder(alice.key, { market_id: t.market(BTC), side: "buy", outcome: "yes", price: 4000, size: 1, nonce })

  it.each([
    ["register: another key's signature", () => call(t, "POST", "/v1/builders/register", { body: { ...registerBody(keyFromLabel("x"), t.nowSec()), user: alice.user } }), 403, "invalid_signature"],
    ["register: one bit flipped", () => {
      const b = registerBody(alice.key, t.nowSec())
      return call(t, "POST", "/v1/builders/register", { body: { ...b, signature: flip(b.signature, 10) } })
    }, 403, "invalid_signature"],
    ["register: 63-byte signature", () => {
      const b = registerBody(alice.key, t.nowSec())
      return call(t, "POST", "/v1/builders/register", { body: { ...b, signature: b.signature.slice(0, 126) } })
    }, 400, "invalid_signature_format"],
    ["register: 0x-prefixed signature", () => {
      const b = registerBody(alice.key, t.nowSec())
      return call(t, "POST", "/v1/builders/register", { body: { ...b, signature: `0x${b.signature.slice(2)}` } })
    }, 400, "invalid_signature_format"],
    ["register: timestamp 61 s old", () => call(t, "POST", "/v1/builders/register", { body: registerBody(alice.key, t.nowSec() - 61) }), 400, "stale_timestamp"],
    ["register: timestamp 61 s ahead", () => call(t, "POST", "/v1/builders/register", { body: registerBody(alice.key, t.nowSec() + 61) }), 400, "stale_timestamp"],
    ["order: signed over another price", () => call(t, "POST", "/v1/orders", { body: { ...order(100), price: 4001 }, cookie: alice.cookie }), 403, "invalid_signature"],
    ["order: bit flipped", () => call(t, "POST", "/v1/orders", { body: { ...order(101), signature: flip(String(order(101).signature), 70) }, cookie: alice.cookie }), 403, "invalid_signature"],
    ["order: signed by bob for alice", () => {
      const o = signedOrder(bob.key, { market_id: t.market(BTC), side: "buy", outcome: "yes", price: 4000, size: 1, nonce: 102 })
      return call(t, "POST", "/v1/orders", { body: { ...o, user: alice.user }, cookie: alice.cookie })
    }, 403, "invalid_signature"],
    ["order: no cookie", () => call(t, "POST", "/v1/orders", { body: order(103) }), 401, "unauthorized"],
    ["order: bob's cookie for alice's order", () => call(t, "POST", "/v1/orders", { body: order(104), cookie: bob.cookie }), 403, "session_user_mismatch"],
    ["order: forged cookie", () => call(t, "POST", "/v1/orders", { body: order(105), cookie: `service_oracle_session=${alice.user}.9999999999.${"ab".repeat(32)}` }), 401, "unauthorized"],
    ["order: foreign Origin with alice's cookie", () => call(t, "POST", "/v1/orders", { body: order(106), cookie: alice.cookie, headers: { origin: "https://evil.example" } }), 403, "forbidden_origin"],
    ["cancel-all: Sec-Fetch-Site cross-site", () => call(t, "POST", "/v1/orders/cancel-all", { body: { signature: "", nonce: 0 }, cookie: alice.cookie, headers: { "sec-fetch-site": "cross-site" } }), 403, "forbidden_origin"],
    // A CORS "simple request": no preflight stops it, so the content type must.
    ["cancel-all: text/plain from a foreign page", () => raw("/v1/orders/cancel-all", "{}", { "content-type": "text/plain", cookie: alice.cookie!, origin: "https://evil.example" }), 415, "unsupported_media_type"],
    ["cancel-all: text/plain without an Origin", () => raw("/v1/orders/cancel-all", "{}", { "content-type": "text/plain", cookie: alice.cookie! }), 415, "unsupported_media_type"],
    ["cancel-all: form-encoded", () => raw("/v1/orders/cancel-all", "a=1", { "content-type": "application/x-www-form-urlencoded", cookie: alice.cookie! }), 415, "unsupported_media_type"],
    ["withdraw: bob's cookie", () => call(t, "POST", "/v1/withdraw-signed", { body: { user: alice.user, amount_micro: 1, nonce: 1, signature: alice.key.sign(Buffer.from(withdrawMessage(alice.user, WALLET, 1, 1))) }, cookie: bob.cookie }), 403, "session_user_mismatch"],
    ["wallet link: user key did not sign", () => call(t, "POST", "/v1/wallet/link", { body: { user: alice.user, wallet: WALLET, timestamp: t.nowSec(), signature: bob.key.sign(Buffer.from(walletLinkMessage(alice.user, WALLET, t.nowSec()))), evm_signature: `0x${"11".repeat(65)}` } }), 403, "invalid_signature"]
  ] as const)("%s", async (_name, attack, status, code) => {
    expect(refused(await attack())).toEqual({ status, error: code })
  })

  it("a replayed order nonce is refused and places nothing", async () => {
    const o = signedOrder(alice.key, { market_id: t.market(BTC), side: "buy", outcome: "yes", price: 1000, size: 1, nonce: 500 })
    expect((await call(t, "POST", "/v1/orders", { body: o, cookie: alice.cookie })).status).toBe(200)
    const before = (await call(t, "GET", `/v1/orders/all/${alice.user}`)).body.total
    expect(refused(await call(t, "POST", "/v1/orders", { body: o, cookie: alice.cookie }))).toEqual({ status: 422, error: "nonce_stale" })
    expect((await call(t, "GET", `/v1/orders/all/${alice.user}`)).body.total).toBe(before)
  })

  it("a signed request without an Origin (an API client) is accepted; an allowed Origin is too", async () => {
    const o = (nonce: number) => signedOrder(alice.key, { market_id: t.market(BTC), side: "buy", outcome: "yes", price: 1000, size: 1, nonce })
    expect((await call(t, "POST", "/v1/orders", { body: o(600), cookie: alice.cookie })).status).toBe(200)
    expect((await call(t, "POST", "/v1/orders", { body: o(601), cookie: alice.cookie, headers: { origin: ALLOWED_ORIGIN, "sec-fetch-site": "cross-site" } })).status).toBe(200)
  })
})

describe("WebSocket user channels", () => {
  it("a proof for A never opens user:B; stale proofs and foreign-origin cookies are refused", async () => {
    const anon = await WsClient.open(t.wsUrl)
    const evil = await WsClient.open(t.wsUrl, alice.cookie, "https://evil.example")
    const mine = await WsClient.open(t.wsUrl, alice.cookie, ALLOWED_ORIGIN)
    try {
      const now = t.nowSec()
      const proof = (who: ApiClient, ts: number) => who.key.sign(sessionMessage(who.user, ts))
      const cases: Array<[WsClient, Record<string, unknown>, string]> = [
        [anon, { channel: `user:${bob.user}`, signature: proof(alice, now), timestamp: now }, "unauthorized"],
        [anon, { channel: `user:${alice.user}`, signature: proof(alice, now - 301), timestamp: now - 301 }, "unauthorized"],
        [anon, { channel: `user:${alice.user}` }, "unauthorized"],
        [evil, { channel: `user:${alice.user}` }, "unauthorized"],
        [mine, { channel: `user:${bob.user}` }, "address_mismatch"]
      ]
      for (const [ws, frame, error] of cases) {
        ws.send({ type: "subscribe", ...frame })
        expect(await ws.next((f) => f.channel === frame.channel)).toEqual({ type: "portfolio_error", channel: frame.channel, error })
      }
      // The right proof (not the second alice registered at: each proof is accepted once), and the
      // cookie from an allowed origin, do open the channel.
      anon.send({ type: "subscribe", channel: `user:${alice.user}`, signature: proof(alice, now - 1), timestamp: now - 1 })
      expect(await anon.next((f) => f.type === "subscribed")).toEqual({ type: "subscribed", channel: `user:${alice.user}` })
      mine.send({ type: "subscribe", channel: `user:${alice.user}` })
      expect(await mine.next((f) => f.type === "subscribed")).toEqual({ type: "subscribed", channel: `user:${alice.user}` })
    } finally {
      for (const ws of [anon, evil, mine]) ws.ws.close()
    }
  })
})

describe("delegated LP session keys", () => {
  it("an expired session key cannot place orders, and no session key can withdraw", async () => {
    const carol = await t.funded("attack-carol", 100_000_000)
    const s = await delegatedSession(carol, 300)
    expect((await startBot(carol, s.session_pub, [BTC])).status).toBe(200)
    const sessionOrder = (nonce: number) => {
      const fields = { market_id: t.market(BTC), side: "buy" as const, outcome: "yes" as const, price: 1000, size: 1, nonce }
      // Signed by the user key here: the server checks the session first and must refuse before any signature.
      return { ...signedOrder(carol.key, fields), session_pub: s.session_pub }
    }
    // Out of scope: a session key never withdraws.
    const withdraw = await call(t, "POST", "/v1/withdraw-signed", {
      body: { user: carol.user, amount_micro: 1, nonce: 1, signature: "00".repeat(64), session_pub: s.session_pub },
      cookie: carol.cookie
    })
    expect(refused(withdraw)).toEqual({ status: 403, error: "invalid_signature" })
    expect(withdraw.body.detail).toMatch(/scoped to orders/)
    t.advance(301_000)
    expect(refused(await call(t, "POST", "/v1/orders", { body: sessionOrder(700), cookie: carol.cookie }))).toEqual({ status: 403, error: "session_expired" })
    // Another user's delegated session key is refused for alice's orders.
    expect(refused(await call(t, "POST", "/v1/orders", { body: { ...sessionOrder(701), user: alice.user }, cookie: alice.cookie }))).toEqual({
      status: 403,
      error: expect.stringMatching(/^(user_mismatch|session_expired)$/)
    })
  })
})

describe("money after the attacks", () => {
  it("no attack moved a micro: balances are what the two honest orders locked", async () => {
    for (const c of [alice, bob]) {
      const b = (await call(t, "GET", `/v1/balance/${c.user}`)).body
      expect(b.total).toBe(100_000_000)
    }
  })
})
