// A deliberately broken layer for testing the auditor: after the `nth` fill it
// silently drops that fill from the taker's ledger (the shares it bought vanish),
// as a buggy settlement path might. The auditor must catch it and name the seed.
import type { Exchange } from "../../src/service/exchange.ts"

export const dropOneFill = (nth: number): ((x: Exchange) => void) => {
  let seen = 0
  return (x) =>
    x.onApply((_record, result) => {
      for (const ev of result.events) {
        if (ev.type !== "fill" || ++seen !== nth) continue
        const account = x.engine.accounts.get(ev.takerUser)
        const position = account?.positions.get(ev.marketId)
        if (position === undefined) continue
        if (ev.takerOutcome === "yes" && position.yes - position.yesLocked >= ev.size) position.yes -= ev.size
        else if (ev.takerOutcome === "no" && position.no - position.noLocked >= ev.size) position.no -= ev.size
        else seen-- // a sell: nothing to drop here; try the next fill
      }
    })
}
