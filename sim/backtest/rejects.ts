// Our orders the exchange refused, by reason: each reason's count, its share of the orders we
// placed, and what it means for the strategy. A run whose ladder the capital could not fund is a
// smaller strategy than the one configured, so the console and the page say so next to the
// figures, not only in the JSON's `rejects`.

export interface RejectRow {
  readonly reason: string
  readonly count: number
  /** count / our orders placed, in percent. */
  readonly sharePct: number
  readonly meaning: string
}

const MEANING: Readonly<Record<string, string>> = {
  insufficient_balance:
    "the capital could not fund the ladder: a quote needed more free USDC than the account had left after its resting orders, so fewer levels rested than configured (more --capital, or fewer or smaller levels)",
  insufficient_shares: "a sell quote needed shares the account no longer held",
  would_cross: "a post-only quote would have crossed the book when it arrived (the market moved during the order-entry latency)",
  dust_order: "the order was below the exchange's minimum size",
  market_halted: "the market was halted",
  market_resolved: "the market had resolved",
  invalid_price: "a quote priced outside 1..9999 bps",
  invalid_size: "a quote of an invalid size"
}

export const rejectMeaning = (reason: string): string => MEANING[reason] ?? "refused by the exchange (src/engine/types.ts RejectReason, src/service/lp-book.ts LpRefusal)"

/** Reasons by count (most first, then by name), each with its share of `placed`. */
export const rejectRows = (rejects: Readonly<Record<string, number>>, placed: number): RejectRow[] =>
  Object.entries(rejects)
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .map(([reason, count]) => ({ reason, count, sharePct: placed === 0 ? 0 : (count / placed) * 100, meaning: rejectMeaning(reason) }))

/** A share as the report prints it: two decimals, "<0.01%" for a tiny non-zero one. */
export const sharePct = (pct: number): string => (pct > 0 && pct < 0.005 ? "<0.01%" : `${pct.toFixed(2)}%`)

/** Console lines under "orders": one per reason, with its count, share of the orders placed and meaning. */
export const rejectLines = (rejects: Readonly<Record<string, number>>, placed: number): Array<[string, string]> =>
  rejectRows(rejects, placed).map((r, i) => [i === 0 ? "  rejected" : "", `${r.reason} ${r.count.toLocaleString("en-US")} (${sharePct(r.sharePct)} of placed): ${r.meaning}`])
