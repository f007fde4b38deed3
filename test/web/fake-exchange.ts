// A tiny exchange for the in-browser bot's loop (tests and the cadence bench): one market with
// others quoting 45¢ / 55¢, the bot's orders resting until cancelled, optional virtual latency.
import type { OrderSpec } from "../../src/lp/quotes.ts"
import type { BotApi, RestingOrderView, Timers } from "../../web/src/bot/loop.ts"

/** A tiny exchange: one market, others quoting 45¢/55¢, the bot's orders resting until cancelled. */
export class FakeExchange implements BotApi {
  orders = new Map<number, RestingOrderView>()
  nextId = 1
  yes = 0
  no = 0
  total = 100_000_000
  trading: "open" | "closed" = "open"
  placed: Array<OrderSpec & { atMs: number }> = []
  /** `latencyMs` (optional): each call answers that many virtual ms later, on `timers`. */
  constructor(private readonly timers: Timers, private readonly latencyMs: () => number = () => 0) {}
  private wait(): Promise<void> {
    const ms = this.latencyMs()
    return ms <= 0 ? Promise.resolve() : new Promise((resolve) => void this.timers.set(resolve, ms))
  }
  async book() {
    await this.wait()
    const bids = [{ price: 4500, size: 500 }]
    const asks = [{ price: 5500, size: 500 }]
    for (const o of this.orders.values()) {
      const isBid = (o.side === "buy") === (o.outcome === "yes")
      const p = o.outcome === "yes" ? o.price : 10_000 - o.price
      ;(isBid ? bids : asks).push({ price: p, size: o.remaining })
    }
    bids.sort((a, b) => b.price - a.price)
    asks.sort((a, b) => a.price - b.price)
    return { bids, asks }
  }
  async openOrders() {
    await this.wait()
    return [...this.orders.values()]
  }
  async position() {
    await this.wait()
    return { yes: this.yes, no: this.no, yes_locked: 0, no_locked: 0 }
  }
  async balanceTotal() {
    await this.wait()
    return this.total
  }
  async place(marketId: string, o: OrderSpec) {
    await this.wait()
    if (this.trading === "closed") return { ok: false as const, code: "trading_disabled", message: "closed" }
    const id = this.nextId++
    this.orders.set(id, { id, market_id: marketId, side: o.side, outcome: o.outcome, price: o.priceBps, remaining: o.size })
    this.placed.push({ ...o, atMs: this.timers.nowMs() })
    return { ok: true as const, orderId: id, queued: false }
  }
  async cancel(id: number) {
    await this.wait()
    this.orders.delete(id)
    return true
  }
  /** Another user buys every bot ask: the bot buys NO (or sells YES). */
  takeAsks(): number {
    let n = 0
    for (const [id, o] of this.orders) {
      if ((o.side === "buy") !== (o.outcome === "yes")) {
        // The bot pays for the NO it buys (or is paid for the YES it sells) at its own price.
        if (o.side === "buy") (this.no += o.remaining), (this.total -= o.remaining * o.price * 100)
        else (this.yes -= o.remaining), (this.total += o.remaining * o.price * 100)
        n += o.remaining
        this.orders.delete(id)
      }
    }
    return n
  }
}

