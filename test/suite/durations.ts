// Each test file's weight for the suite's order (test/suite/sequencer.ts): pure, so a test and
// the recorder (scripts/test-durations.ts) use it without vitest's node API.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { isSlowSource } from "./slow-files.ts"

/** Seconds a file not in the record is taken to run: slow-looking files before quick ones. */
export const GUESS_SLOW_SEC = 20
export const GUESS_QUICK_SEC = 1

export const DURATIONS_FILE = join(import.meta.dirname, "durations.json")

export const recordedDurations = (file = DURATIONS_FILE): Record<string, number> => {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, number>
  } catch {
    return {}
  }
}

/** A file's weight in seconds: recorded, or guessed from its source. */
export const weightOf = (path: string, recorded: Readonly<Record<string, number>>, source: () => string): number => {
  const sec = recorded[path]
  if (sec !== undefined) return sec
  return isSlowSource(source()) ? GUESS_SLOW_SEC : GUESS_QUICK_SEC
}

/** Longest first; ties by path, so the order is the same on every machine. */
export const longestFirst = <T>(items: ReadonlyArray<T>, weight: (t: T) => number, name: (t: T) => string): T[] =>
  items
    .map((t) => ({ t, w: weight(t), n: name(t) }))
    .sort((a, b) => b.w - a.w || (a.n < b.n ? -1 : a.n > b.n ? 1 : 0))
    .map((x) => x.t)
