// Signatures the world's own agents made, so the simulated service need not verify them again.
//
// Ed25519 is deterministic and correct: a signature made by sign(secret, message) verifies under
// that secret's public key, always. An agent's key signs through `SignatureMemo.signer`, which
// notes (user, message, signature); the simulated process's verifier answers true for exactly
// such a triple, once, and verifies everything else with node:crypto as live (a hostile agent's
// forged, tampered or replayed signature, a bot's session-key signature). Same answers, so the
// same journal; verification was about a fifth of a busy simulated day (docs/simulation.md).
import type { UserKey } from "../src/client/keys.ts"
import type { Verifier } from "../src/auth/verifier.ts"
import { verifyUser } from "../src/auth/ed25519.ts"

export class SignatureMemo {
  /** Signature hex → who signed what. A noted signature is dropped once it has been verified. */
  private readonly noted = new Map<string, { readonly user: string; readonly message: Uint8Array }>()
  /** Verifications answered from the memo, and by node:crypto. */
  hits = 0
  verified = 0

  /** The same key, noting each signature it makes. */
  signer(key: UserKey): UserKey {
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
      const hex = Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength).toString("hex")
      const n = this.noted.get(hex)
      if (n !== undefined && n.user === user && Buffer.compare(n.message, message) === 0) {
        this.noted.delete(hex)
        this.hits++
        return Promise.resolve(true)
      }
      this.verified++
      return Promise.resolve(verifyUser(user, message, signature))
    },
    close: () => Promise.resolve()
  }
}
