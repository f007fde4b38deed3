// Placing, matching, settling and cancelling orders.
// Every check runs before the first mutation, so a rejection changes nothing.
import type { Engine } from "./engine.ts"
import type { BookSide } from "./book.ts"
import {
  buyLockPerContractMicro,
  FEE_ACCOUNT,
  feeCeilMicro,
  isIntIn,
  MAX_ORDER_SIZE,
  MAX_PRICE_BPS,
  MICRO_PER_BPS,
  MICRO_PER_CONTRACT,
  MIN_NOTIONAL_MICRO,
  mulDivFloor,
  notionalMicro,
  rebateFloorMicro
} from "./money.ts"
import { type Account, Order, type Position } from "./state.ts"
import type { CancelAll, CancelOrder, CancelReason, PlaceOrder, SettlementKind, Stp } from "./types.ts"
import { isValidId } from "./validate.ts"

// One piece: a placement's checks, then matching, in the order SPEC §3 states them; split, that order would be scattered across files.
export const applyPlaceOrder = (e: Engine, cmd: PlaceOrder): void => {
  const user = cmd.user
  if (!isValidId(user)) return void e.reject("place_order", "invalid_user", null)
  const side = cmd.side
  if (side !== "buy" && side !== "sell") return void e.reject("place_order", "invalid_side", user)
  const outcome = cmd.outcome
  if (outcome !== "yes" && outcome !== "no") return void e.reject("place_order", "invalid_outcome", user)
  const orderType = cmd.orderType
  if (orderType !== "gtc" && orderType !== "post_only" && orderType !== "ioc" && orderType !== "fok") {
    return void e.reject("place_order", "invalid_order_type", user)
  }
  const stp: Stp = cmd.stp === undefined ? "cancel_resting" : cmd.stp
  if (stp !== "cancel_resting" && stp !== "cancel_taking" && stp !== "cancel_both") {
    return void e.reject("place_order", "invalid_stp", user)
  }
  const priceBps = cmd.priceBps
  if (!isIntIn(priceBps, 0, MAX_PRICE_BPS)) return void e.reject("place_order", "invalid_price", user)
  const size = cmd.size
  if (!isIntIn(size, 1, MAX_ORDER_SIZE)) return void e.reject("place_order", "invalid_size", user)
  const nonce = cmd.nonce
  if (!isIntIn(nonce, 1, Number.MAX_SAFE_INTEGER)) return void e.reject("place_order", "invalid_nonce", user)
  const builderKey = cmd.builderKey === undefined ? null : cmd.builderKey

  // A well-formed order with a fresh nonce spends it, whatever follows: refused now (a halted
  // market, no balance, a FOK the book cannot fill), the same signed body must not be accepted
  // later when it could be (docs/decisions.md "A refused order spends its nonce").
  if (nonce <= (e.accounts.get(user)?.lastNonce ?? 0)) return void e.reject("place_order", "nonce_stale", user)
  const acct = e.account(user)
  acct.lastNonce = nonce

  const market = e.markets.get(cmd.marketId)
  if (market === undefined) return void e.reject("place_order", "unknown_market", user)
  if (market.status === "halted") return void e.reject("place_order", "market_halted", user)
  if (market.status === "resolved") return void e.reject("place_order", "market_resolved", user)

  if (notionalMicro(size, priceBps) < MIN_NOTIONAL_MICRO) return void e.reject("place_order", "dust_order", user)

  let builderWallet: string | null = null
  let builderFeeBps = 0
  if (builderKey !== null) {
    const builder = typeof builderKey === "string" ? e.builders.get(builderKey) : undefined
    if (builder === undefined) return void e.reject("place_order", "unknown_builder", user)
    builderWallet = builder.wallet
    builderFeeBps = builder.enabled ? builder.feeBps : 0
  }

  const isBid = (side === "buy") === (outcome === "yes")
  const yesPriceBps = outcome === "yes" ? priceBps : MAX_PRICE_BPS - priceBps
  const opposite = isBid ? market.asks : market.bids
  const crosses = opposite.best !== -1 && (isBid ? opposite.best <= yesPriceBps : opposite.best >= yesPriceBps)
  if (orderType === "post_only" && crosses) return void e.reject("place_order", "would_cross", user)

  const isBuy = side === "buy"
  const takerLockPerContract = isBuy ? buyLockPerContractMicro(priceBps, market.takerFeeBps, builderFeeBps) : 0
  if (isBuy) {
    if (acct.availableMicro < size * takerLockPerContract) {
      return void e.reject("place_order", "insufficient_balance", user)
    }
  } else {
    const pos = acct.positions.get(market.id)
    const free = pos === undefined ? 0 : outcome === "yes" ? pos.yes - pos.yesLocked : pos.no - pos.noLocked
    if (free < size) return void e.reject("place_order", "insufficient_shares", user)
  }
  if (orderType === "fok" && !canFillFully(opposite, acct, isBid, yesPriceBps, size, stp)) {
    return void e.reject("place_order", "fok_unfilled", user)
  }

  // Accepted: from here on the command mutates state.
  const order = new Order(
    e.nextOrderId++,
    acct,
    market,
    side,
    outcome,
    priceBps,
    yesPriceBps,
    isBid,
    size,
    orderType,
    stp,
    nonce,
    builderKey,
    builderWallet,
    builderFeeBps,
    takerLockPerContract,
    e.tsSec
  )
  e.out.push({
    type: "order_accepted",
    orderId: order.id,
    user,
    marketId: market.id,
    side,
    outcome,
    priceBps,
    size,
    orderType,
    stp,
    nonce,
    builderKey,
    tsSec: e.tsSec
  })
  e.touch(acct)
  if (isBuy) {
    const lock = size * takerLockPerContract
    acct.availableMicro -= lock
    acct.lockedMicro += lock
  } else {
    const pos = e.position(acct, market.id)
    order.pos = pos
    if (outcome === "yes") pos.yesLocked += size
    else pos.noLocked += size
    e.touchPosition(pos)
  }

  const stoppedBySelfTrade = crosses ? match(e, order, opposite) : false
  if (order.remaining === 0) return
  if (!stoppedBySelfTrade && (orderType === "gtc" || orderType === "post_only")) {
    rest(e, order)
  } else {
    if (orderType === "fok") throw new Error(`engine defect: fok order ${order.id} left ${order.remaining} unfilled`)
    releaseLock(e, order)
    e.out.push({
      type: "order_cancelled",
      orderId: order.id,
      user,
      marketId: market.id,
      remaining: order.remaining,
      reason: stoppedBySelfTrade ? "stp" : "ioc"
    })
  }
}

/** Would an incoming order of `size` fill completely, given its self-trade mode? */
const canFillFully = (
  opposite: BookSide,
  acct: Account | undefined,
  isBid: boolean,
  limitYesBps: number,
  size: number,
  stp: Stp
): boolean => {
  let fillable = 0
  let price = opposite.best
  while (price !== -1 && (isBid ? price <= limitYesBps : price >= limitYesBps)) {
    for (let o = opposite.levels[price]!.head; o !== null; o = o.next) {
      if (o.account === acct) {
        if (stp === "cancel_resting") continue
        return false
      }
      fillable += o.remaining
      if (fillable >= size) return true
    }
    price = opposite.nextPrice(price)
  }
  return false
}

/** Matches a taker against the opposite side. Returns true when self-trade prevention stopped it. */
const match = (e: Engine, taker: Order, opposite: BookSide): boolean => {
  const limit = taker.yesPriceBps
  while (taker.remaining > 0) {
    const best = opposite.best
    if (best === -1 || (taker.isBid ? best > limit : best < limit)) return false
    let maker = opposite.levels[best]!.head
    while (maker !== null && taker.remaining > 0) {
      const next = maker.next
      if (maker.account === taker.account) {
        if (taker.stp === "cancel_taking") return true
        cancelResting(e, maker, "stp")
        if (taker.stp === "cancel_both") return true
      } else {
        const size = taker.remaining < maker.remaining ? taker.remaining : maker.remaining
        settle(e, taker, maker, size, best, opposite)
        if (maker.remaining === 0) unlink(e, maker)
      }
      maker = next
    }
  }
  return false
}

// One piece: one fill's settlement: mint, swap or merge by the two sides, each with its balance moves, as SPEC §4 gives them.
const settle = (e: Engine, taker: Order, maker: Order, size: number, yesPriceBps: number, makerSide: BookSide): void => {
  const market = taker.market
  const bid = taker.isBid ? taker : maker
  const ask = taker.isBid ? maker : taker
  const kind: SettlementKind =
    bid.side === "buy" ? (ask.side === "buy" ? "mint" : "normal") : ask.side === "sell" ? "merge" : "normal"
  const takerPriceBps = taker.outcome === "yes" ? yesPriceBps : MAX_PRICE_BPS - yesPriceBps
  const makerPriceBps = maker.outcome === "yes" ? yesPriceBps : MAX_PRICE_BPS - yesPriceBps

  const takerFee = feeCeilMicro(size, takerPriceBps, market.takerFeeBps)
  const takerBuilderFee = feeCeilMicro(size, takerPriceBps, taker.builderFeeBps)
  const makerBuilderFee = feeCeilMicro(size, makerPriceBps, maker.builderFeeBps)

  settleParty(e, taker, size, takerPriceBps, takerFee + takerBuilderFee)
  settleParty(e, maker, size, makerPriceBps, makerBuilderFee)

  // Taker fees fund maker rebates; the house never pays out more than it holds.
  let rebate = 0
  const rebateWanted = rebateFloorMicro(size, makerPriceBps, e.makerRebateBps)
  // The house account comes into being with its first fee, not with a rebate it cannot pay.
  const house = takerFee > 0 ? e.feeAccount() : rebateWanted > 0 ? e.accounts.get(FEE_ACCOUNT) : undefined
  if (house !== undefined) {
    house.availableMicro += takerFee
    rebate = rebateWanted < house.availableMicro ? rebateWanted : house.availableMicro
    house.availableMicro -= rebate
    maker.account.availableMicro += rebate
    if (takerFee > 0 || rebate > 0) e.touch(house)
  }
  if (takerBuilderFee > 0) payBuilder(e, taker.builderWallet!, takerBuilderFee)
  if (makerBuilderFee > 0) payBuilder(e, maker.builderWallet!, makerBuilderFee)

  if (kind === "mint") {
    market.yesSupply += size
    market.noSupply += size
    market.backingMicro += size * MICRO_PER_CONTRACT
  } else if (kind === "merge") {
    market.yesSupply -= size
    market.noSupply -= size
    market.backingMicro -= size * MICRO_PER_CONTRACT
  }

  taker.remaining -= size
  maker.remaining -= size
  makerSide.reduce(maker, size)
  e.out.push({
    type: "fill",
    tradeId: e.nextTradeId++,
    marketId: market.id,
    kind,
    yesPriceBps,
    size,
    tsSec: e.tsSec,
    takerOrderId: taker.id,
    takerUser: taker.account.user,
    takerSide: taker.side,
    takerOutcome: taker.outcome,
    takerPriceBps,
    makerOrderId: maker.id,
    makerUser: maker.account.user,
    makerSide: maker.side,
    makerOutcome: maker.outcome,
    makerPriceBps,
    makerRemaining: maker.remaining,
    takerFeeMicro: takerFee,
    makerRebateMicro: rebate,
    takerBuilderFeeMicro: takerBuilderFee,
    makerBuilderFeeMicro: makerBuilderFee,
    takerBuilderWallet: takerBuilderFee > 0 ? taker.builderWallet : null,
    makerBuilderWallet: makerBuilderFee > 0 ? maker.builderWallet : null
  })
}

/** The order's (owner, market) position, cached on the order while it stays live. */
const positionOf = (e: Engine, order: Order): Position => {
  let pos = order.pos
  if (pos === null || !pos.live) {
    pos = e.position(order.account, order.market.id)
    order.pos = pos
  }
  return pos
}

/** One side's cash and shares for a fill of `size` at its own outcome price. */
const settleParty = (e: Engine, order: Order, size: number, ownPriceBps: number, feesMicro: number): void => {
  const acct = order.account
  const pos = positionOf(e, order)
  const notional = size * ownPriceBps * MICRO_PER_BPS
  const isYes = order.outcome === "yes"
  if (order.side === "buy") {
    const release = size * order.lockPerContractMicro
    acct.lockedMicro -= release
    acct.availableMicro += release - notional - feesMicro
    if (isYes) {
      pos.yes += size
      pos.costYesMicro += notional + feesMicro
    } else {
      pos.no += size
      pos.costNoMicro += notional + feesMicro
    }
  } else {
    acct.availableMicro += notional - feesMicro
    if (isYes) {
      pos.costYesMicro -= mulDivFloor(pos.costYesMicro, size, pos.yes)
      pos.yes -= size
      pos.yesLocked -= size
    } else {
      pos.costNoMicro -= mulDivFloor(pos.costNoMicro, size, pos.no)
      pos.no -= size
      pos.noLocked -= size
    }
  }
  e.touch(acct)
  e.touchPosition(pos)
}

const payBuilder = (e: Engine, wallet: string, feeMicro: number): void => {
  const acct = e.account(wallet)
  acct.availableMicro += feeMicro
  e.touch(acct)
}

/** Turns the taker's lock into a maker's lock (no taker fee once resting) and books the order. */
const rest = (e: Engine, order: Order): void => {
  if (order.side === "buy") {
    const makerLockPerContract = order.priceBps * MICRO_PER_BPS + feeCeilMicro(1, order.priceBps, order.builderFeeBps)
    const excess = order.remaining * (order.lockPerContractMicro - makerLockPerContract)
    order.account.lockedMicro -= excess
    order.account.availableMicro += excess
    order.lockPerContractMicro = makerLockPerContract
  }
  const book = order.isBid ? order.market.bids : order.market.asks
  book.append(order)
  order.account.linkOrder(order)
  e.orders.set(order)
  e.out.push({ type: "order_rested", orderId: order.id, remaining: order.remaining })
}

/** Gives back what an order still holds: cash for a buy, shares for a sell. */
const releaseLock = (e: Engine, order: Order): void => {
  const acct = order.account
  if (order.side === "buy") {
    const release = order.remaining * order.lockPerContractMicro
    acct.lockedMicro -= release
    acct.availableMicro += release
    e.touch(acct)
  } else {
    const pos = positionOf(e, order)
    if (order.outcome === "yes") pos.yesLocked -= order.remaining
    else pos.noLocked -= order.remaining
    e.touchPosition(pos)
  }
}

/** Takes a resting order off the book and out of its owner's list. */
const unlink = (e: Engine, order: Order): void => {
  const book = order.isBid ? order.market.bids : order.market.asks
  book.remove(order)
  order.account.unlinkOrder(order)
  e.orders.delete(order.id)
}

export const cancelResting = (e: Engine, order: Order, reason: CancelReason): void => {
  releaseLock(e, order)
  e.out.push({
    type: "order_cancelled",
    orderId: order.id,
    user: order.account.user,
    marketId: order.market.id,
    remaining: order.remaining,
    reason
  })
  unlink(e, order)
}

export const applyCancelOrder = (e: Engine, cmd: CancelOrder): void => {
  if (!isValidId(cmd.user)) return void e.reject("cancel_order", "invalid_user", null)
  const order = Number.isSafeInteger(cmd.orderId) ? e.orders.get(cmd.orderId) : undefined
  // Someone else's order is reported as missing: ids of others' orders reveal nothing.
  if (order === undefined || order.account.user !== cmd.user) {
    return void e.reject("cancel_order", "order_not_found", cmd.user)
  }
  cancelResting(e, order, "user")
}

export const applyCancelAll = (e: Engine, cmd: CancelAll): void => {
  if (!isValidId(cmd.user)) return void e.reject("cancel_all", "invalid_user", null)
  const marketId = cmd.marketId
  if (marketId !== undefined && !e.markets.has(marketId)) return void e.reject("cancel_all", "unknown_market", cmd.user)
  const acct = e.accounts.get(cmd.user)
  if (acct === undefined) return
  for (let o = acct.ordersHead; o !== null; ) {
    const next = o.unext
    if (marketId === undefined || o.market.id === marketId) cancelResting(e, o, "user")
    o = next
  }
}

