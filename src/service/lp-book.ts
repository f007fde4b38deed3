// The server-managed LP bot's durable state (SPEC §3 "LP-bot session", §4 "LP bot"):
// session keys, delegations, each user's bot with its markets, baselines, journaled
// strategy state and the ids of the orders it placed. Changed only by journaled
// commands, so bots survive a restart; the live quoting loop is src/workers/lp-bot-runner.ts.
import type { Engine } from "../engine/engine.ts"
import type { EngineEvent, FillEvent } from "../engine/types.ts"
import type { StopReason, StrategyState } from "../lp/strategy.ts"
import type { LpStopReason, ServiceCommand } from "./commands.ts"

/** Only `orders` exists: a session key can never withdraw (SPEC §4 rule 1, §5.10). */
export const LP_SCOPES = ["orders"] as const
export type LpScope = (typeof LP_SCOPES)[number]
export const MIN_DELEGATION_SEC = 300
export const MAX_DELEGATION_SEC = 30 * 86_400
/** Sessions offered by session/new but never delegated, kept per user; older ones are dropped. */
export const MAX_PENDING_SESSIONS = 8
export const MAX_BOT_MARKETS = 20

export interface Delegation {
  readonly expiresAtSec: number
  readonly nonce: number
  readonly delegatedAtSec: number
}

export interface LpSession {
  readonly user: string
  readonly sessionPub: string
  /** Derivation counter of the secret half (src/auth/lp-session.ts). */
  readonly counter: number
  readonly createdAtSec: number
  /** The expiry session/new proposed; the delegation's own expiry is authoritative. */
  readonly offeredExpiresAtSec: number
  delegation: Delegation | null
  revokedAtSec: number | null
}

export interface BotMarket {
  readonly marketId: string
  /** Shares held when the bot started: PnL counts only what changed since. */
  readonly baseYes: number
  readonly baseNo: number
  /** Cash from the user's fills in this market since the start (proceeds − costs − fees + rebates), micro. */
  cashMicro: number
  /** Strategy state after the last acting decision (quote, pause, stop); null before the first. */
  strategy: StrategyState | null
  lastDecision: "quote" | "pause" | "stop" | null
  stopReason: StopReason | null
  lastActionAtSec: number | null
  /** Orders placed since the last acting decision (some may have filled or been cancelled since). */
  orderIds: number[]
}

export interface BotRecord {
  readonly user: string
  readonly sessionPub: string
  /** The journal seq of the lp_start: identifies this bot among the user's successive bots. */
  readonly startedSeq: number
  readonly startedAtSec: number
  readonly strategy: Readonly<Record<string, string | number>>
  readonly markets: BotMarket[]
  status: "running" | "stopped"
  stoppedAtSec: number | null
  stopReason: LpStopReason | null
}

export type LpRefusal =
  | "not_found"
  | "user_mismatch"
  | "session_already_delegated"
  | "nonce_stale"
  | "session_not_delegated"
  | "session_revoked"
  | "session_expired"
  | "stale_bot"

export type SessionProblem = "session_not_delegated" | "user_mismatch" | "session_revoked" | "session_expired"

/** What the book needs from the exchange: the record's time, the engine, and engine commands that emit events. */
export interface LpHost {
  readonly tsSec: number
  readonly lastSeq: number
  readonly engine: Engine
  cancelOrder(user: string, orderId: number, into: EngineEvent[]): void
}

type LpCommand = Extract<ServiceCommand, { type: "lp_session_new" | "lp_delegate" | "lp_start" | "lp_stop" | "lp_bot_step" }>

export interface LpBookJson {
  readonly sessions: ReadonlyArray<LpSession>
  readonly counters: ReadonlyArray<readonly [string, number]>
  readonly nonces: ReadonlyArray<readonly [string, number]>
  readonly bots: ReadonlyArray<BotRecord>
}

const byKey = <T>(a: readonly [string, T], b: readonly [string, T]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)

export class LpBook {
  /** By session public key. */
  readonly sessions = new Map<string, LpSession>()
  /** user → session keys, oldest first. */
  private readonly sessionsOfUser = new Map<string, string[]>()
  /** user → last session counter used. */
  readonly counters = new Map<string, number>()
  /** user → last accepted delegation nonce. */
  readonly nonces = new Map<string, number>()
  /** user → the latest bot (running or stopped). */
  readonly bots = new Map<string, BotRecord>()
  private running = 0

  nextCounter(user: string): number {
    return (this.counters.get(user) ?? 0) + 1
  }

  nextNonce(user: string): number {
    return (this.nonces.get(user) ?? 0) + 1
  }

  userSessions(user: string): LpSession[] {
    return (this.sessionsOfUser.get(user) ?? []).map((pub) => this.sessions.get(pub)!)
  }

  /** Why `sessionPub` cannot act for `user` at `nowSec`, or null when it is an active delegated session. */
  sessionProblem(user: string, sessionPub: string, nowSec: number): SessionProblem | null {
    const s = this.sessions.get(sessionPub)
    if (s === undefined || s.delegation === null) return "session_not_delegated"
    if (s.user !== user) return "user_mismatch"
    if (s.revokedAtSec !== null) return "session_revoked"
    if (s.delegation.expiresAtSec <= nowSec) return "session_expired"
    return null
  }

  runningBot(user: string): BotRecord | undefined {
    const b = this.bots.get(user)
    return b?.status === "running" ? b : undefined
  }

  /** Running bots sorted by user: the order the runner steps them in. */
  runningBots(): BotRecord[] {
    if (this.running === 0) return []
    return [...this.bots.values()].filter((b) => b.status === "running").sort((a, b) => (a.user < b.user ? -1 : 1))
  }

  // One piece: one case per LP command, each a few lines.
  apply(cmd: LpCommand, host: LpHost, events: EngineEvent[]): LpRefusal | null {
    switch (cmd.type) {
      case "lp_session_new": {
        if (this.sessions.has(cmd.sessionPub)) return "session_already_delegated"
        this.counters.set(cmd.user, Math.max(this.counters.get(cmd.user) ?? 0, cmd.counter))
        this.addSession({
          user: cmd.user,
          sessionPub: cmd.sessionPub,
          counter: cmd.counter,
          createdAtSec: host.tsSec,
          offeredExpiresAtSec: cmd.expiresAtSec,
          delegation: null,
          revokedAtSec: null
        })
        this.prunePending(cmd.user)
        return null
      }
      case "lp_delegate": {
        const s = this.sessions.get(cmd.sessionPub)
        if (s === undefined) return "not_found"
        if (s.user !== cmd.user) return "user_mismatch"
        if (s.delegation !== null) return "session_already_delegated"
        if (s.revokedAtSec !== null) return "session_revoked"
        if (cmd.nonce <= (this.nonces.get(cmd.user) ?? 0)) return "nonce_stale"
        if (cmd.expiresAtSec <= host.tsSec) return "session_expired"
        s.delegation = { expiresAtSec: cmd.expiresAtSec, nonce: cmd.nonce, delegatedAtSec: host.tsSec }
        this.nonces.set(cmd.user, cmd.nonce)
        return null
      }
      case "lp_start": {
        const problem = this.sessionProblem(cmd.user, cmd.sessionPub, host.tsSec)
        if (problem !== null) return problem
        const prev = this.runningBot(cmd.user)
        if (prev !== undefined) this.stopBot(prev, "replaced", host, events)
        const markets = cmd.marketIds.map((marketId): BotMarket => {
          const p = host.engine.accounts.get(cmd.user)?.positions.get(marketId)
          return { marketId, baseYes: p?.yes ?? 0, baseNo: p?.no ?? 0, cashMicro: 0, strategy: null, lastDecision: null, stopReason: null, lastActionAtSec: null, orderIds: [] }
        })
        this.bots.set(cmd.user, {
          user: cmd.user,
          sessionPub: cmd.sessionPub,
          startedSeq: host.lastSeq,
          startedAtSec: host.tsSec,
          strategy: { ...cmd.strategy },
          markets,
          status: "running",
          stoppedAtSec: null,
          stopReason: null
        })
        this.running++
        return null
      }
      case "lp_stop": {
        const bot = this.runningBot(cmd.user)
        if (bot !== undefined) this.stopBot(bot, cmd.reason, host, events)
        if (cmd.revokeSession) {
          for (const s of this.userSessions(cmd.user)) if (s.revokedAtSec === null) s.revokedAtSec = host.tsSec
        }
        return null
      }
      case "lp_bot_step": {
        const bot = this.runningBot(cmd.user)
        const m = bot?.startedSeq === cmd.startedSeq ? bot.markets.find((x) => x.marketId === cmd.marketId) : undefined
        if (m === undefined || m.lastDecision === "stop") return "stale_bot"
        this.cancelMarket(cmd.user, m, host, events)
        m.strategy = cmd.state
        m.lastDecision = cmd.decision
        m.stopReason = cmd.decision === "stop" ? (cmd.stopReason ?? null) : null
        m.lastActionAtSec = host.tsSec
        return null
      }
    }
  }

  /** An accepted bot order: tracked so the next decision (or a stop) cancels it. */
  trackOrder(user: string, sessionPub: string, marketId: string, orderId: number): void {
    const bot = this.runningBot(user)
    if (bot === undefined || bot.sessionPub !== sessionPub) return
    bot.markets.find((m) => m.marketId === marketId)?.orderIds.push(orderId)
  }

  /** Fills move a running bot's cash in that market: the realised half of its PnL. */
  onFill(f: FillEvent): void {
    if (this.running === 0) return
    const taker = this.runningBot(f.takerUser)?.markets.find((m) => m.marketId === f.marketId)
    if (taker !== undefined) {
      const notional = f.size * f.takerPriceBps * 100
      taker.cashMicro += (f.takerSide === "sell" ? notional : -notional) - f.takerFeeMicro - f.takerBuilderFeeMicro
    }
    const maker = this.runningBot(f.makerUser)?.markets.find((m) => m.marketId === f.marketId)
    if (maker !== undefined) {
      const notional = f.size * f.makerPriceBps * 100
      maker.cashMicro += (f.makerSide === "sell" ? notional : -notional) + f.makerRebateMicro - f.makerBuilderFeeMicro
    }
  }

  private stopBot(bot: BotRecord, reason: LpStopReason, host: LpHost, events: EngineEvent[]): void {
    for (const m of bot.markets) this.cancelMarket(bot.user, m, host, events)
    bot.status = "stopped"
    bot.stoppedAtSec = host.tsSec
    bot.stopReason = reason
    this.running--
  }

  private cancelMarket(user: string, m: BotMarket, host: LpHost, events: EngineEvent[]): void {
    for (const id of m.orderIds) {
      const o = host.engine.orders.get(id)
      if (o !== undefined && o.account.user === user) host.cancelOrder(user, id, events)
    }
    m.orderIds = []
  }

  private addSession(s: LpSession): void {
    this.sessions.set(s.sessionPub, s)
    const list = this.sessionsOfUser.get(s.user)
    if (list === undefined) this.sessionsOfUser.set(s.user, [s.sessionPub])
    else list.push(s.sessionPub)
  }

  /** Bounds what unauthenticated-by-signature session/new calls can make the state hold. */
  private prunePending(user: string): void {
    const list = this.sessionsOfUser.get(user)!
    const pending = list.filter((pub) => this.sessions.get(pub)!.delegation === null)
    for (const pub of pending.slice(0, Math.max(0, pending.length - MAX_PENDING_SESSIONS))) {
      this.sessions.delete(pub)
      list.splice(list.indexOf(pub), 1)
    }
  }

  toJSON(): LpBookJson {
    return {
      sessions: [...this.sessions.values()].sort((a, b) => (a.sessionPub < b.sessionPub ? -1 : 1)).map((s) => structuredClone(s)),
      counters: [...this.counters.entries()].sort(byKey),
      nonces: [...this.nonces.entries()].sort(byKey),
      bots: [...this.bots.values()].sort((a, b) => (a.user < b.user ? -1 : 1)).map((b) => structuredClone(b))
    }
  }

  static fromJSON(j: LpBookJson | undefined): LpBook {
    const book = new LpBook()
    if (j === undefined) return book
    // Sessions are re-added oldest first so each user's list keeps its order.
    const sessions = [...j.sessions].sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : a.counter - b.counter))
    for (const s of sessions) book.addSession(structuredClone(s))
    for (const [user, n] of j.counters) book.counters.set(user, n)
    for (const [user, n] of j.nonces) book.nonces.set(user, n)
    for (const b of j.bots) {
      book.bots.set(b.user, structuredClone(b))
      if (b.status === "running") book.running++
    }
    return book
  }
}
