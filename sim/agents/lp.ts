// Liquidity providers in the simulated world, with the same strategy code as the
// server-managed bot and the backtester (src/lp):
//  - LpStrategyAgent runs a strategy itself and places its post-only quotes over the API;
//  - LpBotAgent delegates a session key and lets the server-managed bot quote for it,
//    then checks that the bot's orders show up in its own reads.
import { makeStrategy, type Strategy, type StrategyState } from "../../src/lp/strategy.ts"
import { paramsFromPreset, type PresetName } from "../../src/lp/presets.ts"
import { quotesToOrders } from "../../src/lp/quotes.ts"
import { Agent, type AgentEnv, type AgentParams, type SimMarket } from "./agent.ts"
import type { Rng } from "../world/random.ts"

export interface LpParams {
  readonly preset: PresetName
  readonly capitalUsdc: number
  readonly marketsPerAgent: number
}

const pickMarkets = (env: AgentEnv, rng: Rng, n: number): SimMarket[] => {
  const all = [...env.markets]
  const mine: SimMarket[] = []
  for (let i = 0; i < Math.min(n, all.length); i++) mine.push(all.splice(rng.int(0, all.length - 1), 1)[0]!)
  return mine
}

/** Runs the quoting strategy client-side: reads book and position, steps, re-quotes. */
export class LpStrategyAgent extends Agent {
  private readonly mine: SimMarket[]
  private readonly strategy: Strategy
  private readonly states = new Map<string, StrategyState>()
  private startValueMicro: number | null = null

  constructor(name: string, env: AgentEnv, rng: Rng, params: AgentParams, p: LpParams) {
    super(name, env, rng, params)
    this.mine = pickMarkets(env, rng, p.marketsPerAgent)
    this.strategy = makeStrategy(paramsFromPreset(p.preset, Math.round(p.capitalUsdc * 1_000_000)))
  }

  protected async act(): Promise<void> {
    const bal = await this.call(() => this.api.balance())
    if (bal?.status !== 200) return
    this.startValueMicro ??= bal.body.total
    for (const m of this.mine) {
      const book = await this.book(m.id)
      const pos = await this.call(() => this.api.request("GET", `/v1/position/${m.id}/${this.user}`))
      if (book === null || pos?.status !== 200) return
      const midBps = book.bestBid !== null && book.bestAsk !== null ? Math.round((book.bestBid + book.bestAsk) / 2) : null
      const nowSec = this.world.scheduler.nowSec()
      const state = this.states.get(m.id) ?? this.strategy.init(nowSec)
      // PnL: account value now (cash + this market's shares at mid) against the start, a per-agent approximation.
      const markMicro = midBps === null ? 0 : pos.body.yes * midBps * 100 + pos.body.no * (10_000 - midBps) * 100
      const { state: next, decision } = this.strategy.step(state, { tsSec: nowSec, midBps, netYes: pos.body.yes - pos.body.no, pnlMicro: bal.body.total + markMicro - this.startValueMicro })
      this.states.set(m.id, next)
      if (decision.kind === "hold") continue
      await this.call(() => this.api.request("POST", "/v1/orders/cancel-all", { signature: "", nonce: 0, market_id: m.id }))
      // A pause still quotes the side that reduces inventory; only a stop leaves the market empty.
      if (decision.kind === "stop") continue
      const holdings = { yes: pos.body.yes - pos.body.yes_locked, no: pos.body.no - pos.body.no_locked }
      for (const o of quotesToOrders(decision.quotes, holdings)) {
        await this.place({ market_id: m.id, side: o.side, outcome: o.outcome, price: o.priceBps, size: o.size, order_type: "post_only" })
      }
    }
  }
}

/** Delegates a session key to the server-managed bot and watches it trade for it. */
export class LpBotAgent extends Agent {
  private readonly mine: SimMarket[]
  started = false
  /** Checks of the bot's status against the user's own order list. */
  checks = 0

  constructor(name: string, env: AgentEnv, rng: Rng, params: AgentParams, private readonly p: LpParams) {
    super(name, env, rng, params)
    this.mine = pickMarkets(env, rng, p.marketsPerAgent)
  }

  protected async act(): Promise<void> {
    if (!this.started) {
      await this.startBot()
      return
    }
    const status = await this.call(() => this.api.request("GET", `/v1/lp-bot/status?user=${this.user}`))
    const orders = await this.call(() => this.api.request("GET", `/v1/orders/all/${this.user}`))
    if (status?.status !== 200 || orders?.status !== 200) return
    // Read at the same virtual instant? Not quite (two round trips); compare only when nothing moved between.
    const again = await this.call(() => this.api.request("GET", `/v1/lp-bot/status?user=${this.user}`))
    if (again?.status !== 200 || JSON.stringify(again.body.open_orders) !== JSON.stringify(status.body.open_orders)) return
    if (status.body.status === "running" && orders.body.total !== status.body.open_orders) {
      this.env.stats.fail(`${this.name}: the bot reports ${status.body.open_orders} open orders, the user's order list holds ${orders.body.total}`)
    }
    this.checks++
    this.env.stats.lpBotChecks++
  }

  private async startBot(): Promise<void> {
    const created = await this.persist(() => this.api.request("POST", "/v1/lp-bot/session/new", { user: this.user, expires_in_secs: 3 * 86_400, scope: "orders" }))
    if (created?.status !== 200) return
    const b = created.body
    const signature = this.key.sign(Buffer.from(b.message_bytes_hex, "hex"))
    const delegated = await this.persist(() =>
      this.api.request("POST", "/v1/lp-bot/delegate", { user: this.user, session_pub: b.session_pub, expires_at_unix: b.expires_at_unix, nonce: b.nonce, scope: "orders", signature })
    )
    // A retried delegate whose first attempt landed answers 409: the session is delegated either way.
    if (delegated?.status !== 200 && delegated?.status !== 409) return
    const started = await this.persist(() =>
      this.api.request("POST", "/v1/lp-bot/start", {
        user: this.user,
        session_pub: b.session_pub,
        markets: this.mine.map((m) => m.id),
        strategy: { mode: "simple", capital_micro_usdc: Math.round(this.p.capitalUsdc * 1_000_000), preset: this.p.preset }
      })
    )
    if (started?.status === 200) {
      this.started = true
      this.env.stats.lpBotsStarted++
    }
  }
}
