// Path and query parameters shared by the API's route groups (api.ts, operator.ts). The router
// decodes a request's parameters with these (src/api/serve.ts), so a handler gets them checked.
import { Schema } from "effect"
import { checkUserKey } from "../../auth/user-key.ts"
import { intQuery } from "./endpoint.ts"

/**
 * A user key, checked as every entry point checks one (src/auth/ed25519.ts: canonical, not of
 * small order); the refusal says why. Documented by its base58 pattern.
 */
export const UserKey = Schema.String.pipe(
  Schema.filter(
    (s) => {
      const c = checkUserKey(s)
      return c.ok || c.why
    },
    { jsonSchema: { pattern: "^[1-9A-HJ-NP-Za-km-z]{32,44}$" } }
  )
).annotations({ description: "base58 Ed25519 public key (32 bytes, not of small order)" })
export const EvmAddress = Schema.String.annotations({ description: "EVM address: 0x followed by 40 hex characters" })
export const MarketRef = Schema.String.annotations({ description: "market or event id, or slug" })
export const PAGE = { limit: Schema.optional(intQuery(1).annotations({ description: "default 50, at most 200" })), offset: Schema.optional(intQuery(0)) }
/** A user key refused in a path or query is `invalid_pubkey` (the router's `fieldErrors`). */
export const USER_FIELD = { user: "invalid_pubkey" } as const
