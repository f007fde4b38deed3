// The exchange: the engine plus the catalogue, builders, trading surfaces and
// history projections, advanced only by journal records. `submit` stamps a
// command with the next sequence number and the Clock's time, appends it to
// the journal and applies it; `apply` alone is what replay uses.
import { Engine } from "../engine/engine.ts"
import type { Command as EngineCommand, EngineEvent } from "../engine/types.ts"
import { HANDLERS } from "./apply/table.ts"
import { Catalog, type EventRecord } from "./catalog.ts"
import type { ChainGuardPort } from "./chain-guard-port.ts"
import type { JournalRecord, LpState, OrderBody, ServiceCommand, TradingState } from "./commands.ts"
import { DepositBook } from "./deposits.ts"
import { History, tradeFromFill } from "./history.ts"
import { LpBook, type LpRefusal } from "./lp-book.ts"
import { type PaidDay, RewardsBook } from "./rewards-book.ts"
import { WithdrawalBook } from "./withdrawals.ts"
import { BusinessClock } from "../time/business-clock.ts"

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
  chainGuard: ChainGuardPort | null = null
  private readonly listeners: Listener[] = []
  /** The newest append's promise: the journal acknowledges in order, so it covers every earlier one. */
  private lastAppend: Promise<void> = Promise.resolve()
  /** Business time from the wall and monotonic clocks (src/time/business-clock.ts); read in `journalMs` only. */
  private readonly clock: BusinessClock

  constructor(
    /** The wall clock: enters business time through `journalMs` only (docs/time.md). */
    wallMs: () => number,
    private readonly journal: JournalSink,
    /**
     * The monotonic clock, on which a wall-clock step is slewed away (docs/time.md). A live or
     * simulated process passes its own; absent, the wall clock stands in for it (a clock that is
     * never stepped: replays, tests with one clock).
     */
    monoMs: () => number = wallMs,
    /** The trade and candle projections; a backtest, which never reads them, passes `NO_HISTORY`. */
    readonly history: History = new History()
  ) {
    this.clock = new BusinessClock(wallMs, monoMs)
  }

  onApply(listener: Listener): void {
    this.listeners.push(listener)
  }

  /**
   * Business time now: what the next record would be stamped with — the wall clock while it
   * keeps pace with the monotonic clock; across a step it runs on with the elapsed time and is
   * slewed back (src/time/business-clock.ts), so it never goes back, stands still or jumps. A
   * new process starts at the later of its last record's time and the wall clock.
   */
  journalMs(): number {
    return this.clock.readMs(this.tsSec * 1000)
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
    // One handler per command kind (src/service/apply/table.ts); an unknown kind changes nothing.
    // `as never`: TypeScript cannot pair a looked-up handler with its own command type; the table's type does.
    const result = HANDLERS[record.cmd.type]?.(this, record.cmd as never, []) as ApplyResult
    for (const l of this.listeners) l(record, result)
    return result
  }

  builderByKey(apiKey: string): BuilderRecord | undefined {
    const user = this.builderUserByKey.get(apiKey)
    return user === undefined ? undefined : this.builders.get(user)
  }

  /** For the LP book: a bot's order cancelled inside the command being applied. */
  cancelOrder(user: string, orderId: number, into: EngineEvent[]): void {
    this.engineApplyStamped({ type: "cancel_order", seq: this.engine.lastSeq + 1, tsSec: this.tsSec, user, orderId }, into)
  }

  /** The engine applies `cmd` (sequenced and stamped here); fills reach the history and the LP book. For the command handlers. */
  engineApply(cmd: DistributiveOmit<EngineCommand, "seq" | "tsSec">, into: EngineEvent[]): EngineEvent[] {
    return this.engineApplyStamped({ ...cmd, seq: this.engine.lastSeq + 1, tsSec: this.tsSec } as EngineCommand, into)
  }

  /**
   * `engineApply` for a command the handler stamped itself (seq `engine.lastSeq + 1`, time
   * `tsSec`): the hot paths (placement, cancel) build their engine command once, as one
   * literal, instead of a copy and then a stamped copy.
   */
  engineApplyStamped(cmd: EngineCommand, into: EngineEvent[]): EngineEvent[] {
    const events = this.engine.apply(cmd)
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
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
