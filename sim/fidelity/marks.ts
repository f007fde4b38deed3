// How far apart two worlds' final marks stand. Each bot's trading PnL holds its final inventory
// at its world's last mid, so where the worlds' prices end apart, their PnL differs by the
// inventory times that distance whatever a backtest does (docs/backtesting.md "The noise floor").
import { quantile } from "./figures.ts"

/** |mark a − mark b| over every bot-run market both marked (YES bps): its median, 90th percentile and largest. */
export interface MarksApart {
  readonly markets: number
  readonly q50_bps: number | null
  readonly q90_bps: number | null
  readonly max_bps: number | null
}

type Marks = Readonly<Record<string, number | null>>

export const marksApart = (pairs: ReadonlyArray<{ readonly a: Marks; readonly b: Marks }>): MarksApart => {
  const apart: number[] = []
  for (const { a, b } of pairs) {
    for (const [id, x] of Object.entries(a)) {
      const y = b[id] ?? null
      if (x !== null && y !== null) apart.push(Math.abs(x - y))
    }
  }
  apart.sort((x, y) => x - y)
  return { markets: apart.length, q50_bps: quantile(apart, 0.5), q90_bps: quantile(apart, 0.9), max_bps: apart.at(-1) ?? null }
}

const bps = (x: number | null): string => (x === null ? "-" : `${Math.round(x)}`)

/** "median 420 bps, 90th percentile 2116, largest 3390 (108 bot-run markets)". */
export const marksApartText = (m: MarksApart): string =>
  `median ${bps(m.q50_bps)} bps, 90th percentile ${bps(m.q90_bps)}, largest ${bps(m.max_bps)} (${m.markets} bot-run market${m.markets === 1 ? "" : "s"})`
