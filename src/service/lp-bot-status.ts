// Wire shapes of the LP-bot reads and acknowledgements (docs/api.md "LP bot").
import type { Exchange } from "./exchange.ts"
import type { LpSession } from "./lp-book.ts"
import { botMarketView, restingBotOrders } from "./lp-bot-market.ts"

export const sessionView = (s: LpSession, nowSec: number) => ({
  session_pub: s.sessionPub,
  scope: "orders" as const,
  created_at: s.createdAtSec,
  delegated: s.delegation !== null,
  delegated_at: s.delegation?.delegatedAtSec ?? null,
  expires_at_unix: s.delegation?.expiresAtSec ?? s.offeredExpiresAtSec,
  nonce: s.delegation?.nonce ?? null,
  revoked: s.revokedAtSec !== null,
  revoked_at: s.revokedAtSec,
  expired: (s.delegation?.expiresAtSec ?? s.offeredExpiresAtSec) <= nowSec
})

/** The user's latest bot (or `none`), its markets with live numbers, and the user's sessions. */
export const botStatusView = (x: Exchange, user: string, nowSec: number) => {
  const bot = x.lpBook.bots.get(user)
  const sessions = x.lpBook.userSessions(user).map((s) => sessionView(s, nowSec))
  if (bot === undefined) {
    return { user, status: "none" as const, session_pub: null, started_at: null, stopped_at: null, stop_reason: null, strategy: null, markets: [], open_orders: 0, sessions }
  }
  const markets = bot.markets.map((m) => {
    const v = botMarketView(x, user, m, m.strategy?.lastMidBps ?? null)
    const state =
      bot.status === "stopped" || m.lastDecision === "stop" ? "stopped" : m.lastDecision === "pause" ? "paused" : m.lastDecision === "quote" ? "quoting" : "waiting"
    return {
      market_id: m.marketId,
      slug: x.catalog.market(m.marketId)?.market.slug ?? null,
      state,
      stop_reason: m.stopReason,
      open_orders: restingBotOrders(x, user, m),
      mid_bps: v.midBps,
      net_yes: v.netYes,
      pnl_micro_usdc: v.pnlMicro,
      last_action_at: m.lastActionAtSec
    }
  })
  return {
    user,
    status: bot.status,
    session_pub: bot.sessionPub,
    started_at: bot.startedAtSec,
    stopped_at: bot.stoppedAtSec,
    stop_reason: bot.stopReason,
    strategy: bot.strategy,
    markets,
    open_orders: markets.reduce((n, m) => n + m.open_orders, 0),
    sessions
  }
}
