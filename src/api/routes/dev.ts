// The first hour's extensions (docs/api.md "Development faucet", "Last nonces"): the test-USDG
// faucet of the embedded chain, and the session user's last accepted nonces.
import { type AppCtx, requireSession } from "../context.ts"
import { json, parseJsonBody, type Route } from "../http.ts"
import { FAUCET_LIMITS, faucetOf, requestFaucet } from "../../usecase/faucet.ts"

const noStore = { "cache-control": "no-store" }

export const devRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "POST",
    path: "/v1/dev/faucet",
    handler: async (ctx, req) => {
      const faucet = faucetOf(ctx.faucet)
      // A registered user's cookie, from no foreign page (docs/decisions.md "One faucet"); charged before the body is read.
      const user = requireSession(ctx, req)
      ctx.limiter.takeForAddress(FAUCET_LIMITS.ip, req.ip)
      ctx.limiter.take(FAUCET_LIMITS.user, user)
      const body = parseJsonBody(req)
      return json(200, await requestFaucet(faucet, { address: body.address, amount_micro: body.amount_micro }), noStore)
    }
  },
  {
    method: "GET",
    path: "/v1/account/nonce",
    handler: (ctx, req) => {
      const user = requireSession(ctx, req)
      const account = ctx.exchange.engine.accounts.get(user)
      return json(200, { user, last_order_nonce: account?.lastNonce ?? 0, last_withdraw_nonce: account?.lastWithdrawNonce ?? 0 }, noStore)
    }
  }
]
