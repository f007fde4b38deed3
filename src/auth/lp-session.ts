// Server-side LP session keys (SPEC §3 "LP-bot session", §5.9-10). The secret half is
// never stored or journaled: it is re-derived from the server secret and a per-user
// counter, HMAC-SHA256(secret, "lp-session:<user>:<counter>") as the Ed25519 seed, so
// the journal holds only the public key and the counter and a restart can sign again.
import { createHmac, createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto"
import bs58 from "bs58"

// DER prefix of an Ed25519 PKCS#8 private key; the 32-byte seed follows.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

export interface SessionKey {
  /** base58 public key: the `session_pub` of the API. */
  readonly pub: string
  /** Hex Ed25519 signature over `message`. */
  sign(message: Uint8Array): string
}

export const sessionSeed = (secret: Uint8Array, user: string, counter: number): Buffer =>
  createHmac("sha256", secret).update(`lp-session:${user}:${counter}`).digest()

export const deriveSessionKey = (secret: Uint8Array, user: string, counter: number): SessionKey => {
  const privateKey: KeyObject = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, sessionSeed(secret, user, counter)]), format: "der", type: "pkcs8" })
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" })
  // The raw key is the last 32 bytes of the SubjectPublicKeyInfo.
  const pub = bs58.encode(spki.subarray(spki.length - 32))
  return { pub, sign: (message) => sign(null, message, privateKey).toString("hex") }
}
