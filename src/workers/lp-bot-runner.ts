// The server-managed LP bot's loop (SPEC §1 "Server-managed bot", §4 "LP bot"), driven
// by an explicit `tick(monoMs)`: a worker fiber on a Schedule live, the simulator's scheduler in
// simulation, so nothing in here sets a timer. Its schedule runs on the monotonic time it is handed;
// business time (session expiry, strategy time, which days are over) is the journal's
// (docs/time.md). Each tick it also checks the clocks for a wall-clock step, journals the
// rewards configuration when it changed, a rewards sample once a minute of monotonic time,
// and pays every closed rewards day.
//
// Per running bot and market: build the StrategyInput from the exchange, step the
// strategy, and on an acting decision journal `lp_bot_step` (which cancels the bot's
// orders there and records the strategy state), then place the new quotes (a "quote"'s
// ladder, or a "pause"'s inventory-reducing side) post-only,
// each signed with the session key and sent through the same placement as POST /v1/orders.
import { orderMessage } from "../auth/messages.ts"
import { deriveSessionKey, type SessionKey } from "../auth/lp-session.ts"
import { type RewardsConfig, rewardsParams, type UseCaseCtx } from "../usecase/context.ts"
import { placeSignedOrder } from "../usecase/place-order.ts"
import { LIMITS } from "../usecase/rate-limit.ts"
import { ApiError } from "../domain/errors.ts"
import type { RewardsParams } from "../service/commands.ts"
import type { BotMarket, BotRecord } from "../service/lp-book.ts"
import { dayOfSec, MINUTE_SEC } from "../service/rewards-book.ts"
import { botMarketView } from "../service/lp-bot-market.ts"
import { botStepCommand, stepOrders } from "../service/lp-bot-step.ts"
import type { OrderSpec } from "../lp/quotes.ts"
import { parseStrategySpec } from "../lp/strategy-spec.ts"
import { makeStrategy, type Strategy, type StrategyState } from "../lp/strategy.ts"
import type { ClockWatch } from "../time/clock.ts"

/** What the runner acts through: the use cases' context, the rewards configuration and the clock watch (the routes' AppCtx is one). */
export interface BotCtx extends UseCaseCtx {
  readonly config: { readonly rewards: RewardsConfig }
  /** Wall-clock step detection, checked each tick; absent in bare test contexts. */
  readonly clockWatch?: ClockWatch
}

export interface TickReport {
  /** Acting decisions journaled (quote, pause, stop). */
  readonly steps: number
  readonly placed: number
  /** Placements the exchange refused (e.g. `would_cross`, `insufficient_balance`). */
  readonly rejected: number
  /** Bots stopped because their session expired or was revoked. */
  readonly stopped: number
  /** Rewards days paid by this tick. */
  readonly paidDays: ReadonlyArray<number>
}

interface Counts {
  steps: number
  placed: number
  rejected: number
  stopped: number
  paidDays: number[]
}

const sameParams = (a: RewardsParams | null, b: RewardsParams): boolean =>
  a !== null &&
  a.dailyBudgetMicro === b.dailyBudgetMicro &&
  a.bandSpreadBpsMax === b.bandSpreadBpsMax &&
  a.perWalletCapPct === b.perWalletCapPct &&
  a.minSizeContracts === b.minSizeContracts

export class LpBotRunner {
  /**
   * Strategy state between acting decisions (hold steps update the last mid seen). Keyed by
   * user, bot start seq and market; after a restart it starts again from the journaled state.
   */
  private readonly memory = new Map<string, StrategyState>()
  private readonly strategies = new Map<string, Strategy>()
  private readonly keys = new Map<string, SessionKey>()
  /** Monotonic time of the last rewards sample this process journaled. */
  private lastSampleMonoMs: number | null = null

  constructor(
    private readonly ctx: BotCtx,
    private readonly onError: (err: unknown) => void = () => {}
  ) {}

  /**
   * One pass at monotonic time `monoMs`. The caller runs one at a time: live, the LP worker's fiber
   * (src/runtime/workers.ts; closing its Scope waits for the pass in flight); in simulation, sim/world/world.ts.
   */
  async tick(monoMs: number): Promise<TickReport> {
    const x = this.ctx.exchange
    const counts: Counts = { steps: 0, placed: 0, rejected: 0, stopped: 0, paidDays: [] }
    this.ctx.clockWatch?.check()
    const params = rewardsParams(this.ctx.config.rewards)
    if (!sameParams(x.rewards.config, params)) await x.submit({ type: "set_rewards_config", config: params }).durable
    // Sampling follows real (monotonic) minutes, never the wall clock's jumps (docs/rewards.md "Clock steps").
    if (this.lastSampleMonoMs === null || monoMs - this.lastSampleMonoMs >= MINUTE_SEC * 1000) {
      this.lastSampleMonoMs = monoMs
      await x.submit({ type: "rewards_sample" }).durable
    }
    const nowSec = x.journalSec()
    // A day closes once journal time has left it; pay_rewards is journaled after that.
    for (const day of [...x.rewards.days.keys()].sort((a, b) => a - b)) {
      if (day >= dayOfSec(nowSec)) break
      const { result, durable } = x.submit({ type: "pay_rewards", day })
      await durable
      if (result.paid !== undefined) counts.paidDays.push(day)
    }
    if (x.lp !== "open" || x.trading !== "open") return counts
    for (const bot of x.lpBook.runningBots()) {
      try {
        await this.stepBot(bot, nowSec, counts)
      } catch (err) {
        this.onError(err)
      }
    }
    this.forgetStopped()
    return counts
  }

  private async stepBot(bot: BotRecord, nowSec: number, counts: Counts): Promise<void> {
    const x = this.ctx.exchange
    const problem = x.lpBook.sessionProblem(bot.user, bot.sessionPub, nowSec)
    if (problem !== null) {
      const reason = problem === "session_revoked" ? "session_revoked" : "session_expired"
      await x.submit({ type: "lp_stop", user: bot.user, revokeSession: false, reason }).durable
      counts.stopped++
      return
    }
    const strategy = this.strategyOf(bot)
    if (strategy === null) return
    for (const m of bot.markets) {
      if (!this.stillRunning(bot)) return
      if (m.lastDecision === "stop" || x.engine.markets.get(m.marketId)?.status !== "active") continue
      await this.stepMarket(bot, m, strategy, nowSec, counts)
    }
  }

  private async stepMarket(bot: BotRecord, m: BotMarket, strategy: Strategy, nowSec: number, counts: Counts): Promise<void> {
    const x = this.ctx.exchange
    const key = `${bot.user}|${bot.startedSeq}|${m.marketId}`
    const state = this.memory.get(key) ?? m.strategy ?? strategy.init(nowSec)
    const view = botMarketView(x, bot.user, m, state.lastMidBps)
    const { state: next, decision } = strategy.step(state, { tsSec: nowSec, midBps: view.midBps, netYes: view.netYes, pnlMicro: view.pnlMicro })
    this.memory.set(key, next)
    if (decision.kind === "hold") return
    const { result, durable } = x.submit(botStepCommand(bot.user, bot.startedSeq, m.marketId, decision, next))
    await durable
    if (result.refused !== undefined) return
    counts.steps++
    // "pause" carries quotes too and is placed like "quote"; journaling it as "pause" is what keeps
    // the market "paused" in the status read.
    for (const order of stepOrders(x, bot.user, m, decision)) {
      if (!this.stillRunning(bot)) return
      if (await this.place(bot, m.marketId, order)) counts.placed++
      else counts.rejected++
    }
  }

  /** Signs with the session key and places post-only; one retry when a user's own order took the nonce meanwhile. */
  private async place(bot: BotRecord, marketId: string, o: OrderSpec): Promise<boolean> {
    const key = this.sessionKey(bot)
    if (key === null) return false
    try {
      this.ctx.limiter.take(LIMITS.botOrders, bot.user)
    } catch {
      return false // over the bot's budget: the next re-quote replaces the partial ladder
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      const nonce = (this.ctx.exchange.engine.accounts.get(bot.user)?.lastNonce ?? 0) + 1
      const message = orderMessage({ marketId, user: bot.user, outcome: o.outcome, side: o.side, priceBps: o.priceBps, size: o.size, nonce })
      try {
        await placeSignedOrder(this.ctx, {
          user: bot.user,
          market_id: marketId,
          side: o.side,
          outcome: o.outcome,
          price: o.priceBps,
          size: o.size,
          order_type: "post_only",
          nonce,
          signature: key.sign(message),
          session_pub: bot.sessionPub
        })
        return true
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
        if (err.code !== "nonce_stale") return false
      }
    }
    return false
  }

  /** The session's secret half, re-derived from the server secret and the journaled counter. */
  private sessionKey(bot: BotRecord): SessionKey | null {
    const cached = this.keys.get(bot.sessionPub)
    if (cached !== undefined) return cached
    const session = this.ctx.exchange.lpBook.sessions.get(bot.sessionPub)
    if (session === undefined) return null
    const key = deriveSessionKey(this.ctx.secret, bot.user, session.counter)
    // A different server secret derives a different key: such a bot can no longer sign.
    if (key.pub !== bot.sessionPub) {
      this.onError(new Error(`LP session ${bot.sessionPub} of ${bot.user} does not derive from this server secret`))
      return null
    }
    this.keys.set(bot.sessionPub, key)
    return key
  }

  private strategyOf(bot: BotRecord): Strategy | null {
    const key = `${bot.user}|${bot.startedSeq}`
    let s = this.strategies.get(key)
    if (s === undefined) {
      const parsed = parseStrategySpec(bot.strategy)
      if (!parsed.ok) {
        this.onError(new Error(`LP bot of ${bot.user}: journaled strategy no longer parses (${parsed.field}: ${parsed.message})`))
        return null
      }
      this.strategies.set(key, (s = makeStrategy(parsed.params)))
    }
    return s
  }

  private stillRunning(bot: BotRecord): boolean {
    return this.ctx.exchange.lpBook.runningBot(bot.user)?.startedSeq === bot.startedSeq
  }

  /** Drops memory of bots that no longer run, so it stays proportional to running bots. */
  private forgetStopped(): void {
    const running = new Set(this.ctx.exchange.lpBook.runningBots().map((b) => `${b.user}|${b.startedSeq}`))
    for (const k of this.strategies.keys()) if (!running.has(k)) this.strategies.delete(k)
    for (const k of this.memory.keys()) if (!running.has(k.slice(0, k.lastIndexOf("|")))) this.memory.delete(k)
    const sessions = new Set(this.ctx.exchange.lpBook.runningBots().map((b) => b.sessionPub))
    for (const k of this.keys.keys()) if (!sessions.has(k)) this.keys.delete(k)
  }
}
