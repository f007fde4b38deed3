// POST /v1/withdraw-signed (SPEC §4 "Withdraw", §5.8): parse → the withdraw use case
// (src/usecase/withdraw.ts) → response.
import { ApiError } from "../../domain/errors.ts"
import { decodeBody, WithdrawRequest } from "../../domain/schemas.ts"
import { LIMITS } from "../../usecase/rate-limit.ts"
import { withdraw } from "../../usecase/withdraw.ts"
import { type AppCtx, requireSession, requireUserKey } from "../context.ts"
import { json, parseJsonBody, type Route } from "../http.ts"

const decodeWithdraw = decodeBody(WithdrawRequest, "invalid_shape")

export const withdrawRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "POST",
    path: "/v1/withdraw-signed",
    handler: async (ctx, req) => {
      // Paused trading blocks withdrawals before any other check (SPEC §4, §8).
      if (ctx.exchange.trading === "paused") throw new ApiError("trading_disabled", "withdrawals are blocked while trading is paused")
      ctx.limiter.takeForAddress(LIMITS.ipOrders, req.ip)
      const sessionUser = requireSession(ctx, req)
      const raw = parseJsonBody(req)
      const body = decodeWithdraw(raw)
      requireUserKey("user", body.user, "invalid_shape")
      if (body.user !== sessionUser) throw new ApiError("session_user_mismatch", "withdraw user differs from the session user")
      // The decoded body drops unknown fields: a session_pub is looked for in the raw one.
      return json(200, await withdraw(ctx, { ...body, session_pub: raw.session_pub }))
    }
  }
]
