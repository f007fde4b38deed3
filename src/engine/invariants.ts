// The ledger's invariants (DESIGN.md §3). Tests run this after every command;
// any violation is an engine defect, never a user error.
import type { BookSide } from "./book.ts"
import type { Engine } from "./engine.ts"
import { MICRO_PER_CONTRACT } from "./money.ts"
import type { Order } from "./state.ts"

export const findViolations = (e: Engine): string[] => {
  const bad: string[] = []
  const check = (ok: boolean, what: string): void => {
    if (!ok) bad.push(what)
  }

  // Conservation: every micro is in an account (available or locked) or backs a market's pairs.
  let held = 0
  for (const a of e.accounts.values()) held += a.availableMicro + a.lockedMicro
  for (const m of e.markets.values()) held += m.backingMicro
  check(held === e.netDepositsMicro, `money: accounts+backing ${held} != credits-debits ${e.netDepositsMicro}`)

  // Supply per market from positions.
  const yesByMarket = new Map<string, number>()
  const noByMarket = new Map<string, number>()
  for (const a of e.accounts.values()) {
    check(a.availableMicro >= 0 && a.lockedMicro >= 0, `negative balance for ${a.user}`)
    check(Number.isSafeInteger(a.availableMicro) && Number.isSafeInteger(a.lockedMicro), `non-integer balance for ${a.user}`)
    for (const p of a.positions.values()) {
      check(p.yes >= 0 && p.no >= 0 && p.costYesMicro >= 0 && p.costNoMicro >= 0, `negative position ${a.user}/${p.marketId}`)
      check(p.yesLocked >= 0 && p.yesLocked <= p.yes && p.noLocked >= 0 && p.noLocked <= p.no, `bad share lock ${a.user}/${p.marketId}`)
      yesByMarket.set(p.marketId, (yesByMarket.get(p.marketId) ?? 0) + p.yes)
      noByMarket.set(p.marketId, (noByMarket.get(p.marketId) ?? 0) + p.no)
    }
  }
  for (const m of e.markets.values()) {
    check((yesByMarket.get(m.id) ?? 0) === m.yesSupply, `market ${m.id}: YES held != yesSupply`)
    check((noByMarket.get(m.id) ?? 0) === m.noSupply, `market ${m.id}: NO held != noSupply`)
    if (m.status === "resolved") {
      const winning = m.winningOutcome === "yes" ? m.yesSupply : m.noSupply
      check(m.backingMicro === winning * MICRO_PER_CONTRACT, `market ${m.id}: backing != winning supply`)
      check(m.bids.orderCount === 0 && m.asks.orderCount === 0, `market ${m.id}: resolved with resting orders`)
    } else {
      check(m.yesSupply === m.noSupply, `market ${m.id}: YES supply ${m.yesSupply} != NO supply ${m.noSupply}`)
      check(m.backingMicro === m.yesSupply * MICRO_PER_CONTRACT, `market ${m.id}: backing != pairs`)
    }
    check(m.bids.best === -1 || m.asks.best === -1 || m.bids.best < m.asks.best, `market ${m.id}: book crossed`)
    checkSide(m.bids, `market ${m.id} bids`, check)
    checkSide(m.asks, `market ${m.id} asks`, check)
  }

  // Locks equal what resting orders can still cost; lists and maps agree with the book.
  const cashLock = new Map<string, number>()
  const shareLock = new Map<string, number>()
  let onBook = 0
  for (const m of e.markets.values()) onBook += m.bids.orderCount + m.asks.orderCount
  check(onBook === e.orders.size, `orders map has ${e.orders.size} entries, books hold ${onBook}`)
  for (const o of e.orders.values()) {
    check(o.remaining > 0 && o.remaining <= o.size, `order ${o.id}: remaining ${o.remaining} of ${o.size}`)
    if (o.side === "buy") cashLock.set(o.account.user, (cashLock.get(o.account.user) ?? 0) + o.remaining * o.lockPerContractMicro)
    else {
      const key = `${o.account.user}\u0000${o.market.id}\u0000${o.outcome}`
      shareLock.set(key, (shareLock.get(key) ?? 0) + o.remaining)
    }
  }
  for (const a of e.accounts.values()) {
    check(a.lockedMicro === (cashLock.get(a.user) ?? 0), `account ${a.user}: locked ${a.lockedMicro} != resting buys' cost`)
    for (const p of a.positions.values()) {
      check(p.yesLocked === (shareLock.get(`${a.user}\u0000${p.marketId}\u0000yes`) ?? 0), `${a.user}/${p.marketId}: YES lock mismatch`)
      check(p.noLocked === (shareLock.get(`${a.user}\u0000${p.marketId}\u0000no`) ?? 0), `${a.user}/${p.marketId}: NO lock mismatch`)
    }
    let count = 0
    let prevId = 0
    for (let o: Order | null = a.ordersHead; o !== null; o = o.unext) {
      check(o.account === a && e.orders.get(o.id) === o && o.id > prevId, `account ${a.user}: order list corrupt at ${o.id}`)
      prevId = o.id
      count++
    }
    check(count === a.openOrders, `account ${a.user}: list holds ${count}, openOrders ${a.openOrders}`)
  }
  return bad
}

const checkSide = (side: BookSide, name: string, check: (ok: boolean, what: string) => void): void => {
  let count = 0
  let best = -1
  for (let price = 0; price < side.levels.length; price++) {
    const level = side.levels[price]
    if (level === undefined || level.head === null) continue
    if (best === -1 || side.isBid) best = price
    let size = 0
    let n = 0
    let prevId = 0
    for (let o: Order | null = level.head; o !== null; o = o.next) {
      check(o.yesPriceBps === price && o.isBid === side.isBid && o.id > prevId, `${name} @${price}: queue corrupt at ${o.id}`)
      prevId = o.id
      size += o.remaining
      n++
    }
    check(size === level.size && n === level.count, `${name} @${price}: level totals stale`)
    count += n
  }
  check(best === side.best, `${name}: best ${side.best}, actual ${best}`)
  check(count === side.orderCount, `${name}: orderCount ${side.orderCount}, actual ${count}`)
}

export const assertInvariants = (e: Engine): void => {
  const bad = findViolations(e)
  if (bad.length > 0) throw new Error(`engine invariants broken:\n  ${bad.join("\n  ")}`)
}
