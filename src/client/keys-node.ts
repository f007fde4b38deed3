// Node-only signing: the same Ed25519 key through node:crypto (~30k signatures/s against
// noble's few thousand). Ed25519 signatures are deterministic, so the bytes are identical
// to keys.ts's. Not exported from src/client/index.ts: browsers never load node: modules.
import { createPrivateKey, sign as cryptoSign } from "node:crypto"
import { publicKeyOf, type UserKey } from "./keys.ts"

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

/** The simulator's agents and the benches use it; tests keep noble so client and server differ in code. */
export const fastKeyFromSecret = (secretKey: Uint8Array): UserKey => {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, secretKey]), format: "der", type: "pkcs8" })
  return { user: publicKeyOf(secretKey), secretKey, sign: (message) => cryptoSign(null, message, privateKey).toString("hex") }
}
