// The web app's port and the development faucet under abuse (issue 31, items 9 and 10), on real
// loopback HTTP: web/server.ts answers a path that is not valid percent-encoded UTF-8 with 400
// and the API's envelope (never a 500), logs one line per request through the logger it is
// given, and logs an unexpected error; the faucet — the API's `POST /v1/dev/faucet`, the only
// one (the web port has none) — mints only for a registered user's cookie, refuses what a
// foreign page can send as the API's cookie routes do, and is limited per user and per address.
// The faucet mints on the simulator's chain (src/chain/sim.ts); test/ops/faucet.test.ts and the
// browser journeys (test/web/e2e.test.ts) mint on a real Anvil.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { Address } from "../../src/chain/chain.ts"
import type { DevFaucet } from "../../src/chain/faucet.ts"
import { SIM_CHAIN_INFO, SimChain } from "../../src/chain/sim.ts"
import { SESSION_COOKIE } from "../../src/auth/session-cookie.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import { makeLogger } from "../../src/ops/log.ts"
import { startWebServer, type WebServer } from "../../web/server.ts"
import { rawHttp } from "../support/reads.ts"
import { call } from "../support/raw-http.ts"
import { ALLOWED_ORIGIN, startTestServer, type TestServer } from "../support/server.ts"

const FOREIGN = "https://evil.example"
const WALLET = "0x00000000000000000000000000000000000a11ce" as Address

let dir: string
let t: TestServer
let web: WebServer
let chain: SimChain
/** The web server's log, one parsed JSON line each. */
const lines: Array<Record<string, unknown>> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "twinbook-hostile-web-"))
  mkdirSync(join(dir, "dist", "assets"), { recursive: true })
  writeFileSync(join(dir, "dist", "index.html"), "<!doctype html><title>app</title>")
  writeFileSync(join(dir, "dist", "assets", "app-1.js"), "console.log(1)")
  // The simulator's chain behind the DevFaucet interface src/main.ts fills with the embedded Anvil's.
  chain = new SimChain()
  const faucet: DevFaucet = async (to, amountMicro) => {
    const txHash = chain.mint(SIM_CHAIN_INFO.token, to, amountMicro)
    chain.mine()
    return { txHash }
  }
  // Users are registered from one address here: the registration limit is not what is tested.
  t = await startTestServer({ faucet: { faucet }, limits: { registrationsPerMinute: 10_000 } })
  // Every request takes exactly 1 ms on this clock: durations come from the injected clock, not the machine.
  let monoMs = 0
  web = await startWebServer({
    host: "127.0.0.1",
    port: 0,
    distDir: join(dir, "dist"),
    config: { api_url: t.url, ws_url: t.wsUrl, deposit_url: null, chain_rpc_url: null, chain_id: SIM_CHAIN_INFO.chainId, token_address: SIM_CHAIN_INFO.token, faucet: true },
    logger: makeLogger({ level: "info", format: "json", nowMs: () => t.nowMs, write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
    monoMs: () => (monoMs += 1)
  })
})

afterAll(async () => {
  await web?.close()
  await t?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Sends exactly this request target (node:http does not normalise it) and returns the answer and the log lines it added. */
const webRequest = async (method: string, target: string, headers: Record<string, string> = {}, body?: string) => {
  const before = lines.length
  const res = await rawHttp(web, method, target, headers, body)
  return { res, logged: lines.slice(before) }
}

describe("bad percent-encoding on the web port", () => {
  // A lone or short `%`, bytes that are not UTF-8 (a lone continuation byte, an overlong `/`), a truncated sequence, a NUL.
  const BAD = ["/%", "/%ff", "/%E0%A4%A", "/%zz", "/assets/%C0%AF.js", "/config.json%", "/app%00.js"]

  it.each(BAD)("GET %s is 400 bad_request with the API's envelope, and one request line", async (target) => {
    const { res, logged } = await webRequest("GET", target)
    expect(res.status).toBe(400)
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(res.body).toEqual({ error: "bad_request", detail: "the request path is not valid percent-encoded UTF-8" })
    expect(logged).toEqual([
      { ts: expect.any(String), level: "info", msg: "request", service: "web", method: "GET", path: target, status: 400, duration_ms: 1, error_code: "bad_request" }
    ])
  })

  it("HEAD and POST with a bad path are refused the same way; a bad query is not the path's business", async () => {
    for (const method of ["HEAD", "POST"]) {
      const { res, logged } = await webRequest(method, "/%E0%A4%A", method === "POST" ? { "content-type": "text/plain" } : {}, method === "POST" ? "x" : undefined)
      expect(res.status, method).toBe(400)
      expect(logged.map((l) => [l.method, l.status, l.error_code])).toEqual([[method, 400, "bad_request"]])
    }
    const { res, logged } = await webRequest("GET", "/?q=%ff%")
    expect(res.status).toBe(200)
    expect(res.text).toContain("<title>app</title>")
    expect(logged).toMatchObject([{ method: "GET", path: "/", status: 200 }])
  })

  it("logs one line per request, whatever it gets, with the path as sent and without the query", async () => {
    const cases: Array<[string, string, number]> = [
      ["GET", "/", 200],
      ["GET", "/assets/app-1.js", 200],
      ["GET", "/config.json?x=1", 200],
      ["GET", "/assets/missing.js", 404],
      ["HEAD", "/portfolio", 200],
      ["GET", "//", 200],
      ["DELETE", "/", 405]
    ]
    for (const [method, target, status] of cases) {
      const { res, logged } = await webRequest(method, target)
      expect(res.status, `${method} ${target}`).toBe(status)
      expect(logged, `${method} ${target}`).toEqual([
        {
          ts: expect.any(String),
          level: "info",
          msg: "request",
          service: "web",
          method,
          path: target.split("?")[0],
          status,
          duration_ms: 1,
          ...(status >= 400 ? { error_code: res.body.error } : {})
        }
      ])
    }
  })

  it("an unexpected error (the app's index.html gone during a rebuild) is a 500 with a request id, and is logged", async () => {
    rmSync(join(dir, "dist", "index.html"))
    try {
      const { res, logged } = await webRequest("GET", "/")
      expect(res.status).toBe(500)
      const id = res.headers.get("x-request-id")
      expect(id).toMatch(/^w\d+$/)
      // No file path or message in the answer: those are in the log.
      expect(res.body).toEqual({ error: "internal_error", detail: `unexpected server error (request ${id})` })
      expect(logged).toEqual([
        expect.objectContaining({ level: "error", msg: "internal error", service: "web", request_id: id, method: "GET", path: "/", error_code: "ENOENT", error_message: expect.stringContaining("index.html") }),
        expect.objectContaining({ level: "error", msg: "request", service: "web", method: "GET", path: "/", status: 500, error_code: "internal_error" })
      ])
    } finally {
      writeFileSync(join(dir, "dist", "index.html"), "<!doctype html><title>app</title>")
    }
    expect((await webRequest("GET", "/")).res.status).toBe(200)
  })
})

describe("the faucet", () => {
  const minted = () => chain.balance(SIM_CHAIN_INFO.token, WALLET)
  let users = 0
  /** A freshly registered user: its own per-user bucket. */
  const user = async (): Promise<ApiClient> => {
    const c = t.client(`faucet-user-${++users}`)
    const reg = await c.register()
    if (reg.status !== 200) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`)
    return c
  }
  const mint = (cookie: string | null, headers: Record<string, string> = {}, body: unknown = { address: WALLET, amount_micro: 1_000_000 }) =>
    call(t, "POST", "/v1/dev/faucet", { body, cookie, headers })
  /** A POST with exactly these headers (the shared helper always sends `content-type: application/json`). */
  const raw = async (headers: Record<string, string>, body: string) => {
    const res = await fetch(`${t.url}/v1/dev/faucet`, { method: "POST", headers, body })
    return { status: res.status, body: (await res.json()) as any }
  }

  // Each test starts with full buckets.
  beforeEach(() => t.advance(60_000))

  it("mints only for a registered user's session cookie: none, a forged one or a stranger's refused (401), nothing minted", async () => {
    const before = await minted()
    const alice = await user()
    const forged = `${alice.cookie!.slice(0, -4)}AAAA`
    for (const [what, cookie] of [["no cookie", null], ["a forged cookie", forged], ["garbage", `${SESSION_COOKIE}=x`]] as const) {
      const res = await mint(cookie)
      expect({ what, status: res.status, error: res.body.error }).toEqual({ what, status: 401, error: "unauthorized" })
    }
    expect(await minted()).toBe(before)
    // The user's own request, from the web app's origin as the page sends it, and from a program (no Origin).
    const fromPage = await mint(alice.cookie, { origin: ALLOWED_ORIGIN })
    expect(fromPage.status, JSON.stringify(fromPage.body)).toBe(200)
    expect(fromPage.body).toEqual({ address: WALLET, tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), amount_micro: 1_000_000 })
    expect(fromPage.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN)
    expect((await mint(alice.cookie)).status).toBe(200)
    expect(await minted()).toBe(before + 2_000_000n)
  })

  it("refuses what a foreign page can send, as the API's cookie routes do (415, 403), and the web port has no faucet", async () => {
    const before = await minted()
    const alice = await user()
    const body = JSON.stringify({ address: WALLET, amount_micro: 1_000_000 })
    const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, string]> = [
      ["text/plain from a foreign page (a simple request, no preflight)", () => raw({ "content-type": "text/plain", cookie: alice.cookie!, origin: FOREIGN }, body), 415, "unsupported_media_type"],
      ["form-encoded from a foreign page", () => raw({ "content-type": "application/x-www-form-urlencoded", cookie: alice.cookie!, origin: FOREIGN }, body), 415, "unsupported_media_type"],
      ["JSON with the cookie from a foreign Origin", () => mint(alice.cookie, { origin: FOREIGN }), 403, "forbidden_origin"],
      ["JSON with the cookie, no Origin, Sec-Fetch-Site cross-site", () => mint(alice.cookie, { "sec-fetch-site": "cross-site" }), 403, "forbidden_origin"]
    ]
    for (const [what, send, status, error] of cases) {
      const res = await send()
      expect({ what, status: res.status, error: res.body.error }).toEqual({ what, status, error })
    }
    // The web port's old route: nothing there mints, whatever it is sent.
    for (const headers of [{ "content-type": "text/plain", origin: FOREIGN }, { "content-type": "application/json", cookie: alice.cookie! }]) {
      const { res } = await webRequest("POST", "/dev/faucet", headers, JSON.stringify({ wallet: WALLET }))
      expect(res.status).toBe(405)
      expect(res.body.error).toBe("method_not_allowed")
    }
    // A preflight from the foreign page is refused too, so a browser never sends its JSON.
    expect((await fetch(`${t.url}/v1/dev/faucet`, { method: "OPTIONS", headers: { origin: FOREIGN, "access-control-request-method": "POST" } })).status).toBe(403)
    expect(await minted()).toBe(before)
  })

  it("is limited per user (5 per 60 s, 429 with Retry-After) and per address for all its users (60 per 60 s); time refills", async () => {
    const bad = { address: "0x123", amount_micro: 1_000_000 } // refused after the limits are charged: a flood mints nothing
    const alice = await user()
    for (let i = 0; i < 5; i++) expect((await mint(alice.cookie, {}, bad)).body.error, `request ${i + 1}`).toBe("invalid_address")
    const limited = await mint(alice.cookie)
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ error: "rate_limited", detail: "faucet_user: 5 per 60 s", retry_after: 12 })
    expect(limited.headers.get("retry-after")).toBe("12")
    // Another user is not held up by alice's bucket.
    const bob = await user()
    expect((await mint(bob.cookie)).status).toBe(200)
    t.advance(12_000)
    expect((await mint(alice.cookie)).status).toBe(200)

    // Twelve users behind one address spend its 60; a thirteenth there is refused, one elsewhere is not.
    const from = "127.0.0.7"
    const post = (c: ApiClient, address: string) =>
      rawHttp(t, "POST", "/v1/dev/faucet", { "content-type": "application/json", cookie: c.cookie! }, JSON.stringify(bad), address)
    for (let u = 0; u < 12; u++) {
      const c = await user()
      for (let i = 0; i < 5; i++) expect((await post(c, from)).status, `user ${u + 1}, request ${i + 1}`).toBe(400)
    }
    const crowd = await user()
    const refused = await post(crowd, from)
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error: "rate_limited", detail: "faucet_ip: 60 per 60 s", retry_after: 1 })
    expect((await post(crowd, "127.0.0.8")).status).toBe(400)
  })
})
