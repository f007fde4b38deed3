// A naive reference engine: one array of resting orders, linear scans for the
// best price, BigInt for every fee. Slow and obviously correct; the real engine
// must agree with it event for event (test/engine/differential.test.ts).
// Written from docs/engine.md, sharing no code with src/engine beyond the types.
import type {
  CancelReason,
  Command,
  EngineEvent,
  Outcome,
  OrderType,
  RejectReason,
  Side,
  Stp
} from "../../src/engine/types.ts"

const HOUSE = "$fees"
const PAYOUT = 1_000_000

interface Acct {
  available: number
  locked: number
  lastNonce: number
  lastWithdrawNonce: number
}
interface Pos {
  user: string
  marketId: string
  yes: number
  no: number
  yesLocked: number
  noLocked: number
  costYes: number
  costNo: number
}
interface Mkt {
  id: string
  fee: number
  status: "active" | "halted" | "resolved"
  winning: Outcome | null
  yesSupply: number
  noSupply: number
  backing: number
}
interface Ord {
  id: number
  user: string
  marketId: string
  side: Side
  outcome: Outcome
  price: number
  yesPrice: number
  bid: boolean
  remaining: number
  stp: Stp
  builderWallet: string | null
  builderFee: number
  lockEach: number
}

const ceilDiv = (n: bigint, d: bigint): number => Number((n + d - 1n) / d)
const feeUp = (m: number, p: number, bps: number): number => ceilDiv(BigInt(m) * BigInt(p) * BigInt(bps), 100n)
const feeDown = (m: number, p: number, bps: number): number => Number((BigInt(m) * BigInt(p) * BigInt(bps)) / 100n)
const isInt = (v: unknown, lo: number, hi: number): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= lo && v <= hi
const isId = (v: unknown): v is string => typeof v === "string" && v.length >= 1 && v.length <= 128

export class ReferenceEngine {
  lastSeq = 0
  lastTs = 0
  nextOrderId = 1
  nextTradeId = 1
  rebateBps = 5
  defaultFee = 0
  netDeposits = 0
  accts = new Map<string, Acct>()
  positions: Pos[] = []
  markets = new Map<string, Mkt>()
  builders = new Map<string, { wallet: string; fee: number; enabled: boolean }>()
  resting: Ord[] = []

  private out: EngineEvent[] = []
  private touchedUsers: string[] = []
  private touchedPos: Pos[] = []
  private ts = 0

  apply(c: Command): EngineEvent[] {
    this.out = []
    this.touchedUsers = []
    this.touchedPos = []
    if (c.seq !== this.lastSeq + 1 || !Number.isSafeInteger(c.seq)) return this.no(c.type, "bad_sequence", null)
    if (!Number.isSafeInteger(c.tsSec) || c.tsSec < this.lastTs) return this.no(c.type, "bad_time", null)
    this.lastSeq = c.seq
    this.lastTs = c.tsSec
    this.ts = c.tsSec
    switch (c.type) {
      case "place_order": this.place(c); break
      case "cancel_order": this.cancelOne(c.user, c.orderId); break
      case "cancel_all": this.cancelAll(c.user, c.marketId); break
      case "credit": this.credit(c.user, c.amountMicro, c.ref); break
      case "debit": this.debit(c.user, c.amountMicro, c.withdrawNonce, c.ref); break
      case "create_market": this.createMarket(c.marketId, c.takerFeeBps); break
      case "set_market_status": this.setStatus(c.marketId, c.status, c.winningOutcome); break
      case "set_fees": this.setFees(c.marketId, c.takerFeeBps, c.makerRebateBps); break
      case "set_builder": this.setBuilder(c.apiKey, c.wallet, c.feeBps, c.enabled); break
      case "redeem": this.redeem(c.user, c.marketId); break
    }
    for (const u of this.touchedUsers) {
      const a = this.acct(u)
      this.out.push({ type: "balance", user: u, availableMicro: a.available, lockedMicro: a.locked })
    }
    for (const p of this.touchedPos) {
      this.out.push({
        type: "position", user: p.user, marketId: p.marketId, yes: p.yes, no: p.no,
        yesLocked: p.yesLocked, noLocked: p.noLocked, costYesMicro: p.costYes, costNoMicro: p.costNo
      })
    }
    return this.out
  }

  // ---- helpers -----------------------------------------------------------
  private no(command: Command["type"], reason: RejectReason, user: string | null): EngineEvent[] {
    this.out.push({ type: "rejected", command, reason, user })
    return this.out
  }
  acct(user: string): Acct {
    let a = this.accts.get(user)
    if (!a) {
      a = { available: 0, locked: 0, lastNonce: 0, lastWithdrawNonce: 0 }
      this.accts.set(user, a)
    }
    return a
  }
  pos(user: string, marketId: string): Pos {
    let p = this.positions.find((x) => x.user === user && x.marketId === marketId)
    if (!p) {
      p = { user, marketId, yes: 0, no: 0, yesLocked: 0, noLocked: 0, costYes: 0, costNo: 0 }
      this.positions.push(p)
    }
    return p
  }
  private touch(user: string): void {
    if (!this.touchedUsers.includes(user)) this.touchedUsers.push(user)
  }
  private touchP(p: Pos): void {
    if (!this.touchedPos.includes(p)) this.touchedPos.push(p)
  }
  /** Opposite-side resting orders an incoming order crosses, best price first, then oldest. */
  private crossing(marketId: string, bid: boolean, yesLimit: number): Ord[] {
    return this.resting
      .filter((o) => o.marketId === marketId && o.bid !== bid && (bid ? o.yesPrice <= yesLimit : o.yesPrice >= yesLimit))
      .sort((a, b) => (bid ? a.yesPrice - b.yesPrice : b.yesPrice - a.yesPrice) || a.id - b.id)
  }

  // ---- orders ------------------------------------------------------------
  private place(c: Extract<Command, { type: "place_order" }>): void {
    const user = c.user
    if (!isId(user)) return void this.no("place_order", "invalid_user", null)
    if (!["buy", "sell"].includes(c.side)) return void this.no("place_order", "invalid_side", user)
    if (!["yes", "no"].includes(c.outcome)) return void this.no("place_order", "invalid_outcome", user)
    if (!["gtc", "post_only", "ioc", "fok"].includes(c.orderType)) return void this.no("place_order", "invalid_order_type", user)
    const stp: Stp = c.stp ?? "cancel_resting"
    if (!["cancel_resting", "cancel_taking", "cancel_both"].includes(stp)) return void this.no("place_order", "invalid_stp", user)
    if (!isInt(c.priceBps, 0, 10_000)) return void this.no("place_order", "invalid_price", user)
    if (!isInt(c.size, 1, 100_000_000)) return void this.no("place_order", "invalid_size", user)
    if (!isInt(c.nonce, 1, Number.MAX_SAFE_INTEGER)) return void this.no("place_order", "invalid_nonce", user)
    // A well-formed order with a fresh nonce spends it, accepted or not.
    if (c.nonce <= (this.accts.get(user)?.lastNonce ?? 0)) return void this.no("place_order", "nonce_stale", user)
    this.acct(user).lastNonce = c.nonce
    const m = this.markets.get(c.marketId)
    if (!m) return void this.no("place_order", "unknown_market", user)
    if (m.status === "halted") return void this.no("place_order", "market_halted", user)
    if (m.status === "resolved") return void this.no("place_order", "market_resolved", user)
    if (c.size * c.priceBps * 100 < 10_000) return void this.no("place_order", "dust_order", user)
    let builderWallet: string | null = null
    let builderFee = 0
    if (c.builderKey !== undefined) {
      const b = typeof c.builderKey === "string" ? this.builders.get(c.builderKey) : undefined
      if (!b) return void this.no("place_order", "unknown_builder", user)
      builderWallet = b.wallet
      builderFee = b.enabled ? b.fee : 0
    }
    const bid = (c.side === "buy" && c.outcome === "yes") || (c.side === "sell" && c.outcome === "no")
    const yesPrice = c.outcome === "yes" ? c.priceBps : 10_000 - c.priceBps
    const crossing = this.crossing(m.id, bid, yesPrice)
    if (c.orderType === "post_only" && crossing.length > 0) return void this.no("place_order", "would_cross", user)
    const takerLockEach = c.side === "buy" ? c.priceBps * 100 + feeUp(1, c.priceBps, m.fee) + feeUp(1, c.priceBps, builderFee) : 0
    if (c.side === "buy") {
      const a = this.accts.get(user)
      if (!a || a.available < c.size * takerLockEach) return void this.no("place_order", "insufficient_balance", user)
    } else {
      const p = this.positions.find((x) => x.user === user && x.marketId === m.id)
      const free = !p ? 0 : c.outcome === "yes" ? p.yes - p.yesLocked : p.no - p.noLocked
      if (free < c.size) return void this.no("place_order", "insufficient_shares", user)
    }
    if (c.orderType === "fok") {
      let reach = 0
      for (const o of crossing) {
        if (o.user === user) {
          if (stp === "cancel_resting") continue
          break
        }
        reach += o.remaining
      }
      if (reach < c.size) return void this.no("place_order", "fok_unfilled", user)
    }

    const a = this.acct(user)
    const order: Ord = {
      id: this.nextOrderId++, user, marketId: m.id, side: c.side, outcome: c.outcome, price: c.priceBps, yesPrice, bid,
      remaining: c.size, stp, builderWallet, builderFee, lockEach: takerLockEach
    }
    this.out.push({
      type: "order_accepted", orderId: order.id, user, marketId: m.id, side: c.side, outcome: c.outcome,
      priceBps: c.priceBps, size: c.size, orderType: c.orderType as OrderType, stp, nonce: c.nonce,
      builderKey: c.builderKey ?? null, tsSec: this.ts
    })
    this.touch(user)
    if (c.side === "buy") {
      a.available -= c.size * takerLockEach
      a.locked += c.size * takerLockEach
    } else {
      const p = this.pos(user, m.id)
      if (c.outcome === "yes") p.yesLocked += c.size
      else p.noLocked += c.size
      this.touchP(p)
    }

    let stopped = false
    while (order.remaining > 0) {
      const maker = this.crossing(m.id, bid, yesPrice)[0]
      if (!maker) break
      if (maker.user === user) {
        if (stp === "cancel_taking") { stopped = true; break }
        this.cancelResting(maker, "stp")
        if (stp === "cancel_both") { stopped = true; break }
        continue
      }
      this.fill(m, order, maker, Math.min(order.remaining, maker.remaining))
    }
    if (order.remaining === 0) return
    if (!stopped && (c.orderType === "gtc" || c.orderType === "post_only")) {
      if (c.side === "buy") {
        const makerLockEach = c.priceBps * 100 + feeUp(1, c.priceBps, builderFee)
        a.locked -= order.remaining * (takerLockEach - makerLockEach)
        a.available += order.remaining * (takerLockEach - makerLockEach)
        order.lockEach = makerLockEach
      }
      this.resting.push(order)
      this.out.push({ type: "order_rested", orderId: order.id, remaining: order.remaining })
    } else {
      this.release(order)
      this.out.push({
        type: "order_cancelled", orderId: order.id, user, marketId: m.id, remaining: order.remaining,
        reason: stopped ? "stp" : "ioc"
      })
    }
  }

  private fill(m: Mkt, taker: Ord, maker: Ord, size: number): void {
    const q = maker.yesPrice
    const bidder = taker.bid ? taker : maker
    const asker = taker.bid ? maker : taker
    const kind =
      bidder.side === "buy" && asker.side === "buy" ? "mint" : bidder.side === "sell" && asker.side === "sell" ? "merge" : "normal"
    const own = (o: Ord): number => (o.outcome === "yes" ? q : 10_000 - q)
    const takerFee = feeUp(size, own(taker), m.fee)
    const takerBuilderFee = feeUp(size, own(taker), taker.builderFee)
    const makerBuilderFee = feeUp(size, own(maker), maker.builderFee)
    this.party(taker, size, own(taker), takerFee + takerBuilderFee)
    this.party(maker, size, own(maker), makerBuilderFee)
    const wanted = feeDown(size, own(maker), this.rebateBps)
    let rebate = 0
    if (takerFee > 0 || (wanted > 0 && this.accts.has(HOUSE))) {
      const house = this.acct(HOUSE)
      house.available += takerFee
      rebate = Math.min(wanted, house.available)
      house.available -= rebate
      this.acct(maker.user).available += rebate
      if (takerFee > 0 || rebate > 0) this.touch(HOUSE)
    }
    if (takerBuilderFee > 0) { this.acct(taker.builderWallet!).available += takerBuilderFee; this.touch(taker.builderWallet!) }
    if (makerBuilderFee > 0) { this.acct(maker.builderWallet!).available += makerBuilderFee; this.touch(maker.builderWallet!) }
    if (kind === "mint") { m.yesSupply += size; m.noSupply += size; m.backing += size * PAYOUT }
    if (kind === "merge") { m.yesSupply -= size; m.noSupply -= size; m.backing -= size * PAYOUT }
    taker.remaining -= size
    maker.remaining -= size
    if (maker.remaining === 0) this.resting = this.resting.filter((o) => o !== maker)
    this.out.push({
      type: "fill", tradeId: this.nextTradeId++, marketId: m.id, kind, yesPriceBps: q, size, tsSec: this.ts,
      takerOrderId: taker.id, takerUser: taker.user, takerSide: taker.side, takerOutcome: taker.outcome, takerPriceBps: own(taker),
      makerOrderId: maker.id, makerUser: maker.user, makerSide: maker.side, makerOutcome: maker.outcome, makerPriceBps: own(maker),
      makerRemaining: maker.remaining, takerFeeMicro: takerFee, makerRebateMicro: rebate,
      takerBuilderFeeMicro: takerBuilderFee, makerBuilderFeeMicro: makerBuilderFee,
      takerBuilderWallet: takerBuilderFee > 0 ? taker.builderWallet : null,
      makerBuilderWallet: makerBuilderFee > 0 ? maker.builderWallet : null
    })
  }

  private party(o: Ord, size: number, price: number, fees: number): void {
    const a = this.acct(o.user)
    const p = this.pos(o.user, o.marketId)
    const notional = size * price * 100
    if (o.side === "buy") {
      a.locked -= size * o.lockEach
      a.available += size * o.lockEach - notional - fees
      if (o.outcome === "yes") { p.yes += size; p.costYes += notional + fees }
      else { p.no += size; p.costNo += notional + fees }
    } else {
      a.available += notional - fees
      if (o.outcome === "yes") {
        p.costYes -= Number((BigInt(p.costYes) * BigInt(size)) / BigInt(p.yes))
        p.yes -= size
        p.yesLocked -= size
      } else {
        p.costNo -= Number((BigInt(p.costNo) * BigInt(size)) / BigInt(p.no))
        p.no -= size
        p.noLocked -= size
      }
    }
    this.touch(o.user)
    this.touchP(p)
  }

  private release(o: Ord): void {
    if (o.side === "buy") {
      const a = this.acct(o.user)
      a.locked -= o.remaining * o.lockEach
      a.available += o.remaining * o.lockEach
      this.touch(o.user)
    } else {
      const p = this.pos(o.user, o.marketId)
      if (o.outcome === "yes") p.yesLocked -= o.remaining
      else p.noLocked -= o.remaining
      this.touchP(p)
    }
  }

  private cancelResting(o: Ord, reason: CancelReason): void {
    this.release(o)
    this.out.push({ type: "order_cancelled", orderId: o.id, user: o.user, marketId: o.marketId, remaining: o.remaining, reason })
    this.resting = this.resting.filter((x) => x !== o)
  }

  private cancelOne(user: string, orderId: number): void {
    if (!isId(user)) return void this.no("cancel_order", "invalid_user", null)
    const o = this.resting.find((x) => x.id === orderId && x.user === user)
    if (!o) return void this.no("cancel_order", "order_not_found", user)
    this.cancelResting(o, "user")
  }

  private cancelAll(user: string, marketId: string | undefined): void {
    if (!isId(user)) return void this.no("cancel_all", "invalid_user", null)
    if (marketId !== undefined && !this.markets.has(marketId)) return void this.no("cancel_all", "unknown_market", user)
    for (const o of this.resting.filter((x) => x.user === user && (marketId === undefined || x.marketId === marketId))) {
      this.cancelResting(o, "user")
    }
  }

  // ---- money -------------------------------------------------------------
  private credit(user: string, amount: number, ref: string): void {
    if (!isId(user)) return void this.no("credit", "invalid_user", null)
    if (!isInt(amount, 1, 1e15)) return void this.no("credit", "invalid_amount", user)
    if (typeof ref !== "string") return void this.no("credit", "invalid_command", user)
    const held = this.accts.has(user) ? this.acct(user).available + this.acct(user).locked : 0
    if (held + amount > 2 ** 51) return void this.no("credit", "amount_overflow", user)
    this.acct(user).available += amount
    this.netDeposits += amount
    this.out.push({ type: "credited", user, amountMicro: amount, ref })
    this.touch(user)
  }

  private debit(user: string, amount: number, nonce: number, ref: string): void {
    if (!isId(user)) return void this.no("debit", "invalid_user", null)
    if (!isInt(amount, 1, 1e15)) return void this.no("debit", "invalid_amount", user)
    if (!isInt(nonce, 1, Number.MAX_SAFE_INTEGER)) return void this.no("debit", "invalid_nonce", user)
    if (typeof ref !== "string") return void this.no("debit", "invalid_command", user)
    const a = this.accts.get(user)
    if (nonce <= (a?.lastWithdrawNonce ?? 0)) return void this.no("debit", "withdraw_nonce_stale", user)
    if (!a || a.available < amount) return void this.no("debit", "insufficient_balance", user)
    a.lastWithdrawNonce = nonce
    a.available -= amount
    this.netDeposits -= amount
    this.out.push({ type: "debited", user, amountMicro: amount, withdrawNonce: nonce, ref })
    this.touch(user)
  }

  // ---- operator ----------------------------------------------------------
  private createMarket(id: string, fee: number | undefined): void {
    if (!isId(id)) return void this.no("create_market", "invalid_market_id", null)
    if (this.markets.has(id)) return void this.no("create_market", "market_exists", null)
    const f = fee ?? this.defaultFee
    if (!isInt(f, 0, 1000)) return void this.no("create_market", "invalid_fee", null)
    this.markets.set(id, { id, fee: f, status: "active", winning: null, yesSupply: 0, noSupply: 0, backing: 0 })
    this.out.push({ type: "market_created", marketId: id, takerFeeBps: f })
  }

  private setStatus(id: string, status: string, winning: Outcome | undefined): void {
    const m = this.markets.get(id)
    if (!m) return void this.no("set_market_status", "unknown_market", null)
    if (status !== "active" && status !== "halted" && status !== "resolved") return void this.no("set_market_status", "invalid_status", null)
    if (m.status === "resolved") return void this.no("set_market_status", "market_resolved", null)
    const winOk = status === "resolved" ? winning === "yes" || winning === "no" : winning === undefined
    if (!winOk) return void this.no("set_market_status", "invalid_command", null)
    m.status = status
    m.winning = status === "resolved" ? winning! : null
    this.out.push({ type: "market_status", marketId: id, status, winningOutcome: m.winning })
    if (status === "resolved") {
      const mine = this.resting.filter((o) => o.marketId === id)
      const bids = mine.filter((o) => o.bid).sort((a, b) => b.yesPrice - a.yesPrice || a.id - b.id)
      const asks = mine.filter((o) => !o.bid).sort((a, b) => a.yesPrice - b.yesPrice || a.id - b.id)
      for (const o of [...bids, ...asks]) this.cancelResting(o, "resolution")
    }
  }

  private setFees(marketId: string | undefined, fee: number | undefined, rebate: number | undefined): void {
    if (fee === undefined && rebate === undefined) return void this.no("set_fees", "invalid_command", null)
    if (fee !== undefined && !isInt(fee, 0, 1000)) return void this.no("set_fees", "invalid_fee", null)
    if (rebate !== undefined && !isInt(rebate, 0, 1000)) return void this.no("set_fees", "invalid_fee", null)
    const m = marketId === undefined ? undefined : this.markets.get(marketId)
    if (marketId !== undefined && !m) return void this.no("set_fees", "unknown_market", null)
    if (rebate !== undefined) this.rebateBps = rebate
    if (fee !== undefined) {
      if (m) m.fee = fee
      else this.defaultFee = fee
    }
    this.out.push({
      type: "fees_set", marketId: m ? m.id : null, takerFeeBps: m ? m.fee : null,
      makerRebateBps: this.rebateBps, defaultTakerFeeBps: this.defaultFee
    })
  }

  private setBuilder(apiKey: string, wallet: string, fee: number, enabled: boolean): void {
    if (!isId(apiKey)) return void this.no("set_builder", "invalid_command", null)
    if (!isId(wallet)) return void this.no("set_builder", "invalid_user", null)
    if (!isInt(fee, 0, 1000)) return void this.no("set_builder", "invalid_fee", null)
    if (typeof enabled !== "boolean") return void this.no("set_builder", "invalid_command", null)
    this.builders.set(apiKey, { wallet, fee, enabled })
    this.out.push({ type: "builder_set", apiKey, wallet, feeBps: fee, enabled })
  }

  private redeem(user: string, marketId: string): void {
    if (!isId(user)) return void this.no("redeem", "invalid_user", null)
    const m = this.markets.get(marketId)
    if (!m) return void this.no("redeem", "unknown_market", user)
    if (m.status !== "resolved") return void this.no("redeem", "market_not_resolved", user)
    const p = this.positions.find((x) => x.user === user && x.marketId === marketId)
    if (!p || (p.yes === 0 && p.no === 0)) return void this.no("redeem", "nothing_to_redeem", user)
    const winningShares = m.winning === "yes" ? p.yes : p.no
    const losingShares = m.winning === "yes" ? p.no : p.yes
    m.yesSupply -= p.yes
    m.noSupply -= p.no
    m.backing -= winningShares * PAYOUT
    this.acct(user).available += winningShares * PAYOUT
    p.yes = 0
    p.no = 0
    p.costYes = 0
    p.costNo = 0
    this.out.push({ type: "redeemed", user, marketId, winningShares, losingShares, payoutMicro: winningShares * PAYOUT })
    this.touch(user)
    this.touchP(p)
  }
}
