// What a server-managed bot's acting decision in one market does, shared by the bot runner
// (src/workers/lp-bot-runner.ts) and the backtester (sim/backtest/), so both journal the same record and
// size the same orders: the `lp_bot_step` record (the exchange cancels the bot's orders there and
// keeps the strategy state), then the decision's quotes as orders, sized by the shares the bot
// holds free once that cancel has released what its old sells had locked.
import type { Exchange } from "./exchange.ts"
import type { BotMarket } from "./lp-book.ts"
import type { ServiceCommand } from "./commands.ts"
import { botMarketView } from "./lp-bot-market.ts"
import { type OrderSpec, quotesToOrders } from "../lp/quotes.ts"
import type { Decision, StrategyState } from "../lp/strategy.ts"

/** A decision that acts (everything but "hold"). */
export type ActingDecision = Exclude<Decision, { readonly kind: "hold" }>

/** The journal record of a bot's acting decision in one market. */
export const botStepCommand = (user: string, startedSeq: number, marketId: string, decision: ActingDecision, state: StrategyState): ServiceCommand => ({
  type: "lp_bot_step",
  user,
  startedSeq,
  marketId,
  decision: decision.kind,
  ...(decision.kind === "stop" ? { stopReason: decision.reason } : {}),
  state
})

/**
 * The orders a "quote" or "pause" places after its step was applied ("pause" carries the
 * inventory-reducing side only; a "stop" places none): holdings after the cancel, so shares the
 * old quotes had locked are free to sell again.
 */
export const stepOrders = (x: Exchange, user: string, m: BotMarket, decision: ActingDecision): OrderSpec[] => {
  if (decision.kind === "stop") return []
  const after = botMarketView(x, user, m)
  return quotesToOrders(decision.quotes, { yes: after.freeYes, no: after.freeNo })
}
