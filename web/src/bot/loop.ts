// The in-browser LP bot's loop (SPEC §1 "In-browser bot"): each tick reads the book, the
// user's orders, position and balance over REST, steps the very same strategy as the
// server-managed bot and the backtester (src/lp/strategy.ts, bundled, not re-written), and on
// an acting decision cancels its own resting quotes and places the new ones post-only, each
// signed with the user's key by the API client. No DOM and no clock of its own: time and
// timers are injected, so tests and the cadence bench drive it with a fake timer.
//
// Cadence: the strategy re-quotes when ≥ rebalanceIntervalSec have passed since its last
// re-quote; the loop sleeps until then (at most `pollMs`, so fills and surface changes are
// noticed between re-quotes). A timer that fires late (a throttled background tab, a laptop
// lid) just runs one tick: the strategy re-quotes once on the current book, never "catches up"
// with a burst of stale quotes.
import { MAX_PRICE_BPS, MICRO_PER_BPS } from "../../../src/engine/money.ts"
import { type OrderSpec, quotesToOrders } from "../../../src/lp/quotes.ts"
import { makeStrategy, type Decision, type Strategy, type StrategyParams, type StrategyState } from "../../../src/lp/strategy.ts"

export interface BookLevel {
  readonly price: number
  readonly size: number
}
export interface RestingOrderView {
  readonly id: number
  readonly market_id: string
  readonly side: "buy" | "sell"
  readonly outcome: "yes" | "no"
  readonly price: number
  readonly remaining: number
}
export interface PositionView {
  readonly yes: number
  readonly no: number
  readonly yes_locked?: number
  readonly no_locked?: number
}
export type PlaceResult =
  | { readonly ok: true; readonly orderId: number; readonly queued: boolean }
  | { readonly ok: false; readonly code: string; readonly message: string }

/** What the loop needs from the API (the web app adapts the typed client to it). */
export interface BotApi {
  book(marketId: string): Promise<{ readonly bids: ReadonlyArray<BookLevel>; readonly asks: ReadonlyArray<BookLevel> }>
  openOrders(): Promise<ReadonlyArray<RestingOrderView>>
  position(marketId: string): Promise<PositionView>
  /** Total balance (available + locked), micro. */
  balanceTotal(): Promise<number>
  place(marketId: string, o: OrderSpec): Promise<PlaceResult>
  /** true when cancelled or already gone. */
  cancel(orderId: number): Promise<boolean>
}

export interface Timers {
  nowMs(): number
  set(fn: () => void, ms: number): unknown
  clear(handle: unknown): void
}

export type BotState = "starting" | "quoting" | "paused" | "waiting" | "stopping" | "stopped" | "stopped_limit"

export interface BotStatus {
  readonly state: BotState
  /** Why it is paused, waiting or stopped, in words. */
  readonly reason: string | null
  readonly marketId: string
  readonly midBps: number | null
  readonly netYes: number
  readonly pnlMicro: number
  /** The orders resting now as the bot placed them (own-outcome terms). */
  readonly quotes: ReadonlyArray<OrderSpec & { readonly id: number }>
  /** Unix ms of each re-quote (the cadence); the last 64. */
  readonly requotesAtMs: ReadonlyArray<number>
  readonly rejected: number
  readonly lastTickAtMs: number | null
  readonly nextTickAtMs: number | null
  /** A timer that fired this late (ms) — a throttled or sleeping tab. */
  readonly lateByMs: number
  readonly lastError: string | null
}

export interface BotOptions {
  readonly marketId: string
  readonly params: StrategyParams
  readonly api: BotApi
  readonly timers: Timers
  readonly onStatus?: (s: BotStatus) => void
  /** Longest sleep between ticks (default 5,000 ms): fills and reopened surfaces are seen this fast. */
  readonly pollMs?: number
  /** Order ids the bot placed in an earlier page life (kept in storage), so they are cancelled first. */
  readonly adoptOrderIds?: ReadonlyArray<number>
  /** Called whenever the set of the bot's resting order ids changes (to persist it). */
  readonly onOrderIds?: (ids: ReadonlyArray<number>) => void
}

/** YES-terms view of an own-outcome order: buy YES p / sell NO (10000−p) are bids at p. */
export const yesTerms = (o: { side: "buy" | "sell"; outcome: "yes" | "no"; price: number }): { bookSide: "bid" | "ask"; priceBps: number } => {
  const isBid = (o.side === "buy") === (o.outcome === "yes")
  return { bookSide: isBid ? "bid" : "ask", priceBps: o.outcome === "yes" ? o.price : MAX_PRICE_BPS - o.price }
}

/** Mid of everyone else's quotes: the book minus the bot's own resting orders (like src/service/lp-bot-market.ts). */
export const midExcluding = (
  book: { readonly bids: ReadonlyArray<BookLevel>; readonly asks: ReadonlyArray<BookLevel> },
  own: ReadonlyArray<RestingOrderView>
): number | null => {
  const mine = { bid: new Map<number, number>(), ask: new Map<number, number>() }
  for (const o of own) {
    const t = yesTerms(o)
    mine[t.bookSide].set(t.priceBps, (mine[t.bookSide].get(t.priceBps) ?? 0) + o.remaining)
  }
  const best = (levels: ReadonlyArray<BookLevel>, side: "bid" | "ask"): number | null => {
    for (const l of levels) if (l.size > (mine[side].get(l.price) ?? 0)) return l.price
    return null
  }
  const bid = best(book.bids, "bid")
  const ask = best(book.asks, "ask")
  return bid !== null && ask !== null ? (bid + ask) / 2 : null
}

const REASONS: Readonly<Record<string, string>> = {
  inventory_skew: "Paused: inventory is too one-sided. Only the side that reduces it is quoted until it is back under half the tolerance.",
  stop_loss: "Stopped: the stop-loss was reached.",
  take_profit: "Stopped: the take-profit was reached.",
  trading_disabled: "Waiting: trading is closed. The bot retries every few seconds and resumes when it reopens.",
  trading_paused: "Waiting: trading is paused (orders queue). The bot resumes when it reopens.",
  no_mid: "Waiting: no other quotes in this market to take a mid from."
}

export class BrowserBot {
  private readonly strategy: Strategy
  private state: StrategyState | null = null
  private timer: unknown = null
  private dueAtMs: number | null = null
  private running = false
  private ticking: Promise<void> | null = null
  private ownIds: number[] = []
  private ownSpecs = new Map<number, OrderSpec>()
  private base: { total: number; yes: number; no: number } | null = null
  private status: BotStatus

  constructor(private readonly o: BotOptions) {
    this.strategy = makeStrategy(o.params)
    this.ownIds = [...(o.adoptOrderIds ?? [])]
    this.status = {
      state: "stopped", reason: null, marketId: o.marketId, midBps: null, netYes: 0, pnlMicro: 0, quotes: [],
      requotesAtMs: [], rejected: 0, lastTickAtMs: null, nextTickAtMs: null, lateByMs: 0, lastError: null
    }
  }

  get current(): BotStatus {
    return this.status
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.state = this.strategy.init(Math.floor(this.o.timers.nowMs() / 1000))
    this.emit({ state: "starting", reason: null })
    this.schedule(0)
  }

  /** Runs a tick now (the page calls it when the tab becomes visible again, or on a fill). */
  wake(): void {
    if (!this.running) return
    this.schedule(0)
  }

  /** Stop & Withdraw: stop ticking, cancel every resting quote; the capital is back in `available`. */
  async stop(): Promise<void> {
    this.running = false
    if (this.timer !== null) this.o.timers.clear(this.timer)
    this.timer = null
    this.emit({ state: "stopping", reason: null, nextTickAtMs: null })
    await this.ticking?.catch(() => {})
    await this.cancelOwn()
    const left = (await this.o.api.openOrders()).filter((x) => this.ownIds.includes(x.id))
    for (const x of left) await this.o.api.cancel(x.id)
    this.ownIds = []
    this.ownSpecs.clear()
    this.o.onOrderIds?.([])
    this.emit({ state: "stopped", reason: "Stopped by you: every quote cancelled, capital back in your available balance.", quotes: [] })
  }

  private emit(patch: Partial<BotStatus>): void {
    this.status = { ...this.status, ...patch }
    this.o.onStatus?.(this.status)
  }

  private schedule(delayMs: number): void {
    if (!this.running) return
    if (this.timer !== null) this.o.timers.clear(this.timer)
    const at = this.o.timers.nowMs() + delayMs
    this.emit({ nextTickAtMs: at })
    this.timer = this.o.timers.set(() => {
      this.timer = null
      const late = this.o.timers.nowMs() - at
      if (this.ticking !== null) return // a tick is running; it schedules the next
      this.ticking = this.tick(late).finally(() => {
        this.ticking = null
      })
    }, delayMs)
  }

  private nextDelay(nowMs: number): number {
    const poll = this.o.pollMs ?? 5_000
    if (this.dueAtMs === null) return poll
    return Math.min(poll, Math.max(this.dueAtMs - nowMs, 50))
  }

  private async tick(lateByMs: number): Promise<void> {
    try {
      // The tick's time is when it started: the reads that follow describe the book then, and the
      // cadence does not drift by each tick's request latency.
      await this.step(lateByMs, this.o.timers.nowMs())
      this.emit({ lastError: null })
    } catch (err) {
      this.emit({ lastError: err instanceof Error ? err.message : String(err) })
    } finally {
      if (this.running) this.schedule(this.nextDelay(this.o.timers.nowMs()))
    }
  }

  private async step(lateByMs: number, nowMs: number): Promise<void> {
    const { api, marketId } = this.o
    const [book, orders, pos, total] = await Promise.all([api.book(marketId), api.openOrders(), api.position(marketId), api.balanceTotal()])
    if (!this.running || this.state === null) return
    // Forget ids that are no longer resting (filled or cancelled elsewhere).
    const resting = new Set(orders.map((x) => x.id))
    this.ownIds = this.ownIds.filter((id) => resting.has(id))
    const own = orders.filter((x) => this.ownIds.includes(x.id))
    const midBps = midExcluding(book, own)
    const tsSec = Math.floor(nowMs / 1000)
    this.base ??= { total, yes: pos.yes, no: pos.no }
    const netYes = pos.yes - pos.no
    const mark = midBps ?? this.state.lastMidBps
    const held = mark === null ? 0 : Math.floor((pos.yes - this.base.yes) * mark * MICRO_PER_BPS + (pos.no - this.base.no) * (MAX_PRICE_BPS - mark) * MICRO_PER_BPS)
    const pnlMicro = total - this.base.total + held
    const { state, decision } = this.strategy.step(this.state, { tsSec, midBps, netYes, pnlMicro })
    this.state = state
    this.dueAtMs = state.lastQuoteSec === null ? null : (state.lastQuoteSec + this.o.params.rebalanceIntervalSec) * 1000
    this.emit({ midBps: midBps ?? state.lastMidBps, netYes, pnlMicro, lastTickAtMs: nowMs, lateByMs: Math.max(0, lateByMs), quotes: this.quotesView(own) })
    if (decision.kind === "hold") {
      if (state.lastMidBps === null) this.emit({ state: "waiting", reason: REASONS.no_mid! })
      return
    }
    await this.act(decision, nowMs)
  }

  private quotesView(own: ReadonlyArray<RestingOrderView>): BotStatus["quotes"] {
    return own.map((x) => ({ id: x.id, side: x.side, outcome: x.outcome, priceBps: x.price, size: x.remaining }))
  }

  private async act(decision: Exclude<Decision, { kind: "hold" }>, nowMs: number): Promise<void> {
    await this.cancelOwn()
    if (decision.kind === "stop") {
      this.running = false
      this.emit({ state: "stopped_limit", reason: REASONS[decision.reason]!, quotes: [], nextTickAtMs: null })
      return
    }
    // Shares freed by the cancels may be sold again (quotes.ts sells inventory before minting more).
    const pos = await this.o.api.position(this.o.marketId)
    const free = { yes: pos.yes - (pos.yes_locked ?? 0), no: pos.no - (pos.no_locked ?? 0) }
    let rejected = 0
    let closed: string | null = null
    for (const spec of quotesToOrders(decision.quotes, free)) {
      if (!this.running) return
      const r = await this.o.api.place(this.o.marketId, spec)
      if (r.ok && !r.queued) {
        this.ownIds.push(r.orderId)
        this.ownSpecs.set(r.orderId, spec)
      } else if (r.ok) {
        closed = "trading_paused"
        break
      } else if (r.code === "trading_disabled") {
        closed = "trading_disabled"
        break
      } else rejected++
    }
    this.o.onOrderIds?.(this.ownIds)
    const quotes = this.ownIds.flatMap((id) => {
      const spec = this.ownSpecs.get(id)
      return spec === undefined ? [] : [{ ...spec, id }]
    })
    if (closed !== null) {
      // Nothing quoted: re-quote at the very next chance instead of a full interval later.
      this.state = this.state === null ? null : { ...this.state, lastQuoteSec: null }
      this.dueAtMs = null
      this.emit({ state: "waiting", reason: REASONS[closed]!, quotes, rejected: this.status.rejected + rejected })
      return
    }
    this.emit({
      state: decision.kind === "pause" ? "paused" : "quoting",
      reason: decision.kind === "pause" ? REASONS[decision.reason]! : null,
      quotes,
      rejected: this.status.rejected + rejected,
      requotesAtMs: [...this.status.requotesAtMs, nowMs].slice(-64)
    })
  }

  private async cancelOwn(): Promise<void> {
    const ids = this.ownIds
    this.ownIds = []
    for (const id of ids) {
      if (!(await this.o.api.cancel(id))) this.ownIds.push(id)
      this.ownSpecs.delete(id)
    }
    this.o.onOrderIds?.(this.ownIds)
  }
}
