// The whole exchange as one JSON value: the engine's snapshot plus the service's
// own state (catalogue with statuses and volumes, builders, surfaces, the pause
// queue, the journal position). Trade history is not here: it lives in the
// history store, which is flushed before every snapshot.
import { createHash } from "node:crypto"
import { type EngineSnapshot, restoreSnapshot, takeSnapshot } from "../engine/snapshot.ts"
import type { EventRecord } from "./catalog.ts"
import type { DepositRecord } from "./deposits.ts"
import { LpBook, type LpBookJson } from "./lp-book.ts"
import { RewardsBook, type RewardsBookJson } from "./rewards-book.ts"
import type { WithdrawalRecord } from "./withdrawals.ts"
import type { LpState, OrderBody, TradingState } from "./commands.ts"
import { type BuilderRecord, Exchange, type JournalSink } from "./exchange.ts"

export const EXCHANGE_SNAPSHOT_VERSION = 1

export interface ExchangeSnapshot {
  readonly version: typeof EXCHANGE_SNAPSHOT_VERSION
  readonly seq: number
  readonly tsSec: number
  readonly engine: EngineSnapshot
  readonly events: ReadonlyArray<EventRecord>
  readonly builders: ReadonlyArray<BuilderRecord>
  readonly trading: TradingState
  readonly lp: LpState
  readonly queue: ReadonlyArray<OrderBody>
  /** [user, wallet] pairs, sorted by user. Absent in snapshots written before wallet links. */
  readonly wallets?: ReadonlyArray<readonly [string, string]>
  /** [deposit address, wallet] pairs, sorted by address. */
  readonly watched?: ReadonlyArray<readonly [string, string]>
  /** Deposit records in the order they were seen. */
  readonly deposits?: ReadonlyArray<DepositRecord>
  readonly withdrawals?: ReadonlyArray<WithdrawalRecord>
  /** LP sessions, delegations and bots. Absent in snapshots written before the LP bot. */
  readonly lpBots?: LpBookJson
  /** The LP pool's accrual, paid days and totals. */
  readonly rewards?: RewardsBookJson
}

export const takeExchangeSnapshot = (x: Exchange): ExchangeSnapshot => ({
  version: EXCHANGE_SNAPSHOT_VERSION,
  seq: x.lastSeq,
  tsSec: x.tsSec,
  engine: takeSnapshot(x.engine),
  events: x.catalog.events.map((e) => ({ ...e, outcomes: e.outcomes.map((o) => ({ ...o })) })),
  builders: [...x.builders.values()].sort((a, b) => (a.user < b.user ? -1 : 1)).map((b) => ({ ...b })),
  trading: x.trading,
  lp: x.lp,
  queue: [...x.queue],
  wallets: [...x.walletOfUser.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  watched: [...x.watched.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  deposits: [...x.deposits.byKey.values()].map((d) => ({ ...d })),
  withdrawals: [...x.withdrawals.byId.values()].map((w) => ({ ...w })),
  lpBots: x.lpBook.toJSON(),
  rewards: x.rewards.toJSON()
})

/** `monoMs`: the process's monotonic clock (the Exchange's third argument; the wall clock when absent). */
export const restoreExchange = (s: ExchangeSnapshot, nowMs: () => number, journal: JournalSink, monoMs: () => number = nowMs): Exchange => {
  if (s.version !== EXCHANGE_SNAPSHOT_VERSION) throw new Error(`unsupported exchange snapshot version ${String(s.version)}`)
  const x = new Exchange(nowMs, journal, monoMs)
  x.engine = restoreSnapshot(s.engine)
  for (const e of s.events) x.catalog.add({ ...e, outcomes: e.outcomes.map((o) => ({ ...o })) })
  for (const b of s.builders) {
    x.builders.set(b.user, { ...b })
    x.builderUserByKey.set(b.apiKey, b.user)
  }
  x.trading = s.trading
  x.lp = s.lp
  x.queue.push(...s.queue)
  for (const [user, wallet] of s.wallets ?? []) {
    x.walletOfUser.set(user, wallet)
    x.userOfWallet.set(wallet, user)
  }
  for (const [address, wallet] of s.watched ?? []) x.watched.set(address, wallet)
  for (const d of s.deposits ?? []) x.deposits.add({ ...d })
  for (const w of s.withdrawals ?? []) x.withdrawals.add({ ...w })
  x.lpBook = LpBook.fromJSON(s.lpBots)
  x.rewards = RewardsBook.fromJSON(s.rewards)
  x.lastSeq = s.seq
  x.tsSec = s.tsSec
  return x
}

/** SHA-256 of the exchange's canonical snapshot: equal states, equal hashes. */
export const exchangeHash = (x: Exchange): string => createHash("sha256").update(JSON.stringify(takeExchangeSnapshot(x))).digest("hex")
