// Client-side Ed25519 keys and signatures (@noble/ed25519): used by test
// clients, simulated agents and benchmarks. The server verifies with node:crypto.
import { createPrivateKey, sign as cryptoSign } from "node:crypto"
import * as ed from "@noble/ed25519"
import { sha256, sha512 } from "@noble/hashes/sha2.js"
import bs58 from "bs58"
import { orderMessage, type OrderMessageFields, sessionMessage } from "../auth/messages.ts"

ed.hashes.sha512 = sha512

export interface UserKey {
  readonly user: string
  readonly secretKey: Uint8Array
  sign(message: Uint8Array): string
}

const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex")

export const keyFromSecret = (secretKey: Uint8Array): UserKey => {
  const publicKey = ed.getPublicKey(secretKey)
  return { user: bs58.encode(publicKey), secretKey, sign: (message) => toHex(ed.sign(message, secretKey)) }
}

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

/**
 * The same key signing through node:crypto (~30k signatures/s against noble's few
 * thousand): Ed25519 signatures are deterministic, so the bytes are identical. The
 * simulator's agents use it; tests keep noble so client and server differ in code.
 */
export const fastKeyFromSecret = (secretKey: Uint8Array): UserKey => {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, secretKey]), format: "der", type: "pkcs8" })
  const publicKey = ed.getPublicKey(secretKey)
  return { user: bs58.encode(publicKey), secretKey, sign: (message) => cryptoSign(null, message, privateKey).toString("hex") }
}

/** A deterministic key from a label: the same label gives the same user everywhere. */
export const keyFromLabel = (label: string): UserKey => keyFromSecret(sha256(new TextEncoder().encode(`twinbook-key:${label}`)))

export const signSession = (key: UserKey, timestampSec: number): string => key.sign(sessionMessage(key.user, timestampSec))

export const signOrder = (key: UserKey, fields: Omit<OrderMessageFields, "user">): string =>
  key.sign(orderMessage({ ...fields, user: key.user }))
