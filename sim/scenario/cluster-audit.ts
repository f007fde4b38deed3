// The auditor's cluster checks (docs/simulation.md "Failover"), over the simulated log and what
// each sequencer process acknowledged (sim/world/cluster-world.ts):
//  * the log: terms never go back (a batch of an older term after a newer term's marker is a
//    deposed leader's append that got past the fence), each term has one holder, and record
//    sequence numbers run on with no repeat and no gap (a repeat is a command applied twice, or
//    two leaders' commands under one number);
//  * nothing acknowledged is lost or doubled: every record a process acknowledged is in the log
//    exactly once, at its sequence number, unchanged;
//  * no two processes acknowledged anything in one term.
// The auditor (sim/scenario/auditor.ts) adds, at each takeover and at the end, that the leader's state
// hash equals a replay of the log, every order an agent was acknowledged is in that replay as
// sent, and money is conserved.
import type { ClusterHost } from "../world/cluster-world.ts"
import type { RunStats } from "../world/stats.ts"

export class ClusterAudit {
  /** Batches scanned so far. */
  private scanned = 0
  private maxTerm = 0
  private lastSeq = 0
  private readonly holderOfTerm = new Map<number, { holder: string; position: number }>()
  /** The log's records by seq: the first one's JSON and position, and how many times seq appears. */
  private readonly bySeq = new Map<number, { json: string; position: number; count: number }>()
  /** Per process (by its index in `cluster.all`), how many of its acknowledged records were checked. */
  private readonly ackChecked: number[] = []
  private readonly ackersOfTerm = new Map<number, Set<string>>()
  /** Each problem is reported once. */
  private readonly reported = new Set<string>()

  constructor(
    private readonly cluster: ClusterHost,
    private readonly stats: RunStats
  ) {}

  private fail(key: string, what: string): void {
    if (this.reported.has(key)) return
    this.reported.add(key)
    this.stats.fail(what)
  }

  /** Every check on what is new since the last call. */
  check(at: string): void {
    this.scanLog(at)
    this.checkAcks(at)
  }

  private scanLog(at: string): void {
    const batches = this.cluster.log.batches
    for (; this.scanned < batches.length; this.scanned++) {
      const position = this.scanned + 1
      const b = batches[this.scanned]!
      if (b.term < this.maxTerm) {
        this.fail(`term-back:${position}`, `${at} log position ${position}: a batch of term ${b.term} (${b.holder}) after term ${this.maxTerm}'s: a deposed leader's append got past the fence`)
      }
      this.maxTerm = Math.max(this.maxTerm, b.term)
      const first = this.holderOfTerm.get(b.term)
      if (first === undefined) this.holderOfTerm.set(b.term, { holder: b.holder, position })
      else if (first.holder !== b.holder) {
        this.fail(`two-holders:${b.term}`, `${at} term ${b.term} has two holders in the log: ${first.holder} (position ${first.position}) and ${b.holder} (position ${position})`)
      }
      for (const r of b.records) {
        const seen = this.bySeq.get(r.seq)
        if (seen !== undefined) {
          seen.count++
          this.fail(`dup:${r.seq}`, `${at} record seq ${r.seq} appears twice in the log (positions ${seen.position} and ${position}): a command applied twice, or two leaders' commands under one number`)
          continue
        }
        if (r.seq !== this.lastSeq + 1) this.fail(`gap:${r.seq}`, `${at} log position ${position}: record seq ${r.seq} after ${this.lastSeq} (a gap)`)
        this.lastSeq = Math.max(this.lastSeq, r.seq)
        this.bySeq.set(r.seq, { json: JSON.stringify(r), position, count: 1 })
      }
    }
  }

  /** Every record a process acknowledged is in the log once, unchanged; one acknowledging process per term. */
  private checkAcks(at: string): void {
    for (const [i, inc] of this.cluster.all.entries()) {
      const from = this.ackChecked[i] ?? 0
      if (inc.acked.length > from && inc.term !== null) {
        const ackers = this.ackersOfTerm.get(inc.term) ?? new Set<string>()
        ackers.add(inc.proc.name)
        this.ackersOfTerm.set(inc.term, ackers)
        if (ackers.size > 1) this.fail(`two-ackers:${inc.term}`, `${at} term ${inc.term}: ${[...ackers].join(" and ")} both acknowledged commands`)
      }
      for (let k = from; k < inc.acked.length; k++) {
        const { seq, json } = inc.acked[k]!
        const inLog = this.bySeq.get(seq)
        if (inLog !== undefined && inLog.json === json && inLog.count === 1) continue
        const what = `${at} ${inc.proc.name} acknowledged record seq ${seq} (${(JSON.parse(json) as { cmd: { type: string } }).cmd.type})`
        if (inLog === undefined) this.fail(`lost:${seq}`, `${what}, which the log does not hold: an acknowledged command lost`)
        else if (inLog.json !== json) this.fail(`differs:${seq}`, `${what}, but the log holds another record under that number (position ${inLog.position})`)
        else this.fail(`twice:${seq}`, `${what}, and the log holds that number ${inLog.count} times`)
      }
      this.ackChecked[i] = inc.acked.length
    }
  }

  /** Acknowledged records whose number the log later repeated are caught here too (the scan may come after the acknowledgement check). */
  end(at: string): void {
    this.check(at)
    for (const inc of this.cluster.all) {
      for (const { seq, json } of inc.acked) {
        const inLog = this.bySeq.get(seq)
        if (inLog !== undefined && inLog.json === json && inLog.count > 1) {
          this.fail(`twice:${seq}`, `${at} ${inc.proc.name} acknowledged record seq ${seq}, and the log holds that number ${inLog.count} times`)
        }
      }
    }
  }
}
