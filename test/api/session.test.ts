// Session bootstrap and the session cookie over real HTTP (SPEC §4 "Session and
// builders", §5.1-5.2, §7): POST /v1/builders/register and what the cookie it
// sets does and does not authorize.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import WebSocket from "ws"
import { keyFromLabel } from "../../src/client/keys.ts"
import { call, cookiePair, errorBody, registerBody, signedOrder, signText, ZERO_SIG } from "../support/raw-http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const WEEK_SEC = 604_800
const G7 = "g7-2027-prediction-markets" // taker fee 0

let t: TestServer
beforeEach(async () => {
  t = await startTestServer()
})
afterEach(() => t.close())

const register = (body: unknown) => call(t, "POST", "/v1/builders/register", { body })

/** The session cookie (`name=value`) of a fresh registration of `label`. */
const sessionFor = async (label: string): Promise<string> => {
  const res = await register(registerBody(keyFromLabel(label), t.nowSec(), label))
  expect(res.status).toBe(200)
  return cookiePair(res.headers.get("set-cookie"))
}

/** An authenticated no-op: cancel-all answers 200 { cancelled: 0 } with a valid session, 401 otherwise. */
const probe = (cookie: string | null) => call(t, "POST", "/v1/orders/cancel-all", { body: { signature: "", nonce: 0 }, cookie })

describe("POST /v1/builders/register", () => {
  it("returns { api_key } and sets service_oracle_session (Max-Age 604800, HttpOnly)", async () => {
    const key = keyFromLabel("alice")
    const res = await register(registerBody(key, t.nowSec(), "Alice's builder"))
    expect(res.status).toBe(200)
    expect(Object.keys(res.body)).toEqual(["api_key"])
    expect(res.body.api_key).toMatch(/^[0-9a-f]{32}$/)
    const setCookie = res.headers.get("set-cookie")!
    const expires = t.nowSec() + WEEK_SEC
    expect(setCookie).toMatch(
      new RegExp(`^service_oracle_session=${key.user}\\.${expires}\\.[A-Za-z0-9_-]{43}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax$`)
    )
    // The cookie authorizes session-scoped calls.
    expect(await probe(cookiePair(setCookie))).toMatchObject({ status: 200, body: { cancelled: 0 } })
  })

  it("creates the builder record: payout wallet = user, the registered name, fee_bps 0, enabled", async () => {
    const key = keyFromLabel("alice")
    const res = await register(registerBody(key, t.nowSec(), "first-name"))
    const builder = await t.admin("POST", `/v1/admin/builders/${key.user}`, { fee_bps: 0 })
    expect(builder).toEqual({ status: 200, body: { user: key.user, name: "first-name", api_key: res.body.api_key, fee_bps: 0, enabled: true } })
  })

  it("is idempotent: re-registering returns the same api_key and upserts the name", async () => {
    const key = keyFromLabel("alice")
    const first = await register(registerBody(key, t.nowSec(), "first-name"))
    t.advance(30_000)
    const second = await register(registerBody(key, t.nowSec(), "second-name"))
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(second.body).toEqual({ api_key: first.body.api_key })
    // A fresh cookie with the later expiry.
    expect(cookiePair(second.headers.get("set-cookie"))).toMatch(new RegExp(`^service_oracle_session=${key.user}\\.${t.nowSec() + WEEK_SEC}\\.`))
    const builder = await t.admin("POST", `/v1/admin/builders/${key.user}`, { fee_bps: 0 })
    expect(builder.body).toEqual({ user: key.user, name: "second-name", api_key: first.body.api_key, fee_bps: 0, enabled: true })
    // Another user gets another key.
    const other = await register(registerBody(keyFromLabel("bob"), t.nowSec(), "bob"))
    expect(other.status).toBe(200)
    expect(other.body.api_key).not.toBe(first.body.api_key)
  })

  it("400 invalid_json for a body that is not a JSON object", async () => {
    for (const raw of ["not json", "{\"user\":", "", "[]", "null", "42", "\"text\""]) {
      const res = await call(t, "POST", "/v1/builders/register", { body: raw })
      expect({ raw, status: res.status, body: res.body }).toEqual({ raw, status: 400, body: errorBody("invalid_json") })
      expect(res.headers.get("set-cookie")).toBeNull()
    }
  })

  it("400 invalid_shape for missing or mistyped fields and a user that is not a base58 Ed25519 key", async () => {
    const key = keyFromLabel("alice")
    const good = registerBody(key, t.nowSec())
    const { user: _u, ...noUser } = good
    const { name: _n, ...noName } = good
    const { signature: _s, ...noSignature } = good
    const { timestamp: _ts, ...noTimestamp } = good
    const cases: Array<[string, unknown]> = [
      ["empty object", {}],
      ["no user", noUser],
      ["no name", noName],
      ["no signature", noSignature],
      ["no timestamp", noTimestamp],
      ["empty name", { ...good, name: "" }],
      ["name over 64 chars", { ...good, name: "n".repeat(65) }],
      ["timestamp as string", { ...good, timestamp: String(good.timestamp) }],
      ["fractional timestamp", { ...good, timestamp: good.timestamp + 0.5 }],
      ["user number", { ...good, user: 12345 }],
      ["signature number", { ...good, signature: 7 }],
      // '0', 'O', 'I', 'l' are not in the base58 alphabet
      ["non-base58 user", { ...good, user: `0OIl${key.user.slice(4)}` }],
      ["base58 user of 31 bytes", { ...good, user: "1111111111111111111111111111111" }],
      ["hex user", { ...good, user: "ab".repeat(32) }],
      ["EVM address user", { ...good, user: "0x1111111111111111111111111111111111111111" }]
    ]
    for (const [label, body] of cases) {
      const res = await register(body)
      expect({ label, status: res.status, body: res.body }).toEqual({ label, status: 400, body: errorBody("invalid_shape") })
    }
  })

  it("400 stale_timestamp 61 s off either way; exactly 60 s off either way is accepted", async () => {
    const key = keyFromLabel("alice")
    const now = t.nowSec()
    for (const ts of [now - 61, now + 61, now - 3600, now + 86_400, 0]) {
      const res = await register(registerBody(key, ts))
      expect({ ts, status: res.status, body: res.body }).toEqual({ ts, status: 400, body: errorBody("stale_timestamp") })
      expect(res.headers.get("set-cookie")).toBeNull()
    }
    for (const ts of [now - 60, now + 60, now]) {
      const res = await register(registerBody(key, ts))
      expect({ ts, status: res.status }).toEqual({ ts, status: 200 })
      // The cookie's lifetime runs from the server clock, not the client's timestamp.
      expect(cookiePair(res.headers.get("set-cookie"))).toMatch(new RegExp(`\\.${now + WEEK_SEC}\\.`))
    }
  })

  it("the skew window follows the server clock", async () => {
    const key = keyFromLabel("alice")
    const signedAt = t.nowSec()
    t.advance(60_000)
    expect((await register(registerBody(key, signedAt))).status).toBe(200)
    t.advance(1_000)
    expect((await register(registerBody(key, signedAt))).body).toEqual(errorBody("stale_timestamp"))
  })

  it("400 invalid_signature_format for a signature that is not 64 bytes of hex without 0x", async () => {
    const key = keyFromLabel("alice")
    const good = registerBody(key, t.nowSec())
    const cases: Array<[string, string]> = [
      ["63 bytes", good.signature.slice(0, 126)],
      ["65 bytes", `${good.signature}00`],
      ["0x-prefixed", `0x${good.signature}`],
      ["0x-prefixed, 63 bytes after the prefix", `0x${good.signature.slice(0, 126)}`],
      ["odd hex length", good.signature.slice(0, 127)],
      ["odd hex length (129)", `${good.signature}0`],
      ["non-hex characters", `zz${good.signature.slice(2)}`],
      ["base64 of the 64 bytes", Buffer.from(good.signature, "hex").toString("base64")],
      ["empty", ""]
    ]
    for (const [label, signature] of cases) {
      const res = await register({ ...good, signature })
      expect({ label, status: res.status, body: res.body }).toEqual({ label, status: 400, body: errorBody("invalid_signature_format") })
    }
  })

  it("upper-case hex of a valid signature is accepted", async () => {
    const good = registerBody(keyFromLabel("alice"), t.nowSec())
    expect((await register({ ...good, signature: good.signature.toUpperCase() })).status).toBe(200)
  })

  it("403 invalid_signature when the signature does not verify for this user and timestamp", async () => {
    const key = keyFromLabel("alice")
    const mallory = keyFromLabel("mallory")
    const now = t.nowSec()
    const good = registerBody(key, now)
    const cases: Array<[string, string]> = [
      ["signed by another key", signText(mallory, `Service Session\nUser: ${key.user}\nTimestamp: ${now}`)],
      ["another key's own valid registration", registerBody(mallory, now).signature],
      ["signed a different timestamp", registerBody(key, now - 1).signature],
      ["trailing newline", signText(key, `Service Session\nUser: ${key.user}\nTimestamp: ${now}\n`)],
      ["CRLF line endings", signText(key, `Service Session\r\nUser: ${key.user}\r\nTimestamp: ${now}`)],
      ["another user line", signText(key, `Service Session\nUser: ${mallory.user}\nTimestamp: ${now}`)],
      ["wrong first line", signText(key, `service session\nUser: ${key.user}\nTimestamp: ${now}`)],
      ["timestamp in milliseconds", signText(key, `Service Session\nUser: ${key.user}\nTimestamp: ${now * 1000}`)],
      ["all-zero signature", ZERO_SIG],
      ["one flipped bit", (good.signature.slice(0, 10) + (good.signature[10] === "0" ? "1" : "0") + good.signature.slice(11))]
    ]
    for (const [label, signature] of cases) {
      const res = await register({ ...good, signature })
      expect({ label, status: res.status, body: res.body }).toEqual({ label, status: 403, body: errorBody("invalid_signature") })
      expect(res.headers.get("set-cookie")).toBeNull()
    }
  })
})

describe("the session cookie", () => {
  it("401 unauthorized on every session-scoped route without a cookie", async () => {
    const alice = keyFromLabel("alice")
    const market = t.market(G7)
    const order = signedOrder(alice, { market_id: market, side: "buy", outcome: "yes", price: 5000, size: 1, nonce: 1 })
    const cases: Array<[string, unknown]> = [
      ["/v1/orders", order],
      ["/v1/orders/cancel", { order_id: 1, signature: "", nonce: 0 }],
      ["/v1/orders/cancel-all", { signature: "", nonce: 0 }]
    ]
    for (const [path, body] of cases) {
      const res = await call(t, "POST", path, { body })
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 401, body: errorBody("unauthorized") })
    }
    // An unrelated cookie is no session either.
    expect((await call(t, "POST", "/v1/orders", { body: order, cookie: "theme=dark" })).status).toBe(401)
  })

  it("is found among other cookies", async () => {
    const cookie = await sessionFor("alice")
    expect(await probe(`theme=dark; ${cookie}; lang=en`)).toMatchObject({ status: 200, body: { cancelled: 0 } })
  })

  it("rejects forged cookies: tampered user, expiry or mac, and malformed values", async () => {
    const aliceCookie = await sessionFor("alice")
    const bob = keyFromLabel("bob")
    const value = aliceCookie.slice("service_oracle_session=".length)
    const [user, expires, mac] = value.split(".") as [string, string, string]
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1)
    const cases: Array<[string, string]> = [
      ["another user under alice's mac", `${bob.user}.${expires}.${mac}`],
      ["extended expiry", `${user}.${Number(expires) + WEEK_SEC}.${mac}`],
      ["mac with its first character changed", `${user}.${expires}.${flip(mac, 0)}`],
      ["mac with its last character changed", `${user}.${expires}.${flip(mac, mac.length - 1)}`],
      ["truncated mac", `${user}.${expires}.${mac.slice(0, -1)}`],
      ["no mac", `${user}.${expires}`],
      ["empty mac", `${user}.${expires}.`],
      ["extra part", `${value}.x`],
      ["empty value", ""],
      ["garbage", "not-a-session"],
      ["mac of another secret", `${user}.${expires}.${"A".repeat(43)}`]
    ]
    for (const [label, forged] of cases) {
      const res = await probe(`service_oracle_session=${forged}`)
      expect({ label, status: res.status, body: res.body }).toEqual({ label, status: 401, body: errorBody("unauthorized") })
    }
    // The genuine cookie still works.
    expect((await probe(aliceCookie)).status).toBe(200)
  })

  it("rejects a forged mac with a non-ASCII character (same length in characters, not in bytes) as 401, not 500", async () => {
    const aliceCookie = await sessionFor("alice")
    const [user, expires, mac] = aliceCookie.slice("service_oracle_session=".length).split(".") as [string, string, string]
    // U+00E9 is one character but two UTF-8 bytes; the header travels as latin-1.
    const forged = `${user}.${expires}.\u00e9${mac.slice(1)}`
    const res = await probe(`service_oracle_session=${forged}`)
    expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: errorBody("unauthorized") })
  })

  it("the same forged cookie on a WebSocket upgrade neither crashes the server nor authenticates", async () => {
    const aliceCookie = await sessionFor("alice")
    const [user, expires, mac] = aliceCookie.slice("service_oracle_session=".length).split(".") as [string, string, string]
    const ws = new WebSocket(t.wsUrl, { headers: { cookie: `service_oracle_session=${user}.${expires}.\u00e9${mac.slice(1)}` } })
    const frames: unknown[] = []
    ws.on("message", (data) => frames.push(JSON.parse(data.toString())))
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve())
      ws.once("error", reject)
    })
    ws.send(JSON.stringify({ type: "subscribe", channel: `user:${user}` }))
    await vi.waitFor(() => expect(frames.length).toBeGreaterThan(0))
    expect(frames[0]).toEqual({ type: "portfolio_error", channel: `user:${user}`, error: "unauthorized" })
    ws.close()
    // The server is still up.
    expect((await probe(aliceCookie)).status).toBe(200)
  })

  it("expires 7 days after issue: valid at 604799 s, rejected at 604800 s; re-registering renews it", async () => {
    const cookie = await sessionFor("alice")
    t.advance((WEEK_SEC - 1) * 1000)
    expect((await probe(cookie)).status).toBe(200)
    t.advance(1000)
    expect(await probe(cookie)).toEqual(expect.objectContaining({ status: 401, body: errorBody("unauthorized") }))
    t.advance(30 * 86_400_000)
    expect((await probe(cookie)).status).toBe(401)
    const renewed = await sessionFor("alice")
    expect((await probe(renewed)).status).toBe(200)
  })

  it("an expired cookie cannot place orders", async () => {
    const alice = await t.funded("alice", 10_000_000)
    t.advance(WEEK_SEC * 1000)
    const res = await alice.placeOrder({ market_id: t.market(G7), side: "buy", outcome: "yes", price: 5000, size: 1 })
    expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: errorBody("unauthorized") })
  })

  it("403 session_user_mismatch: alice's cookie cannot place an order signed by and for bob", async () => {
    const alice = await t.funded("alice", 10_000_000)
    const bob = await t.funded("bob", 10_000_000)
    const market = t.market(G7)
    const bobsOrder = signedOrder(bob.key, { market_id: market, side: "buy", outcome: "yes", price: 5000, size: 1, nonce: 1 })
    const res = await call(t, "POST", "/v1/orders", { body: bobsOrder, cookie: alice.cookie })
    expect({ status: res.status, body: res.body }).toEqual({ status: 403, body: errorBody("session_user_mismatch") })
    // Nothing happened to either account, and bob's nonce 1 is still unused.
    expect((await call(t, "GET", `/v1/orders/all/${bob.user}`)).body).toEqual({ orders: [], total: 0 })
    expect((await call(t, "GET", `/v1/balance/${bob.user}`)).body).toEqual({ user: bob.user, available: 10_000_000, locked: 0, total: 10_000_000 })
    const own = await call(t, "POST", "/v1/orders", { body: bobsOrder, cookie: bob.cookie })
    expect(own.status).toBe(200)
    expect(own.body).toMatchObject({ order_id: 1, remaining: 1, status: "resting" })
  })
})
