// Public market reads: list, one event, book, trades, candles (SPEC §4 "Markets").
import { ApiError } from "../../domain/errors.ts"
import { Catalog, type EventRecord } from "../../service/catalog.ts"
import { INTERVALS, type Interval } from "../../service/history.ts"
import { bookView, eventView } from "../../service/views.ts"
import { bookTag, TTL_SEC } from "../cache.ts"
import type { AppCtx } from "../context.ts"
import { type HttpRequest, json, type Route } from "../http.ts"
import { intParam } from "./params.ts"

const ORDERS = ["volume", "expiry", "created_at"] as const
const STATUSES = ["active", "halted", "resolved"] as const
const MAX_CANDLE_BUCKETS = 1_500
const DEFAULT_CANDLE_BUCKETS = 500

const listMarkets = (ctx: AppCtx, req: HttpRequest) => {
  const q = req.query
  const status = q.get("status") ?? "active"
  if (!(STATUSES as ReadonlyArray<string>).includes(status)) throw new ApiError("invalid_query", "status: active, halted or resolved")
  const order = q.get("order") ?? "volume"
  if (!(ORDERS as ReadonlyArray<string>).includes(order)) throw new ApiError("invalid_order", "order: volume, expiry or created_at")
  const ascendingRaw = q.get("ascending")
  if (ascendingRaw !== null && ascendingRaw !== "true" && ascendingRaw !== "false") throw new ApiError("invalid_query", "ascending: true or false")
  const ascending = ascendingRaw === null ? order === "expiry" : ascendingRaw === "true"
  const negRisk = q.get("neg_risk")
  if (negRisk !== null && negRisk !== "true" && negRisk !== "false") throw new ApiError("invalid_query", "neg_risk: true or false")
  const category = q.get("category")?.toLowerCase()
  const search = q.get("search")?.toLowerCase()
  const endsBefore = intParam(q, "ends_before", null, 0, Number.MAX_SAFE_INTEGER)
  const endsAfter = intParam(q, "ends_after", null, 0, Number.MAX_SAFE_INTEGER)
  const limit = Math.min(500, intParam(q, "limit", 500, 0, Number.MAX_SAFE_INTEGER)!)
  const offset = intParam(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER)!

  const matches = ctx.exchange.catalog.events.filter(
    (e) =>
      Catalog.eventStatus(e) === status &&
      (category === undefined || e.category.toLowerCase() === category) &&
      (search === undefined || e.question.toLowerCase().includes(search)) &&
      (endsBefore === null || e.expiry < endsBefore) &&
      (endsAfter === null || e.expiry > endsAfter) &&
      (negRisk === null || e.neg_risk === (negRisk === "true"))
  )
  const key = (e: EventRecord): number => (order === "volume" ? e.volume : order === "expiry" ? e.expiry : e.created_at)
  // Ties break on event_id so pages never overlap or skip.
  matches.sort((a, b) => (ascending ? key(a) - key(b) : key(b) - key(a)) || (a.event_id < b.event_id ? -1 : 1))
  const view = (e: EventRecord) => eventView(e, takerFeeOf(ctx))
  return { markets: matches.slice(offset, offset + limit).map(view), total: matches.length, limit, offset }
}

const takerFeeOf = (ctx: AppCtx) => (marketId: string) => ctx.exchange.engine.markets.get(marketId)?.takerFeeBps

const resolveMarketId = (ctx: AppCtx, id: string): string => {
  const found = ctx.exchange.catalog.market(id)
  if (found === undefined) throw new ApiError("not_found", `no market ${id}`)
  return found.market.market_id
}

/** `from` aligned down and `to` up to whole buckets (the bucket holding `to` included), at most 1,500 buckets. */
export const candleWindow = (nowSec: number, widthSec: number, from: number | null, to: number | null) => {
  const toSec = to ?? nowSec
  const end = Math.floor(toSec / widthSec) * widthSec + widthSec
  const fromSec = from ?? toSec - DEFAULT_CANDLE_BUCKETS * widthSec
  let start = Math.floor(fromSec / widthSec) * widthSec
  if ((end - start) / widthSec > MAX_CANDLE_BUCKETS) start = end - MAX_CANDLE_BUCKETS * widthSec
  return { start, end }
}

export const marketRoutes: ReadonlyArray<Route<AppCtx>> = [
  {
    method: "GET",
    path: "/v1/markets",
    handler: (ctx, req) => ctx.cache.serve(`${req.path}?${req.query}`, TTL_SEC.markets, () => json(200, listMarkets(ctx, req)))
  },
  {
    method: "GET",
    path: "/v1/markets/:id",
    handler: (ctx, req, params) =>
      ctx.cache.serve(req.path, TTL_SEC.markets, () => {
        const event = ctx.exchange.catalog.event(params.id!)
        if (event === undefined) throw new ApiError("not_found", `no market ${params.id}`)
        return json(200, eventView(event, takerFeeOf(ctx)))
      })
  },
  {
    method: "GET",
    path: "/v1/markets/:id/book",
    // Never a 5xx: an unknown or unavailable book is an empty one.
    handler: (ctx, req, params) => {
      const marketId = ctx.exchange.catalog.market(params.id!)?.market.market_id ?? params.id!
      // Tagged: a change to the book retires the cached copy at once (src/api/cache.ts).
      return ctx.cache.serve(req.path, TTL_SEC.book, () => {
        try {
          return json(200, bookView(ctx.exchange, marketId, ctx.exchange.journalMs()))
        } catch {
          return json(200, { market_id: params.id, bids: [], asks: [], ts: ctx.exchange.journalMs() })
        }
      }, bookTag(marketId))
    }
  },
  {
    method: "GET",
    path: "/v1/markets/:id/trades",
    handler: (ctx, req, params) =>
      ctx.cache.serve(`${req.path}?${req.query}`, TTL_SEC.trades, () => {
        const limit = Math.min(200, intParam(req.query, "limit", 50, 1, Number.MAX_SAFE_INTEGER)!)
        const offset = intParam(req.query, "offset", 0, 0, Number.MAX_SAFE_INTEGER)!
        return json(200, ctx.exchange.history.marketTrades(resolveMarketId(ctx, params.id!), limit, offset))
      })
  },
  {
    method: "GET",
    path: "/v1/markets/:id/candles",
    handler: (ctx, req, params) => {
      const interval = req.query.get("interval") ?? "1h"
      // Own keys only: `in` would also accept "constructor" or "toString".
      if (!Object.hasOwn(INTERVALS, interval)) throw new ApiError("invalid_interval", "interval: 1m, 5m, 1h or 1d")
      const iv = interval as Interval
      return ctx.cache.serve(`${req.path}?${req.query}`, TTL_SEC.candles[iv], () => {
        const marketId = resolveMarketId(ctx, params.id!)
        const from = intParam(req.query, "from", null, 0, Number.MAX_SAFE_INTEGER)
        const to = intParam(req.query, "to", null, 0, Number.MAX_SAFE_INTEGER)
        // The default window ends at journal time, the clock the trades carry (docs/time.md).
        const { start, end } = candleWindow(ctx.exchange.journalSec(), INTERVALS[iv], from, to)
        return json(200, { market_id: marketId, interval: iv, candles: ctx.exchange.history.candleRange(marketId, iv, start, end) })
      })
    }
  }
]
