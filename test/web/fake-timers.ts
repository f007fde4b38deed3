// Virtual time for the in-browser bot's loop (tests and the cadence bench): timers run in due
// order as time advances; `sleep` moves time without running any (a sleeping laptop); `lateByMs`
// delays every new timer (a throttled background tab).
import type { Timers } from "../../web/src/bot/loop.ts"

interface Entry { readonly id: number; readonly at: number; readonly fn: () => void }

/** Lets every already-resolved promise chain run (the fakes answer at once). */
const flush = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0))

export class FakeTimers implements Timers {
  private now: number
  private seq = 0
  private queue: Entry[] = []
  lateByMs = 0

  constructor(startMs: number) {
    this.now = startMs
  }

  nowMs(): number {
    return this.now
  }

  set(fn: () => void, ms: number): unknown {
    const id = ++this.seq
    this.queue.push({ id, at: this.now + Math.max(0, ms) + this.lateByMs, fn })
    return id
  }

  clear(handle: unknown): void {
    this.queue = this.queue.filter((e) => e.id !== handle)
  }

  pending(): number {
    return this.queue.length
  }

  /** Runs every timer due within the next `ms`, in order, letting each tick's promises settle. */
  async advance(ms: number): Promise<void> {
    const until = this.now + ms
    await flush()
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at || a.id - b.id)
      const next = this.queue[0]
      if (next === undefined || next.at > until) break
      this.queue.shift()
      this.now = Math.max(this.now, next.at)
      next.fn()
      await flush()
    }
    this.now = until
  }

  /** Time passes and no timer runs (the machine sleeps). */
  async sleep(ms: number): Promise<void> {
    this.now += ms
  }
}
