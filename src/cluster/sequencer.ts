// One sequencer of the pair (ROLE=sequencer; docs/cluster.md): its exchange follows the log hot
// as a standby, and once it leads (src/cluster/election.ts) the same exchange journals onto the
// log through the leader's journal (src/cluster/log-journal.ts) while the keeper renews the
// lease. Losing the lease, or an append refused or failed, ends the leadership once (`onLost`):
// nothing more is acknowledged, and the process is expected to stop and come back as a standby.
import { ApiError } from "../domain/errors.ts"
import { Exchange, type JournalSink } from "../service/exchange.ts"
import type { Journal } from "../store/file-journal.ts"
import { type Leadership, type LeaseKeeper, keepLease, takeLeadership } from "./election.ts"
import { LogFollower } from "./follower.ts"
import { LeadershipLost, type LogJournal, openLogJournal } from "./log-journal.ts"
import type { LeasePort, ReplicatedLog } from "./ports.ts"

export interface SequencerOptions {
  readonly log: ReplicatedLog
  readonly lease: LeasePort
  /** This process's name in the lease and on every batch it appends (host:pid, or a configured name). */
  readonly holder: string
  /** The wall clock (business time's, as for the single process). */
  readonly nowMs: () => number
  readonly monoMs: () => number
  readonly sleep: (ms: number) => Promise<void>
  readonly defer?: (run: () => void) => void
  /** How often a standby asks for the lease (default a third of its TTL). */
  readonly electionRetryMs?: number
  readonly note?: (msg: string, fields: Readonly<Record<string, unknown>>) => void
  /** Leadership ended: told once, with why. */
  readonly onLost: (err: LeadershipLost) => void
}

export interface Standby {
  /** The exchange, following the log (the leader's, once `lead` resolves). */
  readonly exchange: Exchange
  readonly follower: LogFollower
  /** Resolves once this sequencer leads; its journal is then the exchange's. */
  lead(): Promise<Leading>
}

export interface Leading {
  readonly exchange: Exchange
  readonly journal: LogJournal
  readonly keeper: LeaseKeeper
  readonly leadership: Leadership
  /** A clean stop: every pending batch stored, then the lease released for the standby. */
  close(): Promise<void>
}

/** Seconds a client is told to wait before retrying on another sequencer: about a lease's lifetime. */
export const NOT_LEADER_RETRY_SEC = 2

export const notLeader = (detail: string): ApiError => new ApiError("not_leader", `${detail}; retry (another sequencer leads, or will within seconds)`, NOT_LEADER_RETRY_SEC)

export const standby = (o: SequencerOptions): Standby => {
  // Records are applied by the follower until this process leads; the sink forwards from then on.
  let target: Journal | null = null
  const sink: JournalSink = {
    append: (record) =>
      target === null
        ? Promise.reject(notLeader("this sequencer is the standby"))
        : target.append(record).catch((err: unknown) => {
            // A client whose command was not acknowledged is told to retry (the new leader has it or not).
            throw err instanceof LeadershipLost ? notLeader(err.message) : err
          })
  }
  const exchange = new Exchange(o.nowMs, sink, o.monoMs)
  const follower = new LogFollower(o.log, exchange, 0)
  return {
    exchange,
    follower,
    lead: async () => {
      const leadership = await takeLeadership({
        log: o.log,
        lease: o.lease,
        follower,
        holder: o.holder,
        sleep: o.sleep,
        ...(o.electionRetryMs === undefined ? {} : { retryMs: o.electionRetryMs }),
        ...(o.note === undefined ? {} : { note: o.note })
      })
      let journal: LogJournal | null = null
      const keeper = keepLease({
        lease: o.lease,
        initial: leadership.lease,
        monoMs: o.monoMs,
        sleep: o.sleep,
        onLost: (reason) => journal?.fail(new LeadershipLost(leadership.lease.term, "lease_lapsed", reason))
      })
      const opened = openLogJournal({
        log: o.log,
        holder: o.holder,
        lease: keeper.current,
        monoMs: o.monoMs,
        after: leadership.after,
        onFatal: (err) => {
          void keeper.stop()
          o.onLost(err)
        },
        ...(o.defer === undefined ? {} : { defer: o.defer })
      })
      journal = opened
      target = opened
      return {
        exchange,
        journal: opened,
        keeper,
        leadership,
        close: async () => {
          await opened.close()
          await keeper.stop()
          await o.lease.release(keeper.current()).catch(() => {})
        }
      }
    }
  }
}
