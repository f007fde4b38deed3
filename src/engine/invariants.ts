// The ledger's invariants (DESIGN.md §3). Tests run this after every command;
// any violation is an engine defect, never a user error.
import type { BookSide } from "./book.ts"
import type { Engine } from "./engine.ts"
import { MICRO_PER_CONTRACT } from "./money.ts"
import type { Order, Position } from "./state.ts"

// One piece: one check per invariant, each a few lines, over one walk of the state.
// Messages are built only for a violation: the auditor runs this over the whole state
// on a cadence, and a template string per check was most of its cost.
export const findViolations = (e: Engine): string[] => {
  const bad: string[] = []

  // Conservation: every micro is in an account (available or locked) or backs a market's pairs.
  let held = 0
  for (const a of e.accounts.values()) held += a.availableMicro + a.lockedMicro
  for (const m of e.markets.values()) held += m.backingMicro
  if (held !== e.netDepositsMicro) bad.push(`money: accounts+backing ${held} != credits-debits ${e.netDepositsMicro}`)

  // Supply per market from positions.
  const yesByMarket = new Map<string, number>()
  const noByMarket = new Map<string, number>()
  for (const a of e.accounts.values()) {
    if (!(a.availableMicro >= 0 && a.lockedMicro >= 0)) bad.push(`negative balance for ${a.user}`)
    if (!(Number.isSafeInteger(a.availableMicro) && Number.isSafeInteger(a.lockedMicro))) bad.push(`non-integer balance for ${a.user}`)
    for (const p of a.positions.values()) {
      if (!(p.yes >= 0 && p.no >= 0 && p.costYesMicro >= 0 && p.costNoMicro >= 0)) bad.push(`negative position ${a.user}/${p.marketId}`)
      if (!(p.yesLocked >= 0 && p.yesLocked <= p.yes && p.noLocked >= 0 && p.noLocked <= p.no)) bad.push(`bad share lock ${a.user}/${p.marketId}`)
      yesByMarket.set(p.marketId, (yesByMarket.get(p.marketId) ?? 0) + p.yes)
      noByMarket.set(p.marketId, (noByMarket.get(p.marketId) ?? 0) + p.no)
    }
  }
  for (const m of e.markets.values()) {
    if ((yesByMarket.get(m.id) ?? 0) !== m.yesSupply) bad.push(`market ${m.id}: YES held != yesSupply`)
    if ((noByMarket.get(m.id) ?? 0) !== m.noSupply) bad.push(`market ${m.id}: NO held != noSupply`)
    if (m.status === "resolved") {
      const winning = m.winningOutcome === "yes" ? m.yesSupply : m.noSupply
      if (m.backingMicro !== winning * MICRO_PER_CONTRACT) bad.push(`market ${m.id}: backing != winning supply`)
      if (!(m.bids.orderCount === 0 && m.asks.orderCount === 0)) bad.push(`market ${m.id}: resolved with resting orders`)
    } else {
      if (m.yesSupply !== m.noSupply) bad.push(`market ${m.id}: YES supply ${m.yesSupply} != NO supply ${m.noSupply}`)
      if (m.backingMicro !== m.yesSupply * MICRO_PER_CONTRACT) bad.push(`market ${m.id}: backing != pairs`)
    }
    if (!(m.bids.best === -1 || m.asks.best === -1 || m.bids.best < m.asks.best)) bad.push(`market ${m.id}: book crossed`)
    checkSide(m.bids, m.id, "bids", bad)
    checkSide(m.asks, m.id, "asks", bad)
  }

  // Locks equal what resting orders can still cost; lists and maps agree with the book.
  const cashLock = new Map<string, number>()
  // Shares locked by resting sells, per position (a sell without a position is never looked up, as before).
  const shareLock = new Map<Position, { yes: number; no: number }>()
  let onBook = 0
  for (const m of e.markets.values()) onBook += m.bids.orderCount + m.asks.orderCount
  if (onBook !== e.orders.size) bad.push(`orders map has ${e.orders.size} entries, books hold ${onBook}`)
  for (const o of e.orders.values()) {
    if (!(o.remaining > 0 && o.remaining <= o.size)) bad.push(`order ${o.id}: remaining ${o.remaining} of ${o.size}`)
    if (o.side === "buy") cashLock.set(o.account.user, (cashLock.get(o.account.user) ?? 0) + o.remaining * o.lockPerContractMicro)
    else {
      const p = o.account.positions.get(o.market.id)
      if (p === undefined) continue
      let locked = shareLock.get(p)
      if (locked === undefined) shareLock.set(p, (locked = { yes: 0, no: 0 }))
      locked[o.outcome] += o.remaining
    }
  }
  for (const a of e.accounts.values()) {
    if (a.lockedMicro !== (cashLock.get(a.user) ?? 0)) bad.push(`account ${a.user}: locked ${a.lockedMicro} != resting buys' cost`)
    for (const p of a.positions.values()) {
      const locked = shareLock.get(p)
      if (p.yesLocked !== (locked?.yes ?? 0)) bad.push(`${a.user}/${p.marketId}: YES lock mismatch`)
      if (p.noLocked !== (locked?.no ?? 0)) bad.push(`${a.user}/${p.marketId}: NO lock mismatch`)
    }
    let count = 0
    let prevId = 0
    for (let o: Order | null = a.ordersHead; o !== null; o = o.unext) {
      if (!(o.account === a && e.orders.get(o.id) === o && o.id > prevId)) bad.push(`account ${a.user}: order list corrupt at ${o.id}`)
      prevId = o.id
      count++
    }
    if (count !== a.openOrders) bad.push(`account ${a.user}: list holds ${count}, openOrders ${a.openOrders}`)
  }
  return bad
}

const checkSide = (side: BookSide, marketId: string, sideName: string, bad: string[]): void => {
  const name = (): string => `market ${marketId} ${sideName}`
  let count = 0
  let best = -1
  // Every level made, whatever the bitmap says: a slot is only ever filled where a level is listed (BookSide.append).
  let defined = 0
  for (const price of side.levelPrices) {
    const level = side.levels[price]
    if (level === undefined) {
      bad.push(`${name()} @${price}: listed level missing`)
      continue
    }
    defined++
    if (level.head === null) continue
    if (best === -1 || (side.isBid ? price > best : price < best)) best = price
    let size = 0
    let n = 0
    let prevId = 0
    for (let o: Order | null = level.head; o !== null; o = o.next) {
      if (!(o.yesPriceBps === price && o.isBid === side.isBid && o.id > prevId)) bad.push(`${name()} @${price}: queue corrupt at ${o.id}`)
      prevId = o.id
      size += o.remaining
      n++
    }
    if (size !== level.size || n !== level.count) bad.push(`${name()} @${price}: level totals stale`)
    count += n
  }
  if (new Set(side.levelPrices).size !== defined) bad.push(`${name()}: a level listed twice`)
  if (best !== side.best) bad.push(`${name()}: best ${side.best}, actual ${best}`)
  if (count !== side.orderCount) bad.push(`${name()}: orderCount ${side.orderCount}, actual ${count}`)
}

export const assertInvariants = (e: Engine): void => {
  const bad = findViolations(e)
  if (bad.length > 0) throw new Error(`engine invariants broken:\n  ${bad.join("\n  ")}`)
}
