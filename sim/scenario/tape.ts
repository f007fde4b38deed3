// `npm run sim -- <scenario> --tape DIR`: the run's journal replayed into the market tape
// (src/store/tape.ts), the exact input of `npm run backtest -- --data DIR`.
import type { JournalRecord } from "../../src/service/commands.ts"
import { type Tape, tapeFromRecords, type TapeFileFormat, writeTape } from "../../src/store/tape.ts"
import type { Summary } from "./run.ts"

export interface TapeOptions {
  readonly dir: string
  /** Book snapshots every this many seconds (where a book changed); 0: at every change; null: trades only. */
  readonly intervalSec: number | null
  readonly format: TapeFileFormat
}

export const DEFAULT_TAPE_INTERVAL_SEC = 1

/** `without`: agents left out of the world (named in the source); `exclude`: users whose orders the tape leaves out of a world they were in. */
export const tapeOfRun = (summary: Pick<Summary, "records" | "scenario" | "seed">, intervalSec: number | null, without: ReadonlyArray<string> = [], exclude: ReadonlyArray<string> = []): Tape => {
  const source = `sim ${summary.scenario} seed ${summary.seed}${without.length > 0 ? ` without ${without.join(", ")}` : ""}${exclude.length > 0 ? ` excluding ${exclude.length} user(s)` : ""}`
  return tapeFromRecords(summary.records as ReadonlyArray<JournalRecord>, { intervalSec, source, exclude })
}

export const writeRunTape = async (
  summary: Pick<Summary, "records" | "scenario" | "seed">, opts: TapeOptions, without: ReadonlyArray<string> = [], exclude: ReadonlyArray<string> = []
): Promise<{ tape: Tape; files: string[] }> => {
  const tape = tapeOfRun(summary, opts.intervalSec, without, exclude)
  return { tape, files: await writeTape(opts.dir, tape, opts.format) }
}
