// Client-side Ed25519 keys and signatures (@noble/ed25519): used by test
// clients, simulated agents and benchmarks. The server verifies with node:crypto.
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

/** A deterministic key from a label: the same label gives the same user everywhere. */
export const keyFromLabel = (label: string): UserKey => keyFromSecret(sha256(new TextEncoder().encode(`twinbook-key:${label}`)))

export const signSession = (key: UserKey, timestampSec: number): string => key.sign(sessionMessage(key.user, timestampSec))

export const signOrder = (key: UserKey, fields: Omit<OrderMessageFields, "user">): string =>
  key.sign(orderMessage({ ...fields, user: key.user }))
