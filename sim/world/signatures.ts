// Order signatures of the world's own agents, and the simulated process's verifier for them.
//
// Live, an order's Ed25519 signature is checked by the Verifier port (src/auth/verifier.ts), and
// a signature verifies exactly when it was made by that user's key over that message. Inside
// the world only that yes/no reaches anything (signatures are not journaled), so two modes give
// the same answers, hence the same journal:
//
// * `token` (the default): an agent "signs" an order message with a world token,
//   SHA-512(world prefix ‖ user ‖ message), 64 bytes like a signature. The world's verifier
//   answers true when the signature is the token of exactly that user and message, and
//   otherwise verifies with node:crypto as live (a hostile agent's signature over another
//   message, a tampered one, a bot's session-key signature). A token is as good as a signature
//   for the message it was made for, replays included, and for nothing else. Ed25519 signing
//   was a fifth of a busy simulated day; a token costs a few microseconds.
// * `ed25519`: agents sign every message with Ed25519 for real, and the verifier still skips
//   what it knows it would accept (a noted signature, once). `npm run sim -- --signatures
//   ed25519`; test/sim/signatures.test.ts runs scenarios both ways and compares hashes.
//
// Only order messages (SPEC §5.3: 90 bytes, the signer's own public key at 32..63, binary) get
// tokens: every other message an agent signs (registration, withdrawal, wallet link, delegation)
// is verified outside the port, directly with node:crypto, and is signed for real in both modes.
// An ASCII message is never taken for an order.
import { hash } from "node:crypto"
import bs58 from "bs58"
import { ORDER_MESSAGE_BYTES, ORDER_MESSAGE_USER_AT } from "../../src/auth/messages.ts"
import type { UserKey } from "../../src/client/keys.ts"
import type { Verifier } from "../../src/auth/verifier.ts"
import { verifyUser } from "../../src/auth/ed25519.ts"

export type SigningMode = "token" | "ed25519"
export const SIGNING_MODES: readonly SigningMode[] = ["token", "ed25519"]

/** Not a key: nothing outside the world sees a token, and no agent makes one except through its signer. */
const TOKEN_PREFIX = Buffer.from("twinbook-sim-order-token-v1:", "utf8")

/** SPEC §5.3's order message signed by `userBytes` (and not a text that happens to be 90 bytes long). */
const isOwnOrderMessage = (message: Uint8Array, userBytes: Uint8Array): boolean => {
  if (message.length !== ORDER_MESSAGE_BYTES) return false
  let binary = false
  for (let i = 0; i < ORDER_MESSAGE_BYTES; i++) {
    if (message[i]! >= 0x80) {
      binary = true
      break
    }
  }
  if (!binary) return false
  for (let i = 0; i < 32; i++) if (message[ORDER_MESSAGE_USER_AT + i] !== userBytes[i]) return false
  return true
}

/** One-shot hash (createHmac's per-call object was 5% of a busy day). */
const tokenOf = (user: string, message: Uint8Array): Buffer => hash("sha512", Buffer.concat([TOKEN_PREFIX, Buffer.from(user, "utf8"), message]), "buffer")

export class SignatureMemo {
  /** ed25519 mode: signature hex → who signed what; a noted signature is dropped once verified. */
  private readonly noted = new Map<string, { readonly user: string; readonly message: Uint8Array }>()
  /** Verifications answered as known good (a token, or a noted signature), and by node:crypto. */
  hits = 0
  verified = 0

  constructor(readonly mode: SigningMode = "token") {}

  /** The agent's key as the world uses it: tokens for its order messages in token mode, every signature noted in ed25519 mode. */
  signer(key: UserKey): UserKey {
    if (this.mode === "token") {
      const userBytes = bs58.decode(key.user)
      return { ...key, sign: (message) => (isOwnOrderMessage(message, userBytes) ? tokenOf(key.user, message).toString("hex") : key.sign(message)) }
    }
    return {
      ...key,
      sign: (message) => {
        const signature = key.sign(message)
        if (this.noted.size >= 100_000) this.noted.clear() // unverified leftovers (requests lost on the network)
        this.noted.set(signature, { user: key.user, message: Uint8Array.from(message) })
        return signature
      }
    }
  }

  readonly verifier: Verifier = {
    verify: (user, message, signature) => {
      if (this.knownGood(user, message, signature)) {
        this.hits++
        return Promise.resolve(true)
      }
      this.verified++
      return Promise.resolve(verifyUser(user, message, signature))
    },
    close: () => Promise.resolve()
  }

  private knownGood(user: string, message: Uint8Array, signature: Uint8Array): boolean {
    const sig = Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength)
    if (this.mode === "token") return sig.length === 64 && message.length === ORDER_MESSAGE_BYTES && tokenOf(user, message).equals(sig)
    const hex = sig.toString("hex")
    const n = this.noted.get(hex)
    if (n === undefined || n.user !== user || Buffer.compare(n.message, message) !== 0) return false
    this.noted.delete(hex)
    return true
  }
}
