// LP-bot helpers for black-box tests: the delegation message built independently of
// the server (the documented byte layout), session/new, delegate, start, stop, status.
import bs58 from "bs58"
import type { ApiClient, ApiResult } from "../../src/client/api-client.ts"
import type { UserKey } from "../../src/client/keys.ts"

/** docs/api.md "LP bot": prefix ‖ user (32) ‖ session (32) ‖ scope length (u8) ‖ scope ‖ expires u64 BE ‖ nonce u64 BE. */
export const delegationBytes = (user: string, sessionPub: string, expiresAtUnix: number, nonce: number, scope = "orders"): Buffer => {
  const tail = Buffer.alloc(16)
  tail.writeBigUInt64BE(BigInt(expiresAtUnix), 0)
  tail.writeBigUInt64BE(BigInt(nonce), 8)
  return Buffer.concat([
    Buffer.from("twinbook-lp-delegation-v1", "ascii"),
    Buffer.from(bs58.decode(user)),
    Buffer.from(bs58.decode(sessionPub)),
    Buffer.from([scope.length]),
    Buffer.from(scope, "ascii"),
    tail
  ])
}

export interface Session {
  readonly user: string
  readonly session_pub: string
  readonly scope: string
  readonly expires_at_unix: number
  readonly nonce: number
  readonly message_bytes_hex: string
  readonly created_at: number
}

export const newSession = (c: ApiClient, over: Record<string, unknown> = {}): Promise<ApiResult> =>
  c.request("POST", "/v1/lp-bot/session/new", { user: c.user, expires_in_secs: 3_600, scope: "orders", ...over })

/** Delegates `s` as offered, signed by `signer` (the user key by default) over the fields actually sent. */
export const delegate = (c: ApiClient, s: Session, over: Record<string, unknown> = {}, signer: UserKey = c.key): Promise<ApiResult> => {
  const body: Record<string, unknown> = { user: c.user, session_pub: s.session_pub, expires_at_unix: s.expires_at_unix, nonce: s.nonce, scope: "orders", ...over }
  let signed: Buffer
  try {
    signed = delegationBytes(String(body.user), String(body.session_pub), Number(body.expires_at_unix), Number(body.nonce))
  } catch {
    signed = Buffer.from("not a delegation") // a malformed key in the body: any signature will do
  }
  return c.request("POST", "/v1/lp-bot/delegate", { signature: signer.sign(signed), ...body })
}

/** session/new then delegate; throws unless both answer 200. */
export const delegatedSession = async (c: ApiClient, expiresInSecs = 3_600): Promise<Session> => {
  const s = await newSession(c, { expires_in_secs: expiresInSecs })
  if (s.status !== 200) throw new Error(`session/new: ${s.status} ${JSON.stringify(s.body)}`)
  const d = await delegate(c, s.body)
  if (d.status !== 200) throw new Error(`delegate: ${d.status} ${JSON.stringify(d.body)}`)
  return s.body
}

/** spread 200, 2 levels of 10 contracts, re-quote every 15 s: at mid 5000 it bids 4900, 4800 and asks 5100, 5200. */
export const LADDER = {
  mode: "advanced",
  capital_micro_usdc: 100_000_000,
  spread_bps: 200,
  levels_per_side: 2,
  contracts_per_level: 10,
  rebalance_interval_secs: 15,
  skew_tolerance_pct: 80,
  stop_loss_micro_usdc: 0,
  take_profit_micro_usdc: 0
} as const

export const startBot = (c: ApiClient, sessionPub: string, markets: unknown[], strategy: unknown = LADDER): Promise<ApiResult> =>
  c.request("POST", "/v1/lp-bot/start", { user: c.user, session_pub: sessionPub, markets, strategy })

export const stopBot = (c: ApiClient, revoke?: boolean): Promise<ApiResult> =>
  c.request("POST", "/v1/lp-bot/stop", { user: c.user, ...(revoke === undefined ? {} : { revoke_session: revoke }) })

export const botStatus = (c: ApiClient, user = c.user): Promise<ApiResult> => c.request("GET", `/v1/lp-bot/status?user=${user}`)
