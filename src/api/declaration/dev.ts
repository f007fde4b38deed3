// The first hour's extension routes, declared like the rest (api.ts adds these groups with one
// line): the development faucet (src/api/routes/dev.ts, src/usecase/faucet.ts) and the session
// user's last accepted nonces, so a restarted bot reads them instead of guessing.
import { Schema } from "effect"
import type { Group } from "./endpoint.ts"
import { API_TABLE as T } from "./table.ts"

export const FaucetRequest = Schema.Struct({
  // The refusals' words are the faucet's own (src/usecase/faucet.ts), whichever check finds the problem.
  address: Schema.String.annotations({
    description: "the EVM wallet to receive test USDG: 0x followed by 40 hex characters",
    message: () => ({ message: "address must be 0x followed by 40 hex characters", override: true })
  }),
  amount_micro: Schema.Int.pipe(Schema.between(1, 1_000_000_000_000)).annotations({
    description: "micro-USDG (1,000,000 = 1 USDG), at most 1,000,000 USDG",
    message: () => ({ message: "amount_micro must be an integer from 1 to 1000000000000 (1,000,000 micro = 1 USDG)", override: true })
  })
}).annotations({ identifier: "FaucetRequest" })

export const FaucetResponse = Schema.Struct({
  address: Schema.String.annotations({ description: "the wallet, lowercase" }),
  tx_hash: Schema.String.annotations({ description: "the mined mint transaction" }),
  amount_micro: Schema.Int
}).annotations({ identifier: "FaucetResponse" })

export const AccountNonces = Schema.Struct({
  user: Schema.String,
  last_order_nonce: Schema.Int.annotations({ description: "the last spent order nonce (a refused order spends its nonce; 0 before any); the next must be greater" }),
  last_withdraw_nonce: Schema.Int.annotations({ description: "the last accepted withdraw nonce (0 before any)" })
}).annotations({ identifier: "AccountNonces" })

/** Groups by tag, spread into API (src/api/declaration/api.ts). */
export const FIRST_HOUR_ROUTES = {
  dev: {
    faucet: {
      ...T.dev.faucet,
      summary: "Development: mint test USDG (and gas) to a wallet on the embedded chain",
      description:
        "Exists only with the embedded chain and DEV_CREDIT on; otherwise `404 not_found` says why (DEV_CREDIT=false, CHAIN_RPC_URL set, CHAIN=off). " +
        "A registered user's session cookie, refused from a foreign Origin; per user 5 and per address 60 per 60 s. Answers once the mint is mined.",
      auth: "cookie",
      body: FaucetRequest,
      success: FaucetResponse,
      errors: ["not_found", "forbidden_origin", "unauthorized", "rate_limited", "invalid_address", "invalid_amount", "faucet_failed"],
      // The faucet's absence first, so its reason is never hidden behind a 401; charged before the body is read.
      preamble: ["faucet", "session", "ip:faucet_ip", "user:faucet_user"],
      fieldErrors: { address: "invalid_address", amount_micro: "invalid_amount" }
    }
  },
  nonces: {
    nonces: {
      ...T.nonces.nonces,
      summary: "The session user's last accepted order and withdraw nonces",
      auth: "cookie",
      success: AccountNonces,
      errors: ["forbidden_origin", "unauthorized"],
      preamble: ["session"]
    }
  }
} as const satisfies Readonly<Record<string, Group>>
