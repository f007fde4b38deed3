// The discrete-event scheduler: the simulation's only clock. Its virtual time is the
// monotonic clock (`nowMs`); the service's wall clock (`wallMs`) is virtual time plus an
// offset that `stepWall` moves, as an NTP step moves a host's clock while its monotonic
// clock runs on (docs/time.md). Virtual time moves
// only when the next event is taken, so a simulated day runs as fast as its events
// allow and nothing waits on the wall clock. Events at the same instant run in the
// order they were scheduled; before time moves on, every promise continuation those
// events started runs to completion (`drainMicrotasks`), so async service code sees the
// virtual time of the event that started it. Nothing real (I/O, threads, timers, and
// process.nextTick, on which the drain relies) may run inside the world: that would make
// the order of continuations depend on the machine (see docs/simulation.md).

interface Timer {
  readonly atMs: number
  readonly order: number
  readonly run: () => void
  /** Starts no async work: the loop need not drain microtasks after it. */
  readonly sync: boolean
  cancelled: boolean
}

/** A cancellable handle for a scheduled event. */
export interface Scheduled {
  cancel(): void
}

export class Scheduler {
  private heap: Timer[] = []
  private order = 0
  private nowMsValue: number
  /** The wall clock minus virtual time: 0 until a clock step. */
  private wallOffsetMs = 0
  /** Events run so far. */
  executed = 0
  /** Microtask drains so far (one per instant that started async work). */
  drains = 0

  constructor(startMs: number) {
    this.nowMsValue = startMs
  }

  nowMs(): number {
    return this.nowMsValue
  }

  nowSec(): number {
    return Math.floor(this.nowMsValue / 1000)
  }

  /** The (simulated) wall clock: virtual time plus every step so far. */
  wallMs(): number {
    return this.nowMsValue + this.wallOffsetMs
  }

  /** Steps the wall clock by `deltaMs` (negative: back); virtual (monotonic) time is untouched. */
  stepWall(deltaMs: number): void {
    this.wallOffsetMs += Math.round(deltaMs)
  }

  get wallOffsetMsNow(): number {
    return this.wallOffsetMs
  }

  get pending(): number {
    return this.heap.length
  }

  /**
   * Runs `fn` at virtual time `atMs` (not before now). `sync` promises that `fn` starts no
   * async work (no promise continuations), so the loop skips the event-loop turn after it:
   * frame deliveries and block production, the bulk of a long run's events.
   */
  at(atMs: number, fn: () => void, sync = false): Scheduled {
    const t: Timer = { atMs: Math.max(Math.round(atMs), this.nowMsValue), order: this.order++, run: fn, sync, cancelled: false }
    this.push(t)
    return { cancel: () => void (t.cancelled = true) }
  }

  after(delayMs: number, fn: () => void, sync = false): Scheduled {
    return this.at(this.nowMsValue + Math.max(0, delayMs), fn, sync)
  }

  /** Resolves after `delayMs` of virtual time. */
  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.after(delayMs, resolve))
  }

  /** Calls `fn` every `periodMs` from `firstMs` until cancelled. */
  every(periodMs: number, fn: () => void, firstMs = this.nowMsValue + periodMs, sync = false): Scheduled {
    let cancelled = false
    let next: Scheduled
    const tick = (): void => {
      if (cancelled) return
      fn()
      next = this.after(periodMs, tick, sync)
    }
    next = this.at(firstMs, tick, sync)
    return {
      cancel: () => {
        cancelled = true
        next.cancel()
      }
    }
  }

  /**
   * Runs events in time order until none is left at or before `untilMs`, then sets the
   * clock to `untilMs`. `onStep(nowMs)` runs once each instant's work has settled;
   * returning false stops the run early.
   */
  async run(untilMs: number, onStep?: (nowMs: number) => boolean | void): Promise<void> {
    let dirty = false
    for (;;) {
      const t = this.heap[0]
      // Async work started at this instant settles before time moves on (or the run ends).
      if (dirty && (t === undefined || t.atMs > this.nowMsValue || t.atMs > untilMs)) {
        await drainMicrotasks(++this.drains % REAL_TURN_EVERY === 0)
        dirty = false
        if (onStep !== undefined && onStep(this.nowMsValue) === false) return
        continue
      }
      if (t === undefined || t.atMs > untilMs) break
      this.pop()
      if (t.cancelled) continue
      this.nowMsValue = t.atMs
      t.run()
      this.executed++
      if (!t.sync) dirty = true
    }
    if (untilMs > this.nowMsValue) this.nowMsValue = untilMs
  }

  private push(t: Timer): void {
    const h = this.heap
    h.push(t)
    let i = h.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(t, h[parent]!)) break
      h[i] = h[parent]!
      i = parent
    }
    h[i] = t
  }

  private pop(): void {
    const h = this.heap
    const last = h.pop()!
    if (h.length === 0) return
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      if (l >= h.length) break
      const r = l + 1
      const c = r < h.length && before(h[r]!, h[l]!) ? r : l
      if (!before(h[c]!, last)) break
      h[i] = h[c]!
      i = c
    }
    h[i] = last
  }
}

const before = (a: Timer, b: Timer): boolean => a.atMs < b.atMs || (a.atMs === b.atMs && a.order < b.order)

/** One drain in this many is a real event-loop turn: I/O outside the world (progress output, a sweep worker's messages) needs one now and then. */
const REAL_TURN_EVERY = 1024

/**
 * Resolves once every pending microtask (promise continuation), and every one those queue, has
 * run. A hop onto the microtask queue, then `process.nextTick`: Node runs the tick queue only when
 * the microtask queue is empty, so the tick fires after the last continuation. That holds while
 * nothing in the world calls process.nextTick itself (test/sim/no-real-timers.test.ts). A
 * `setImmediate` turn gives the same guarantee through the event loop; it was a fifth of a busy
 * day, so it is taken only when `realTurn`.
 */
const drainMicrotasks = (realTurn: boolean): Promise<void> =>
  new Promise((resolve) => (realTurn ? setImmediate(resolve) : queueMicrotask(() => process.nextTick(resolve))))
