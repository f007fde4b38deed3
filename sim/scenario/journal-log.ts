// The run log: a JSON-lines file — a header line, then every journal record — that
// `npm run replay` re-executes to prove the final hashes. The hashes are defined here
// once for the runner and the replayer.
import { createHash } from "node:crypto"
import { createReadStream, mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { createInterface } from "node:readline"
import type { JournalRecord } from "../../src/service/commands.ts"

export const LOG_FORMAT = "twinbook-sim-log"
export const LOG_VERSION = 1

export interface LogHeader {
  readonly format: typeof LOG_FORMAT
  readonly version: number
  readonly scenario: string
  readonly seed: number
  readonly startSec: number
  readonly records: number
  readonly journalHash: string
  readonly stateHash: string
}

/** sha256 over the records' canonical JSON, one per line: the run's identity. */
export const journalHash = (records: ReadonlyArray<JournalRecord>): string => {
  const h = createHash("sha256")
  for (const r of records) h.update(JSON.stringify(r)).update("\n")
  return h.digest("hex")
}

/** The log's text: what writeLog writes (a sweep worker on another machine sends it to the caller to write). */
export const logText = (header: LogHeader, records: ReadonlyArray<JournalRecord>): string => {
  const lines = [JSON.stringify(header)]
  for (const r of records) lines.push(JSON.stringify(r))
  return `${lines.join("\n")}\n`
}

export const writeLog = (path: string, header: LogHeader, records: ReadonlyArray<JournalRecord>): void => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, logText(header, records))
}

export const readLog = async (path: string): Promise<{ header: LogHeader; records: JournalRecord[] }> => {
  const rl = createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity })
  let header: LogHeader | null = null
  const records: JournalRecord[] = []
  let line = 0
  for await (const text of rl) {
    line++
    if (text === "") continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      throw new Error(`${path}:${line}: not JSON`)
    }
    if (header === null) {
      const h = value as Partial<LogHeader>
      if (h.format !== LOG_FORMAT) throw new Error(`${path}: not a twinbook simulation log (first line has no "format": "${LOG_FORMAT}")`)
      if (h.version !== LOG_VERSION) throw new Error(`${path}: log version ${h.version}, this build reads ${LOG_VERSION}`)
      header = h as LogHeader
    } else records.push(value as JournalRecord)
  }
  if (header === null) throw new Error(`${path}: empty log`)
  if (records.length !== header.records) throw new Error(`${path}: header promises ${header.records} records, file holds ${records.length} (truncated?)`)
  return { header, records }
}
