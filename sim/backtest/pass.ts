// The bot runner's pass (src/workers/lp-bot-runner.ts): once a second it steps every running bot, in
// user-id order, and each bot sees the quotes the bots ahead of it placed in that same pass.
// A tape stamps records to the journal's second (ts_ms = the second + the record's place in
// it), and a ticked backtest bot at second S sees only what was stamped before S: without
// help it never sees those quotes, and two bots re-quoting in one second drift apart
// (docs/backtesting.md "The bot runner's pass"). Here the rows that open a second and belong
// to the bots ahead of ours are moved to the millisecond before it, so the tick at S finds
// them applied, as the live bot did.
import type { BacktestConfig } from "./config.ts"
import { type Dataset, KIND_ADD, KIND_CANCEL, KIND_NEW, KIND_SNAPSHOT } from "./dataset.ts"

type PassConfig = Pick<BacktestConfig, "lpBotsInPass" | "botsAheadInPass">

const ownerSet = (d: Dataset, names: ReadonlyArray<string>): Set<number> => {
  const out = new Set<number>()
  for (const name of names) {
    const idx = d.owners.indexOf(name)
    if (idx >= 0) out.add(idx)
  }
  return out
}

/** The owner indices (into `d.owners`) of the tape's LP bots that step ahead of ours in a pass. */
export const ownersAhead = (d: Dataset, config: PassConfig): Set<number> => ownerSet(d, config.lpBotsInPass.slice(0, config.botsAheadInPass))

/** The owner indices of the tape's LP bots that step after ours: their first row in a pass comes after our step. */
export const ownersBehind = (d: Dataset, config: PassConfig): Set<number> => ownerSet(d, config.lpBotsInPass.slice(config.botsAheadInPass))

const isOrderRow = (kind: number): boolean => kind === KIND_NEW || kind === KIND_ADD || kind === KIND_CANCEL

/**
 * Each row's time for the run: the tape's, except that in a second the pass opens (its first row
 * but snapshots is a bot's ahead of ours) every row up to the last row of the bots ahead moves to
 * 1 ms before the second, in its order. The pass runs first in its second and ours steps after
 * the bots ahead: it saw all their rows and whatever else the journal took in between (a bot
 * awaits each order it places, so other requests land among its rows). A row of a bot behind
 * ours ends the search: ours had stepped by then. A second whose first rows are anyone else's is
 * left as it is (the order within it is not known to be the pass's).
 */
export const passTimes = (d: Dataset, ahead: ReadonlySet<number>, behind: ReadonlySet<number> = new Set()): Float64Array => {
  if (ahead.size === 0) return d.tMs
  const t = Float64Array.from(d.tMs)
  let i = 0
  while (i < d.count) {
    const secMs = Math.floor(d.tMs[i]! / 1000) * 1000
    let end = i
    while (end < d.count && d.tMs[end]! < secMs + 1000) end++
    let first = i
    while (first < end && d.kind[first] === KIND_SNAPSHOT) first++
    if (first < end && isRowOf(d, ahead, first)) {
      let lastAhead = first
      for (let j = first + 1; j < end && !isRowOf(d, behind, j); j++) if (isRowOf(d, ahead, j)) lastAhead = j
      for (let k = i; k <= lastAhead; k++) t[k] = secMs - 1
    }
    i = end
  }
  return t
}

const isRowOf = (d: Dataset, owners: ReadonlySet<number>, j: number): boolean => isOrderRow(d.kind[j]!) && owners.has(d.owner[j]!)
