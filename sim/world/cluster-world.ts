// The sequencer pair inside a world (docs/simulation.md "Failover"): two simulated processes
// (sim/world/cluster-process.ts), each running the real sequencer role (`sequencerRole`, the real
// `makeService` once it leads) on the simulated replicated log and lease (sim/world/cluster-log.ts,
// sim/world/cluster-lease.ts); clients reach whichever leads through the load balancer
// (sim/world/cluster-balancer.ts). A process that loses its leadership exits, as it does live, and the
// world's supervisor starts a new one in its slot `restart_after` later, as a standby following
// the log from its start. Faults: the leader killed (back as a standby after `down`), the leader
// paused past its lease at its next append (a zombie: resumed later with that append still to
// send), the leader's lease renewals lost or delayed (its lease lapses while it runs), and the
// log unavailable (appends fail; some commit late). The world keeps what the auditor checks:
// every process's acknowledged records, the terms they led, and the log.
import { Cause, Effect, Exit, Layer, Scope } from "effect"
import type { HttpResponse } from "../../src/api/http.ts"
import type { LeadershipLost } from "../../src/cluster/log-journal.ts"
import type { LogBatch, ReplicatedLog } from "../../src/cluster/ports.ts"
import type { RunningService, ServiceConfig } from "../../src/runtime/boot.ts"
import { sequencerRole } from "../../src/runtime/cluster.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { Exchange } from "../../src/service/exchange.ts"
import { LoadBalancer } from "./cluster-balancer.ts"
import { SimLease, type LeaseRunStats } from "./cluster-lease.ts"
import { type LinkParams, type LogRunStats, LogUnreachable, SimLog, type SimLogClient } from "./cluster-log.ts"
import { clusterProcessLayers, clusterProcessRuntime, type ProcessLine, processSleep, SimProcess } from "./cluster-process.ts"
import type { Rng } from "./random.ts"
import type { World } from "./world.ts"

export interface ClusterOptions {
  readonly leaseTtlMs: number
  /** The supervisor's delay before a process that exited (lost its leadership, or failed) is started again. */
  readonly restartAfterMs: number
  readonly log: LinkParams
  readonly lease: LinkParams
  /** The load balancer's readiness probe period. */
  readonly probeEveryMs: number
  /** Test-only: wraps the log client each process gets (a planted bug the auditor must catch). */
  readonly tamperLog?: (log: SimLogClient) => ReplicatedLog
}

/** One process's life in a slot: started as a standby, maybe the leader of one term, then gone. */
export interface Incarnation {
  readonly slot: number
  readonly proc: SimProcess
  /** The term it led (from its "leading" line), or null. */
  term: number | null
  lost: LeadershipLost | null
  /** Records it applied as the leader and did not acknowledge yet. */
  readonly pending: JournalRecord[]
  /** Records it acknowledged (batch stored, lease still valid), in order, as canonical JSON. */
  readonly acked: Array<{ readonly seq: number; readonly json: string }>
}

export interface ClusterRunStats {
  /** Terms led (the first leader included). */
  leaderships: number
  leaderCrashes: number
  zombies: number
  /** Zombies resumed just after the takeover (`until_takeover`). */
  zombieRaces: number
  /** Term markers refused (a deposed leader's batch landed between a new leader's catch-up and its marker). */
  markersRefused: number
  leaseExpiries: number
  logOutages: number
  /** Processes started again by the supervisor. */
  restarts: number
  /** Leaderships lost, by reason (lease_lapsed, fenced, log_unreachable). */
  lost: Record<string, number>
  /** Standbys whose election met an unreachable log and exited (the supervisor restarts them). */
  electionExits: number
  /** The longest stretch from a leader's stop (killed, paused, or told it lost) to the next takeover, ms. */
  longestNoLeaderMs: number
  batches: number
  stream: LogRunStats
  lease: LeaseRunStats
}

export class ClusterHost {
  readonly log: SimLog
  readonly lease: SimLease
  readonly balancer: LoadBalancer
  /** Each slot's current process. */
  private readonly slots: Incarnation[] = []
  private readonly started: number[] = [0, 0]
  /** Every process that ever ran, in start order. */
  readonly all: Incarnation[] = []
  leader: Incarnation | null = null
  /** When the current leader stopped serving (killed, paused, told it lost), if it did; the start before the first. */
  private leaderStoppedMs: number | null
  private zombieTrap: { inc: Incarnation; pauseMs: number; untilTakeover: boolean } | null = null
  /** A zombie to resume just after another process acquires the lease. */
  private resumeAtTakeover: SimProcess | null = null
  private readonly leadingListeners: Array<() => void> = []
  /** The log's records as a replica applies them (a record whose seq is already there is skipped). */
  readonly logRecords: JournalRecord[] = []
  private readonly rng: Rng
  /** Draws a racing zombie's resume delay. */
  private readonly raceRng: Rng
  private readonly counts = { leaderships: 0, leaderCrashes: 0, zombies: 0, zombieRaces: 0, markersRefused: 0, leaseExpiries: 0, restarts: 0, electionExits: 0, longestNoLeaderMs: 0 }
  private readonly lostBy: Record<string, number> = {}

  constructor(
    private readonly world: World,
    readonly options: ClusterOptions,
    private readonly config: (onError: (err: unknown) => void) => ServiceConfig
  ) {
    this.rng = world.rng.fork("cluster")
    this.raceRng = this.rng.fork("zombie-race")
    this.log = new SimLog(world.scheduler, this.rng.fork("log"), options.log, (_p, batch) => this.stored(batch))
    this.log.onSend = (proc) => this.maybePause(proc)
    this.lease = new SimLease(world.scheduler, options.leaseTtlMs, options.lease)
    this.lease.onAcquired = (holder) => this.takenOver(holder)
    this.balancer = new LoadBalancer(world.scheduler, () => this.slots.map((s) => s.proc))
    this.leaderStoppedMs = world.scheduler.nowMs()
  }

  /** Starts both processes and the balancer; resolves once one leads (moving virtual time on until then). */
  async start(): Promise<void> {
    this.startProcess(0)
    this.startProcess(1)
    this.world.network.route("api", this.balancer.app("api"))
    this.world.network.route("deposit", this.balancer.app("deposit"))
    this.balancer.start(this.options.probeEveryMs)
    const s = this.world.scheduler
    const giveUpMs = s.nowMs() + 300_000
    while (this.leader === null) {
      if (this.world.errors.length > 0) throw this.world.errors[0]
      if (s.nowMs() >= giveUpMs) throw new Error("no sequencer took the lead within 5 minutes of virtual time")
      await s.run(s.nowMs() + 10)
    }
  }

  /** Called each time a process starts leading, after the world switched to it. */
  onLeading(listener: () => void): void {
    this.leadingListeners.push(listener)
  }

  private stored(batch: LogBatch): void {
    for (const r of batch.records) {
      const last = this.logRecords.at(-1)?.seq ?? 0
      if (r.seq === last + 1) this.logRecords.push(r)
    }
  }

  private startProcess(slot: number): void {
    const w = this.world
    const n = ++this.started[slot]!
    const proc = new SimProcess(`seq-${"ab"[slot]}.${n}`, w.scheduler)
    const inc: Incarnation = { slot, proc, term: null, lost: null, pending: [], acked: [] }
    this.slots[slot] = inc
    this.all.push(inc)
    const runtime = clusterProcessRuntime(w.scheduler, proc, () => w.quieted)
    const client = this.log.clientFor(proc, this.rng.fork(`log/${proc.name}`))
    const onError = (err: unknown): void => {
      // A process that lost its leadership fails what it had in flight: that is its exit, not an error.
      if (!proc.alive || inc.lost !== null || this.leader !== inc) return
      w.errors.push(err)
      w.options.onError?.(err)
    }
    const role = sequencerRole({
      log: this.options.tamperLog?.(client) ?? client,
      lease: this.lease.clientFor(proc, this.rng.fork(`lease/${proc.name}`)),
      holder: proc.name,
      config: this.config(onError),
      onLost: (err) => this.lost(inc, err),
      sleep: processSleep(proc),
      defer: (run) => void proc.after(0, run)
    })
    const layers = clusterProcessLayers({ proc, nowMs: w.nowMs, monoMs: w.monoMs, chain: w.chain, signatures: w.signatures, onLine: (line) => this.line(inc, line) })
    const program = Effect.gen(function* () {
      // Never closed: a process that ends is abandoned, as a killed one is (nothing of its shutdown runs).
      const scope = yield* Scope.make()
      const context = yield* Layer.build(layers).pipe(Scope.extend(scope))
      return yield* role.pipe(Scope.extend(scope), Effect.provide(context))
    })
    const fiber = Effect.runFork(program.pipe(Effect.withClock(runtime.clock), Effect.withScheduler(runtime.scheduler)), { scheduler: runtime.scheduler })
    fiber.addObserver((exit) => (Exit.isSuccess(exit) ? this.leading(inc, exit.value) : this.roleFailed(inc, Cause.squash(exit.cause))))
  }

  private line(inc: Incarnation, line: ProcessLine): void {
    if (line.msg === "leading") inc.term = Number(line.fields.term)
    if (line.msg === "term marker refused: catching up") this.counts.markersRefused++
    const fields = Object.entries(line.fields)
      .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : String(v)}`)
      .join(" ")
    this.world.serviceLog.push(`t=${Math.floor(line.atMs / 1000)} ${line.holder} ${line.level} ${line.msg}${fields === "" ? "" : ` ${fields}`}`)
  }

  /** The role resolved: this process leads, its service is up. */
  private leading(inc: Incarnation, service: RunningService): void {
    if (!inc.proc.alive) return
    const now = this.world.scheduler.nowMs()
    this.counts.leaderships++
    if (this.leaderStoppedMs !== null) this.counts.longestNoLeaderMs = Math.max(this.counts.longestNoLeaderMs, now - this.leaderStoppedMs)
    this.leaderStoppedMs = null
    this.leader = inc
    service.exchange.onApply((record) => void inc.pending.push(record))
    service.durable!.journal.onBatch({
      cut: () => {},
      durable: (seq) => {
        while (inc.pending.length > 0 && inc.pending[0]!.seq <= seq) {
          const r = inc.pending.shift()!
          inc.acked.push({ seq: r.seq, json: JSON.stringify(r) })
        }
      }
    })
    const proc = inc.proc
    this.world.leaderChanged({ service, app: (req) => proc.handle("api", req) ?? new Promise<HttpResponse>(() => {}) })
    for (const l of this.leadingListeners) l()
  }

  /** The role ended without leading: an unreachable log during the election (it exits; restarted), or a defect. */
  private roleFailed(inc: Incarnation, err: unknown): void {
    if (!inc.proc.alive) return
    if (err instanceof LogUnreachable) {
      this.counts.electionExits++
      this.world.serviceLog.push(`t=${this.world.scheduler.nowSec()} ${inc.proc.name} error election failed: ${err.message}; exiting`)
    } else {
      this.world.errors.push(err)
    }
    this.exit(inc)
  }

  /** Leadership lost (told once, inside the process): it acknowledges nothing more and exits. */
  private lost(inc: Incarnation, err: LeadershipLost): void {
    inc.lost = err
    this.lostBy[err.reason] = (this.lostBy[err.reason] ?? 0) + 1
    if (this.leader === inc) this.noLeader()
    // Its refusals in flight leave first (this instant), then it is gone.
    this.world.scheduler.after(0, () => this.exit(inc))
  }

  private exit(inc: Incarnation): void {
    if (!inc.proc.alive) return
    inc.proc.kill()
    if (this.leader === inc) this.noLeader()
    this.world.scheduler.after(this.options.restartAfterMs, () => this.restart(inc))
  }

  private restart(inc: Incarnation): void {
    if (this.slots[inc.slot] !== inc) return
    this.counts.restarts++
    this.startProcess(inc.slot)
  }

  private noLeader(): void {
    this.leaderStopped()
    this.leader = null
    this.world.leaderChanged(null)
  }

  private leaderStopped(): void {
    this.leaderStoppedMs ??= this.world.scheduler.nowMs()
  }

  /** The leader is killed (SIGKILL): back as a standby after `downMs`. Its name, or null with no leader. */
  crashLeader(downMs: number): string | null {
    const inc = this.leader
    if (inc === null) return null
    this.counts.leaderCrashes++
    this.world.crashes++
    inc.proc.kill()
    this.noLeader()
    this.world.scheduler.after(downMs, () => this.restart(inc))
    return inc.proc.name
  }

  /**
   * The leader is paused (SIGSTOP) at its next append, for `pauseMs`, then resumed (SIGCONT); with
   * `untilTakeover`, resumed 0–12 ms (seeded) after another process acquires the lease instead
   * (`pauseMs` the cap), so its held append races the new leader's catch-up and term marker.
   */
  zombie(pauseMs: number, untilTakeover = false): string | null {
    const inc = this.leader
    if (inc === null) return null
    this.zombieTrap = { inc, pauseMs, untilTakeover }
    // A leader with nothing to append for a while is paused all the same.
    this.world.scheduler.after(10_000, () => {
      if (this.zombieTrap?.inc === inc) this.pause(inc.proc, pauseMs, untilTakeover)
    })
    return inc.proc.name
  }

  private maybePause(proc: SimProcess): void {
    if (this.zombieTrap?.inc.proc === proc) this.pause(proc, this.zombieTrap.pauseMs, this.zombieTrap.untilTakeover)
  }

  private pause(proc: SimProcess, pauseMs: number, untilTakeover: boolean): void {
    this.zombieTrap = null
    if (!proc.alive) return
    this.counts.zombies++
    if (this.leader?.proc === proc) this.leaderStopped()
    proc.pause()
    if (untilTakeover) this.resumeAtTakeover = proc
    this.world.scheduler.after(pauseMs, () => {
      if (this.resumeAtTakeover === proc) this.resumeAtTakeover = null
      proc.resume()
    })
  }

  /** At the lease server, as `holder` acquires it: a zombie waiting for the takeover resumes a few ms later. */
  private takenOver(holder: string): void {
    const proc = this.resumeAtTakeover
    if (proc === null || proc.name === holder) return
    this.resumeAtTakeover = null
    this.counts.zombieRaces++
    this.world.scheduler.after(this.raceRng.int(0, 12), () => proc.resume())
  }

  /** The leader's lease renewals are lost or delayed for `durationMs`. */
  disturbLease(durationMs: number): string | null {
    const inc = this.leader
    if (inc === null) return null
    this.counts.leaseExpiries++
    this.lease.disturb(inc.proc.name, durationMs)
    return inc.proc.name
  }

  /** The log is unavailable for `durationMs`; `landPct` % of the appends reaching it meanwhile commit when it is back. */
  logOutage(durationMs: number, landPct: number): void {
    this.log.outage(durationMs, landPct)
  }

  /** The log replayed from its start into a fresh exchange, as a replica applies it (a seq already applied is skipped; a gap stops it). */
  replay(observe?: (x: Exchange) => void): { exchange: Exchange; records: JournalRecord[] } {
    const exchange = new Exchange(() => 0, { append: () => Promise.reject(new Error("a replay journals nothing")) })
    observe?.(exchange)
    const records: JournalRecord[] = []
    for (const b of this.log.batches) {
      for (const r of b.records) {
        if (r.seq <= exchange.lastSeq) continue
        if (r.seq !== exchange.lastSeq + 1) return { exchange, records }
        exchange.apply(r)
        records.push(r)
      }
    }
    return { exchange, records }
  }

  runStats(): ClusterRunStats {
    return { ...this.counts, lost: { ...this.lostBy }, logOutages: this.log.stats.outages, batches: this.log.batches.length, stream: { ...this.log.stats }, lease: { ...this.lease.stats } }
  }
}

/** Counters summed over a sweep's seeds. */
export const sumClusterStats = (all: ReadonlyArray<ClusterRunStats>): ClusterRunStats => {
  const sum = <T extends object>(parts: ReadonlyArray<T>): T => {
    const out: Record<string, number> = {}
    for (const p of parts) for (const [k, v] of Object.entries(p)) if (typeof v === "number") out[k] = (out[k] ?? 0) + v
    return out as T
  }
  const longest = Math.max(0, ...all.map((c) => c.longestNoLeaderMs))
  return { ...sum(all), longestNoLeaderMs: longest, lost: sum(all.map((c) => c.lost)), stream: sum(all.map((c) => c.stream)), lease: sum(all.map((c) => c.lease)) }
}
