// The pure, synchronous state machine: apply(command) → events.
// No I/O, no clock, no randomness: time and sequence arrive with the command.
import { applyCreateMarket, applyRedeem, applySetBuilder, applySetFees, applySetMarketStatus } from "./admin.ts"
import { applyCredit, applyDebit } from "./funds.ts"
import { DEFAULT_MAKER_REBATE_BPS, DEFAULT_TAKER_FEE_BPS, FEE_ACCOUNT } from "./money.ts"
import { applyCancelAll, applyCancelOrder, applyPlaceOrder } from "./orders.ts"
import { OrderTable } from "./order-table.ts"
import { Account, type Builder, type Market, Position } from "./state.ts"
import type { Command, CommandType, EngineEvent, RejectReason } from "./types.ts"

export class Engine {
  lastSeq = 0
  lastTsSec = 0
  nextOrderId = 1
  nextTradeId = 1
  makerRebateBps = DEFAULT_MAKER_REBATE_BPS
  defaultTakerFeeBps = DEFAULT_TAKER_FEE_BPS
  /** Credits minus debits: what all accounts and market backing must add up to. */
  netDepositsMicro = 0
  readonly accounts = new Map<string, Account>()
  readonly markets = new Map<string, Market>()
  readonly orders = new OrderTable()
  readonly builders = new Map<string, Builder>()

  // Per-command scratch: events out, and the accounts/positions it touched.
  out: EngineEvent[] = []
  tsSec = 0
  private epoch = 0
  // Reused scratch lists with explicit counts: truncating an array is a runtime call.
  private readonly touchedAccounts: Account[] = []
  private readonly touchedPositions: Position[] = []
  private touchedAccountCount = 0
  private touchedPositionCount = 0

  apply(cmd: Command): EngineEvent[] {
    this.out = []
    if (cmd === null || typeof cmd !== "object") return this.reject("create_market", "invalid_command", null)
    if (!Number.isSafeInteger(cmd.seq) || cmd.seq !== this.lastSeq + 1) return this.reject(cmd.type, "bad_sequence", null)
    if (!Number.isSafeInteger(cmd.tsSec) || cmd.tsSec < this.lastTsSec) return this.reject(cmd.type, "bad_time", null)
    this.lastSeq = cmd.seq
    this.lastTsSec = cmd.tsSec
    this.tsSec = cmd.tsSec
    this.epoch++
    switch (cmd.type) {
      case "place_order":
        applyPlaceOrder(this, cmd)
        break
      case "cancel_order":
        applyCancelOrder(this, cmd)
        break
      case "cancel_all":
        applyCancelAll(this, cmd)
        break
      case "credit":
        applyCredit(this, cmd)
        break
      case "debit":
        applyDebit(this, cmd)
        break
      case "create_market":
        applyCreateMarket(this, cmd)
        break
      case "set_market_status":
        applySetMarketStatus(this, cmd)
        break
      case "set_fees":
        applySetFees(this, cmd)
        break
      case "set_builder":
        applySetBuilder(this, cmd)
        break
      case "redeem":
        applyRedeem(this, cmd)
        break
      default:
        this.reject((cmd as { type: CommandType }).type, "invalid_command", null)
    }
    this.flushTouched()
    return this.out
  }

  reject(command: CommandType, reason: RejectReason, user: string | null): EngineEvent[] {
    this.out.push({ type: "rejected", command, reason, user })
    return this.out
  }

  account(user: string): Account {
    let acct = this.accounts.get(user)
    if (acct === undefined) {
      acct = new Account(user)
      this.accounts.set(user, acct)
    }
    return acct
  }

  feeAccount(): Account {
    return this.account(FEE_ACCOUNT)
  }

  position(acct: Account, marketId: string): Position {
    let pos = acct.positions.get(marketId)
    if (pos === undefined) {
      pos = new Position(acct.user, marketId)
      acct.positions.set(marketId, pos)
    }
    return pos
  }

  touch(acct: Account): void {
    if (acct.touchEpoch !== this.epoch) {
      acct.touchEpoch = this.epoch
      this.touchedAccounts[this.touchedAccountCount++] = acct
    }
  }

  touchPosition(pos: Position): void {
    if (pos.touchEpoch !== this.epoch) {
      pos.touchEpoch = this.epoch
      this.touchedPositions[this.touchedPositionCount++] = pos
    }
  }

  /** Each touched account and position reports its new state once, in first-touch order. */
  private flushTouched(): void {
    const accts = this.touchedAccounts
    for (let i = 0; i < this.touchedAccountCount; i++) {
      const a = accts[i]!
      this.out.push({ type: "balance", user: a.user, availableMicro: a.availableMicro, lockedMicro: a.lockedMicro })
    }
    this.touchedAccountCount = 0
    const positions = this.touchedPositions
    for (let i = 0; i < this.touchedPositionCount; i++) {
      const p = positions[i]!
      this.out.push({
        type: "position",
        user: p.user,
        marketId: p.marketId,
        yes: p.yes,
        no: p.no,
        yesLocked: p.yesLocked,
        noLocked: p.noLocked,
        costYesMicro: p.costYesMicro,
        costNoMicro: p.costNoMicro
      })
      // An emptied position leaves no trace in state, so snapshots stay canonical.
      if (p.isEmpty()) {
        this.accounts.get(p.user)?.positions.delete(p.marketId)
        p.live = false
      }
    }
    this.touchedPositionCount = 0
  }
}
