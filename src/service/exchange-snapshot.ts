// The whole exchange as one JSON value: the engine's snapshot plus the service's
// own state (catalogue with statuses and volumes, builders, surfaces, the pause
// queue, the journal position). Trade history is not here: it lives in the
// history store, which is flushed before every snapshot.
import { createHash } from "node:crypto"
import { type EngineSnapshot, restoreSnapshot, takeSnapshot } from "../engine/snapshot.ts"
import type { EventRecord } from "./catalog.ts"
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
  queue: [...x.queue]
})

export const restoreExchange = (s: ExchangeSnapshot, nowMs: () => number, journal: JournalSink): Exchange => {
  if (s.version !== EXCHANGE_SNAPSHOT_VERSION) throw new Error(`unsupported exchange snapshot version ${String(s.version)}`)
  const x = new Exchange(nowMs, journal)
  x.engine = restoreSnapshot(s.engine)
  for (const e of s.events) x.catalog.add({ ...e, outcomes: e.outcomes.map((o) => ({ ...o })) })
  for (const b of s.builders) {
    x.builders.set(b.user, { ...b })
    x.builderUserByKey.set(b.apiKey, b.user)
  }
  x.trading = s.trading
  x.lp = s.lp
  x.queue.push(...s.queue)
  x.lastSeq = s.seq
  x.tsSec = s.tsSec
  return x
}

/** SHA-256 of the exchange's canonical snapshot: equal states, equal hashes. */
export const exchangeHash = (x: Exchange): string => createHash("sha256").update(JSON.stringify(takeExchangeSnapshot(x))).digest("hex")
