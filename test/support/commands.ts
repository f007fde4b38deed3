// fast-check generators of engine command sequences. Commands are generated
// abstractly (indexes instead of ids, "fresh"/"stale" nonces) and made concrete
// by a driver, so shrinking keeps sequences meaningful.
import fc from "fast-check"
import type { Command, Outcome, OrderType, Side, Stp } from "../../src/engine/types.ts"

export const USERS = ["u0", "u1", "u2", "u3", "u4"] as const
export const MARKETS = ["m0", "m1", "m2"] as const
export const BUILDERS = ["b0", "b1"] as const

export type Abstract =
  | { k: "place"; user: number; market: number; side: Side; outcome: Outcome; price: number; size: number;
      orderType: OrderType; stp: Stp | undefined; staleNonce: boolean; builder: number | undefined }
  | { k: "cancel"; user: number; order: number }
  | { k: "cancelAll"; user: number; market: number | undefined }
  | { k: "credit"; user: number; amount: number }
  | { k: "debit"; user: number; amount: number; staleNonce: boolean }
  | { k: "status"; market: number; status: "active" | "halted" | "resolved"; winning: Outcome }
  | { k: "fees"; market: number | undefined; fee: number | undefined; rebate: number | undefined }
  | { k: "builder"; builder: number; wallet: number; fee: number; enabled: boolean }
  | { k: "redeem"; user: number; market: number }
  | { k: "badSeq" }

const price = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 4_000, max: 6_000 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 10_000 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, 99, 100, 9_900, 9_999, 10_000) }
)
const size = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 40 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 2_000 }) })
const user = fc.integer({ min: 0, max: USERS.length - 1 })
const market = fc.integer({ min: 0, max: MARKETS.length - 1 })

const place = fc.record({
  k: fc.constant("place" as const),
  user,
  market,
  side: fc.constantFrom<Side>("buy", "sell"),
  outcome: fc.constantFrom<Outcome>("yes", "no"),
  price,
  size,
  orderType: fc.constantFrom<OrderType>("gtc", "gtc", "gtc", "post_only", "ioc", "fok"),
  stp: fc.option(fc.constantFrom<Stp>("cancel_resting", "cancel_taking", "cancel_both"), { nil: undefined }),
  // One placement in ten reuses an old nonce.
  staleNonce: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  // Mostly no builder; sometimes a registered one; rarely a key nobody registered.
  builder: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: BUILDERS.length - 1 }) },
    { weight: 1, arbitrary: fc.constant(BUILDERS.length) }
  )
})

/** One abstract command; placement dominates so books fill up and cross. */
export const abstractCommand = (opts: { statusWeight?: number } = {}): fc.Arbitrary<Abstract> =>
  fc.oneof(
    { weight: 30, arbitrary: place },
    { weight: 5, arbitrary: fc.record({ k: fc.constant("cancel" as const), user, order: fc.nat({ max: 400 }) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("cancelAll" as const), user, market: fc.option(market, { nil: undefined }) }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant("credit" as const), user, amount: fc.integer({ min: 1, max: 50_000_000 }) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("debit" as const), user, amount: fc.integer({ min: 1, max: 30_000_000 }), staleNonce: fc.boolean() }) },
    {
      weight: opts.statusWeight ?? 1,
      arbitrary: fc.record({
        k: fc.constant("status" as const),
        market,
        status: fc.constantFrom("active" as const, "halted" as const, "active" as const, "resolved" as const),
        winning: fc.constantFrom<Outcome>("yes", "no")
      })
    },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant("fees" as const),
        market: fc.option(market, { nil: undefined }),
        fee: fc.option(fc.integer({ min: 0, max: 1_100 }), { nil: undefined }),
        rebate: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined })
      })
    },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant("builder" as const),
        builder: fc.integer({ min: 0, max: BUILDERS.length - 1 }),
        wallet: user,
        fee: fc.integer({ min: 0, max: 300 }),
        enabled: fc.boolean()
      })
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("redeem" as const), user, market }) },
    { weight: 1, arbitrary: fc.constant({ k: "badSeq" as const }) }
  )

export const abstractCommands = (maxLength = 80, opts: { statusWeight?: number } = {}): fc.Arbitrary<Abstract[]> =>
  fc.array(abstractCommand(opts), { minLength: 1, maxLength, size: "max" })

/** What the driver may look at to aim sells and redemptions at users who hold shares. */
export interface HolderView {
  /** Users holding shares in a market, in a deterministic order, with their unlocked shares. */
  holders(marketId: string): Array<{ user: string; yesFree: number; noFree: number }>
}

/** Turns abstract commands into concrete ones, with a preamble of markets and deposits. */
export class Driver {
  private seq = 0
  private tsSec = 1_700_000_000
  private nonce = 0
  private withdrawNonce = 0
  private maxOrderId = 0

  preamble(fees: ReadonlyArray<number> = [0, 10, 50]): Command[] {
    const out: Command[] = []
    MARKETS.forEach((marketId, i) => out.push({ type: "create_market", seq: ++this.seq, tsSec: this.tsSec, marketId, takerFeeBps: fees[i % fees.length]! }))
    for (const u of USERS) out.push({ type: "credit", seq: ++this.seq, tsSec: this.tsSec, user: u, amountMicro: 200_000_000, ref: `seed:${u}` })
    out.push({ type: "set_builder", seq: ++this.seq, tsSec: this.tsSec, apiKey: BUILDERS[0], wallet: "u4", feeBps: 25, enabled: true })
    out.push({ type: "set_builder", seq: ++this.seq, tsSec: this.tsSec, apiKey: BUILDERS[1], wallet: "builder-x", feeBps: 0, enabled: true })
    // Fund the house so rebates flow even in fee-free markets.
    out.push({ type: "credit", seq: ++this.seq, tsSec: this.tsSec, user: "$fees", amountMicro: 5_000, ref: "seed:house" })
    return out
  }

  /** Tell the driver how many orders exist so cancels pick real ids most of the time. */
  observeOrderIds(nextOrderId: number): void {
    this.maxOrderId = nextOrderId - 1
  }

  concrete(a: Abstract, view?: HolderView): Command {
    // Time advances by 0..2 s per command.
    this.tsSec += this.seq % 3
    const base = { seq: ++this.seq, tsSec: this.tsSec }
    switch (a.k) {
      case "place": {
        const nonce = a.staleNonce ? Math.max(1, this.nonce - 1) : ++this.nonce
        let who: string = USERS[a.user]!
        let size = a.size
        // Four sells in five go to someone holding that outcome, sized within their shares.
        if (a.side === "sell" && view !== undefined && a.size % 5 !== 0) {
          const holders = view.holders(MARKETS[a.market]!).filter((h) => (a.outcome === "yes" ? h.yesFree : h.noFree) > 0)
          const h = holders[a.user % Math.max(1, holders.length)]
          if (h !== undefined) {
            who = h.user
            size = 1 + (a.size % (a.outcome === "yes" ? h.yesFree : h.noFree))
          }
        }
        return {
          ...base,
          type: "place_order",
          user: who,
          marketId: MARKETS[a.market]!,
          side: a.side,
          outcome: a.outcome,
          priceBps: a.price,
          size,
          orderType: a.orderType,
          nonce,
          ...(a.stp === undefined ? {} : { stp: a.stp }),
          // Index BUILDERS.length stands for a key nobody registered.
          ...(a.builder === undefined ? {} : { builderKey: BUILDERS[a.builder] ?? "nobody" })
        }
      }
      case "cancel":
        return { ...base, type: "cancel_order", user: USERS[a.user]!, orderId: this.maxOrderId === 0 ? 1 : (a.order % this.maxOrderId) + 1 }
      case "cancelAll":
        return { ...base, type: "cancel_all", user: USERS[a.user]!, ...(a.market === undefined ? {} : { marketId: MARKETS[a.market]! }) }
      case "credit":
        return { ...base, type: "credit", user: USERS[a.user]!, amountMicro: a.amount, ref: `d${base.seq}` }
      case "debit":
        return {
          ...base,
          type: "debit",
          user: USERS[a.user]!,
          amountMicro: a.amount,
          withdrawNonce: a.staleNonce ? Math.max(1, this.withdrawNonce) : ++this.withdrawNonce,
          ref: `w${base.seq}`
        }
      case "status":
        return {
          ...base,
          type: "set_market_status",
          marketId: MARKETS[a.market]!,
          status: a.status,
          ...(a.status === "resolved" ? { winningOutcome: a.winning } : {})
        }
      case "fees":
        return {
          ...base,
          type: "set_fees",
          ...(a.market === undefined ? {} : { marketId: MARKETS[a.market]! }),
          ...(a.fee === undefined ? {} : { takerFeeBps: a.fee }),
          ...(a.rebate === undefined ? {} : { makerRebateBps: a.rebate })
        }
      case "builder":
        return { ...base, type: "set_builder", apiKey: BUILDERS[a.builder]!, wallet: USERS[a.wallet]!, feeBps: a.fee, enabled: a.enabled }
      case "redeem": {
        const holders = view?.holders(MARKETS[a.market]!) ?? []
        const user = holders.length > 0 && a.user % 4 !== 0 ? holders[a.user % holders.length]!.user : USERS[a.user]!
        return { ...base, type: "redeem", user, marketId: MARKETS[a.market]! }
      }
      case "badSeq":
        // A sequence gap: must be rejected without consuming the sequence number.
        this.seq--
        return { ...base, seq: base.seq + 5, type: "cancel_all", user: "u0" }
    }
  }
}

/** A HolderView over the real engine's state (users in key order). */
export const engineHolders = (e: { accounts: Map<string, { positions: Map<string, { yes: number; no: number; yesLocked: number; noLocked: number }> }> }): HolderView => ({
  holders(marketId) {
    const out: Array<{ user: string; yesFree: number; noFree: number }> = []
    for (const user of [...e.accounts.keys()].sort()) {
      const p = e.accounts.get(user)!.positions.get(marketId)
      if (p !== undefined && (p.yes > 0 || p.no > 0)) out.push({ user, yesFree: p.yes - p.yesLocked, noFree: p.no - p.noLocked })
    }
    return out
  }
})
