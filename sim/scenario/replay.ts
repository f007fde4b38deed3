// Replay: re-executes a run's journal in a fresh exchange and proves the final
// hashes. The records carry their own time, so replay needs no clock.
import { findViolations } from "../../src/engine/invariants.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import { Exchange, memoryJournal } from "../../src/service/exchange.ts"
import { journalHash, type LogHeader } from "./journal-log.ts"

export interface ReplayResult {
  readonly records: number
  readonly journalHash: string
  readonly stateHash: string
  readonly journalMatches: boolean
  readonly stateMatches: boolean
  readonly violations: ReadonlyArray<string>
}

export const replayRecords = (header: LogHeader, records: ReadonlyArray<JournalRecord>): ReplayResult => {
  const x = new Exchange(() => header.startSec * 1000, memoryJournal())
  for (const r of records) x.apply(r)
  const jh = journalHash(records)
  const sh = exchangeHash(x)
  return {
    records: records.length,
    journalHash: jh,
    stateHash: sh,
    journalMatches: jh === header.journalHash,
    stateMatches: sh === header.stateHash,
    violations: findViolations(x.engine)
  }
}
