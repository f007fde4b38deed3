// The signed-in user's live state: balance, positions and open orders from the `user:` channel
// (portfolio_snapshot / portfolio_update, full state each time), seeded from REST on every
// (re)subscribe.
import { effect, signal } from "@preact/signals"
import { subscribe } from "./feed.ts"
import { rememberNames } from "./market-names.tsx"
import type { RestingOrder } from "../../src/client/index.ts"
import { apiUrl, getJson, key } from "./session.ts"

export interface BalanceView { readonly available: number; readonly locked: number; readonly total: number }
export interface PositionRow {
  readonly market_id: string
  readonly outcome: string
  readonly size: number
  readonly yes?: number
  readonly no?: number
  readonly avg_price: number
  readonly mark_price: number | null
  readonly cash_pnl: number
  readonly slug: string
  readonly question?: string
}
/** A resting order as the API declares it (src/domain/wire.ts RestingOrder). */
export type OpenOrder = RestingOrder

export const balance = signal<BalanceView | null>(null)
export const positions = signal<ReadonlyArray<PositionRow>>([])
export const openOrders = signal<ReadonlyArray<OpenOrder>>([])
/** Bumped on every portfolio frame: history tables re-read on it. */
export const portfolioVersion = signal(0)

/** Portfolio frames applied so far: a REST re-seed that a frame overtook is dropped. */
let framesApplied = 0

export const reseedPortfolio = async (): Promise<void> => {
  const k = key.value
  if (k === null) return
  const framesBefore = framesApplied
  const [b, p, o] = await Promise.all([
    getJson<BalanceView>(apiUrl(`/v1/balance/${k.user}`)),
    getJson<{ positions: PositionRow[] }>(apiUrl(`/v1/positions/all/${k.user}`)),
    getJson<{ orders: OpenOrder[] }>(apiUrl(`/v1/orders/all/${k.user}`))
  ])
  if (key.value?.user !== k.user) return
  // The REST rows carry each market's question; the user channel's do not (SPEC §6): keep them by id.
  rememberNames(p.positions.map((x) => [x.market_id, x.question]))
  // A frame applied while these reads were on their way may be newer than some of them (the three
  // reads answer at different moments): keep the frame. Every later change brings a frame anyway.
  if (framesApplied !== framesBefore) return
  balance.value = b
  positions.value = p.positions
  openOrders.value = o.orders
  portfolioVersion.value++
}

export const startPortfolio = (): void => {
  let unsub: (() => void) | null = null
  effect(() => {
    const k = key.value
    unsub?.()
    unsub = null
    balance.value = null
    positions.value = []
    openOrders.value = []
    if (k === null) return
    void reseedPortfolio().catch(() => {})
    // The user: channel answers each (re)subscribe with a full snapshot, then a full state per change.
    unsub = subscribe(`user:${k.user}`, (e) => {
      if (e.type === "state" && e.state === "open") void reseedPortfolio().catch(() => {})
      if (e.type !== "portfolio" || e.user !== k.user) return
      const s = e.state as unknown as { balance: BalanceView; positions: PositionRow[]; open_orders: OpenOrder[] }
      framesApplied++
      balance.value = s.balance
      positions.value = s.positions
      openOrders.value = s.open_orders
      portfolioVersion.value++
    })
  })
}
