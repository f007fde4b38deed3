// The API's preamble steps (src/api/declaration/endpoint.ts `Step`): what a route's
// declaration names runs here, in the declared order, before its handler (src/api/serve.ts).
import { ApiError } from "../domain/errors.ts"
import { FAUCET_LIMITS, faucetOf } from "../usecase/faucet.ts"
import { LIMITS } from "../usecase/rate-limit.ts"
import { anonymousWriteLimit, type AppCtx, requireAdmin, requireSession } from "./context.ts"
import type { Steps } from "./serve.ts"

export const API_STEPS: Steps<AppCtx> = {
  session: (ctx, req, state) => {
    state.session = requireSession(ctx, req)
  },
  admin: (ctx, req) => requireAdmin(ctx, req),
  trading_open: (ctx) => {
    if (ctx.exchange.trading === "closed") throw new ApiError("trading_disabled", "trading is not open")
  },
  trading_not_paused: (ctx) => {
    if (ctx.exchange.trading === "paused") throw new ApiError("trading_disabled", "withdrawals are blocked while trading is paused")
  },
  lp_open: (ctx) => {
    if (ctx.exchange.lp !== "open") throw new ApiError("lp_disabled", "the LP surface is not open")
  },
  dev_credit: (ctx) => {
    if (!ctx.config.devCredit) throw new ApiError("not_found", "operator credit is disabled (DEV_CREDIT=false)")
  },
  // The faucet's absence says why (docs/decisions.md "One faucet"), before the session is asked for.
  faucet: (ctx) => void faucetOf(ctx.faucet),
  "ip:ip_orders": (ctx, req) => ctx.limiter.takeForAddress(LIMITS.ipOrders, req.ip),
  "ip:ip_lp": (ctx, req) => ctx.limiter.takeForAddress(LIMITS.ipLp, req.ip),
  // Registration and wallet link: a bucket each at LIMIT_REGISTRATIONS_PER_MIN (src/api/context.ts).
  "ip:ip_register": (ctx, req) => ctx.limiter.takeForAddress(anonymousWriteLimit(ctx.config, "ip_register"), req.ip),
  "ip:ip_wallet_link": (ctx, req) => ctx.limiter.takeForAddress(anonymousWriteLimit(ctx.config, "ip_wallet_link"), req.ip),
  "ip:faucet_ip": (ctx, req) => ctx.limiter.takeForAddress(FAUCET_LIMITS.ip, req.ip),
  "user:wallet_orders": (ctx, _req, state) => ctx.limiter.take(LIMITS.walletOrders, sessionOf(state.session)),
  "user:faucet_user": (ctx, _req, state) => ctx.limiter.take(FAUCET_LIMITS.user, sessionOf(state.session))
}

/** A per-user bucket is declared after "session" (a declaration that does not is a bug, not a client's error). */
const sessionOf = (user: string | undefined): string => {
  if (user === undefined) throw new Error("a per-user bucket is declared before the session step")
  return user
}
