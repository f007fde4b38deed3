// Shared helper for the engine unit tests: wraps an Engine, numbers commands
// (seq auto-increments, tsSec is the harness clock), and checks the ledger
// invariants after every command. Rejections are checked to leave the state
// untouched apart from the consumed sequence number and an order's spent nonce.
import { expect } from "vitest"
import {
  assertInvariants,
  Engine,
  snapshotHash,
  stateHash,
  takeSnapshot,
  type Command,
  type CommandType,
  type EngineEvent,
  type EngineSnapshot,
  type FillEvent,
  type OrderCancelledEvent,
  type OrderType,
  type Outcome,
  type PlaceOrder,
  type RejectReason,
  type Side,
  type Stp
} from "../../../src/engine/index.ts"
import { stateAfterRejection } from "../nonce-rule.ts"

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
/** A command without its sequence number and time: the harness stamps those. */
export type Input = DistributiveOmit<Command, "seq" | "tsSec">

export const T0 = 1_700_000_000
/** 100 USDC. */
export const USDC100 = 100_000_000
export const M = "m1"

export interface OrderSpec {
  readonly user: string
  readonly side: Side
  readonly outcome: Outcome
  readonly priceBps: number
  readonly size: number
  readonly marketId?: string
  readonly orderType?: OrderType
  /** Defaults to the user's last spent nonce + 1. */
  readonly nonce?: number
  readonly stp?: Stp
  readonly builderKey?: string
}

export interface Placed {
  readonly events: EngineEvent[]
  readonly orderId: number
  readonly fills: FillEvent[]
  readonly cancelled: OrderCancelledEvent[]
  readonly rested: number | null
}

export interface Bal {
  readonly available: number
  readonly locked: number
}

export interface Pos {
  readonly yes: number
  readonly no: number
  readonly yesLocked: number
  readonly noLocked: number
  readonly costYes: number
  readonly costNo: number
}

export const ZERO_POS: Pos = { yes: 0, no: 0, yesLocked: 0, noLocked: 0, costYes: 0, costNo: 0 }

/** The snapshot without the clock fields a rejection is allowed to move. */
export const stateWithoutClock = (e: Engine): Omit<EngineSnapshot, "lastSeq" | "lastTsSec"> => {
  const { lastSeq: _s, lastTsSec: _t, ...rest } = takeSnapshot(e)
  return rest
}

export const fillsOf = (events: ReadonlyArray<EngineEvent>): FillEvent[] =>
  events.filter((ev): ev is FillEvent => ev.type === "fill")

export const cancelsOf = (events: ReadonlyArray<EngineEvent>): OrderCancelledEvent[] =>
  events.filter((ev): ev is OrderCancelledEvent => ev.type === "order_cancelled")

export const typesOf = (events: ReadonlyArray<EngineEvent>): string[] => events.map((ev) => ev.type)

export class Harness {
  readonly engine = new Engine()
  /** The last sequence number this harness handed out (and the engine accepted). */
  seq = 0
  tsSec = T0

  /** Moves the harness clock forward. */
  advance(seconds: number): void {
    this.tsSec += seconds
  }

  /** Applies `input` as the next command; checks that it consumed its seq and that the invariants hold. */
  apply(input: Input): EngineEvent[] {
    const next = this.seq + 1
    const events = this.engine.apply({ ...input, seq: next, tsSec: this.tsSec } as Command)
    assertInvariants(this.engine)
    expect(this.engine.lastSeq, "every non-sequence/time rejection and every acceptance consumes seq").toBe(next)
    this.seq = next
    return events
  }

  /** Applies a raw command (own seq/tsSec), then checks invariants. Does not advance the harness counter. */
  raw(cmd: Command): EngineEvent[] {
    const events = this.engine.apply(cmd)
    assertInvariants(this.engine)
    return events
  }

  /** Applies and expects acceptance (no `rejected` event). */
  ok(input: Input): EngineEvent[] {
    const events = this.apply(input)
    expect(events.filter((ev) => ev.type === "rejected")).toEqual([])
    return events
  }

  /**
   * Applies and expects exactly one `rejected` event with `reason`. The state must be
   * unchanged except that lastSeq/lastTsSec moved: the hash after equals the hash of the
   * snapshot before with only those two fields replaced.
   */
  reject(input: Input, reason: RejectReason, user?: string | null): EngineEvent[] {
    const before = takeSnapshot(this.engine)
    const events = this.apply(input)
    const expectedUser = user !== undefined ? user : "user" in input && typeof input.user === "string" ? input.user : null
    expect(events).toEqual([{ type: "rejected", command: input.type as CommandType, reason, user: expectedUser }])
    const expected = snapshotHash({ ...stateAfterRejection(before, input, reason), lastSeq: before.lastSeq + 1, lastTsSec: this.tsSec })
    expect(stateHash(this.engine), "a rejection changes nothing but the consumed seq (and a place_order's spent nonce)").toBe(expected)
    return events
  }

  // ---- shortcuts -------------------------------------------------------------------------

  createMarket(marketId: string = M, takerFeeBps?: number): EngineEvent[] {
    return this.ok(takerFeeBps === undefined ? { type: "create_market", marketId } : { type: "create_market", marketId, takerFeeBps })
  }

  credit(user: string, amountMicro: number = USDC100, ref = "dep"): EngineEvent[] {
    return this.ok({ type: "credit", user, amountMicro, ref })
  }

  setRebate(makerRebateBps: number): EngineEvent[] {
    return this.ok({ type: "set_fees", makerRebateBps })
  }

  setBuilder(apiKey: string, wallet: string, feeBps: number, enabled = true): EngineEvent[] {
    return this.ok({ type: "set_builder", apiKey, wallet, feeBps, enabled })
  }

  orderInput(spec: OrderSpec): DistributiveOmit<PlaceOrder, "seq" | "tsSec"> {
    const nonce = spec.nonce ?? (this.engine.accounts.get(spec.user)?.lastNonce ?? 0) + 1
    const base = {
      type: "place_order" as const,
      user: spec.user,
      marketId: spec.marketId ?? M,
      side: spec.side,
      outcome: spec.outcome,
      priceBps: spec.priceBps,
      size: spec.size,
      orderType: spec.orderType ?? "gtc",
      nonce
    }
    return {
      ...base,
      ...(spec.stp === undefined ? {} : { stp: spec.stp }),
      ...(spec.builderKey === undefined ? {} : { builderKey: spec.builderKey })
    }
  }

  /** Places an order that must be accepted. */
  place(spec: OrderSpec): Placed {
    const events = this.ok(this.orderInput(spec))
    const accepted = events[0]
    if (accepted === undefined || accepted.type !== "order_accepted") throw new Error(`expected order_accepted, got ${JSON.stringify(events)}`)
    const rested = events.find((ev) => ev.type === "order_rested")
    return {
      events,
      orderId: accepted.orderId,
      fills: fillsOf(events),
      cancelled: cancelsOf(events),
      rested: rested !== undefined && rested.type === "order_rested" ? rested.remaining : null
    }
  }

  /** Places an order that must be rejected with `reason` (state unchanged). */
  rejectOrder(spec: OrderSpec, reason: RejectReason): EngineEvent[] {
    return this.reject(this.orderInput(spec), reason)
  }

  bal(user: string): Bal {
    const a = this.engine.accounts.get(user)
    return { available: a?.availableMicro ?? 0, locked: a?.lockedMicro ?? 0 }
  }

  pos(user: string, marketId: string = M): Pos {
    const p = this.engine.accounts.get(user)?.positions.get(marketId)
    if (p === undefined) return ZERO_POS
    return { yes: p.yes, no: p.no, yesLocked: p.yesLocked, noLocked: p.noLocked, costYes: p.costYesMicro, costNo: p.costNoMicro }
  }

  hasPosition(user: string, marketId: string = M): boolean {
    return this.engine.accounts.get(user)?.positions.has(marketId) ?? false
  }

  market(marketId: string = M): { yesSupply: number; noSupply: number; backingMicro: number; status: string } {
    const m = this.engine.markets.get(marketId)
    if (m === undefined) throw new Error(`no market ${marketId}`)
    return { yesSupply: m.yesSupply, noSupply: m.noSupply, backingMicro: m.backingMicro, status: m.status }
  }

  /** Ids of resting orders, ascending. */
  resting(): number[] {
    return [...this.engine.orders.values()].map((o) => o.id).sort((a, b) => a - b)
  }

  /** Best bid/ask in YES terms (-1 when empty). */
  top(marketId: string = M): { bid: number; ask: number } {
    const m = this.engine.markets.get(marketId)!
    return { bid: m.bids.best, ask: m.asks.best }
  }

  /** Remaining of a resting order, or null when it is not on the book. */
  remaining(orderId: number): number | null {
    return this.engine.orders.get(orderId)?.remaining ?? null
  }

  hash(): string {
    return stateHash(this.engine)
  }
}

/** A fresh harness with market `M` (taker fee `takerFeeBps`, default 0) and funded users. */
export const setup = (users: ReadonlyArray<string> = ["alice", "bob", "carol", "dave"], takerFeeBps?: number): Harness => {
  const h = new Harness()
  h.createMarket(M, takerFeeBps)
  for (const u of users) h.credit(u)
  return h
}

/**
 * Creates `size` YES/NO pairs at YES price `yesPriceBps`: `yesUser` rests a YES bid,
 * `noUser` takes it with an IOC NO buy (a mint). With a 0 taker fee and an empty `$fees`
 * the costs are exactly size·p·100 and size·(10000−p)·100.
 */
export const mint = (h: Harness, yesUser: string, noUser: string, size: number, yesPriceBps: number, marketId: string = M): void => {
  h.place({ user: yesUser, marketId, side: "buy", outcome: "yes", priceBps: yesPriceBps, size })
  const taken = h.place({ user: noUser, marketId, side: "buy", outcome: "no", priceBps: 10_000 - yesPriceBps, size, orderType: "ioc" })
  expect(taken.fills.map((f) => [f.kind, f.size])).toEqual([["mint", size]])
}
