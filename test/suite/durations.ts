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

/** A test file that says of itself, in a line of its own, that it mostly waits (on NATS, a browser…). */
export const WAITS_MARKER = /^\/\/ suite: mostly waits\b/m

export const mostlyWaits = (source: string): boolean => WAITS_MARKER.test(source)

/**
 * Longest first, except that a file which mostly waits is not started while another one runs:
 * the order is planned on `workers` simulated workers (each takes the next file when it is free,
 * as vitest's pool does), and a free worker skips to the longest file that computes while the
 * other runs one that waits. Two such files side by side left the two cores 50–85% idle for 45 s
 * (issue 35, run 43: the browser journeys beside the NATS journal's elections).
 */
export const plannedOrder = <T>(items: ReadonlyArray<T>, weight: (t: T) => number, waits: (t: T) => boolean, name: (t: T) => string, workers = 2): T[] => {
  // Each file's weight and kind once (each may read the file), not at every step of the plan.
  const facts = new Map(items.map((t) => [t, { w: weight(t), waits: waits(t) }]))
  const remaining = longestFirst(items, (t) => facts.get(t)!.w, name)
  const busy: Array<{ endsAt: number; waits: boolean }> = Array.from({ length: workers }, () => ({ endsAt: 0, waits: false }))
  const out: T[] = []
  while (remaining.length > 0) {
    const free = busy.reduce((a, b) => (b.endsAt < a.endsAt ? b : a))
    const now = free.endsAt
    const otherWaits = busy.some((b) => b !== free && b.endsAt > now && b.waits)
    const i = otherWaits ? Math.max(0, remaining.findIndex((t) => !facts.get(t)!.waits)) : 0
    const [next] = remaining.splice(i, 1)
    const f = facts.get(next!)!
    out.push(next!)
    free.endsAt = now + f.w
    free.waits = f.waits
  }
  return out
}
