// YES-terms quotes → orders a user can actually place. The engine forbids naked short
// sells, so an ask is a "sell YES" only for YES the user holds, and otherwise the
// equivalent "buy NO" at the complementary price (same book side, docs/engine.md);
// bids likewise use held NO first. Selling inventory first unwinds it instead of minting more.
import { MAX_PRICE_BPS, MICRO_PER_BPS, MIN_NOTIONAL_MICRO } from "../engine/money.ts"
import type { Quote } from "./strategy.ts"

/** Own-outcome price; always placed post_only. */
export interface OrderSpec { readonly side: "buy" | "sell"; readonly outcome: "yes" | "no"; readonly priceBps: number; readonly size: number }

export interface Holdings { readonly yes: number; readonly no: number }

const isDust = (size: number, ownPriceBps: number): boolean => size * ownPriceBps * MICRO_PER_BPS < MIN_NOTIONAL_MICRO

/**
 * Quotes are processed in the given order (the strategy lists each side best first, so the
 * innermost asks sell held YES first). `holdings` are the shares free to sell, i.e. after the
 * previous quotes were cancelled.
 *   ask @p: sell YES @p for min(size, YES not yet used by earlier asks); the rest as buy NO @(10000−p)
 *   bid @p: sell NO @(10000−p) for min(size, NO not yet used by earlier bids); the rest as buy YES @p
 * A dust sell part is not placed and its contracts go to the buy part (its shares stay unused);
 * a dust buy part is skipped. Output keeps the quote order, sell part before buy part.
 */
export const quotesToOrders = (quotes: ReadonlyArray<Quote>, holdings: Holdings): OrderSpec[] => {
  let freeYes = Math.max(0, Math.trunc(holdings.yes))
  let freeNo = Math.max(0, Math.trunc(holdings.no))
  const out: OrderSpec[] = []
  for (const q of quotes) {
    if (q.size <= 0) continue
    const isAsk = q.side === "ask"
    const heldOutcome = isAsk ? "yes" : "no"
    const buyOutcome = isAsk ? "no" : "yes"
    const sellPriceBps = isAsk ? q.priceBps : MAX_PRICE_BPS - q.priceBps
    const buyPriceBps = isAsk ? MAX_PRICE_BPS - q.priceBps : q.priceBps
    let sellSize = Math.min(q.size, isAsk ? freeYes : freeNo)
    if (sellSize > 0 && isDust(sellSize, sellPriceBps)) sellSize = 0
    const buySize = q.size - sellSize
    if (sellSize > 0) {
      out.push({ side: "sell", outcome: heldOutcome, priceBps: sellPriceBps, size: sellSize })
      if (isAsk) freeYes -= sellSize
      else freeNo -= sellSize
    }
    if (buySize > 0 && !isDust(buySize, buyPriceBps)) {
      out.push({ side: "buy", outcome: buyOutcome, priceBps: buyPriceBps, size: buySize })
    }
  }
  return out
}
