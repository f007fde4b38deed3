// Where a market maker's trading PnL came from (docs/backtesting.md "PnL attribution"): the edge
// each fill captured against the mid just before it, and the inventory it left, carried through
// the mid's moves to the final marks. Of that inventory part, the first 60 s after each fill are
// shown apart: the move right after a fill is what informed takers cost a quote (adverse
// selection), the rest is the market's drift. One pure function, for a backtest's fills and for
// a live bot's (sim/fidelity.ts), so both sides of the fidelity check are split the same way.
import type { FillRow } from "./report.ts"

/** The horizon of the markout the attribution shows apart. */
export const ATTRIBUTION_MARKOUT_SEC = 60

/** +1 when the fill added YES exposure (bought YES or sold NO), −1 otherwise. */
export const yesDirection = (f: Pick<FillRow, "side" | "outcome">): number => ((f.side === "buy") === (f.outcome === "yes") ? 1 : -1)

/** One fill as the attribution reads it; `midBeforeBps` is the mid (YES bps) just before it, null if none was known. */
export interface AttributedFill {
  readonly tMs: number
  readonly market: number
  readonly side: FillRow["side"]
  readonly outcome: FillRow["outcome"]
  readonly yesPriceBps: number
  readonly size: number
  readonly cause: FillRow["cause"]
  readonly midBeforeBps: number | null
}

export interface AttributionPart {
  readonly fills: number
  readonly contracts: number
  /** Σ size × (mid before − YES price) × direction (+1 when the fill added YES), micro-USDC: the spread captured at the fill. */
  readonly edge_micro: number
  /** Σ size × direction × (mid 60 s later, or at the end if sooner − mid before), micro-USDC: negative when the market moved against the fill. */
  readonly markout_60s_micro: number
}

export interface PnlAttribution extends AttributionPart {
  /** Trading PnL − edge: the inventory carried through the mid's moves to the final marks (the markout is the first minute of it). */
  readonly inventory_micro: number
  /** Fills with no mid before them: their edge and markout count as 0. */
  readonly unmarked_fills: number
  /** The same split for the fills of each cause (a backtest's; a live bot's fills are all "trade"). */
  readonly by_cause: Readonly<Record<FillRow["cause"], AttributionPart>>
}

const CAUSES: ReadonlyArray<FillRow["cause"]> = ["trade", "book", "response"]

/**
 * Splits `tradingPnlMicro` over `fills`. `midAt(market, tMs)` is the mid at tMs (the last change
 * at or before it), null if none; the markout reads it at min(fill + 60 s, endMs).
 */
export const attribute = (
  fills: ReadonlyArray<AttributedFill>, midAt: (market: number, tMs: number) => number | null, endMs: number, tradingPnlMicro: number
): PnlAttribution => {
  const acc = Object.fromEntries(CAUSES.map((c) => [c, { fills: 0, contracts: 0, edge: 0, markout: 0 }])) as Record<FillRow["cause"], { fills: number; contracts: number; edge: number; markout: number }>
  let unmarked = 0
  for (const f of fills) {
    const a = acc[f.cause]
    a.fills++
    a.contracts += f.size
    if (f.midBeforeBps === null) {
      unmarked++
      continue
    }
    const dir = yesDirection(f)
    // 1 bps of a contract is 100 micro-USDC (a contract pays 1 USDC = 10,000 bps).
    a.edge += dir * (f.midBeforeBps - f.yesPriceBps) * f.size * 100
    const later = midAt(f.market, Math.min(f.tMs + ATTRIBUTION_MARKOUT_SEC * 1000, endMs))
    if (later !== null) a.markout += dir * (later - f.midBeforeBps) * f.size * 100
  }
  const part = (c: FillRow["cause"]): AttributionPart => ({
    fills: acc[c].fills, contracts: acc[c].contracts, edge_micro: Math.round(acc[c].edge), markout_60s_micro: Math.round(acc[c].markout)
  })
  const byCause = Object.fromEntries(CAUSES.map((c) => [c, part(c)])) as Record<FillRow["cause"], AttributionPart>
  const edge = CAUSES.reduce((s, c) => s + byCause[c].edge_micro, 0)
  return {
    fills: fills.length,
    contracts: CAUSES.reduce((s, c) => s + byCause[c].contracts, 0),
    edge_micro: edge,
    markout_60s_micro: CAUSES.reduce((s, c) => s + byCause[c].markout_60s_micro, 0),
    inventory_micro: tradingPnlMicro - edge,
    unmarked_fills: unmarked,
    by_cause: byCause
  }
}

/** Attributions summed, field by field (pooled over bot-runs). */
export const poolAttribution = (parts: ReadonlyArray<PnlAttribution>): PnlAttribution => {
  const sum = (f: (a: PnlAttribution) => number): number => parts.reduce((s, a) => s + f(a), 0)
  const causePart = (c: FillRow["cause"]): AttributionPart => ({
    fills: sum((a) => a.by_cause[c].fills), contracts: sum((a) => a.by_cause[c].contracts),
    edge_micro: sum((a) => a.by_cause[c].edge_micro), markout_60s_micro: sum((a) => a.by_cause[c].markout_60s_micro)
  })
  return {
    fills: sum((a) => a.fills), contracts: sum((a) => a.contracts), edge_micro: sum((a) => a.edge_micro), markout_60s_micro: sum((a) => a.markout_60s_micro),
    inventory_micro: sum((a) => a.inventory_micro), unmarked_fills: sum((a) => a.unmarked_fills),
    by_cause: Object.fromEntries(CAUSES.map((c) => [c, causePart(c)])) as Record<FillRow["cause"], AttributionPart>
  }
}

const usdc = (micro: number): string => `${micro >= 0 ? "+" : ""}${(micro / 1e6).toFixed(2)}`

/** One line: "edge +1.00, inventory −2.00 (first 60 s −1.50)" in USDC, with the response takers' share when there were any. */
export const attributionText = (a: PnlAttribution): string => {
  const r = a.by_cause.response
  const responded = r.fills === 0 ? "" : `; response takers' fills ${r.fills}: edge ${usdc(r.edge_micro)}, first ${ATTRIBUTION_MARKOUT_SEC} s ${usdc(r.markout_60s_micro)}`
  return `edge ${usdc(a.edge_micro)}, inventory ${usdc(a.inventory_micro)} (first ${ATTRIBUTION_MARKOUT_SEC} s ${usdc(a.markout_60s_micro)})${responded}`
}
