// The markets group (SPEC §4 "Markets"): list, one event, book, trades, candles. Queries arrive
// decoded by the declaration's schemas (an unknown value is 400 before the cache is asked).
import { ApiError } from "../../domain/errors.ts"
import { Catalog, type EventRecord } from "../../service/catalog.ts"
import { INTERVALS, type Interval } from "../../service/history.ts"
import { bookView, eventView } from "../../service/views.ts"
import { bookTag, TTL_SEC } from "../cache.ts"
import type { AppCtx } from "../context.ts"
import { API } from "../declaration/api.ts"
import { json } from "../http.ts"
import { implement, type Input } from "../serve.ts"

const MAX_CANDLE_BUCKETS = 1_500
const DEFAULT_CANDLE_BUCKETS = 500

type ListQuery = Input<typeof API.markets.list>["query"]

const listMarkets = (ctx: AppCtx, q: ListQuery) => {
  const status = q.status ?? "active"
  const order = q.order ?? "volume"
  const ascending = q.ascending === undefined ? order === "expiry" : q.ascending === "true"
  const category = q.category?.toLowerCase()
  const search = q.search?.toLowerCase()
  const endsBefore = q.ends_before ?? null
  const endsAfter = q.ends_after ?? null
  const negRisk = q.neg_risk ?? null
  const limit = Math.min(500, q.limit ?? 500)
  const offset = q.offset ?? 0

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

export const markets = implement<AppCtx>()(API.markets, {
  list: (ctx, { query, req }) => ctx.cache.serve(`${req.path}?${req.query}`, TTL_SEC.markets, () => json(200, listMarkets(ctx, query))),
  get: (ctx, { path, req }) =>
    ctx.cache.serve(req.path, TTL_SEC.markets, () => {
      const event = ctx.exchange.catalog.event(path.id)
      if (event === undefined) throw new ApiError("not_found", `no market ${path.id}`)
      return json(200, eventView(event, takerFeeOf(ctx)))
    }),
  // Never a 5xx: an unknown or unavailable book is an empty one.
  book: (ctx, { path, req }) => {
    const marketId = ctx.exchange.catalog.market(path.id)?.market.market_id ?? path.id
    // Tagged: a change to the book retires the cached copy at once (src/api/cache.ts).
    return ctx.cache.serve(req.path, TTL_SEC.book, () => {
      try {
        return json(200, bookView(ctx.exchange, marketId, ctx.exchange.journalMs()))
      } catch {
        return json(200, { market_id: path.id, bids: [], asks: [], ts: ctx.exchange.journalMs() })
      }
    }, bookTag(marketId))
  },
  trades: (ctx, { path, query, req }) =>
    ctx.cache.serve(`${req.path}?${req.query}`, TTL_SEC.trades, () => {
      const limit = Math.min(200, query.limit ?? 50)
      return json(200, ctx.exchange.history.marketTrades(resolveMarketId(ctx, path.id), limit, query.offset ?? 0))
    }),
  candles: (ctx, { path, query, req }) => {
    const iv: Interval = query.interval ?? "1h"
    return ctx.cache.serve(`${req.path}?${req.query}`, TTL_SEC.candles[iv], () => {
      const marketId = resolveMarketId(ctx, path.id)
      // The default window ends at journal time, the clock the trades carry (docs/time.md).
      const { start, end } = candleWindow(ctx.exchange.journalSec(), INTERVALS[iv], query.from ?? null, query.to ?? null)
      return json(200, { market_id: marketId, interval: iv, candles: ctx.exchange.history.candleRange(marketId, iv, start, end) })
    })
  }
})
