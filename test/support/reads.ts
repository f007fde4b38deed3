// Helpers for the black-box read-side tests (markets, candles, account, admin,
// HTTP behaviour): plain fetch with parsed JSON, and ways to make trades.
import { request } from "node:http"
import { expect } from "vitest"
import type { ApiClient } from "../../src/client/api-client.ts"
import { ADMIN_TOKEN, type TestServer } from "./server.ts"

export interface Res {
  readonly status: number
  readonly headers: Headers
  /** Parsed JSON when the response is JSON, else null. */
  readonly body: any
  readonly text: string
}

/** One request; `body` is sent verbatim when a string, JSON-encoded otherwise. */
export const req = async (
  t: TestServer,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; admin?: boolean } = {}
): Promise<Res> => {
  const headers: Record<string, string> = {}
  if (opts.body !== undefined) headers["content-type"] = "application/json"
  if (opts.admin === true) headers.authorization = `Bearer ${ADMIN_TOKEN}`
  Object.assign(headers, opts.headers ?? {})
  const res = await t.fetch(`${t.url}${path}`, {
    method,
    headers,
    ...(opts.body === undefined ? {} : { body: typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) })
  })
  const text = await res.text()
  const isJson = (res.headers.get("content-type") ?? "").startsWith("application/json")
  return { status: res.status, headers: res.headers, body: isJson && text !== "" ? JSON.parse(text) : null, text }
}

export const get = (t: TestServer, path: string, headers?: Record<string, string>): Promise<Res> =>
  req(t, "GET", path, headers === undefined ? {} : { headers })

/** GET that must answer 200; returns the body. */
export const ok = async (t: TestServer, path: string): Promise<any> => {
  const res = await get(t, path)
  expect(res.status, `${path}: ${res.text}`).toBe(200)
  return res.body
}

/** An operator POST with the token. */
export const adminPost = (t: TestServer, path: string, body: unknown): Promise<Res> => req(t, "POST", path, { body, admin: true })

/** Expects a JSON error envelope with this status and code. */
export const expectError = (res: { status: number; headers: { get(name: string): string | null }; body: any }, status: number, code: string): void => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  expect(res.body.error).toBe(code)
  for (const k of Object.keys(res.body)) expect(["error", "detail", "retry_after"]).toContain(k)
  if (res.body.detail !== undefined) expect(typeof res.body.detail).toBe("string")
}

/** Past every edge-cache TTL (the longest is 300 s for 1d candles). */
export const pastCaches = (t: TestServer): void => t.advance(301_000)

/** Places an order that must be accepted; returns the response body. */
export const place = async (c: ApiClient, o: Parameters<ApiClient["placeOrder"]>[0]): Promise<any> => {
  const res = await c.placeOrder(o)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body
}

/**
 * One fill of `size` contracts at YES price `yes`. With `takerOutcome` "yes" the
 * maker rests buy NO at 10000 − yes (an ask at `yes`) and the taker buys YES at
 * `yes`; with "no" the maker rests buy YES at `yes` and the taker buys NO at
 * 10000 − yes (a NO-side fill at that price).
 */
export const cross = async (maker: ApiClient, taker: ApiClient, market: string, yes: number, size: number, takerOutcome: "yes" | "no"): Promise<any> => {
  const makerOutcome = takerOutcome === "yes" ? "no" : "yes"
  const makerPrice = makerOutcome === "yes" ? yes : 10_000 - yes
  await place(maker, { market_id: market, side: "buy", outcome: makerOutcome, price: makerPrice, size })
  const taken = await place(taker, { market_id: market, side: "buy", outcome: takerOutcome, price: 10_000 - makerPrice, size })
  expect(taken.remaining).toBe(0)
  return taken
}

/**
 * `n` trades of one contract each on `market` at YES 5000: the maker rests one
 * buy NO 5000 for `n` (an ask at 5000), the taker buys YES 5000 × 1 `n` times,
 * `stepMs` apart on the test clock (which keeps every rate limit happy).
 * Returns the unix second of the first and last trade.
 */
export const manyTrades = async (t: TestServer, maker: ApiClient, taker: ApiClient, market: string, n: number, stepMs = 2_000) => {
  await place(maker, { market_id: market, side: "buy", outcome: "no", price: 5_000, size: n })
  const first = t.nowSec()
  for (let i = 0; i < n; i++) {
    const body = await place(taker, { market_id: market, side: "buy", outcome: "yes", price: 5_000, size: 1 })
    expect(body.fills.length).toBe(1)
    if (i < n - 1) t.advance(stepMs)
  }
  return { first, last: t.nowSec() }
}

/** Every `$ref` in a document, for checking that each resolves. */
export const refsOf = (value: unknown, out: string[] = []): string[] => {
  if (Array.isArray(value)) for (const v of value) refsOf(v, out)
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push(v)
      else refsOf(v, out)
    }
  }
  return out
}

/**
 * A request through node:http, which (unlike fetch) sends any Host header as given; `localAddress`
 * (another 127.x.y.z) makes it come from another client address, as the rate limiters see it.
 */
export const rawHttp = (t: Pick<TestServer, "url">, method: string, path: string, headers: Record<string, string>, body?: string, localAddress?: string): Promise<Res> =>
  new Promise((resolve, reject) => {
    const url = new URL(t.url)
    const opts = { host: url.hostname, port: Number(url.port), method, path, headers, setHost: headers.host === undefined, ...(localAddress === undefined ? {} : { localAddress, agent: false }) }
    const r = request(opts, (res) => {
      const chunks: Buffer[] = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        const h = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v)
        const isJson = (h.get("content-type") ?? "").startsWith("application/json")
        resolve({ status: res.statusCode ?? 0, headers: h, body: isJson && text !== "" ? JSON.parse(text) : null, text })
      })
    })
    r.on("error", reject)
    r.end(body)
  })
