// The operator group (an extension; docs/api.md): events, market status, surfaces, fees,
// builder fees, a development credit, the chain guard and the clocks. The bearer token (per-IP
// 60 / 60 s) is the declaration's preamble.
import { ApiError } from "../../domain/errors.ts"
import { slugify } from "../../service/catalog.ts"
import type { ServiceCommand } from "../../service/commands.ts"
import type { ApplyResult } from "../../service/exchange.ts"
import { eventView } from "../../service/views.ts"
import { type AppCtx, requireUserKey } from "../context.ts"
import { API } from "../declaration/api.ts"
import { json } from "../http.ts"
import { implement } from "../serve.ts"
import { rejection } from "./orders.ts"

/** Submits an operator command; an engine rejection becomes the matching client error. */
const run = async (ctx: AppCtx, cmd: ServiceCommand): Promise<ApplyResult> => {
  const { result } = await ctx.commands.submit(cmd)
  const first = result.events[0]
  if (first?.type === "rejected") throw rejection(first.reason)
  return result
}

/** The chain guard's status as the operator route shows it (block numbers as JSON numbers). */
const chainStatusView = (ctx: AppCtx) => {
  const guard = ctx.exchange.chainGuard
  if (guard === null) return { state: "off", checkpoint: null, saved_through_block: null, halt: null }
  const s = guard.status()
  return {
    state: s.state,
    checkpoint: s.checkpoint === null ? null : { block_number: Number(s.checkpoint.blockNumber), hash: s.checkpoint.hash },
    saved_through_block: s.savedThrough === null ? null : Number(s.savedThrough),
    halt:
      s.halt === null
        ? null
        : {
            reason: s.halt.reason,
            block_number: Number(s.halt.blockNumber),
            expected_hash: s.halt.expectedHash,
            found_hash: s.halt.foundHash,
            head: Number(s.halt.head),
            at: s.halt.atSec
          }
  }
}

const marketIdOf = (ctx: AppCtx, id: string): string => {
  const found = ctx.exchange.catalog.market(id)
  if (found === undefined) throw new ApiError("not_found", `no market ${id}`)
  return found.market.market_id
}

const noStore = { "cache-control": "no-store" }

export const operator = implement<AppCtx>()(API.operator, {
  createEvent: async (ctx, { body }) => {
    if (body.outcomes !== undefined && body.outcomes.length === 1) throw new ApiError("invalid_shape", "outcomes: a multi-outcome event needs at least two")
    if (body.outcomes !== undefined && body.outcomes.length > 0) {
      // Outcome slugs (given, or derived from labels) must differ from each other and from the event's.
      const slugs = [body.slug, ...body.outcomes.map((o) => o.slug ?? `${body.slug}-${slugify(o.label)}`)]
      if (new Set(slugs).size !== slugs.length) throw new ApiError("invalid_shape", "outcomes: labels or slugs give duplicate outcome slugs")
    }
    const result = await run(ctx, { type: "create_event", event: body })
    if (result.refused === "event_exists" || result.event === undefined) throw new ApiError("event_exists", `slug or id of ${body.slug} already exists`)
    return json(200, eventView(result.event))
  },
  marketStatus: async (ctx, { body, path }) => {
    if ((body.status === "resolved") !== (body.winning_outcome !== undefined)) {
      throw new ApiError("invalid_shape", "winning_outcome is required to resolve, and only then")
    }
    const marketId = marketIdOf(ctx, path.id)
    const result = await run(ctx, {
      type: "set_market_status",
      marketId,
      status: body.status,
      ...(body.winning_outcome === undefined ? {} : { winningOutcome: body.winning_outcome })
    })
    const redeemed = result.events.filter((e) => e.type === "redeemed").length
    return json(200, { market_id: marketId, status: body.status, winning_outcome: body.winning_outcome ?? null, redeemed })
  },
  trading: async (ctx, { body }) => {
    // Not `run`: reopening runs the queue, and a queued order's own rejection (its user's
    // balance, say) belongs to that user, not to the operator's request. Found by the simulator.
    const { result } = await ctx.commands.submit({ type: "set_trading", state: body.state })
    return json(200, { trading: ctx.exchange.trading, released_from_queue: result.events.filter((e) => e.type === "order_accepted").length })
  },
  lp: async (ctx, { body }) => {
    if (body.state === "paused") throw new ApiError("invalid_shape", "state: open or closed")
    await run(ctx, { type: "set_lp", state: body.state })
    return json(200, { lp: ctx.exchange.lp })
  },
  fees: async (ctx, { body }) => {
    if (body.taker_fee_bps === undefined && body.maker_rebate_bps === undefined) {
      throw new ApiError("invalid_shape", "give taker_fee_bps and/or maker_rebate_bps")
    }
    const marketId = body.market_id === undefined ? undefined : marketIdOf(ctx, body.market_id)
    await run(ctx, {
      type: "set_fees",
      ...(marketId === undefined ? {} : { marketId }),
      ...(body.taker_fee_bps === undefined ? {} : { takerFeeBps: body.taker_fee_bps }),
      ...(body.maker_rebate_bps === undefined ? {} : { makerRebateBps: body.maker_rebate_bps })
    })
    const engine = ctx.exchange.engine
    return json(200, {
      default_taker_fee_bps: engine.defaultTakerFeeBps,
      maker_rebate_bps: engine.makerRebateBps,
      ...(marketId === undefined ? {} : { market_id: marketId, taker_fee_bps: engine.markets.get(marketId)!.takerFeeBps })
    })
  },
  builderFee: async (ctx, { body, path }) => {
    const user = path.user
    const existing = ctx.exchange.builders.get(user)
    if (existing === undefined) throw new ApiError("not_found", `no builder registered for ${user}`)
    await run(ctx, { type: "set_builder_fee", user, feeBps: body.fee_bps, enabled: body.enabled ?? existing.enabled })
    return json(200, { user, name: existing.name, api_key: existing.apiKey, fee_bps: existing.feeBps, enabled: existing.enabled })
  },
  // Operational, not journaled: simulates the API losing its matching-service binding (SPEC 502/503).
  engineBinding: (ctx, { body }) => {
    ctx.binding.withdraw = body.withdraw
    return json(200, { withdraw: ctx.binding.withdraw })
  },
  credit: async (ctx, { body }) => {
    requireUserKey("user", body.user, "invalid_shape")
    const result = await run(ctx, { type: "credit", user: body.user, amountMicro: body.amount_micro, ref: `operator:${ctx.exchange.lastSeq + 1}` })
    const balance = result.events.find((e) => e.type === "balance")
    return json(200, { user: body.user, available: balance?.type === "balance" ? balance.availableMicro : 0 })
  },
  // Operational, not journaled: the chain guard (docs/api.md "Chain status"; src/chain/guard.ts).
  chain: (ctx) => json(200, chainStatusView(ctx), noStore),
  chainResume: async (ctx) => {
    const guard = ctx.exchange.chainGuard
    if (guard === null) throw new ApiError("not_found", "no chain side in this service")
    await guard.resume()
    return json(200, chainStatusView(ctx))
  },
  // Operational, not journaled: the clocks and any wall-clock step noticed (docs/time.md).
  clock: (ctx) => {
    const status = ctx.clockWatch?.status(ctx.exchange.journalMs()) ?? null
    if (status === null) throw new ApiError("not_found", "no clock watch in this service")
    return json(200, status, noStore)
  }
})
