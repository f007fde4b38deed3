// Public account reads (SPEC §4 "Account reads"): no cookie, anyone's data.
import { allPositions, balanceView, depositRows, positionView, withdrawalRows } from "../../service/views.ts"
import { type AppCtx, requireUserKey } from "../context.ts"
import { json, type Route } from "../http.ts"
import { pageParams } from "./params.ts"

const userParam = (params: Readonly<Record<string, string>>): string => {
  const user = params.user!
  return requireUserKey("user", user, "invalid_pubkey")
}

const noStore = { "cache-control": "no-store", "x-cache": "MISS" }

/** The shared per-user list envelope `{ <name>, total, limit, offset }` over rows already newest first. */
const pagedRows = (name: string, rows: ReadonlyArray<unknown>, query: URLSearchParams) => {
  const { limit, offset } = pageParams(query)
  return json(200, { [name]: rows.slice(offset, offset + limit), total: rows.length, limit, offset }, noStore)
}

export const accountRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "GET",
    path: "/v1/balance/:user",
    handler: (ctx, _req, params) => json(200, balanceView(ctx.exchange, userParam(params)), noStore)
  },
  {
    method: "GET",
    path: "/v1/position/:market_id/:user",
    handler: (ctx, _req, params) => {
      const user = userParam(params)
      const marketId = ctx.exchange.catalog.market(params.market_id!)?.market.market_id ?? params.market_id!
      return json(200, positionView(ctx.exchange, user, marketId), noStore)
    }
  },
  {
    method: "GET",
    path: "/v1/positions/all/:user",
    handler: (ctx, _req, params) => json(200, { positions: allPositions(ctx.exchange, userParam(params)) }, noStore)
  },
  {
    method: "GET",
    path: "/v1/trades/all/:user",
    handler: (ctx, req, params) => {
      const user = userParam(params)
      const { limit, offset } = pageParams(req.query)
      return json(200, { ...ctx.exchange.history.userTrades(user, limit, offset), limit, offset }, noStore)
    }
  },
  {
    method: "GET",
    path: "/v1/deposits/all/:user",
    handler: (ctx, req, params) => pagedRows("deposits", depositRows(ctx.exchange, userParam(params)), req.query)
  },
  {
    method: "GET",
    path: "/v1/withdrawals/all/:user",
    handler: (ctx, req, params) => pagedRows("withdrawals", withdrawalRows(ctx.exchange, userParam(params)), req.query)
  }
]
