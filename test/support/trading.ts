// A small seeded trading exchange for tests that compare a derived view (portfolio text, frames,
// rewards) against its reference after many random commands.
import { demoCatalog } from "../../fixtures/catalog.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"

/** A small seeded generator (xorshift32): the test's own, so the sequence is fixed. `next(n)` is in 0..n-1. */
export const xorshift = (seed: number): ((n: number) => number) => {
  let s = seed >>> 0 || 1
  return (n: number): number => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s % n
  }
}

/** An exchange with the first six demo events, five of their markets, and `labels`' users funded with 50,000 USDC each. */
export const tradingExchange = (labels: ReadonlyArray<string>) => {
  const clock = { ms: 1_767_225_600_000 }
  const x = new Exchange(() => clock.ms, memoryJournal())
  const submit = (cmd: ServiceCommand) => x.submit(cmd).result
  for (const event of demoCatalog().slice(0, 6)) submit({ type: "create_event", event })
  const markets = x.catalog.events.flatMap((e) => e.outcomes.map((o) => o.market_id)).slice(0, 5)
  const users = labels.map((l) => keyFromLabel(l).user)
  for (const user of users) submit({ type: "credit", user, amountMicro: 50_000_000_000, ref: `seed:${user}` })
  return { clock, x, submit, markets, users }
}

/**
 * One random command of a trading run at `step` (`next` draws): 80% an order around a centre that
 * drifts with the step (`spread` ticks of 100 bps either side, so books cross, rest and move their
 * mid), 12% a cancel-all, 4% a halt or a resumption, 1% a resolution once `step` passes
 * `resolveAfter` (never in the first market, so trading goes on), else null: a step with no change.
 */
export const randomTradingCommand = (
  next: (n: number) => number,
  step: number,
  users: ReadonlyArray<string>,
  markets: ReadonlyArray<string>,
  opts: { readonly spread: number; readonly resolveAfter: number; readonly nonce: () => number }
): ServiceCommand | null => {
  const user = users[next(users.length)]!
  const marketId = markets[next(markets.length)]!
  const roll = next(100)
  if (roll < 80) {
    const yesCentre = 3_000 + 100 * ((step >> 6) % 40)
    const outcome = next(2) === 0 ? "yes" : "no"
    const centre = outcome === "yes" ? yesCentre : 10_000 - yesCentre
    return {
      type: "place_order",
      order: {
        user, marketId, side: next(3) === 0 ? "sell" : "buy", outcome,
        priceBps: Math.min(9_900, Math.max(100, centre + 100 * (next(2 * opts.spread + 1) - opts.spread))),
        size: 1 + next(30), orderType: next(4) === 0 ? "ioc" : "gtc", nonce: opts.nonce()
      }
    }
  }
  if (roll < 92) return { type: "cancel_all", user, marketId }
  if (roll < 96) return { type: "set_market_status", marketId, status: next(2) === 0 ? "halted" : "active" }
  if (roll < 97 && step > opts.resolveAfter && marketId !== markets[0]) {
    return { type: "set_market_status", marketId, status: "resolved", winningOutcome: next(2) === 0 ? "yes" : "no" }
  }
  return null
}
