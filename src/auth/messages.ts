// Canonical signed messages (SPEC §5). Browser-safe (no node: imports, no Buffer):
// the server verifies these bytes and the typed client (src/client) signs them.
import { sha256 } from "@noble/hashes/sha2.js"
import { concatBytes, hexToBytes } from "@noble/hashes/utils.js"
import bs58 from "bs58"

const utf8 = new TextEncoder()

/** The session bootstrap message: three lines, LF-joined, no trailing LF. */
export const sessionMessage = (user: string, timestampSec: number): Uint8Array =>
  utf8.encode(`Service Session\nUser: ${user}\nTimestamp: ${timestampSec}`)

/**
 * The wallet-link message, signed once by both keys (Ed25519 by the user key, EIP-191
 * personal_sign by the EVM wallet): four lines, LF-joined, no trailing LF; wallet lowercase.
 */
export const walletLinkMessage = (user: string, wallet: string, timestampSec: number): string =>
  `twinbook wallet link\nUser: ${user}\nWallet: ${wallet}\nTimestamp: ${timestampSec}`

/**
 * The withdraw message, signed by the user key (Ed25519): five lines, LF-joined, no
 * trailing LF. The recipient is the linked wallet (lowercase): a signature cannot be
 * replayed to another wallet, and the nonce makes it single-use.
 */
export const withdrawMessage = (user: string, wallet: string, amountMicro: number, nonce: number): string =>
  `twinbook withdraw\nUser: ${user}\nWallet: ${wallet}\nAmount: ${amountMicro}\nNonce: ${nonce}`

const HEX_32 = /^(0x)?[0-9a-fA-F]{64}$/

/** Market id as 32 bytes: hex ids decode, anything else (a slug) is sha256 of its UTF-8 text. */
export const marketIdBytes = (marketId: string): Uint8Array =>
  HEX_32.test(marketId) ? hexToBytes(marketId.replace(/^0x/, "")) : sha256(utf8.encode(marketId))

/**
 * A small memo for the order message's two decoded fields: the same users and markets sign
 * order after order, and base58-decoding the user was most of building the message. Values are
 * copied in, never handed out; cleared whole when full.
 */
const memo = <T>(max: number, f: (key: string) => T): ((key: string) => T) => {
  const kept = new Map<string, T>()
  return (key) => {
    let v = kept.get(key)
    if (v === undefined) {
      if (kept.size >= max) kept.clear()
      kept.set(key, (v = f(key)))
    }
    return v
  }
}
const marketBytesOf = memo(10_000, marketIdBytes)
const userBytesOf = memo(100_000, (user) => bs58.decode(user))

/** `n` as 8 little-endian bytes at `at`; a safe non-negative integer without BigInt (the common case), anything else as BigInt does it. */
const setU64 = (view: DataView, at: number, n: number): void => {
  if (Number.isSafeInteger(n) && n >= 0) {
    view.setUint32(at, n % 0x1_0000_0000, true)
    view.setUint32(at + 4, Math.floor(n / 0x1_0000_0000), true)
  } else view.setBigUint64(at, BigInt(n), true)
}

export interface OrderMessageFields {
  readonly marketId: string
  readonly user: string
  readonly outcome: "yes" | "no"
  readonly side: "buy" | "sell"
  readonly priceBps: number
  readonly size: number
  readonly nonce: number
}

/** SPEC §5.3's order message: its length, and where the signer's raw public key sits in it (32 bytes). */
export const ORDER_MESSAGE_BYTES = 90
export const ORDER_MESSAGE_USER_AT = 32

/** The canonical 90-byte order message (SPEC §5.3). */
export const orderMessage = (o: OrderMessageFields): Uint8Array => {
  const buf = new Uint8Array(ORDER_MESSAGE_BYTES)
  const view = new DataView(buf.buffer)
  buf.set(marketBytesOf(o.marketId), 0)
  buf.set(userBytesOf(o.user), ORDER_MESSAGE_USER_AT)
  buf[64] = o.outcome === "yes" ? 0 : 1
  buf[65] = o.side === "buy" ? 0 : 1
  setU64(view, 66, o.priceBps)
  setU64(view, 74, o.size)
  setU64(view, 82, o.nonce)
  return buf
}

/** ASCII prefix of the LP delegation message; the version ends it so a v2 layout can never verify as v1. */
export const DELEGATION_PREFIX = "twinbook-lp-delegation-v1"

export interface DelegationFields {
  readonly user: string
  readonly sessionPub: string
  readonly scope: string
  readonly expiresAtUnix: number
  readonly nonce: number
}

/**
 * The LP delegation message (SPEC §5.9; layout: docs/api.md "LP bot"), signed by the user key:
 *   "twinbook-lp-delegation-v1" (25 bytes ASCII) ‖ user public key (32) ‖ session public key (32)
 *   ‖ scope length (u8) ‖ scope (ASCII) ‖ expires_at_unix (u64 BE) ‖ nonce (u64 BE)
 * 112 bytes for scope "orders". Fixed-width keys and a length-prefixed scope make it unambiguous.
 */
export const delegationMessage = (d: DelegationFields): Uint8Array => {
  if (!/^[\x00-\x7f]*$/.test(d.scope)) throw new RangeError("scope must be ASCII")
  const scope = utf8.encode(d.scope)
  if (scope.length > 255) throw new RangeError("scope longer than 255 bytes")
  const tail = new Uint8Array(16)
  const view = new DataView(tail.buffer)
  view.setBigUint64(0, BigInt(d.expiresAtUnix))
  view.setBigUint64(8, BigInt(d.nonce))
  return concatBytes(utf8.encode(DELEGATION_PREFIX), bs58.decode(d.user), bs58.decode(d.sessionPub), Uint8Array.of(scope.length), scope, tail)
}
