// The auditor's business-time check (docs/time.md "Business time"): within one process, journal
// time keeps pace with elapsed (monotonic) time whatever the wall clock does. Business time runs
// at SLOW_RATE to FAST_RATE of real time (src/time/business-clock.ts), and records carry its
// whole seconds, so for records stamped Δ ms of elapsed time apart:
//  * one journal second is never stamped on records 1000 / SLOW_RATE ms or more apart (it stood still);
//  * over a window of WINDOW_MS or more, journal seconds advance by at least ⌊SLOW_RATE·Δ / 1000⌋;
//  * between two records they advance by at most ⌊FAST_RATE·Δ / 1000⌋ + 1 (it jumped).
// The bounds follow exactly from the rates (⌊a + b⌋ ≥ ⌊a⌋ + ⌊b⌋), so a correct service never trips them.
import { FAST_RATE, SLOW_RATE } from "../../src/time/business-clock.ts"

/** The length of the windows the slowest rate is checked over. */
export const WINDOW_MS = 60_000

interface Stamp {
  readonly monoMs: number
  readonly tsSec: number
}

export class JournalPace {
  /** The first record of the current journal second, and whether that second was reported. */
  private secondStart: Stamp | null = null
  private secondRecords = 0
  private secondReported = false
  private windowStart: Stamp | null = null
  private last: Stamp | null = null

  /** A new process: its first record may start anywhere at or after the journal's last one. */
  restart(): void {
    this.secondStart = this.windowStart = this.last = null
    this.secondRecords = 0
    this.secondReported = false
  }

  /** One record stamped `tsSec`, applied at monotonic time `monoMs`; returns what it breaks. */
  observe(monoMs: number, tsSec: number): string[] {
    const out: string[] = []
    const at: Stamp = { monoMs, tsSec }
    const last = this.last
    if (last !== null) {
      const maxSec = Math.floor((FAST_RATE * (monoMs - last.monoMs)) / 1000) + 1
      if (tsSec - last.tsSec > maxSec) {
        out.push(`journal time jumped ${tsSec - last.tsSec} s between records ${ms(monoMs - last.monoMs)} of elapsed time apart (at most ${maxSec} s)`)
      }
    }
    this.last = at
    if (this.secondStart === null || this.secondStart.tsSec !== tsSec) {
      this.secondStart = at
      this.secondRecords = 0
      this.secondReported = false
    }
    this.secondRecords++
    const spanMs = monoMs - this.secondStart.monoMs
    if (!this.secondReported && spanMs >= 1000 / SLOW_RATE) {
      this.secondReported = true
      out.push(`journal time stood still: second ${tsSec} stamped on ${this.secondRecords} records over ${ms(spanMs)} of elapsed time (under ${ms(1000 / SLOW_RATE)})`)
    }
    const window = this.windowStart
    if (window === null) this.windowStart = at
    else if (monoMs - window.monoMs >= WINDOW_MS) {
      const minSec = Math.floor((SLOW_RATE * (monoMs - window.monoMs)) / 1000)
      if (tsSec - window.tsSec < minSec) out.push(`journal time advanced ${tsSec - window.tsSec} s over ${ms(monoMs - window.monoMs)} of elapsed time (at least ${minSec} s)`)
      this.windowStart = at
    }
    return out
  }
}

const ms = (v: number): string => `${(v / 1000).toFixed(1)} s`
