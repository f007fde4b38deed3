// The first hour's extensions (docs/api.md "Development faucet", "Last nonces"): the dev group
// (the test-USDG faucet of the embedded chain) and the nonces group (the session user's last
// accepted nonces). The faucet's absence, the session and its buckets are the declaration's preamble.
import { type AppCtx } from "../context.ts"
import { API } from "../declaration/api.ts"
import { json } from "../http.ts"
import { implement } from "../serve.ts"
import { faucetOf, requestFaucet } from "../../usecase/faucet.ts"

const noStore = { "cache-control": "no-store" }

export const dev = implement<AppCtx>()(API.dev, {
  faucet: async (ctx, { body }) => json(200, await requestFaucet(faucetOf(ctx.faucet), body), noStore)
})

export const nonces = implement<AppCtx>()(API.nonces, {
  nonces: (ctx, { session }) => {
    const account = ctx.exchange.engine.accounts.get(session)
    return json(200, { user: session, last_order_nonce: account?.lastNonce ?? 0, last_withdraw_nonce: account?.lastWithdrawNonce ?? 0 }, noStore)
  }
})
