// Canonical signed messages (SPEC §5).
import { createHash } from "node:crypto"
import bs58 from "bs58"

/** The session bootstrap message: three lines, LF-joined, no trailing LF. */
export const sessionMessage = (user: string, timestampSec: number): Uint8Array =>
  Buffer.from(`Service Session\nUser: ${user}\nTimestamp: ${timestampSec}`, "utf8")

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
export const marketIdBytes = (marketId: string): Buffer =>
  HEX_32.test(marketId) ? Buffer.from(marketId.replace(/^0x/, ""), "hex") : createHash("sha256").update(marketId, "utf8").digest()

export interface OrderMessageFields {
  readonly marketId: string
  readonly user: string
  readonly outcome: "yes" | "no"
  readonly side: "buy" | "sell"
  readonly priceBps: number
  readonly size: number
  readonly nonce: number
}

/** The canonical 90-byte order message (SPEC §5.3). */
export const orderMessage = (o: OrderMessageFields): Buffer => {
  const buf = Buffer.alloc(90)
  marketIdBytes(o.marketId).copy(buf, 0)
  Buffer.from(bs58.decode(o.user)).copy(buf, 32)
  buf[64] = o.outcome === "yes" ? 0 : 1
  buf[65] = o.side === "buy" ? 0 : 1
  buf.writeBigUInt64LE(BigInt(o.priceBps), 66)
  buf.writeBigUInt64LE(BigInt(o.size), 74)
  buf.writeBigUInt64LE(BigInt(o.nonce), 82)
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
export const delegationMessage = (d: DelegationFields): Buffer => {
  const scope = Buffer.from(d.scope, "ascii")
  if (scope.length > 255) throw new RangeError("scope longer than 255 bytes")
  const head = Buffer.from(DELEGATION_PREFIX, "ascii")
  const tail = Buffer.alloc(16)
  tail.writeBigUInt64BE(BigInt(d.expiresAtUnix), 0)
  tail.writeBigUInt64BE(BigInt(d.nonce), 8)
  return Buffer.concat([head, Buffer.from(bs58.decode(d.user)), Buffer.from(bs58.decode(d.sessionPub)), Buffer.from([scope.length]), scope, tail])
}
