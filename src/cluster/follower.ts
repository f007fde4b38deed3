// A replica: applies every batch of the replicated log, in order, to an exchange (a standby
// sequencer's, hot; a gateway's read replica). Records carry their own sequence numbers: one the
// exchange already has (it was restored past it) is skipped, a gap is an error, never papered over.
import type { Exchange } from "../service/exchange.ts"
import type { LogBatch, LogPosition, LogReader, ReplicatedLog } from "./ports.ts"

export interface FollowedBatch {
  readonly position: LogPosition
  readonly batch: LogBatch
}

export class LogFollower {
  /** The last position applied. */
  position: LogPosition
  /** The newest term seen in the log (term markers included). */
  term = 0
  private reader: LogReader | null = null
  private readonly waiting: Array<{ position: LogPosition; resolve: () => void; reject: (e: unknown) => void }> = []
  private readonly waitingSeq: Array<{ seq: number; resolve: () => void; reject: (e: unknown) => void }> = []
  private failure: unknown = null

  constructor(
    private readonly log: ReplicatedLog,
    private readonly exchange: Exchange,
    /** The position the exchange already holds (0: nothing). */
    from: LogPosition,
    private readonly onApplied?: (b: FollowedBatch) => void
  ) {
    this.position = from
  }

  start(): void {
    if (this.reader !== null) return
    this.reader = this.log.follow(this.position + 1, (position, batch) => this.apply(position, batch), (err) => this.fail(err))
  }

  /** Resolves once `position` is applied (rejects if following failed). */
  waitFor(position: LogPosition): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure)
    if (this.position >= position) return Promise.resolve()
    return new Promise((resolve, reject) => this.waiting.push({ position, resolve, reject }))
  }

  /** Resolves once the journal record `seq` is applied (rejects if following failed). */
  waitForSeq(seq: number): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure)
    if (this.exchange.lastSeq >= seq) return Promise.resolve()
    return new Promise((resolve, reject) => this.waitingSeq.push({ seq, resolve, reject }))
  }

  async stop(): Promise<void> {
    const r = this.reader
    this.reader = null
    await r?.stop()
  }

  private apply(position: LogPosition, batch: LogBatch): void {
    if (this.failure !== null) return
    if (position !== this.position + 1) return this.fail(new Error(`log gap: position ${position} after ${this.position}`))
    for (const record of batch.records) {
      if (record.seq <= this.exchange.lastSeq) continue
      if (record.seq !== this.exchange.lastSeq + 1) return this.fail(new Error(`journal gap in log position ${position}: record ${record.seq} after ${this.exchange.lastSeq}`))
      this.exchange.apply(record)
    }
    this.position = position
    this.term = Math.max(this.term, batch.term)
    this.onApplied?.({ position, batch })
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const w = this.waiting[i]!
      if (w.position <= position) {
        this.waiting.splice(i, 1)
        w.resolve()
      }
    }
    const seq = this.exchange.lastSeq
    for (let i = this.waitingSeq.length - 1; i >= 0; i--) {
      const w = this.waitingSeq[i]!
      if (w.seq <= seq) {
        this.waitingSeq.splice(i, 1)
        w.resolve()
      }
    }
  }

  private fail(err: unknown): void {
    if (this.failure !== null) return
    this.failure = err
    for (const w of this.waiting.splice(0)) w.reject(err)
    for (const w of this.waitingSeq.splice(0)) w.reject(err)
  }

  get failed(): unknown {
    return this.failure
  }
}
