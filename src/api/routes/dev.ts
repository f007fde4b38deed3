// The first hour's extensions (docs/api.md "Development faucet", "Last nonces"): the test-USDG
// faucet of the embedded chain, and the session user's last accepted nonces.
import { type AppCtx, requireSession } from "../context.ts"
import { json, parseJsonBody, type Route } from "../http.ts"
import { requestFaucet } from "../../usecase/faucet.ts"
import { LIMITS } from "../../usecase/rate-limit.ts"

const noStore = { "cache-control": "no-store" }

export const devRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "POST",
    path: "/v1/dev/faucet",
    handler: async (ctx, req) => {
      // Open (no token, docs/decisions.md "Development faucet"), so charged to SPEC's administrative per-IP bucket.
      ctx.limiter.takeForAddress(LIMITS.ipAdmin, req.ip)
      const body = parseJsonBody(req)
      return json(200, await requestFaucet(ctx.faucet, { address: body.address, amount_micro: body.amount_micro }), noStore)
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
