// The real engine (src/engine) with the backtest's cast of accounts: our LP wallet, one
// taker replaying the historical trades as IOCs, and a few background makers holding the
// rebuilt book. Fees are the data's schedule and the engine pays them as it does live:
// maker rebates come only out of the taker fees collected, never out of a pre-funded house. Wraps command stamping (seq, tsSec, nonces), scans every result
// for our fills and rejections, and tracks our resting orders per market.
import { Engine } from "../../src/engine/engine.ts"
import { MAX_PRICE_BPS, MICRO_PER_BPS } from "../../src/engine/money.ts"
import type { Account, Market, Order } from "../../src/engine/state.ts"
import type { Command, EngineEvent, FillEvent, OrderType, RejectReason } from "../../src/engine/types.ts"
import type { OrderSpec } from "../../src/lp/quotes.ts"
import type { Strategy, StrategyParams, StrategyState, StopReason } from "../../src/lp/strategy.ts"

export const LP = "lp"
export const TAKER = "taker"
/** Funding for the accounts that replay history: 10^8 USDC each, far beyond a day of flow, and the ten of them stay under 2^53 so the ledger sums exactly. */
const HOUSE_FUNDS_MICRO = 100_000_000_000_000

/** Why one of our orders filled: a historical trade, the rebuilt book moving through our price, or a taker the response model sent (response/flow.ts). */
export const CAUSE_TRADE = 0
export const CAUSE_BOOK = 1
export const CAUSE_RESPONSE = 2
export type FillCause = typeof CAUSE_TRADE | typeof CAUSE_BOOK | typeof CAUSE_RESPONSE

/** Everything the backtest keeps per market: book tops, our orders, our accounting, the strategy. */
export class MarketState {
  bidTop = -1
  askTop = -1
  /** bidTop + askTop once both are known (mid in half-bps, so .5 mids stay exact), else the last such value or -1. */
  mid2 = -1
  /** Our resting orders here (engine objects); filled ones are skipped and pruned at the next re-quote. */
  ours: Order[] = []
  yes = 0
  no = 0
  /** Cash in minus cash out from our fills here, rebates included. */
  cashFlowMicro = 0
  rebatesMicro = 0
  volumeMicro = 0
  fills = 0
  filledContracts = 0
  quotedContracts = 0
  ordersPlaced = 0
  /** YES price of the market's last trade (anyone's), -1 before the first: the live bot's mid when a side is empty. */
  lastTradeBps = -1
  /** Marked value of yes/no at mid2. */
  markMicro = 0
  // Strategy driving.
  state: StrategyState
  obsMid2 = -1
  obsNetYes = 0
  obsPnlMicro = 0
  /** The last non-null mid the strategy has seen (its own `lastMidBps`). */
  seenMid2 = -1
  timerMs = Number.POSITIVE_INFINITY
  pausedSinceMs = -1
  pausedMs = 0
  /** Each pause, [from, to) in ms: the report's exact paused spans. */
  readonly pauseSpansMs: Array<[number, number]> = []
  pauses = 0
  requotes = 0
  stoppedAtMs = -1
  stopReason: StopReason | null = null
  /** Our strategy quotes here (false: replayed for the book and the rewards split only). */
  quoting = true
  /** The background book follows the tape's order-level events (exact queue), not its snapshots. */
  orderLevel = false
  /** ... and the tape has every order's arrival: the order flow is replayed, its trades are not. */
  orderFlow = false

  constructor(
    readonly idx: number,
    readonly id: string,
    readonly market: Market,
    readonly tickBps: number,
    readonly snapshotMode: boolean,
    readonly depthBase: number,
    readonly params: StrategyParams,
    readonly strategy: Strategy
  ) {
    this.state = strategy.init(0)
  }

  get netYes(): number {
    return this.yes - this.no
  }

  /** PnL since start at the current mark: what the strategy's stop-loss sees. */
  get pnlMicro(): number {
    return this.cashFlowMicro + this.markMicro
  }
}

export type FillSink = (ms: MarketState, ev: FillEvent, cause: FillCause) => void

export class Venue {
  readonly engine = new Engine()
  readonly lpAccount: Account
  readonly bgMakers: ReadonlyArray<string>
  readonly lpRejects = new Map<RejectReason, number>()
  /** Historical trades the engine refused (dust at the extremes): counted, not replayed. */
  tradeRejects = 0
  /** Background orders refused, e.g. post-only across one of our quotes (book-move fills off). */
  bgRejects = 0
  commands = 0
  nowMs = 0
  cause: FillCause = CAUSE_TRADE
  private seq = 0
  private tsSec = 0
  private rr = 0

  constructor(
    marketIds: ReadonlyArray<string>,
    capitalMicro: number,
    fees: { readonly makerRebateBps: number; readonly takerFeeBps: number; readonly takerFeeBpsByMarket: Readonly<Record<string, number>> },
    bgMakers: number,
    /** Background orders may trade with ours (book-move fills); otherwise they are post-only. */
    private readonly bookMoveFills: boolean,
    private readonly onFill: FillSink,
    private readonly tap: ((events: ReadonlyArray<EngineEvent>) => void) | undefined
  ) {
    this.bgMakers = Array.from({ length: bgMakers }, (_, i) => `bg${i}`)
    this.must({ type: "set_fees", makerRebateBps: fees.makerRebateBps, takerFeeBps: fees.takerFeeBps })
    for (const marketId of marketIds) {
      const fee = fees.takerFeeBpsByMarket[marketId]
      this.must(fee === undefined ? { type: "create_market", marketId } : { type: "create_market", marketId, takerFeeBps: fee })
    }
    for (const user of [TAKER, ...this.bgMakers]) this.must({ type: "credit", user, amountMicro: HOUSE_FUNDS_MICRO, ref: "backtest-funding" })
    this.must({ type: "credit", user: LP, amountMicro: capitalMicro, ref: "backtest-capital" })
    this.lpAccount = this.engine.accounts.get(LP)!
  }

  at(ms: number): void {
    this.nowMs = ms
    this.tsSec = Math.floor(ms / 1000)
  }

  /** The command's own seq: strictly increasing overall, hence per user, which is all a nonce must be. */
  private nonce(): number {
    return this.seq
  }

  /** The next command sequence number; commands are built as literals at each call site (one shape each, no spread). */
  private nextSeq(): number {
    this.commands++
    return ++this.seq
  }

  /**
   * Applies a stamped command and scans its result for our fills and rejections. A rejection
   * is always the only event; fills come right after `order_accepted`, interleaved only with
   * self-trade cancels, so the scan stops at the first other event.
   */
  private run(ms: MarketState | null, cmd: Command): EngineEvent[] {
    const out = this.engine.apply(cmd)
    if (this.tap !== undefined) this.tap(out)
    const first = out[0]
    if (first === undefined) return out // e.g. cancel_all with nothing left to cancel
    if (first.type === "rejected") {
      if (first.user === LP) this.lpRejects.set(first.reason, (this.lpRejects.get(first.reason) ?? 0) + 1)
      else if (first.user !== TAKER) this.bgRejects++
      return out
    }
    if (first.type !== "order_accepted") return out
    for (let i = 1; i < out.length; i++) {
      const ev = out[i]!
      if (ev.type === "fill") {
        if (ms !== null) ms.lastTradeBps = ev.yesPriceBps
        if (ev.makerUser === LP && ms !== null) this.onFill(ms, ev, this.cause)
      } else if (ev.type !== "order_cancelled" || ev.reason !== "stp") break
    }
    return out
  }

  private must(cmd: DistributiveOmit<Command, "seq" | "tsSec">): void {
    const out = this.run(null, { ...cmd, seq: this.nextSeq(), tsSec: this.tsSec } as Command)
    if (out[0]?.type === "rejected") throw new Error(`backtest set-up rejected: ${cmd.type} ${out[0].reason}`)
  }

  /**
   * A background maker order: a bid is buy YES @p, an ask buy NO @(10000−p), so no maker needs
   * shares. Post-only unless book-move fills are on (then gtc: it trades with any of our orders it crosses).
   */
  placeBg(ms: MarketState, isBid: boolean, yesPriceBps: number, size: number, maker?: string): Order | null {
    const user = maker ?? this.bgMakers[this.rr++ % this.bgMakers.length]!
    return this.placeAs(ms, user, isBid, yesPriceBps, size, this.bookMoveFills ? "gtc" : "post_only", CAUSE_BOOK)
  }

  /**
   * An order of `user` as a buy of YES (bid) or NO (ask), of any type, so no account needs
   * shares; a fill of ours it makes counts as `cause`. Returns the resting order, or null.
   */
  placeAs(ms: MarketState, user: string, isBid: boolean, yesPriceBps: number, size: number, orderType: OrderType, cause: FillCause): Order | null {
    const ownPrice = isBid ? yesPriceBps : MAX_PRICE_BPS - yesPriceBps
    const minSize = Math.ceil(100 / ownPrice)
    const prev = this.cause
    this.cause = cause
    const out = this.run(ms, {
      type: "place_order", seq: this.nextSeq(), tsSec: this.tsSec, user, marketId: ms.id, side: "buy", outcome: isBid ? "yes" : "no",
      priceBps: ownPrice, size: size < minSize ? minSize : size, orderType, nonce: this.nonce()
    })
    this.cause = prev
    const first = out[0]
    return first?.type === "order_accepted" ? (this.engine.orders.get(first.orderId) ?? null) : null
  }

  /** A historical trade (or a response taker) as taker flow: buy YES @P (taker bought) or buy NO @(10000−P) (taker sold YES). */
  take(ms: MarketState, takerBuys: boolean, priceBps: number, size: number, cause: FillCause = CAUSE_TRADE): void {
    this.cause = cause
    const out = this.run(ms, {
      type: "place_order", seq: this.nextSeq(), tsSec: this.tsSec, user: TAKER, marketId: ms.id, side: "buy", outcome: takerBuys ? "yes" : "no",
      priceBps: takerBuys ? priceBps : MAX_PRICE_BPS - priceBps, size, orderType: "ioc", nonce: this.nonce()
    })
    if (out[0]!.type === "rejected" && cause === CAUSE_TRADE) this.tradeRejects++
  }

  /** One of our post-only orders; returns the resting engine order, or null when rejected. */
  placeLp(ms: MarketState, spec: OrderSpec): Order | null {
    const out = this.run(ms, {
      type: "place_order", seq: this.nextSeq(), tsSec: this.tsSec, user: LP, marketId: ms.id, side: spec.side, outcome: spec.outcome,
      priceBps: spec.priceBps, size: spec.size, orderType: "post_only", nonce: this.nonce()
    })
    const first = out[0]!
    if (first.type !== "order_accepted") return null
    const order = this.engine.orders.get(first.orderId)
    if (order === undefined) return null
    ms.ours.push(order)
    return order
  }

  cancel(ms: MarketState, order: Order): void {
    this.run(ms, { type: "cancel_order", seq: this.nextSeq(), tsSec: this.tsSec, user: order.account.user, orderId: order.id })
  }

  cancelAllLp(ms: MarketState): void {
    if (ms.ours.some((o) => o.remaining > 0)) this.run(ms, { type: "cancel_all", seq: this.nextSeq(), tsSec: this.tsSec, user: LP, marketId: ms.id })
    ms.ours = []
  }

  /** Credits a user; false when the engine refused (the rewards book's `Credit`). */
  credit(user: string, amountMicro: number, ref: string): boolean {
    return this.run(null, { type: "credit", seq: this.nextSeq(), tsSec: this.tsSec, user, amountMicro, ref })[0]?.type === "credited"
  }

  /** Our resting contracts at a YES price on one side. */
  ourAt(ms: MarketState, isBid: boolean, yesPriceBps: number): number {
    let size = 0
    const ours = ms.ours
    for (let i = 0; i < ours.length; i++) {
      const o = ours[i]!
      if (o.remaining > 0 && o.isBid === isBid && o.yesPriceBps === yesPriceBps) size += o.remaining
    }
    return size
  }

  /** Background contracts resting at a YES price on one side. */
  bgAt(ms: MarketState, isBid: boolean, yesPriceBps: number): number {
    const level = (isBid ? ms.market.bids : ms.market.asks).levels[yesPriceBps]
    if (level === undefined || level.size === 0) return 0
    return level.size - this.ourAt(ms, isBid, yesPriceBps)
  }
}

/** Omit over each member of a union, so command literals keep their discriminant. */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** Notional of a fill from our side, micro. */
export const ownNotionalMicro = (size: number, ownPriceBps: number): number => size * ownPriceBps * MICRO_PER_BPS
