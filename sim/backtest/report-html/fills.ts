// The report page's fills table, as data: one compact row per fill (the page renders and sorts it,
// report-html/fills.client.js). A run with more than MAX_FILL_ROWS fills embeds its first ones by
// time and says so; every fill, with its markouts, is in the DuckDB file's `fills` table.
import type { BacktestReport } from "../report.ts"
import { MARKOUT_HORIZONS_SEC } from "../stats.ts"

export const MAX_FILL_ROWS = 20_000

/** [tMs, market index, side, outcome, own price bps, contracts, cause, rebate micro, ...markout bps per horizon] */
export type FillTableRow = [number, number, "buy" | "sell", "yes" | "no", number, number, string, number, ...Array<number | null>]

export interface FillTable {
  readonly total: number
  readonly markets: ReadonlyArray<string>
  readonly horizonsSec: ReadonlyArray<number>
  readonly rows: ReadonlyArray<FillTableRow>
}

export const fillTable = (r: BacktestReport, maxRows = MAX_FILL_ROWS): FillTable => ({
  total: r.fills.length,
  markets: r.markets.map((m) => m.market_id),
  horizonsSec: MARKOUT_HORIZONS_SEC,
  rows: r.fills.slice(0, maxRows).map((f, i): FillTableRow => [f.tMs, f.market, f.side, f.outcome, f.priceBps, f.size, f.cause, f.rebateMicro, ...(r.fill_markouts_bps[i] ?? [])])
})
