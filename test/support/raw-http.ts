// Raw HTTP helpers for black-box tests that need to send what the typed client
// never would: malformed bodies, forged cookies, signatures over other bytes.
import { createHash } from "node:crypto"
import { expect } from "vitest"
import { orderMessage, sessionMessage } from "../../src/auth/messages.ts"
import type { ApiClient } from "../../src/client/api-client.ts"
import type { UserKey } from "../../src/client/keys.ts"
import type { TestServer } from "./server.ts"

export interface RawResult {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

/** One request with full control: `body` as a value (JSON-encoded) or a raw string; `cookie` sent verbatim. */
export const call = async (
  t: TestServer,
  method: string,
  path: string,
  opts: { body?: unknown; cookie?: string | null; headers?: Record<string, string> } = {}
): Promise<RawResult> => {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.body !== undefined) headers["content-type"] = "application/json"
  if (opts.cookie !== undefined && opts.cookie !== null) headers.cookie = opts.cookie
  const res = await t.fetch(`${t.url}${path}`, {
    method,
    headers,
    ...(opts.body === undefined ? {} : { body: typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) })
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text === "" ? null : JSON.parse(text) }
}

/** The `name=value` part of a Set-Cookie header. */
export const cookiePair = (setCookie: string | null): string => {
  if (setCookie === null) throw new Error("no set-cookie header")
  return setCookie.split(";")[0]!
}

/** A register body signed over the canonical session message for `timestampSec`. */
export const registerBody = (key: UserKey, timestampSec: number, name = "builder") => ({
  user: key.user,
  name,
  signature: key.sign(sessionMessage(key.user, timestampSec)),
  timestamp: timestampSec
})

/** Signs arbitrary text (for malformed session messages). */
export const signText = (key: UserKey, text: string): string => key.sign(Buffer.from(text, "utf8"))

export interface OrderFields {
  market_id: string
  side: "buy" | "sell"
  outcome: "yes" | "no"
  price: number
  size: number
  nonce: number
  order_type?: string
  stp?: string
  builder_api_key?: string
}

/** A correctly signed order body for `key` (the signature covers market_id exactly as given). */
export const signedOrder = (key: UserKey, o: OrderFields): Record<string, unknown> => ({
  ...o,
  user: key.user,
  signature: key.sign(orderMessage({ marketId: o.market_id, user: key.user, outcome: o.outcome, side: o.side, priceBps: o.price, size: o.size, nonce: o.nonce }))
})

/** POSTs an order body with the client's session cookie. */
export const postOrder = (t: TestServer, c: ApiClient, body: unknown): Promise<RawResult> =>
  call(t, "POST", "/v1/orders", { body, cookie: c.cookie })

export const balanceOf = async (t: TestServer, user: string) => (await call(t, "GET", `/v1/balance/${user}`)).body

export const ordersOf = async (t: TestServer, user: string) => (await call(t, "GET", `/v1/orders/all/${user}`)).body

export const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/** A well-formed (64-byte hex) signature that verifies for nothing. */
export const ZERO_SIG = "00".repeat(64)

/** The error envelope `{ error, detail }` with any detail text. */
export const errorBody = (code: string) => ({ error: code, detail: expect.any(String) })
