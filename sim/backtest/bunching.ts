// Bunched timestamps (docs/backtesting.md "Sanity checks"). The journal stamps whole seconds, and
// a tape gives the k records of one second the offsets 0, 1, 2 … ms; a clock step (an old
// service's clamped clock, a host's wall clock pinned after a forward excursion) can put minutes
// of records into one second. The backtest then replays them as if they came within it: a ticked
// bot steps once in that second, and a bot that starts inside it takes its first step after all
// of them, quoting none. Nothing is wrong with the rows, so it is a loud warning, not an error.
import { dayLabel, dayOfSec } from "../../src/service/rewards-book.ts"

/** A second is bunched when it holds more than this many times the median events of the data's active seconds… */
export const BUNCH_FACTOR = 10
/** …and more than this many events (so sparse data, with a median of 1 or 2, does not warn at a burst of 20). */
export const BUNCH_MIN_EVENTS = 100
/** At most this many stretches are named in a warning; the count says how many there are. */
const NAMED = 5

/** Consecutive bunched seconds. */
export interface BunchedStretch {
  readonly fromSec: number
  readonly toSec: number
  /** Events (trades, order events and snapshots) stamped in the stretch. */
  readonly events: number
}

export interface Bunching {
  /** The median events per second over the seconds that have any. */
  readonly medianEvents: number
  /** A second with more events than this is bunched: max(BUNCH_MIN_EVENTS, BUNCH_FACTOR × median). */
  readonly thresholdEvents: number
  readonly stretches: ReadonlyArray<BunchedStretch>
}

/** Counts events per whole second of time-sorted `tMs` and finds the bunched stretches. */
export const findBunching = (tMs: ArrayLike<number>, count: number): Bunching => {
  const secs: number[] = []
  const counts: number[] = []
  for (let i = 0; i < count; ) {
    const sec = Math.floor(tMs[i]! / 1000)
    let j = i + 1
    while (j < count && Math.floor(tMs[j]! / 1000) === sec) j++
    secs.push(sec)
    counts.push(j - i)
    i = j
  }
  const sorted = Int32Array.from(counts).sort()
  const n = sorted.length
  const medianEvents = n === 0 ? 0 : n % 2 === 1 ? sorted[n >> 1]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2
  const thresholdEvents = Math.max(BUNCH_MIN_EVENTS, BUNCH_FACTOR * medianEvents)
  const stretches: BunchedStretch[] = []
  for (let k = 0; k < secs.length; k++) {
    if (counts[k]! <= thresholdEvents) continue
    const last = stretches.at(-1)
    if (last !== undefined && last.toSec === secs[k]! - 1) stretches[stretches.length - 1] = { fromSec: last.fromSec, toSec: secs[k]!, events: last.events + counts[k]! }
    else stretches.push({ fromSec: secs[k]!, toSec: secs[k]!, events: counts[k]! })
  }
  return { medianEvents, thresholdEvents, stretches }
}

/** "YYYY-MM-DDTHH:MM:SSZ" of a unix second, without a Date (sim/ reads no clock). */
const utc = (sec: number): string => {
  const t = sec - dayOfSec(sec) * 86_400
  const two = (x: number): string => String(x).padStart(2, "0")
  return `${dayLabel(dayOfSec(sec))}T${two(Math.floor(t / 3600))}:${two(Math.floor(t / 60) % 60)}:${two(t % 60)}Z`
}
const span = (s: BunchedStretch): string => (s.fromSec === s.toSec ? `second ${s.fromSec} (${utc(s.fromSec)})` : `seconds ${s.fromSec}–${s.toSec} (${utc(s.fromSec)} to ${utc(s.toSec)})`)
const n = (x: number): string => x.toLocaleString("en-US")

/** The input warning for bunched timestamps, or null when no second is bunched. */
export const bunchingWarning = (b: Bunching): string | null => {
  if (b.stretches.length === 0) return null
  const named = b.stretches.slice(0, NAMED).map((s) => `${span(s)}: ${n(s.events)} events`).join("; ")
  const more = b.stretches.length > NAMED ? `; and ${b.stretches.length - NAMED} more stretch(es)` : ""
  return `timestamps bunch: ${b.stretches.length} stretch(es) of seconds each holding more than ${n(b.thresholdEvents)} events (${BUNCH_FACTOR}× the median of ${n(b.medianEvents)} per active second, at least ${BUNCH_MIN_EVENTS}): ${named}${more}. Records stamped in one second are replayed as if they came within it (a clock step can put minutes of records there), so a ticked bot steps at most once a second through them`
}

/** The input warning for a strategy that starts inside a bunched stretch, or null. */
export const startWarning = (b: Bunching, startSec: number | null): string | null => {
  if (startSec === null) return null
  const s = b.stretches.find((x) => x.fromSec <= startSec && startSec <= x.toSec)
  if (s === undefined) return null
  return `the strategy starts at ${startSec} (${utc(startSec)}), inside bunched ${span(s)} (${n(s.events)} events): the events stamped from its start to the end of that stretch are replayed before its first step (a ticked bot's first step is the next whole second), so it quotes none of them`
}
