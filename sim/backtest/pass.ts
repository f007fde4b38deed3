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

/** The owner indices (into `d.owners`) of the tape's LP bots that step ahead of ours in a pass. */
export const ownersAhead = (d: Dataset, config: Pick<BacktestConfig, "lpBotsInPass" | "botsAheadInPass">): Set<number> => {
  const ahead = new Set<number>()
  const names = config.lpBotsInPass.slice(0, config.botsAheadInPass)
  for (const name of names) {
    const idx = d.owners.indexOf(name)
    if (idx >= 0) ahead.add(idx)
  }
  return ahead
}

const isOrderRow = (kind: number): boolean => kind === KIND_NEW || kind === KIND_ADD || kind === KIND_CANCEL

/**
 * Each row's time for the run: the tape's, except that in every second the leading rows of the
 * bots ahead (with the snapshots among them) move to 1 ms before the second. The pass runs
 * first in its second, so its rows lead it; a second whose first rows are anyone else's is
 * left as it is (the order within it is not known to be the pass's).
 */
export const passTimes = (d: Dataset, ahead: ReadonlySet<number>): Float64Array => {
  if (ahead.size === 0) return d.tMs
  const t = Float64Array.from(d.tMs)
  let i = 0
  while (i < d.count) {
    const secMs = Math.floor(d.tMs[i]! / 1000) * 1000
    let lastAhead = -1
    let j = i
    for (; j < d.count && d.tMs[j]! < secMs + 1000; j++) {
      const kind = d.kind[j]!
      if (isOrderRow(kind) && ahead.has(d.owner[j]!)) lastAhead = j
      else if (kind !== KIND_SNAPSHOT) break
    }
    for (let k = i; k <= lastAhead; k++) t[k] = secMs - 1
    // Skip the rest of this second.
    while (j < d.count && d.tMs[j]! < secMs + 1000) j++
    i = j
  }
  return t
}
