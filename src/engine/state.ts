// Mutable engine state records. Plain classes with fixed shapes so V8 keeps
// them monomorphic on the hot path; only the engine mutates them.
import { BookSide } from "./book.ts"
import type { MarketStatus, Outcome, OrderType, Side, Stp } from "./types.ts"

export class Position {
  yes = 0
  no = 0
  /** Shares held back by resting sell orders. */
  yesLocked = 0
  noLocked = 0
  costYesMicro = 0
  costNoMicro = 0
  touchEpoch = 0
  /** False once dropped from its account (emptied); orders caching it look it up again. */
  live = true
  constructor(
    readonly user: string,
    readonly marketId: string
  ) {}

  isEmpty(): boolean {
    return this.yes === 0 && this.no === 0 && this.costYesMicro === 0 && this.costNoMicro === 0
  }
}

export class Account {
  availableMicro = 0
  lockedMicro = 0
  lastNonce = 0
  lastWithdrawNonce = 0
  readonly positions = new Map<string, Position>()
  /** Head/tail of this user's resting orders, oldest first. */
  ordersHead: Order | null = null
  ordersTail: Order | null = null
  openOrders = 0
  touchEpoch = 0
  constructor(readonly user: string) {}

  /** Appends a resting order to this owner's list (oldest first). */
  linkOrder(order: Order): void {
    if (this.ordersTail === null) this.ordersHead = order
    else {
      this.ordersTail.unext = order
      order.uprev = this.ordersTail
    }
    this.ordersTail = order
    this.openOrders++
  }

  unlinkOrder(order: Order): void {
    if (order.uprev === null) this.ordersHead = order.unext
    else order.uprev.unext = order.unext
    if (order.unext === null) this.ordersTail = order.uprev
    else order.unext.uprev = order.uprev
    order.uprev = null
    order.unext = null
    this.openOrders--
  }
}

export class Builder {
  constructor(
    readonly apiKey: string,
    public wallet: string,
    public feeBps: number,
    public enabled: boolean
  ) {}
}

export class Market {
  status: MarketStatus = "active"
  winningOutcome: Outcome | null = null
  yesSupply = 0
  noSupply = 0
  /** Collateral behind outstanding YES/NO pairs: one contract's payout per pair. */
  backingMicro = 0
  readonly bids = new BookSide(true)
  readonly asks = new BookSide(false)
  constructor(
    readonly id: string,
    public takerFeeBps: number
  ) {}
}

export class Order {
  remaining: number
  // Price-level FIFO links.
  prev: Order | null = null
  next: Order | null = null
  // Owner's open-order list links.
  uprev: Order | null = null
  unext: Order | null = null
  /** Cached position of (owner, market), re-fetched when it is no longer live. */
  pos: Position | null = null
  constructor(
    readonly id: number,
    readonly account: Account,
    readonly market: Market,
    readonly side: Side,
    readonly outcome: Outcome,
    /** Limit price in the order's own outcome terms. */
    readonly priceBps: number,
    /** Limit price in YES terms: where it sits in the book. */
    readonly yesPriceBps: number,
    readonly isBid: boolean,
    readonly size: number,
    readonly orderType: OrderType,
    readonly stp: Stp,
    readonly nonce: number,
    readonly builderKey: string | null,
    /** Builder wallet and fee snapshotted at placement so the lock stays exact. */
    readonly builderWallet: string | null,
    readonly builderFeeBps: number,
    /** Cash locked per remaining contract (0 for sells, which lock shares). */
    public lockPerContractMicro: number,
    readonly createdAtSec: number
  ) {
    this.remaining = size
  }
}
