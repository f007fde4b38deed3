// Operator commands (markets, status, fees, builders) and redemption.
import type { Engine } from "./engine.ts"
import { isIntIn, MAX_FEE_BPS, MICRO_PER_CONTRACT } from "./money.ts"
import { cancelResting } from "./orders.ts"
import { Builder, Market } from "./state.ts"
import type { CreateMarket, Redeem, SetBuilder, SetFees, SetMarketStatus } from "./types.ts"
import { isValidId } from "./validate.ts"

export const applyCreateMarket = (e: Engine, cmd: CreateMarket): void => {
  if (!isValidId(cmd.marketId)) return void e.reject("create_market", "invalid_market_id", null)
  if (e.markets.has(cmd.marketId)) return void e.reject("create_market", "market_exists", null)
  const feeBps = cmd.takerFeeBps === undefined ? e.defaultTakerFeeBps : cmd.takerFeeBps
  if (!isIntIn(feeBps, 0, MAX_FEE_BPS)) return void e.reject("create_market", "invalid_fee", null)
  e.markets.set(cmd.marketId, new Market(cmd.marketId, feeBps))
  e.out.push({ type: "market_created", marketId: cmd.marketId, takerFeeBps: feeBps })
}

/**
 * active ⇄ halted; either → resolved with a winning outcome. Resolution cancels
 * every resting order (bids best-first, then asks) and makes positions redeemable.
 */
export const applySetMarketStatus = (e: Engine, cmd: SetMarketStatus): void => {
  const market = e.markets.get(cmd.marketId)
  if (market === undefined) return void e.reject("set_market_status", "unknown_market", null)
  const status = cmd.status
  if (status !== "active" && status !== "halted" && status !== "resolved") {
    return void e.reject("set_market_status", "invalid_status", null)
  }
  if (market.status === "resolved") return void e.reject("set_market_status", "market_resolved", null)
  const winning = cmd.winningOutcome
  if (status === "resolved" ? winning !== "yes" && winning !== "no" : winning !== undefined) {
    return void e.reject("set_market_status", "invalid_command", null)
  }
  market.status = status
  market.winningOutcome = status === "resolved" ? winning! : null
  e.out.push({ type: "market_status", marketId: market.id, status, winningOutcome: market.winningOutcome })
  if (status === "resolved") {
    for (const side of [market.bids, market.asks]) {
      while (side.best !== -1) cancelResting(e, side.levels[side.best]!.head!, "resolution")
    }
  }
}

export const applySetFees = (e: Engine, cmd: SetFees): void => {
  const { marketId, takerFeeBps, makerRebateBps } = cmd
  if (takerFeeBps === undefined && makerRebateBps === undefined) return void e.reject("set_fees", "invalid_command", null)
  if (takerFeeBps !== undefined && !isIntIn(takerFeeBps, 0, MAX_FEE_BPS)) return void e.reject("set_fees", "invalid_fee", null)
  if (makerRebateBps !== undefined && !isIntIn(makerRebateBps, 0, MAX_FEE_BPS)) {
    return void e.reject("set_fees", "invalid_fee", null)
  }
  const market = marketId === undefined ? undefined : e.markets.get(marketId)
  if (marketId !== undefined && market === undefined) return void e.reject("set_fees", "unknown_market", null)
  if (makerRebateBps !== undefined) e.makerRebateBps = makerRebateBps
  if (takerFeeBps !== undefined) {
    if (market !== undefined) market.takerFeeBps = takerFeeBps
    else e.defaultTakerFeeBps = takerFeeBps
  }
  e.out.push({
    type: "fees_set",
    marketId: market === undefined ? null : market.id,
    takerFeeBps: market === undefined ? null : market.takerFeeBps,
    makerRebateBps: e.makerRebateBps,
    defaultTakerFeeBps: e.defaultTakerFeeBps
  })
}

export const applySetBuilder = (e: Engine, cmd: SetBuilder): void => {
  if (!isValidId(cmd.apiKey)) return void e.reject("set_builder", "invalid_command", null)
  if (!isValidId(cmd.wallet)) return void e.reject("set_builder", "invalid_user", null)
  if (!isIntIn(cmd.feeBps, 0, MAX_FEE_BPS)) return void e.reject("set_builder", "invalid_fee", null)
  if (typeof cmd.enabled !== "boolean") return void e.reject("set_builder", "invalid_command", null)
  const existing = e.builders.get(cmd.apiKey)
  if (existing === undefined) e.builders.set(cmd.apiKey, new Builder(cmd.apiKey, cmd.wallet, cmd.feeBps, cmd.enabled))
  else {
    existing.wallet = cmd.wallet
    existing.feeBps = cmd.feeBps
    existing.enabled = cmd.enabled
  }
  e.out.push({ type: "builder_set", apiKey: cmd.apiKey, wallet: cmd.wallet, feeBps: cmd.feeBps, enabled: cmd.enabled })
}

/** Pays 1,000,000 micro per winning share from the market's backing and burns both outcomes. */
export const applyRedeem = (e: Engine, cmd: Redeem): void => {
  if (!isValidId(cmd.user)) return void e.reject("redeem", "invalid_user", null)
  const market = e.markets.get(cmd.marketId)
  if (market === undefined) return void e.reject("redeem", "unknown_market", cmd.user)
  if (market.status !== "resolved") return void e.reject("redeem", "market_not_resolved", cmd.user)
  const acct = e.accounts.get(cmd.user)
  const pos = acct?.positions.get(market.id)
  if (acct === undefined || pos === undefined || (pos.yes === 0 && pos.no === 0)) {
    return void e.reject("redeem", "nothing_to_redeem", cmd.user)
  }
  const yesWins = market.winningOutcome === "yes"
  const winningShares = yesWins ? pos.yes : pos.no
  const losingShares = yesWins ? pos.no : pos.yes
  const payoutMicro = winningShares * MICRO_PER_CONTRACT
  market.yesSupply -= pos.yes
  market.noSupply -= pos.no
  market.backingMicro -= payoutMicro
  acct.availableMicro += payoutMicro
  pos.yes = 0
  pos.no = 0
  pos.costYesMicro = 0
  pos.costNoMicro = 0
  e.out.push({ type: "redeemed", user: acct.user, marketId: market.id, winningShares, losingShares, payoutMicro })
  e.touch(acct)
  e.touchPosition(pos)
}
