// What each LP bot really did in a live run, read back from its journal: fills, cash, holdings,
// rebates and rewards by day, the live market's final marks (the others' mid), and the fills with
// the mid path the PnL attribution reads.
import { keyFromSecret } from "../../src/client/keys.ts"
import type { BookSide } from "../../src/engine/book.ts"
import type { EngineEvent } from "../../src/engine/types.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { type AttributedFill, attribute, type PnlAttribution } from "../backtest/attribution.ts"
import { type MidPath, midAt } from "../backtest/stats.ts"
import { Rng } from "../world/random.ts"
import { agentNames } from "../scenario/run.ts"
import type { Scenario } from "../scenario/scenario.ts"

/** What one bot did, read from the live run's journal. */
export interface Realised {
  readonly agent: string
  readonly user: string
  readonly startSec: number
  readonly markets: ReadonlyArray<string>
  readonly strategy: Readonly<Record<string, string | number>>
  /** The user's balance when the bot started: what the backtest account holds. */
  readonly balanceMicro: number
  readonly fills: number
  readonly filledContracts: number
  readonly rebatesMicro: number
  /** Per market: cash from fills (rebates excluded) and the final holdings. */
  readonly byMarket: Readonly<Record<string, { cashMicro: number; yes: number; no: number }>>
  /** Rewards paid to the user, by day. */
  readonly rewardsByDay: Readonly<Record<string, number>>
  /** Every day the service paid (a journaled `pay_rewards` that paid), whether or not the bot earned on it. */
  readonly paidDays: ReadonlyArray<number>
  /**
   * The live market's final mark per market of the bot: the mid of everyone else's book (the
   * bot's own quotes left out, as the bot and the backtester read a mid), the last time both
   * sides had one; null if they never did.
   */
  readonly liveMarksBps: Readonly<Record<string, number | null>>
  /** Users with an LP bot whose ids sort before this one's: the bots the runner steps ahead of it in each pass (sim/backtest/pass.ts). */
  readonly botsAheadInPass: number
  /** The bot's fills (market: index into `markets`) with the others' mid just before each, and that mid's path per market, for the PnL attribution. */
  readonly attribution: { readonly fills: ReadonlyArray<AttributedFill>; readonly midPaths: ReadonlyArray<MidPath>; readonly endMs: number }
}

export const userOfAgent = (seed: number, name: string): string =>
  keyFromSecret(new Rng(`twinbook-sim:${seed}`).fork("agents").fork(name).bytes32("ed25519")).user

const BOT_KIND = "lp_bot"

/** The LP-bot agents of a scenario, by name. */
export const botAgents = (scenario: Scenario): string[] => agentNames(scenario).filter((n) => n.startsWith(`${BOT_KIND}-`))

/** One bot's running account while the journal is replayed (realisedOf). */
type Acc = {
  startSec: number; markets: string[]; strategy: Record<string, string | number>; balanceMicro: number; fills: number; filled: number; rebates: number
  byMarket: Record<string, { cashMicro: number; yes: number; no: number }>; rewards: Record<string, number>; marks: Record<string, number | null>
  attributed: AttributedFill[]; paths: Array<{ tMs: number[]; midBps: number[] }>
}

/** One side of a fill, if it is a tracked bot's: its cash, holdings, rebate and the fill as the attribution reads it (the mid before: the path's last point). */
const accountFill = (s: Acc, ev: Extract<EngineEvent, { type: "fill" }>, tsSec: number, side: "buy" | "sell", outcome: "yes" | "no", priceBps: number, rebate: number): void => {
  const m = s.byMarket[ev.marketId]
  if (m === undefined) return
  const idx = s.markets.indexOf(ev.marketId)
  s.fills++
  s.filled += ev.size
  s.attributed.push({
    tMs: tsSec * 1000, market: idx, side, outcome, yesPriceBps: outcome === "yes" ? priceBps : 10_000 - priceBps, size: ev.size, cause: "trade",
    midBeforeBps: s.paths[idx]!.midBps.at(-1) ?? null
  })
  s.rebates += rebate
  const notional = ev.size * priceBps * 100
  m.cashMicro += side === "buy" ? -notional : notional
  if (outcome === "yes") m.yes += side === "buy" ? ev.size : -ev.size
  else m.no += side === "buy" ? ev.size : -ev.size
}

/**
 * After a record: the others' mid per market of the bot, kept while both sides have one (the mark
 * the run ends on), and the attribution's mid path: the mid the bot quotes around
 * (src/service/lp-bot-market.ts), the others' mid, else the last trade's price.
 */
const trackMids = (x: Exchange, user: string, s: Acc, tsSec: number, lastTradeBps: ReadonlyMap<string, number>): void => {
  for (const id of s.markets) {
    const m = x.engine.markets.get(id)
    const bid = m === undefined ? -1 : othersBest(m.bids, user)
    const ask = m === undefined ? -1 : othersBest(m.asks, user)
    if (bid >= 0 && ask >= 0) s.marks[id] = (bid + ask) / 2
    const mid = bid >= 0 && ask >= 0 ? (bid + ask) / 2 : (lastTradeBps.get(id) ?? null)
    const path = s.paths[s.markets.indexOf(id)]!
    if (mid !== null && path.midBps.at(-1) !== mid) {
      path.tMs.push(tsSec * 1000)
      path.midBps.push(mid)
    }
  }
}

/** Each named bot's realised outcome, replaying the live run's journal. */
export const realisedOf = (records: ReadonlyArray<JournalRecord>, bots: ReadonlyArray<{ agent: string; user: string }>): Realised[] => {
  const x = new Exchange(() => 0, memoryJournal())
  x.history.seed([], Number.POSITIVE_INFINITY)
  const byUser = new Map(bots.map((b) => [b.user, b.agent]))
  const acc = new Map<string, Acc>()
  const paidDays: number[] = []
  const botUsers = new Set<string>()
  // Each market's last trade (YES bps): the history keeps none here (seeded to skip every record, to save memory).
  const lastTradeBps = new Map<string, number>()
  let current: JournalRecord | null = null
  x.onApply((_r, result) => {
    if (result.paid !== undefined) paidDays.push(result.paid.day)
    const cmd = current!.cmd
    if (cmd.type === "lp_start") botUsers.add(cmd.user)
    if (cmd.type === "lp_start" && byUser.has(cmd.user) && !acc.has(cmd.user)) {
      const a = x.engine.accounts.get(cmd.user)
      acc.set(cmd.user, {
        startSec: current!.tsSec, markets: [...cmd.marketIds], strategy: { ...cmd.strategy }, balanceMicro: (a?.availableMicro ?? 0) + (a?.lockedMicro ?? 0),
        fills: 0, filled: 0, rebates: 0, byMarket: Object.fromEntries(cmd.marketIds.map((m) => [m, { cashMicro: 0, yes: 0, no: 0 }])), rewards: {},
        marks: Object.fromEntries(cmd.marketIds.map((m) => [m, null])), attributed: [], paths: cmd.marketIds.map(() => ({ tMs: [], midBps: [] }))
      })
    }
    for (const ev of result.events as ReadonlyArray<EngineEvent>) {
      if (ev.type === "fill") {
        lastTradeBps.set(ev.marketId, ev.yesPriceBps)
        for (const [user, side, outcome, priceBps, rebate] of [
          [ev.makerUser, ev.makerSide, ev.makerOutcome, ev.makerPriceBps, ev.makerRebateMicro],
          [ev.takerUser, ev.takerSide, ev.takerOutcome, ev.takerPriceBps, 0]
        ] as const) {
          const s = acc.get(user)
          if (s !== undefined) accountFill(s, ev, current!.tsSec, side, outcome, priceBps, rebate)
        }
      } else if (ev.type === "credited" && ev.ref.startsWith("rewards:")) {
        const s = acc.get(ev.user)
        if (s !== undefined) s.rewards[ev.ref.slice("rewards:".length)] = (s.rewards[ev.ref.slice("rewards:".length)] ?? 0) + ev.amountMicro
      }
    }
  })
  for (const r of records) {
    current = r
    x.apply(r)
    for (const [user, s] of acc) trackMids(x, user, s, r.tsSec, lastTradeBps)
  }
  return [...acc.entries()].map(([user, s]) => ({
    agent: byUser.get(user)!, user, startSec: s.startSec, markets: s.markets, strategy: s.strategy, balanceMicro: s.balanceMicro,
    fills: s.fills, filledContracts: s.filled, rebatesMicro: s.rebates, byMarket: s.byMarket, rewardsByDay: s.rewards, paidDays, liveMarksBps: s.marks,
    botsAheadInPass: [...botUsers].filter((u) => u < user).length,
    attribution: { fills: s.attributed, midPaths: s.paths, endMs: (records.at(-1)?.tsSec ?? 0) * 1000 }
  }))
}

/** The best price on a side among orders not `user`'s, or -1. */
const othersBest = (side: BookSide, user: string): number => {
  for (let p = side.best; p !== -1; p = side.nextPrice(p)) {
    for (let o = side.levels[p]?.head ?? null; o !== null; o = o.next) if (o.account.user !== user) return p
  }
  return -1
}

/** The bot's trading cash in its markets plus its final holdings at the given marks (a market without a mark adds only its cash). */
export const realisedTradingPnlAt = (realised: Realised, marks: ReadonlyMap<string, number | null> | null): number =>
  Object.entries(realised.byMarket).reduce((s, [id, m]) => {
    const mark = marks?.get(id) ?? null
    return s + m.cashMicro + (mark === null ? 0 : Math.floor(m.yes * mark * 100 + m.no * (10_000 - mark) * 100))
  }, 0)

/** The live bot's trading PnL (at the live market's marks) split as a backtest's is, on the others' mid. */
export const realisedAttribution = (realised: Realised, tradingPnlMicro: number): PnlAttribution => {
  const a = realised.attribution
  return attribute(a.fills, (m, tMs) => midAt(a.midPaths[m]!, tMs, false), a.endMs, tradingPnlMicro)
}
