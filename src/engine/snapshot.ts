// Whole-engine snapshot as plain JSON data, in a canonical order (sorted keys
// and ids), so equal states give equal bytes and equal hashes.
import { createHash } from "node:crypto"
import { Engine } from "./engine.ts"
import { Account, Builder, Market, Order, Position } from "./state.ts"
import type { MarketStatus, Outcome, OrderType, Side, Stp } from "./types.ts"

export const SNAPSHOT_VERSION = 1

export interface EngineSnapshot {
  readonly version: typeof SNAPSHOT_VERSION
  readonly lastSeq: number
  readonly lastTsSec: number
  readonly nextOrderId: number
  readonly nextTradeId: number
  readonly makerRebateBps: number
  readonly defaultTakerFeeBps: number
  readonly netDepositsMicro: number
  readonly markets: ReadonlyArray<{
    readonly id: string
    readonly status: MarketStatus
    readonly winningOutcome: Outcome | null
    readonly takerFeeBps: number
    readonly yesSupply: number
    readonly noSupply: number
    readonly backingMicro: number
  }>
  readonly builders: ReadonlyArray<{ apiKey: string; wallet: string; feeBps: number; enabled: boolean }>
  readonly accounts: ReadonlyArray<{
    readonly user: string
    readonly availableMicro: number
    readonly lockedMicro: number
    readonly lastNonce: number
    readonly lastWithdrawNonce: number
    /** [marketId, yes, no, yesLocked, noLocked, costYesMicro, costNoMicro] */
    readonly positions: ReadonlyArray<readonly [string, number, number, number, number, number, number]>
  }>
  /** Resting orders by id: price-level queues and owners' lists are both in id order. */
  readonly orders: ReadonlyArray<SnapshotOrder>
}

/** [id, user, marketId, side, outcome, priceBps, size, remaining, orderType, stp, nonce,
 *  builderKey, builderWallet, builderFeeBps, lockPerContractMicro, createdAtSec] */
export type SnapshotOrder = readonly [
  number, string, string, Side, Outcome, number, number, number, OrderType, Stp, number,
  string | null, string | null, number, number, number
]

const byKey = <T>(key: (t: T) => string) => (a: T, b: T): number => {
  const ka = key(a)
  const kb = key(b)
  return ka < kb ? -1 : ka > kb ? 1 : 0
}

export const takeSnapshot = (e: Engine): EngineSnapshot => ({
  version: SNAPSHOT_VERSION,
  lastSeq: e.lastSeq,
  lastTsSec: e.lastTsSec,
  nextOrderId: e.nextOrderId,
  nextTradeId: e.nextTradeId,
  makerRebateBps: e.makerRebateBps,
  defaultTakerFeeBps: e.defaultTakerFeeBps,
  netDepositsMicro: e.netDepositsMicro,
  markets: [...e.markets.values()].sort(byKey((m) => m.id)).map((m) => ({
    id: m.id,
    status: m.status,
    winningOutcome: m.winningOutcome,
    takerFeeBps: m.takerFeeBps,
    yesSupply: m.yesSupply,
    noSupply: m.noSupply,
    backingMicro: m.backingMicro
  })),
  builders: [...e.builders.values()]
    .sort(byKey((b) => b.apiKey))
    .map((b) => ({ apiKey: b.apiKey, wallet: b.wallet, feeBps: b.feeBps, enabled: b.enabled })),
  accounts: [...e.accounts.values()].sort(byKey((a) => a.user)).map((a) => ({
    user: a.user,
    availableMicro: a.availableMicro,
    lockedMicro: a.lockedMicro,
    lastNonce: a.lastNonce,
    lastWithdrawNonce: a.lastWithdrawNonce,
    positions: [...a.positions.values()]
      .sort(byKey((p) => p.marketId))
      .map((p) => [p.marketId, p.yes, p.no, p.yesLocked, p.noLocked, p.costYesMicro, p.costNoMicro] as const)
  })),
  orders: [...e.orders.values()]
    .sort((a, b) => a.id - b.id)
    .map(
      (o): SnapshotOrder => [
        o.id, o.account.user, o.market.id, o.side, o.outcome, o.priceBps, o.size, o.remaining, o.orderType,
        o.stp, o.nonce, o.builderKey, o.builderWallet, o.builderFeeBps, o.lockPerContractMicro, o.createdAtSec
      ]
    )
})

export const restoreSnapshot = (s: EngineSnapshot): Engine => {
  if (s.version !== SNAPSHOT_VERSION) throw new Error(`unsupported engine snapshot version ${String(s.version)}`)
  const e = new Engine()
  e.lastSeq = s.lastSeq
  e.lastTsSec = s.lastTsSec
  e.nextOrderId = s.nextOrderId
  e.nextTradeId = s.nextTradeId
  e.makerRebateBps = s.makerRebateBps
  e.defaultTakerFeeBps = s.defaultTakerFeeBps
  e.netDepositsMicro = s.netDepositsMicro
  for (const m of s.markets) {
    const market = new Market(m.id, m.takerFeeBps)
    market.status = m.status
    market.winningOutcome = m.winningOutcome
    market.yesSupply = m.yesSupply
    market.noSupply = m.noSupply
    market.backingMicro = m.backingMicro
    e.markets.set(m.id, market)
  }
  for (const b of s.builders) e.builders.set(b.apiKey, new Builder(b.apiKey, b.wallet, b.feeBps, b.enabled))
  for (const a of s.accounts) {
    const acct = new Account(a.user)
    acct.availableMicro = a.availableMicro
    acct.lockedMicro = a.lockedMicro
    acct.lastNonce = a.lastNonce
    acct.lastWithdrawNonce = a.lastWithdrawNonce
    for (const [marketId, yes, no, yesLocked, noLocked, costYes, costNo] of a.positions) {
      const pos = new Position(a.user, marketId)
      pos.yes = yes
      pos.no = no
      pos.yesLocked = yesLocked
      pos.noLocked = noLocked
      pos.costYesMicro = costYes
      pos.costNoMicro = costNo
      acct.positions.set(marketId, pos)
    }
    e.accounts.set(a.user, acct)
  }
  for (const row of s.orders) {
    const [id, user, marketId, side, outcome, priceBps, size, remaining, orderType, stp, nonce] = row
    const [, , , , , , , , , , , builderKey, builderWallet, builderFeeBps, lockPerContract, createdAtSec] = row
    const acct = e.accounts.get(user)
    const market = e.markets.get(marketId)
    if (acct === undefined || market === undefined) throw new Error(`snapshot order ${id} refers to a missing account or market`)
    const isBid = (side === "buy") === (outcome === "yes")
    const yesPriceBps = outcome === "yes" ? priceBps : 10_000 - priceBps
    const order = new Order(
      id, acct, market, side, outcome, priceBps, yesPriceBps, isBid, size, orderType, stp, nonce,
      builderKey, builderWallet, builderFeeBps, lockPerContract, createdAtSec
    )
    order.remaining = remaining
    ;(isBid ? market.bids : market.asks).append(order)
    acct.linkOrder(order)
    e.orders.set(order)
  }
  return e
}

export const snapshotHash = (s: EngineSnapshot): string => createHash("sha256").update(JSON.stringify(s)).digest("hex")

export const stateHash = (e: Engine): string => snapshotHash(takeSnapshot(e))
