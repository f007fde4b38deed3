// The service's own exchange (src/service/exchange.ts, no journal) with the backtest's cast of
// accounts: our LP wallet running as a server-managed bot, one taker replaying the historical
// trades as IOCs, and a few background makers holding the rebuilt book. Every action is a
// journal record applied as replay applies one, so the service's rules (placement, the bot's
// session orders and steps, fees, rewards sampling and payouts) are the backtest's by
// construction. Fees are the data's schedule and the engine pays them as it does live: maker
// rebates come only out of the taker fees collected, never out of a pre-funded house. Stamps
// records (seq, tsSec, nonces), scans every result for our fills and rejections, and tracks
// our resting orders per market.
import type { Engine } from "../../src/engine/engine.ts"
import { MAX_PRICE_BPS, MICRO_PER_BPS } from "../../src/engine/money.ts"
import type { Account, Market, Order } from "../../src/engine/state.ts"
import type { EngineEvent, FillEvent, OrderType } from "../../src/engine/types.ts"
import type { OrderSpec } from "../../src/lp/quotes.ts"
import { type ActingDecision, botStepCommand, stepOrders } from "../../src/service/lp-bot-step.ts"
import type { Strategy, StrategyParams, StrategyState, StopReason } from "../../src/lp/strategy.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"
import { type ApplyResult, Exchange, type JournalSink, type Listener } from "../../src/service/exchange.ts"
import { LastTradeOnly } from "../../src/service/history.ts"

export const LP = "lp"
export const TAKER = "taker"
/** Our bot's session: a name, not a key — records are applied directly, so nothing is signed (see `startBot`). */
export const LP_SESSION = "backtest-session"
/** The bot's delegation never expires inside a backtest (journal seconds). */
const NEVER_SEC = Number.MAX_SAFE_INTEGER
/** Records are applied as replay applies them; anything that tried to journal one would be a defect. */
const NO_JOURNAL: JournalSink = {
  append: () => {
    throw new Error("backtest defect: the backtest applies records, it never journals one")
  }
}
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

export interface VenueFees {
  readonly makerRebateBps: number
  readonly takerFeeBps: number
  readonly takerFeeBpsByMarket: Readonly<Record<string, number>>
}

export interface VenueHooks {
  /** Every result's engine events (tests recount from them). */
  readonly tap?: (events: ReadonlyArray<EngineEvent>) => void
  /** Every journal record the backtest applied, with its result: the run as a journal (after `createMarkets`). */
  readonly onRecord?: Listener
}

/**
 * The data's markets, with their ids and taker fees, in an exchange's engine. No journal command
 * creates a market by id (create_event derives ids from slugs), so they enter the engine directly,
 * as a catalogue would put them there; each fee is explicit, so the records that follow replay the
 * same on any exchange these markets were created in.
 */
export const createMarkets = (x: Exchange, marketIds: ReadonlyArray<string>, fees: VenueFees): void => {
  for (const marketId of marketIds) {
    const out = x.engineApply({ type: "create_market", marketId, takerFeeBps: fees.takerFeeBpsByMarket[marketId] ?? fees.takerFeeBps }, [])
    if (out[0]?.type === "rejected") throw new Error(`backtest set-up rejected: create_market ${marketId} ${out[0].reason}`)
  }
}

export class Venue {
  /** The service's exchange; its clock is the backtest's (records carry their own time, `at`). */
  readonly exchange: Exchange
  readonly lpAccount: Account
  readonly bgMakers: ReadonlyArray<string>
  /** Our placements refused: by the engine (its reason) or by the service before it (`stale_bot`, `trading_disabled`). */
  readonly lpRejects = new Map<string, number>()
  /** Historical trades the engine refused (dust at the extremes): counted, not replayed. */
  tradeRejects = 0
  /** Background orders refused, e.g. post-only across one of our quotes (book-move fills off). */
  bgRejects = 0
  nowMs = 0
  cause: FillCause = CAUSE_TRADE
  private tsSec = 0
  private rr = 0
  private readonly tap: ((events: ReadonlyArray<EngineEvent>) => void) | undefined
  /** Our bot's journal seq of `lp_start`: names it in its steps, as the runner names a live bot. */
  private botStartedSeq = -1

  constructor(
    marketIds: ReadonlyArray<string>,
    capitalMicro: number,
    fees: VenueFees,
    bgMakers: number,
    /** Background orders may trade with ours (book-move fills); otherwise they are post-only. */
    private readonly bookMoveFills: boolean,
    private readonly onFill: FillSink,
    hooks: VenueHooks = {}
  ) {
    this.tap = hooks.tap
    // No trade lists or candles: the report keeps its own fills, and a day of trades held twice costs memory for nothing.
    this.exchange = new Exchange(() => this.nowMs, NO_JOURNAL, undefined, new LastTradeOnly())
    if (hooks.onRecord !== undefined) this.exchange.onApply(hooks.onRecord)
    createMarkets(this.exchange, marketIds, fees)
    this.bgMakers = Array.from({ length: bgMakers }, (_, i) => `bg${i}`)
    this.must({ type: "set_fees", makerRebateBps: fees.makerRebateBps, takerFeeBps: fees.takerFeeBps })
    for (const user of [TAKER, ...this.bgMakers]) this.must({ type: "credit", user, amountMicro: HOUSE_FUNDS_MICRO, ref: "backtest-funding" })
    this.must({ type: "credit", user: LP, amountMicro: capitalMicro, ref: "backtest-capital" })
    this.lpAccount = this.engine.accounts.get(LP)!
  }

  get engine(): Engine {
    return this.exchange.engine
  }

  /** Engine commands the exchange applied (each record's, and the cancels inside a bot step). */
  get commands(): number {
    return this.engine.lastSeq
  }

  at(ms: number): void {
    this.nowMs = ms
    this.tsSec = Math.floor(ms / 1000)
  }

  /**
   * Our LP wallet becomes a server-managed bot on `marketIds`, as `POST /v1/lp/start` makes one:
   * a session, its delegation and `lp_start`. The session is a name: records are applied
   * directly, so the signing the live runner does (src/workers/lp-bot-runner.ts) is not repeated here.
   */
  startBot(marketIds: ReadonlyArray<string>, strategy: Readonly<Record<string, string | number>>): void {
    this.must({ type: "lp_session_new", user: LP, sessionPub: LP_SESSION, counter: 1, expiresAtSec: NEVER_SEC })
    this.must({ type: "lp_delegate", user: LP, sessionPub: LP_SESSION, expiresAtSec: NEVER_SEC, nonce: 1 })
    this.must({ type: "lp_start", user: LP, sessionPub: LP_SESSION, marketIds, strategy })
    this.botStartedSeq = this.exchange.lastSeq
  }

  /** The next record's seq, which is also a nonce: strictly increasing overall, hence per user, which is all a nonce must be. */
  private nextSeq(): number {
    return this.exchange.lastSeq + 1
  }

  /**
   * Applies one record, stamped now, and scans its result for our fills and rejections. A
   * rejection is always the only event; fills come right after `order_accepted`, interleaved
   * only with self-trade cancels, so the scan stops at the first other event.
   */
  private run(ms: MarketState | null, cmd: ServiceCommand): ApplyResult {
    const result = this.exchange.apply({ seq: this.nextSeq(), tsSec: this.tsSec, cmd })
    const out = result.events
    if (this.tap !== undefined) this.tap(out)
    const first = out[0]
    if (first === undefined) return result // refused by the service, or e.g. a step with nothing left to cancel
    if (first.type === "rejected") {
      if (first.user === LP) this.lpRejects.set(first.reason, (this.lpRejects.get(first.reason) ?? 0) + 1)
      else if (first.user !== TAKER) this.bgRejects++
      return result
    }
    if (first.type !== "order_accepted") return result
    for (let i = 1; i < out.length; i++) {
      const ev = out[i]!
      if (ev.type === "fill") {
        if (ms !== null) ms.lastTradeBps = ev.yesPriceBps
        if (ev.makerUser === LP && ms !== null) this.onFill(ms, ev, this.cause)
      } else if (ev.type !== "order_cancelled" || ev.reason !== "stp") break
    }
    return result
  }

  /** A set-up record that must go through. */
  private must(cmd: ServiceCommand): void {
    const result = this.run(null, cmd)
    const first = result.events[0]
    if (result.refused !== undefined || first?.type === "rejected") throw new Error(`backtest set-up rejected: ${cmd.type} ${result.refused ?? (first?.type === "rejected" ? first.reason : "")}`)
  }

  /** A record of the rewards pool (configuration, sample, payout), applied now. */
  rewardsRecord(cmd: Extract<ServiceCommand, { type: "set_rewards_config" | "rewards_sample" | "pay_rewards" }>): ApplyResult {
    return this.run(null, cmd)
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
      type: "place_order",
      order: { user, marketId: ms.id, side: "buy", outcome: isBid ? "yes" : "no", priceBps: ownPrice, size: size < minSize ? minSize : size, orderType, nonce: this.nextSeq() }
    }).events
    this.cause = prev
    const first = out[0]
    return first?.type === "order_accepted" ? (this.engine.orders.get(first.orderId) ?? null) : null
  }

  /** A historical trade (or a response taker) as taker flow: buy YES @P (taker bought) or buy NO @(10000−P) (taker sold YES). */
  take(ms: MarketState, takerBuys: boolean, priceBps: number, size: number, cause: FillCause = CAUSE_TRADE): void {
    this.cause = cause
    const out = this.run(ms, {
      type: "place_order",
      order: {
        user: TAKER, marketId: ms.id, side: "buy", outcome: takerBuys ? "yes" : "no", priceBps: takerBuys ? priceBps : MAX_PRICE_BPS - priceBps,
        size, orderType: "ioc", nonce: this.nextSeq()
      }
    }).events
    if (out[0]?.type === "rejected" && cause === CAUSE_TRADE) this.tradeRejects++
  }

  /** One of our post-only orders, a session order of our bot as the runner places it; returns the resting engine order, or null when refused. */
  placeLp(ms: MarketState, spec: OrderSpec): Order | null {
    const result = this.run(ms, {
      type: "place_order",
      order: { user: LP, marketId: ms.id, side: spec.side, outcome: spec.outcome, priceBps: spec.priceBps, size: spec.size, orderType: "post_only", nonce: this.nextSeq() },
      viaSession: LP_SESSION
    })
    if (result.refused !== undefined) {
      this.lpRejects.set(result.refused, (this.lpRejects.get(result.refused) ?? 0) + 1)
      return null
    }
    const first = result.events[0]
    if (first?.type !== "order_accepted") return null
    const order = this.engine.orders.get(first.orderId)
    if (order === undefined) return null
    ms.ours.push(order)
    return order
  }

  cancel(ms: MarketState, order: Order): void {
    this.run(ms, { type: "cancel_order", user: order.account.user, orderId: order.id })
  }

  /**
   * Our bot's acting decision in one market, journaled as the bot runner journals it (`lp_bot_step`):
   * the exchange cancels the bot's orders there and keeps the strategy state; a stop ends the market.
   * Returns the orders the decision then places, sized as the runner sizes them (src/service/lp-bot-step.ts).
   */
  botStep(ms: MarketState, decision: ActingDecision, state: StrategyState): OrderSpec[] {
    const result = this.run(ms, botStepCommand(LP, this.botStartedSeq, ms.id, decision, state))
    if (result.refused !== undefined) throw new Error(`backtest defect: the exchange refused our bot's ${decision.kind} in ${ms.id}: ${result.refused}`)
    ms.ours = []
    const m = this.exchange.lpBook.runningBot(LP)?.markets.find((b) => b.marketId === ms.id)
    if (m === undefined) throw new Error(`backtest defect: our bot does not run in ${ms.id}`)
    return stepOrders(this.exchange, LP, m, decision)
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

/** Notional of a fill from our side, micro. */
export const ownNotionalMicro = (size: number, ownPriceBps: number): number => size * ownPriceBps * MICRO_PER_BPS
