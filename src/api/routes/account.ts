// The account group (SPEC §4 "Account reads"): public, no cookie, anyone's data. The user key
// and the paging arrive decoded (src/api/declaration/api.ts).
import { allPositions, balanceView, depositRows, positionView, withdrawalRows } from "../../service/views.ts"
import { API } from "../declaration/api.ts"
import type { AppCtx } from "../context.ts"
import { json } from "../http.ts"
import { implement } from "../serve.ts"

type PageQuery = { readonly limit?: number | undefined; readonly offset?: number | undefined }

const noStore = { "cache-control": "no-store", "x-cache": "MISS" }

/** The per-user lists' paging: limit default 50, at most 200; offset from 0. */
const page = (q: PageQuery) => ({ limit: Math.min(200, q.limit ?? 50), offset: q.offset ?? 0 })

/** The shared per-user list envelope `{ <name>, total, limit, offset }` over rows already newest first. */
const pagedRows = (name: string, rows: ReadonlyArray<unknown>, q: PageQuery) => {
  const { limit, offset } = page(q)
  return json(200, { [name]: rows.slice(offset, offset + limit), total: rows.length, limit, offset }, noStore)
}

export const account = implement<AppCtx>()(API.account, {
  balance: (ctx, { path }) => json(200, balanceView(ctx.exchange, path.user), noStore),
  position: (ctx, { path }) => {
    const marketId = ctx.exchange.catalog.market(path.market_id)?.market.market_id ?? path.market_id
    return json(200, positionView(ctx.exchange, path.user, marketId), noStore)
  },
  positions: (ctx, { path }) => json(200, { positions: allPositions(ctx.exchange, path.user) }, noStore),
  trades: (ctx, { path, query }) => {
    const { limit, offset } = page(query)
    return json(200, { ...ctx.exchange.history.userTrades(path.user, limit, offset), limit, offset }, noStore)
  },
  deposits: (ctx, { path, query }) => pagedRows("deposits", depositRows(ctx.exchange, path.user), query),
  withdrawals: (ctx, { path, query }) => pagedRows("withdrawals", withdrawalRows(ctx.exchange, path.user), query)
})
