// Path and query parameters shared by the API's route groups (api.ts, operator.ts).
import { Schema } from "effect"
import { intQuery } from "./endpoint.ts"

export const UserKey = Schema.String.pipe(Schema.pattern(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)).annotations({ description: "base58 Ed25519 public key (32 bytes, not of small order)" })
export const EvmAddress = Schema.String.annotations({ description: "EVM address: 0x followed by 40 hex characters" })
export const MarketRef = Schema.String.annotations({ description: "market or event id, or slug" })
export const PAGE = { limit: Schema.optional(intQuery(1).annotations({ description: "default 50, at most 200" })), offset: Schema.optional(intQuery(0)) }
