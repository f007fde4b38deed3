// Client-side Ed25519 keys and signatures with @noble/ed25519: browser-safe (no node:
// imports, no Buffer). The user key IS the account: whoever holds the 32-byte secret can
// trade and withdraw, so exporting it is a backup, never something to paste into a site.
// The server verifies with node:crypto; keys-node.ts has the fast Node-only signer.
import * as ed from "@noble/ed25519"
import { sha256, sha512 } from "@noble/hashes/sha2.js"
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js"
import bs58 from "bs58"
import { orderMessage, type OrderMessageFields, sessionMessage, walletLinkMessage, withdrawMessage } from "../auth/messages.ts"

ed.hashes.sha512 = sha512

export interface UserKey {
  /** The base58 public key: the user id on every route. */
  readonly user: string
  readonly secretKey: Uint8Array
  /** Ed25519 signature over `message`, hex without 0x (SPEC §2). */
  sign(message: Uint8Array): string
}

const utf8 = new TextEncoder()

/** The base58 public key of a 32-byte secret. */
export const publicKeyOf = (secretKey: Uint8Array): string => bs58.encode(ed.getPublicKey(secretKey))

export const keyFromSecret = (secretKey: Uint8Array): UserKey => {
  if (secretKey.length !== 32) throw new RangeError("an Ed25519 secret key is 32 bytes")
  const secret = Uint8Array.from(secretKey)
  return { user: publicKeyOf(secret), secretKey: secret, sign: (message) => bytesToHex(ed.sign(message, secret)) }
}

/** A deterministic key from a label: the same label gives the same user everywhere (tests, demos). */
export const keyFromLabel = (label: string): UserKey => keyFromSecret(sha256(utf8.encode(`twinbook-key:${label}`)))

const cryptoRandomBytes = (n: number): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(n)) // live-only: a new user key must be unpredictable

/**
 * A fresh key. `randomBytes` defaults to the platform CSPRNG (`crypto.getRandomValues`,
 * in browsers and Node 20); the simulator passes its seeded Rng's bytes instead.
 */
export const generateKey = (randomBytes: (n: number) => Uint8Array = cryptoRandomBytes): UserKey => keyFromSecret(randomBytes(32))

// ---- backup: the 32-byte secret as hex (64 chars) or base58 ----

export const exportSecretHex = (key: UserKey): string => bytesToHex(key.secretKey)
export const exportSecretBase58 = (key: UserKey): string => bs58.encode(key.secretKey)

/**
 * A key from a backed-up secret: 64 hex characters (optional 0x) or base58 of 32 bytes.
 * Throws RangeError with a readable message otherwise.
 */
export const importSecret = (text: string): UserKey => {
  const s = text.trim()
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(s)) return keyFromSecret(hexToBytes(s.replace(/^0x/, "")))
  let bytes: Uint8Array
  try {
    bytes = bs58.decode(s)
  } catch {
    throw new RangeError("not a secret key: expected 64 hex characters or base58")
  }
  if (bytes.length !== 32) throw new RangeError(`not a secret key: base58 decodes to ${bytes.length} bytes, expected 32`)
  return keyFromSecret(bytes)
}

// ---- signatures over SPEC §5's messages ----

/** The session bootstrap (register, and the `user:` channel proof). */
export const signSession = (key: UserKey, timestampSec: number): string => key.sign(sessionMessage(key.user, timestampSec))

/** Per key (the object, so separate runs or pages never share it): the newest proof timestamp it signed. */
const lastProofSec = new WeakMap<UserKey, number>()

/**
 * The timestamp for this key's next session proof. The server accepts each (user, timestamp) proof
 * once, at registration or on the `user:` channel (docs/decisions.md "Session proofs are
 * single-use"), so a key that signs twice within a second (register, then subscribe) takes the
 * next second: a second or two ahead of the clock is well inside both windows (60 s and 5 min).
 * `exactSec` is a timestamp the caller chose itself: used as it is, and remembered.
 */
export const proofTimestamp = (key: UserKey, nowSec: number, exactSec?: number): number => {
  const last = lastProofSec.get(key)
  const ts = exactSec ?? (last === undefined || nowSec > last ? nowSec : last + 1)
  lastProofSec.set(key, last === undefined ? ts : Math.max(last, ts))
  return ts
}

/** A fresh session proof (SPEC §5.1 and §5.6): a timestamp this key has not signed before, and its signature. */
export const sessionProof = (key: UserKey, nowSec: number, exactSec?: number): { readonly timestamp: number; readonly signature: string } => {
  const timestamp = proofTimestamp(key, nowSec, exactSec)
  return { timestamp, signature: signSession(key, timestamp) }
}

/** The canonical 90-byte order message; `marketId` exactly as sent (hex id or slug). */
export const signOrder = (key: UserKey, fields: Omit<OrderMessageFields, "user">): string => key.sign(orderMessage({ ...fields, user: key.user }))

/** The user-key half of a wallet link (the EVM wallet signs the same text with personal_sign). */
export const signWalletLink = (key: UserKey, wallet: string, timestampSec: number): string =>
  key.sign(utf8.encode(walletLinkMessage(key.user, wallet.toLowerCase(), timestampSec)))

/** A withdraw to the linked wallet (lowercased here, as the server builds it). */
export const signWithdraw = (key: UserKey, wallet: string, amountMicro: number, nonce: number): string =>
  key.sign(utf8.encode(withdrawMessage(key.user, wallet.toLowerCase(), amountMicro, nonce)))

/** An LP delegation: the user key signs `message_bytes_hex` of `POST /v1/lp-bot/session/new`. */
export const signDelegation = (key: UserKey, messageBytesHex: string): string => key.sign(hexToBytes(messageBytesHex))
