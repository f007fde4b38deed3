// The exchange: the engine plus the catalogue, builders, trading surfaces and
// history projections, advanced only by journal records. `submit` stamps a
// command with the next sequence number and the Clock's time, appends it to
// the journal and applies it; `apply` alone is what replay uses.
import type { ChainGuard } from "../chain/guard.ts"
import { Engine } from "../engine/engine.ts"
import type { Command as EngineCommand, EngineEvent } from "../engine/types.ts"
import { Catalog, type EventRecord } from "./catalog.ts"
import type { JournalRecord, LpState, OrderBody, ServiceCommand, TradingState } from "./commands.ts"
import { DepositBook, type DepositRecord, depositProblem } from "./deposits.ts"
import { History, tradeFromFill } from "./history.ts"
import { LpBook, type LpRefusal } from "./lp-book.ts"
import { type PaidDay, RewardsBook } from "./rewards-book.ts"
import { WithdrawalBook, withdrawalId } from "./withdrawals.ts"

export interface BuilderRecord {
  readonly user: string
  name: string
  readonly apiKey: string
  feeBps: number
  enabled: boolean
}

export interface ApplyResult {
  readonly events: EngineEvent[]
  /** Set when the command was refused before reaching the engine. */
  readonly refused?: "trading_disabled" | "event_exists" | "unknown_builder" | "wallet_already_linked" | "wallet_taken" | LpRefusal | "not_payable"
  /** Position in the pause queue when a placement was queued. */
  readonly queuedAt?: number
  readonly event?: EventRecord
  /** Set by a `pay_rewards` that paid its day. */
  readonly paid?: PaidDay
}

export type Listener = (record: JournalRecord, result: ApplyResult) => void

/** Where records go before their effects are acknowledged. `durable` resolves once they are safe. */
export interface JournalSink {
  append(record: JournalRecord): Promise<void>
}

export const memoryJournal = (): JournalSink & { readonly records: JournalRecord[] } => {
  const records: JournalRecord[] = []
  return {
    records,
    append: (record) => {
      records.push(record)
      return Promise.resolve()
    }
  }
}

export class Exchange {
  /** Replaced only when restoring from a snapshot. */
  engine = new Engine()
  readonly catalog = new Catalog()
  readonly history = new History()
  readonly builders = new Map<string, BuilderRecord>()
  readonly builderUserByKey = new Map<string, string>()
  trading: TradingState = "open"
  lp: LpState = "open"
  readonly queue: OrderBody[] = []
  /** user → linked EVM wallet, and back; one wallet per user, one user per wallet. */
  readonly walletOfUser = new Map<string, string>()
  readonly userOfWallet = new Map<string, string>()
  /** deposit address → wallet, for every address handed out (watched whether or not linked yet). */
  readonly watched = new Map<string, string>()
  readonly deposits = new DepositBook()
  readonly withdrawals = new WithdrawalBook()
  /** LP sessions, delegations and server-managed bots. Replaced only when restoring. */
  lpBook = new LpBook()
  /** The daily LP pool's accrual and payouts. Replaced only when restoring. */
  rewards = new RewardsBook()
  lastSeq = 0
  tsSec = 0
  /** Operational, not journaled: the chain side's guard, when one runs (the operator status route reads it). */
  chainGuard: Pick<ChainGuard, "status" | "resume"> | null = null
  private readonly listeners: Listener[] = []
  /** The newest append's promise: the journal acknowledges in order, so it covers every earlier one. */
  private lastAppend: Promise<void> = Promise.resolve()

  constructor(
    /** The wall clock: read in `journalMs` only, the one place it enters (docs/time.md). */
    private readonly wallMs: () => number,
    private readonly journal: JournalSink
  ) {}

  onApply(listener: Listener): void {
    this.listeners.push(listener)
  }

  /**
   * Business time now: what the next record would be stamped with — the wall clock, but
   * never earlier than the last record's time, so it never goes backwards. The wall
   * clock's one entry into the service (the wall-clock guard in test/determinism).
   */
  journalMs(): number {
    return Math.max(this.tsSec * 1000, this.wallMs()) // stamp: the wall clock enters business time here and nowhere else
  }

  journalSec(): number {
    return Math.floor(this.journalMs() / 1000)
  }

  /** Journal time in seconds (the name older callers use; see `journalSec`). */
  nowSec(): number {
    return this.journalSec()
  }

  /** Stamps, journals and applies a command; `durable` resolves when the journal has it. */
  submit(cmd: ServiceCommand): { result: ApplyResult; durable: Promise<void> } {
    const record: JournalRecord = { seq: this.lastSeq + 1, tsSec: this.journalSec(), cmd }
    const durable = this.journal.append(record)
    this.lastAppend = durable
    return { result: this.apply(record), durable }
  }

  /**
   * Resolves once every record submitted so far is durable (rejects if the journal failed).
   * Whatever acts outside the ledger on applied state — a payout on chain — waits for it, so
   * a crash can never leave the world changed by a record the journal lost.
   */
  durableSoFar(): Promise<void> {
    return this.lastAppend
  }

  apply(record: JournalRecord): ApplyResult {
    if (record.seq !== this.lastSeq + 1) throw new Error(`journal gap: record ${record.seq} after ${this.lastSeq}`)
    this.lastSeq = record.seq
    this.tsSec = record.tsSec
    const result = this.dispatch(record.cmd)
    for (const l of this.listeners) l(record, result)
    return result
  }

  builderByKey(apiKey: string): BuilderRecord | undefined {
    const user = this.builderUserByKey.get(apiKey)
    return user === undefined ? undefined : this.builders.get(user)
  }

  /** For the LP book: a bot's order cancelled inside the command being applied. */
  cancelOrder(user: string, orderId: number, into: EngineEvent[]): void {
    this.engineApply({ type: "cancel_order", user, orderId }, into)
  }

  private engineApply(cmd: DistributiveOmit<EngineCommand, "seq" | "tsSec">, into: EngineEvent[]): EngineEvent[] {
    const events = this.engine.apply({ ...cmd, seq: this.engine.lastSeq + 1, tsSec: this.tsSec } as EngineCommand)
    for (const ev of events) {
      if (ev.type === "fill") {
        const trade = tradeFromFill(ev)
        // `lastSeq` is the record being applied; the history skips records it was seeded with.
        this.history.record(trade, this.lastSeq)
        this.lpBook.onFill(ev)
        const found = this.catalog.market(ev.marketId)
        if (found !== undefined) found.event.volume += trade.size * trade.price * 100
      }
      into.push(ev)
    }
    return events
  }

  private dispatch(cmd: ServiceCommand): ApplyResult {
    const events: EngineEvent[] = []
    switch (cmd.type) {
      case "place_order": {
        // Bot orders never queue: a quote placed after a pause would be stale when it ran.
        if (this.trading === "closed" || (this.trading === "paused" && cmd.viaSession !== undefined)) return { events, refused: "trading_disabled" }
        if (this.trading === "paused") {
          this.queue.push(cmd.order)
          return { events, queuedAt: this.queue.length }
        }
        if (cmd.viaSession === undefined) {
          this.placeOrder(cmd.order, events)
          return { events }
        }
        // Session keys are the server's own (never handed out): their orders are bot orders,
        // accepted only while that bot runs, so a stop journaled first always wins.
        if (this.lpBook.runningBot(cmd.order.user)?.sessionPub !== cmd.viaSession) return { events, refused: "stale_bot" }
        this.placeOrder(cmd.order, events)
        const first = events[0]
        if (first?.type === "order_accepted" && this.engine.orders.get(first.orderId) !== undefined) {
          this.lpBook.trackOrder(first.user, cmd.viaSession, first.marketId, first.orderId)
        }
        return { events }
      }
      case "cancel_order":
        this.engineApply({ type: "cancel_order", user: cmd.user, orderId: cmd.orderId }, events)
        return { events }
      case "cancel_all":
        this.engineApply({ type: "cancel_all", user: cmd.user, ...(cmd.marketId === undefined ? {} : { marketId: cmd.marketId }) }, events)
        return { events }
      case "credit":
        this.engineApply({ type: "credit", user: cmd.user, amountMicro: cmd.amountMicro, ref: cmd.ref }, events)
        return { events }
      case "debit":
        this.engineApply(
          { type: "debit", user: cmd.user, amountMicro: cmd.amountMicro, withdrawNonce: cmd.withdrawNonce, ref: cmd.ref },
          events
        )
        return { events }
      case "create_event": {
        const event = this.catalog.build(cmd.event, this.tsSec, this.engine.defaultTakerFeeBps)
        if (event === null) return { events, refused: "event_exists" }
        this.catalog.add(event)
        for (const m of event.outcomes) this.engineApply({ type: "create_market", marketId: m.market_id, takerFeeBps: event.fee_bps }, events)
        return { events, event }
      }
      case "set_market_status":
        this.setMarketStatus(cmd.marketId, cmd.status, cmd.winningOutcome, events)
        return { events }
      case "set_fees":
        this.engineApply(
          {
            type: "set_fees",
            ...(cmd.marketId === undefined ? {} : { marketId: cmd.marketId }),
            ...(cmd.takerFeeBps === undefined ? {} : { takerFeeBps: cmd.takerFeeBps }),
            ...(cmd.makerRebateBps === undefined ? {} : { makerRebateBps: cmd.makerRebateBps })
          },
          events
        )
        return { events }
      case "register_builder": {
        const existing = this.builders.get(cmd.user)
        if (existing !== undefined) {
          existing.name = cmd.name
          return { events }
        }
        this.builders.set(cmd.user, { user: cmd.user, name: cmd.name, apiKey: cmd.apiKey, feeBps: 0, enabled: true })
        this.builderUserByKey.set(cmd.apiKey, cmd.user)
        this.engineApply({ type: "set_builder", apiKey: cmd.apiKey, wallet: cmd.user, feeBps: 0, enabled: true }, events)
        return { events }
      }
      case "set_builder_fee": {
        const b = this.builders.get(cmd.user)
        if (b === undefined) return { events, refused: "unknown_builder" }
        const applied = this.engineApply({ type: "set_builder", apiKey: b.apiKey, wallet: b.user, feeBps: cmd.feeBps, enabled: cmd.enabled }, events)
        if (applied[0]?.type === "builder_set") {
          b.feeBps = cmd.feeBps
          b.enabled = cmd.enabled
        }
        return { events }
      }
      case "set_trading": {
        this.trading = cmd.state
        // Orders queued during a pause run, in arrival order, once trading opens.
        if (cmd.state === "open") for (const order of this.queue.splice(0)) this.placeOrder(order, events)
        return { events }
      }
      case "set_lp":
        this.lp = cmd.state
        return { events }
      case "link_wallet": {
        const current = this.walletOfUser.get(cmd.user)
        if (current === cmd.wallet) return { events }
        if (current !== undefined) return { events, refused: "wallet_already_linked" }
        if (this.userOfWallet.has(cmd.wallet)) return { events, refused: "wallet_taken" }
        this.walletOfUser.set(cmd.user, cmd.wallet)
        this.userOfWallet.set(cmd.wallet, cmd.user)
        // Deposits that arrived before the link credit now, in the order they were seen.
        for (const d of this.deposits.ofWallet(cmd.wallet)) this.creditDeposit(d, events)
        return { events }
      }
      case "deposit_detected": {
        const key = `${cmd.txHash}:${cmd.logIndex}`
        const wallet = this.watched.get(cmd.address)
        if (this.deposits.byKey.has(key) || wallet === undefined) return { events }
        const problem = depositProblem(cmd, cmd.rules)
        this.deposits.add({
          key,
          wallet,
          address: cmd.address,
          token: cmd.token,
          amountMicro: cmd.amountMicro,
          txHash: cmd.txHash,
          blockNumber: cmd.blockNumber,
          blockHash: cmd.blockHash,
          stage: problem === null ? "detected" : "error",
          error: problem,
          seenAtSec: this.tsSec,
          updatedAtSec: this.tsSec,
          creditedAtSec: null,
          user: null,
          confirmed: false
        })
        return { events }
      }
      case "deposit_confirming": {
        const d = this.deposits.byKey.get(cmd.key)
        if (d !== undefined && d.stage === "detected") {
          d.stage = "confirming"
          d.updatedAtSec = this.tsSec
        }
        return { events }
      }
      case "deposit_reorged": {
        const d = this.deposits.byKey.get(cmd.key)
        if (d !== undefined && !d.confirmed) this.deposits.remove(cmd.key)
        return { events }
      }
      case "deposit_confirmed": {
        const d = this.deposits.byKey.get(cmd.key)
        if (d === undefined || d.confirmed || d.stage === "error") return { events }
        d.confirmed = true
        d.stage = "confirming"
        d.updatedAtSec = this.tsSec
        this.creditDeposit(d, events)
        return { events }
      }
      case "withdraw": {
        const id = withdrawalId(cmd.user, cmd.withdrawNonce)
        const applied = this.engineApply(
          { type: "debit", user: cmd.user, amountMicro: cmd.amountMicro, withdrawNonce: cmd.withdrawNonce, ref: `withdrawal:${id}` },
          events
        )
        if (applied[0]?.type === "debited") {
          this.withdrawals.add({
            id,
            user: cmd.user,
            recipient: cmd.recipient,
            amountMicro: cmd.amountMicro,
            nonce: cmd.withdrawNonce,
            status: "pending",
            txHash: null,
            createdAtSec: this.tsSec,
            confirmedAtSec: null,
            error: null
          })
        }
        return { events }
      }
      case "withdrawal_sent": {
        const w = this.withdrawals.byId.get(cmd.id)
        if (w !== undefined && (w.status === "pending" || w.status === "sent")) {
          w.status = "sent"
          w.txHash = cmd.txHash
        }
        return { events }
      }
      case "withdrawal_confirmed": {
        const w = this.withdrawals.byId.get(cmd.id)
        if (w !== undefined && w.status === "sent") {
          w.status = "confirmed"
          w.confirmedAtSec = this.tsSec
        }
        return { events }
      }
      case "withdrawal_refunded": {
        const w = this.withdrawals.byId.get(cmd.id)
        if (w === undefined || w.status === "confirmed" || w.status === "refunded") return { events }
        this.engineApply({ type: "credit", user: w.user, amountMicro: w.amountMicro, ref: `refund:${w.id}` }, events)
        w.status = "refunded"
        w.error = cmd.reason
        return { events }
      }
      case "watch_address":
        this.watched.set(cmd.address, cmd.wallet)
        return { events }
      case "lp_session_new":
      case "lp_delegate":
      case "lp_start":
      case "lp_stop":
      case "lp_bot_step": {
        const refused = this.lpBook.apply(cmd, this, events)
        return refused === null ? { events } : { events, refused }
      }
      case "set_rewards_config":
        this.rewards.setConfig(cmd.config, this.tsSec)
        return { events }
      case "rewards_sample":
        // One sampling interval of the books as they stand, credited to the journal's day.
        this.rewards.sample(this.tsSec, this.engine)
        return { events }
      case "pay_rewards": {
        const paid = this.rewards.pay(cmd.day, this.tsSec, (user, amountMicro, ref) =>
          this.engineApply({ type: "credit", user, amountMicro, ref }, events)[0]?.type === "credited"
        )
        return paid === null ? { events, refused: "not_payable" } : { events, paid }
      }
    }
  }

  /** One engine credit per confirmed deposit of a linked wallet; the stage makes it exactly once. */
  private creditDeposit(d: DepositRecord, events: EngineEvent[]): void {
    const user = this.userOfWallet.get(d.wallet)
    if (!d.confirmed || d.stage === "credited" || d.stage === "error" || user === undefined) return
    const applied = this.engineApply({ type: "credit", user, amountMicro: d.amountMicro, ref: `deposit:${d.key}` }, events)
    if (applied[0]?.type !== "credited") {
      d.stage = "error"
      d.error = `credit refused by the engine: ${applied[0]?.type === "rejected" ? applied[0].reason : "unknown"}`
    } else {
      d.stage = "credited"
      d.user = user
      d.creditedAtSec = this.tsSec
    }
    d.updatedAtSec = this.tsSec
  }

  private placeOrder(o: OrderBody, events: EngineEvent[]): void {
    this.engineApply({ type: "place_order", ...o }, events)
  }


  /** Status changes mirror into the catalogue; resolution redeems every holder at once. */
  private setMarketStatus(marketId: string, status: "active" | "halted" | "resolved", winning: "yes" | "no" | undefined, events: EngineEvent[]): void {
    const applied = this.engineApply(
      { type: "set_market_status", marketId, status, ...(winning === undefined ? {} : { winningOutcome: winning }) },
      events
    )
    if (applied[0]?.type !== "market_status") return
    const found = this.catalog.market(marketId)
    if (found !== undefined) {
      found.market.status = status
      found.market.winning_outcome = status === "resolved" ? winning! : null
    }
    if (status !== "resolved") return
    const holders = [...this.engine.accounts.values()]
      .filter((a) => {
        const p = a.positions.get(marketId)
        return p !== undefined && (p.yes > 0 || p.no > 0)
      })
      .map((a) => a.user)
      .sort()
    for (const user of holders) this.engineApply({ type: "redeem", user, marketId }, events)
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
