// What a server-managed bot sees of one market: the mid of everyone else's quotes,
// its inventory, and its PnL since the start. Shared by the runner (StrategyInput)
// and the status read, so both report the same numbers.
import type { BookSide } from "../engine/book.ts"
import { MAX_PRICE_BPS, MICRO_PER_BPS } from "../engine/money.ts"
import type { Exchange } from "./exchange.ts"
import type { BotMarket } from "./lp-book.ts"

/** Best price of a side among orders not owned by `user`, or null. */
const bestExcluding = (side: BookSide, user: string): number | null => {
  for (let price = side.best; price !== -1; price = side.nextPrice(price)) {
    for (let o = side.levels[price]?.head ?? null; o !== null; o = o.next) if (o.account.user !== user) return price
  }
  return null
}

export interface BotMarketView {
  /**
   * YES mid of the other participants' quotes (the bot's own would feed back into it and
   * drift the price with its lean), else the last trade, else null. May end in .5.
   */
  readonly midBps: number | null
  readonly netYes: number
  /** Shares not locked by resting sells: what quotesToOrders may sell. */
  readonly freeYes: number
  readonly freeNo: number
  readonly pnlMicro: number
}

/**
 * PnL since start = cash from fills since start + change in holdings valued at the mark
 * (YES at mark, NO at 10000 − mark, floored to micro). `markBps` defaults to the mid; with
 * neither, changes in holdings are not valued.
 */
export const botMarketView = (x: Exchange, user: string, m: BotMarket, fallbackMarkBps: number | null = null): BotMarketView => {
  const market = x.engine.markets.get(m.marketId)
  let midBps: number | null = null
  if (market !== undefined) {
    const bid = bestExcluding(market.bids, user)
    const ask = bestExcluding(market.asks, user)
    if (bid !== null && ask !== null) midBps = (bid + ask) / 2
  }
  midBps ??= x.history.lastTrade(m.marketId)?.yes_price ?? null
  const p = x.engine.accounts.get(user)?.positions.get(m.marketId)
  const yes = p?.yes ?? 0
  const no = p?.no ?? 0
  const mark = midBps ?? fallbackMarkBps
  const held = mark === null ? 0 : Math.floor((yes - m.baseYes) * mark * MICRO_PER_BPS + (no - m.baseNo) * (MAX_PRICE_BPS - mark) * MICRO_PER_BPS)
  return { midBps, netYes: yes - no, freeYes: yes - (p?.yesLocked ?? 0), freeNo: no - (p?.noLocked ?? 0), pnlMicro: m.cashMicro + held }
}

/** Bot orders still resting in this market. */
export const restingBotOrders = (x: Exchange, user: string, m: BotMarket): number =>
  m.orderIds.filter((id) => x.engine.orders.get(id)?.account.user === user).length
