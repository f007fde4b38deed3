// Agents that trade: noise takers, informed traders and simple market makers.
import { Agent, type AgentEnv, type AgentParams, type SimMarket } from "./agent.ts"
import type { Rng } from "../world/random.ts"

const clampPrice = (p: number): number => Math.max(100, Math.min(9_900, Math.round(p / 10) * 10))

/** What a contract bought at `priceBps` costs with the taker fee, in bps: the engine's fee, rounded up (src/engine/money.ts feeCeilMicro). */
export const allInBps = (priceBps: number, feeBps: number): number => priceBps + Math.ceil((priceBps * feeBps) / 10_000)

/**
 * The highest limit whose cost with the taker fee stays within `willingBps`: a taker who prices
 * the fee in bids that much less. With no fee, the price itself (so fee-free scenarios keep
 * their orders and hashes).
 */
export const netOfFeeBps = (willingBps: number, feeBps: number): number => {
  if (feeBps === 0) return willingBps
  let limit = Math.floor((willingBps * 10_000) / (10_000 + feeBps))
  while (limit > 1 && allInBps(limit, feeBps) > willingBps) limit--
  return Math.max(1, limit)
}

/** Trades at random around the book: the uninformed flow market makers live on. */
export class NoiseTrader extends Agent {
  constructor(name: string, env: AgentEnv, rng: Rng, params: AgentParams, private readonly maxSize: number) {
    super(name, env, rng, params)
  }

  protected async act(): Promise<void> {
    const m = this.rng.pick(this.env.markets)
    if (this.acked.size > 0 && this.rng.chance(0.15)) {
      const ids = [...this.acked.keys()]
      const id = ids[this.rng.int(0, ids.length - 1)]!
      this.acked.delete(id)
      this.env.stats.cancels++
      await this.call(() => this.api.cancel(id))
      return
    }
    const book = await this.book(m.id)
    if (book === null) return
    const buyYes = this.rng.chance(0.5)
    const ref = buyYes ? (book.bestAsk ?? this.env.truth.bps(m.index)) : (book.bestBid ?? this.env.truth.bps(m.index))
    const yesPrice = clampPrice(ref + (buyYes ? 1 : -1) * this.rng.int(-100, 200))
    const size = this.rng.int(1, this.maxSize)
    const orderType = this.rng.chance(0.6) ? "ioc" : "gtc"
    // What it is willing to pay, fee included (a resting GTC pays no fee, but the trader cannot know it will rest).
    const fee = this.env.takerFeeBps
    if (buyYes) await this.place({ market_id: m.id, side: "buy", outcome: "yes", price: netOfFeeBps(yesPrice, fee), size, order_type: orderType })
    else await this.place({ market_id: m.id, side: "buy", outcome: "no", price: netOfFeeBps(10_000 - yesPrice, fee), size, order_type: orderType })
  }
}

/** Knows the hidden true probability and takes mispriced liquidity. */
export class InformedTrader extends Agent {
  constructor(name: string, env: AgentEnv, rng: Rng, params: AgentParams, private readonly maxSize: number, private readonly edgeBps: number) {
    super(name, env, rng, params)
  }

  protected async act(): Promise<void> {
    const m = this.rng.pick(this.env.markets)
    const truth = this.env.truth.bps(m.index)
    const book = await this.book(m.id)
    if (book === null) return
    const size = this.rng.int(1, this.maxSize)
    // The edge must survive the fee: the ask's cost with the fee is what is compared with the truth.
    const fee = this.env.takerFeeBps
    const half = Math.floor(this.edgeBps / 2)
    if (book.bestAsk !== null && allInBps(book.bestAsk, fee) < truth - this.edgeBps) {
      await this.place({ market_id: m.id, side: "buy", outcome: "yes", price: netOfFeeBps(truth - half, fee), size, order_type: "ioc" })
    } else if (book.bestBid !== null && allInBps(10_000 - book.bestBid, fee) < 10_000 - truth - this.edgeBps) {
      await this.place({ market_id: m.id, side: "buy", outcome: "no", price: netOfFeeBps(10_000 - (truth + half), fee), size, order_type: "ioc" })
    }
  }
}

export interface MakerParams {
  readonly spreadBps: number
  readonly size: number
  readonly levels: number
  readonly marketsPerAgent: number
}

/**
 * Quotes both sides around the book's mid (or its own noisy prior of the market when
 * the book is empty): cancel-all then post-only levels, bids as buy YES, asks as buy NO.
 */
export class MarketMaker extends Agent {
  private readonly mine: SimMarket[]
  private readonly prior = new Map<number, number>()

  constructor(name: string, env: AgentEnv, rng: Rng, params: AgentParams, private readonly p: MakerParams) {
    super(name, env, rng, params)
    const all = [...env.markets]
    this.mine = []
    for (let i = 0; i < Math.min(p.marketsPerAgent, all.length); i++) this.mine.push(all.splice(rng.int(0, all.length - 1), 1)[0]!)
    for (const m of this.mine) this.prior.set(m.index, clampPrice(env.truth.bps(m.index) + rng.int(-500, 500)))
  }

  protected async act(): Promise<void> {
    const m = this.rng.pick(this.mine)
    const book = await this.book(m.id)
    if (book === null) return
    const mid = book.bestBid !== null && book.bestAsk !== null ? (book.bestBid + book.bestAsk) / 2 : this.prior.get(m.index)!
    await this.call(() => this.api.request("POST", "/v1/orders/cancel-all", { signature: "", nonce: 0, market_id: m.id }))
    const half = Math.ceil(this.p.spreadBps / 2)
    for (let level = 0; level < this.p.levels; level++) {
      const bid = clampPrice(mid - half - level * 50)
      const ask = clampPrice(mid + half + level * 50)
      if (bid >= ask) continue
      await this.place({ market_id: m.id, side: "buy", outcome: "yes", price: bid, size: this.p.size, order_type: "post_only" })
      await this.place({ market_id: m.id, side: "buy", outcome: "no", price: 10_000 - ask, size: this.p.size, order_type: "post_only" })
    }
  }
}
