// Read models over the exchange's state, in the spec's wire shapes (SPEC §2, §6): each returns
// the declared wire type (src/domain/wire.ts), the one the routes answer and the client reads.
import type * as W from "../domain/wire.ts"
import type { Order, Position } from "../engine/state.ts"
import { Catalog, type EventRecord } from "./catalog.ts"
import type { Exchange } from "./exchange.ts"

type Wire<S extends { readonly Type: unknown }> = S["Type"]

export const balanceView = (x: Exchange, user: string): Wire<typeof W.Balance> => {
  const a = x.engine.accounts.get(user)
  const available = a?.availableMicro ?? 0
  const locked = a?.lockedMicro ?? 0
  return { user, available, locked, total: available + locked }
}

/** Resting order, portfolio form (SPEC §2). */
const orderView = (o: Order): Wire<typeof W.RestingOrder> => ({
  id: o.id,
  market_id: o.market.id,
  side: o.side,
  outcome: o.outcome,
  price: o.priceBps,
  original_size: o.size,
  remaining: o.remaining,
  created_at: o.createdAtSec
})

export const openOrders = (x: Exchange, user: string): Array<Wire<typeof W.RestingOrder>> => {
  const out: Array<Wire<typeof W.RestingOrder>> = []
  for (let o = x.engine.accounts.get(user)?.ordersHead ?? null; o !== null; o = o.unext) out.push(orderView(o))
  return out
}

/** YES mark in 0..1: book mid when both sides quote, else the last trade, else null. */
export const yesMark = (x: Exchange, marketId: string): number | null => {
  const m = x.engine.markets.get(marketId)
  if (m !== undefined && m.bids.best !== -1 && m.asks.best !== -1) return (m.bids.best + m.asks.best) / 20_000
  const last = x.history.lastTrade(marketId)
  return last === undefined ? null : last.yes_price / 10_000
}

/**
 * A position's headline outcome is the side with more shares (YES on a tie); `size`
 * is that side's count. Prices are 0..1; money is micro-USDC; `cash_pnl` is the
 * headline side's mark value minus its cost.
 */
export const positionView = (x: Exchange, user: string, marketId: string): Wire<typeof W.Position> =>
  positionFrom(user, marketId, x.engine.accounts.get(user)?.positions.get(marketId), marketMark(x, marketId))

/** What a position's view reads from its market, read once per market. */
interface MarketMark {
  readonly found: ReturnType<Catalog["market"]>
  readonly yesMark: number | null
  // The catalog fields a view reads, copied: a kept piece compares them by value.
  readonly status: string | undefined
  readonly winning: string | null | undefined
  readonly slug: string | undefined
  readonly endDate: number | undefined
}

/** Each market's mark, read once per feed flush (state does not change within one). */
export type MarkMemo = Map<string, MarketMark>

const marketMark = (x: Exchange, marketId: string): MarketMark => {
  const found = x.catalog.market(marketId)
  return {
    found,
    yesMark: yesMark(x, marketId),
    status: found?.market.status,
    winning: found?.market.winning_outcome,
    slug: found?.market.slug,
    endDate: found?.event.end_date
  }
}

const sameMark = (a: MarketMark, b: MarketMark): boolean =>
  a === b || (a.yesMark === b.yesMark && a.status === b.status && a.winning === b.winning && a.slug === b.slug && a.endDate === b.endDate)

const positionFrom = (user: string, marketId: string, p: Position | undefined, mark: MarketMark): Wire<typeof W.Position> => {
  const found = mark.found
  const yes = p?.yes ?? 0
  const no = p?.no ?? 0
  const isYes = yes >= no
  const size = isYes ? yes : no
  const cost = isYes ? (p?.costYesMicro ?? 0) : (p?.costNoMicro ?? 0)
  const yesMarkPrice = mark.yesMark
  const resolved = found?.market.status === "resolved"
  const markPrice = resolved
    ? (found.market.winning_outcome === (isYes ? "yes" : "no") ? 1 : 0)
    : yesMarkPrice === null ? null : isYes ? yesMarkPrice : 1 - yesMarkPrice
  return {
    user,
    market_id: marketId,
    outcome: isYes ? ("YES" as const) : ("NO" as const),
    size,
    yes,
    no,
    yes_locked: p?.yesLocked ?? 0,
    no_locked: p?.noLocked ?? 0,
    cost_basis: (p?.costYesMicro ?? 0) + (p?.costNoMicro ?? 0),
    avg_price: size === 0 ? 0 : cost / (size * 1_000_000),
    mark_price: markPrice,
    cash_pnl: markPrice === null ? 0 : Math.round(size * markPrice * 1_000_000) - cost,
    slug: found?.market.slug ?? null,
    question: found?.market.question ?? null,
    redeemable: resolved && (yes > 0 || no > 0),
    end_date: found?.event.end_date ?? null,
    status: found === undefined ? null : found.market.status
  }
}

export const allPositions = (x: Exchange, user: string): Array<Wire<typeof W.Position>> => {
  const a = x.engine.accounts.get(user)
  if (a === undefined) return []
  return [...a.positions.keys()].sort().map((marketId) => positionView(x, user, marketId))
}

/** Book in YES terms, best first; an unknown market gives an empty book. */
export const bookView = (x: Exchange, marketId: string, tsMs: number, depth = 100): Wire<typeof W.BookSnapshot> => {
  const m = x.engine.markets.get(marketId)
  const level = ([price, size]: [number, number]) => ({ price, size })
  return {
    market_id: marketId,
    bids: m === undefined ? [] : m.bids.depth(depth).map(level),
    asks: m === undefined ? [] : m.asks.depth(depth).map(level),
    ts: tsMs
  }
}

/** A position as the user channel carries it (SPEC §6): positionView's fields, in this order. */
const portfolioPosition = (p: ReturnType<typeof positionView>) => ({
  market_id: p.market_id,
  outcome: p.outcome,
  size: p.size,
  avg_price: p.avg_price,
  mark_price: p.mark_price,
  cash_pnl: p.cash_pnl,
  slug: p.slug,
  redeemable: p.redeemable,
  end_date: p.end_date
})

/** The user channel's `state` (SPEC §6). */
export const portfolioState = (x: Exchange, user: string) => {
  const b = balanceView(x, user)
  return {
    balance: { available: b.available, locked: b.locked, total: b.total },
    positions: allPositions(x, user).map(portfolioPosition),
    open_orders: openOrders(x, user)
  }
}

/**
 * `JSON.stringify(portfolioState(x, user))`, byte for byte, for the feed: it re-sends a
 * holder's whole portfolio whenever one of its markets' books moves, and rebuilding and
 * serialising every position each time was a fifth of a busy simulation. A position's
 * JSON is kept and reused while everything its view reads is equal — the position's
 * counts and costs, its market's mark and catalog fields — compared by value, never
 * assumed (test/service/portfolio-json.test.ts).
 */
export class PortfolioJson {
  private readonly kept = new Map<string, { keys: string[]; readonly pieces: Map<string, Piece>; text: string | null }>()
  /** Per resting order (gone with it): its JSON and the `remaining` it was built at. */
  private readonly orderTexts = new WeakMap<Order, { readonly remaining: number; readonly json: string }>()
  /** Each market's mark as `marksMoved` last saw it. */
  private readonly lastMarks = new Map<string, MarketMark>()

  constructor(private readonly x: Exchange) {}

  /**
   * Of `marketIds` (markets whose book changed), those whose mark — everything a position's view
   * reads of its market — differs from the last time this was asked about them (or that were
   * never asked about). A book change outside these leaves every holder's state as it was.
   */
  marksMoved(marketIds: Iterable<string>, marks: MarkMemo): Set<string> {
    const moved = new Set<string>()
    for (const marketId of marketIds) {
      let mark = marks.get(marketId)
      if (mark === undefined) marks.set(marketId, (mark = marketMark(this.x, marketId)))
      const last = this.lastMarks.get(marketId)
      if (last === undefined || !sameMark(last, mark)) moved.add(marketId)
      this.lastMarks.set(marketId, mark)
    }
    return moved
  }

  /**
   * The text `state(user)` last returned. The caller vouches that nothing it reads has changed
   * since: no balance or position event of the user, no mark moved in a market it holds, no market
   * status changed (`statusChanged`); null when there is none to reuse.
   */
  lastState(user: string): string | null {
    return this.kept.get(user)?.text ?? null
  }

  /** A market's status changed (halt, resume, resolution): no kept text may be reused until rebuilt. */
  statusChanged(): void {
    for (const mine of this.kept.values()) mine.text = null
  }

  state(user: string, marks: MarkMemo = new Map()): string {
    const b = balanceView(this.x, user)
    const a = this.x.engine.accounts.get(user)
    const parts: string[] = []
    if (a !== undefined) {
      let mine = this.kept.get(user)
      if (mine === undefined) this.kept.set(user, (mine = { keys: [], pieces: new Map(), text: null }))
      // The sorted market ids are kept while the position map holds exactly those keys.
      if (mine.keys.length !== a.positions.size || !mine.keys.every((k) => a.positions.has(k))) mine.keys = [...a.positions.keys()].sort()
      for (const marketId of mine.keys) {
        const p = a.positions.get(marketId)!
        let mark = marks.get(marketId)
        if (mark === undefined) marks.set(marketId, (mark = marketMark(this.x, marketId)))
        const piece = mine.pieces.get(marketId)
        if (piece !== undefined && piece.yes === p.yes && piece.no === p.no && piece.costYes === p.costYesMicro && piece.costNo === p.costNoMicro && sameMark(piece.mark, mark)) {
          parts.push(piece.json)
        } else {
          const json = JSON.stringify(portfolioPosition(positionFrom(user, marketId, p, mark)))
          mine.pieces.set(marketId, { yes: p.yes, no: p.no, costYes: p.costYesMicro, costNo: p.costNoMicro, mark, json })
          parts.push(json)
        }
      }
    }
    const balance = JSON.stringify({ available: b.available, locked: b.locked, total: b.total })
    const text = `{"balance":${balance},"positions":[${parts.join(",")}],"open_orders":[${this.ordersJson(user)}]}`
    const mine = this.kept.get(user)
    if (mine !== undefined) mine.text = text
    return text
  }

  /** The open orders' JSON objects, comma-joined: each order's text is kept while its `remaining` is unchanged (its only field that moves). */
  private ordersJson(user: string): string {
    let out = ""
    for (let o = this.x.engine.accounts.get(user)?.ordersHead ?? null; o !== null; o = o.unext) {
      let kept = this.orderTexts.get(o)
      if (kept === undefined || kept.remaining !== o.remaining) this.orderTexts.set(o, (kept = { remaining: o.remaining, json: JSON.stringify(orderView(o)) }))
      out = out === "" ? kept.json : `${out},${kept.json}`
    }
    return out
  }

  /** Drops a user's kept pieces (its channel has no subscriber left). */
  forget(user: string): void {
    this.kept.delete(user)
  }
}

/** A position's JSON and what it was built from. */
interface Piece {
  readonly yes: number
  readonly no: number
  readonly costYes: number
  readonly costNo: number
  readonly mark: MarketMark
  readonly json: string
}

/**
 * An event in the wire shape. With `takerFeeOf` (the engine's live per-market
 * taker fee), `fee_bps` follows operator fee changes: the outcomes' fee when they
 * agree, else the highest of them.
 */
export const eventView = (event: EventRecord, takerFeeOf?: (marketId: string) => number | undefined): Wire<typeof W.Market> => {
  const fees = takerFeeOf === undefined ? [] : event.outcomes.map((o) => takerFeeOf(o.market_id)).filter((f): f is number => f !== undefined)
  return {
    ...event,
    fee_bps: fees.length === 0 ? event.fee_bps : Math.max(...fees),
    status: Catalog.eventStatus(event)
  }
}

/** A user's deposits (via the linked wallet), newest first, in SPEC §2's row shape plus extensions. */
export const depositRows = (x: Exchange, user: string): Array<Wire<typeof W.DepositRow>> => {
  const wallet = x.walletOfUser.get(user)
  if (wallet === undefined) return []
  return [...x.deposits.ofWallet(wallet)].reverse().map((d) => ({
    tx_signature: d.txHash,
    amount_micro: d.amountMicro,
    seen_at: d.seenAtSec,
    credited_at: d.creditedAtSec,
    status: d.stage === "credited" ? "credited" : d.stage === "error" ? "error" : "pending",
    log_index: Number(d.key.slice(d.key.lastIndexOf(":") + 1)),
    stage: d.stage,
    error: d.error
  }))
}

/** The deposit service's progress for a wallet: its latest deposit, or `idle`. */
export const depositProgress = (x: Exchange, wallet: string): Wire<typeof W.DepositProgress> => {
  const all = x.deposits.ofWallet(wallet)
  const d = all[all.length - 1]
  if (d === undefined) return { stage: "idle" as const }
  return { stage: d.stage, amount_micro: d.amountMicro, tx_signature: d.txHash, updated_at: d.updatedAtSec, error: d.error }
}

/** A user's withdrawals, newest first, in SPEC §2's row shape plus `id` and `error`. */
export const withdrawalRows = (x: Exchange, user: string): Array<Wire<typeof W.WithdrawalRow>> =>
  [...x.withdrawals.ofUser(user)].reverse().map((w) => ({
    recipient: w.recipient,
    chain: "native" as const,
    amount_micro: w.amountMicro,
    status: w.status,
    tx_signature: w.txHash,
    created_at: w.createdAtSec,
    confirmed_at: w.confirmedAtSec,
    id: w.id,
    error: w.error
  }))
