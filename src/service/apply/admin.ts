// Operator commands: events and their markets, market status (resolution redeems every
// holder), fees, builders, and the LP surface's switch.
import type { EngineEvent } from "../../engine/types.ts"
import type { Exchange } from "../exchange.ts"
import type { Handler } from "./handler.ts"

export const applyCreateEvent: Handler<"create_event"> = (x, cmd, events) => {
  const event = x.catalog.build(cmd.event, x.tsSec, x.engine.defaultTakerFeeBps)
  if (event === null) return { events, refused: "event_exists" }
  x.catalog.add(event)
  for (const m of event.outcomes) x.engineApply({ type: "create_market", marketId: m.market_id, takerFeeBps: event.fee_bps }, events)
  return { events, event }
}

/** Status changes mirror into the catalogue; resolution redeems every holder at once. */
const setMarketStatus = (x: Exchange, marketId: string, status: "active" | "halted" | "resolved", winning: "yes" | "no" | undefined, events: EngineEvent[]): void => {
  const applied = x.engineApply({ type: "set_market_status", marketId, status, ...(winning === undefined ? {} : { winningOutcome: winning }) }, events)
  if (applied[0]?.type !== "market_status") return
  const found = x.catalog.market(marketId)
  if (found !== undefined) {
    found.market.status = status
    found.market.winning_outcome = status === "resolved" ? winning! : null
  }
  if (status !== "resolved") return
  const holders = [...x.engine.accounts.values()]
    .filter((a) => {
      const p = a.positions.get(marketId)
      return p !== undefined && (p.yes > 0 || p.no > 0)
    })
    .map((a) => a.user)
    .sort()
  for (const user of holders) x.engineApply({ type: "redeem", user, marketId }, events)
}

export const applySetMarketStatus: Handler<"set_market_status"> = (x, cmd, events) => {
  setMarketStatus(x, cmd.marketId, cmd.status, cmd.winningOutcome, events)
  return { events }
}

export const applySetFees: Handler<"set_fees"> = (x, cmd, events) => {
  x.engineApply(
    {
      type: "set_fees",
      ...(cmd.marketId === undefined ? {} : { marketId: cmd.marketId }),
      ...(cmd.takerFeeBps === undefined ? {} : { takerFeeBps: cmd.takerFeeBps }),
      ...(cmd.makerRebateBps === undefined ? {} : { makerRebateBps: cmd.makerRebateBps })
    },
    events
  )
  return { events }
}

export const applyRegisterBuilder: Handler<"register_builder"> = (x, cmd, events) => {
  const existing = x.builders.get(cmd.user)
  if (existing !== undefined) {
    existing.name = cmd.name
    return { events }
  }
  x.builders.set(cmd.user, { user: cmd.user, name: cmd.name, apiKey: cmd.apiKey, feeBps: 0, enabled: true })
  x.builderUserByKey.set(cmd.apiKey, cmd.user)
  x.engineApply({ type: "set_builder", apiKey: cmd.apiKey, wallet: cmd.user, feeBps: 0, enabled: true }, events)
  return { events }
}

export const applySetBuilderFee: Handler<"set_builder_fee"> = (x, cmd, events) => {
  const b = x.builders.get(cmd.user)
  if (b === undefined) return { events, refused: "unknown_builder" }
  const applied = x.engineApply({ type: "set_builder", apiKey: b.apiKey, wallet: b.user, feeBps: cmd.feeBps, enabled: cmd.enabled }, events)
  if (applied[0]?.type === "builder_set") {
    b.feeBps = cmd.feeBps
    b.enabled = cmd.enabled
  }
  return { events }
}

export const applySetLp: Handler<"set_lp"> = (x, cmd, events) => {
  x.lp = cmd.state
  return { events }
}
