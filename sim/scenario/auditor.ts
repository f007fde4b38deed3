// The auditor: after every step it checks the whole state — the engine's ledger
// invariants, money against the chain, every acknowledged order — and at the end
// each agent's own view (HTTP acknowledgements, WebSocket frames) against the service.
// On the simulated disk, after each recovery: every acknowledged record is on disk
// unchanged, every acknowledged order kept its id, and the recovered state equals a
// full replay of the journal. In a cluster world, at each takeover and at the end: the
// leader's state equals a replay of the replicated log, and the log's own checks
// (sim/scenario/cluster-audit.ts: nothing acknowledged lost or doubled, one leader per term).
import { findViolations } from "../../src/engine/invariants.ts"
import type { ApplyResult, Exchange } from "../../src/service/exchange.ts"
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import type { JournalRecord } from "../../src/service/commands.ts"
import { portfolioState } from "../../src/service/views.ts"
import type { Agent } from "../agents/agent.ts"
import { ChainIndex } from "./chain-index.ts"
import { ClusterAudit } from "./cluster-audit.ts"
import { journalHash } from "./journal-log.ts"
import type { RunStats } from "../world/stats.ts"
import { TimeAudit } from "./time-audit.ts"
import type { World } from "../world/world.ts"

interface AcceptedOrder {
  readonly user: string
  readonly marketId: string
  readonly side: string
  readonly outcome: string
  readonly priceBps: number
  readonly size: number
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

export class Auditor {
  /** Every order the exchange accepted, by id, from the journal's results. */
  private readonly accepted = new Map<number, AcceptedOrder>()
  /** Money credited other than by deposits (operator credits, rewards). */
  private otherCreditsMicro = 0
  private readonly index: ChainIndex
  /** Every order acknowledged to an agent so far (checked again after each recovery from disk). */
  private readonly allAcks = new Map<number, { agent: Agent; order: Agent["newAcks"][number][1] }>()
  fills = 0
  volumeMicro = 0
  rewardsPaidMicro = 0

  /** Rate limits, read staleness and rewards sampling (sim/scenario/time-audit.ts). */
  private readonly time: TimeAudit
  /** The replicated log's checks, in a cluster world. */
  private readonly cluster: ClusterAudit | null

  constructor(
    private readonly world: World,
    private readonly stats: RunStats,
    private readonly agents: ReadonlyArray<Agent>,
    opts: { readonly probeReads?: boolean } = {}
  ) {
    this.index = new ChainIndex(world.chain)
    this.time = new TimeAudit(world, stats, agents, opts.probeReads ?? false)
    this.cluster = world.cluster === null ? null : new ClusterAudit(world.cluster, stats)
    world.onBoot((x) => x.onApply(this.observe(x)))
    world.onFailStopRecovered((before, after) => this.recovered(before, after))
    world.cluster?.onLeading(() => {
      const leader = world.cluster!.leader!
      this.recoveredFromLog(`t=${world.scheduler.nowSec()} takeover by ${leader.proc.name} (term ${leader.term}):`)
    })
  }

  /**
   * Counts what each applied record did: accepted orders, fills, money in other than deposits.
   * In a cluster only the leader's records count (`always`: a replay's): a deposed one may still apply some.
   */
  private observe(x: Exchange, always = false): (record: JournalRecord, result: ApplyResult) => void {
    return (record, result) => {
      if (!always && this.cluster !== null && this.world.exchange !== x) return
      for (const ev of result.events) {
        if (ev.type === "order_accepted" && record.cmd.type === "place_order") {
          const o = record.cmd.order
          this.accepted.set(ev.orderId, { user: o.user, marketId: o.marketId, side: o.side, outcome: o.outcome, priceBps: o.priceBps, size: o.size })
        } else if (ev.type === "order_accepted" && record.cmd.type === "set_trading") {
          // A queued order runs when trading reopens: find it by the engine's order record.
          const order = x.engine.orders.get(ev.orderId)
          if (order !== undefined) this.accepted.set(ev.orderId, { user: order.account.user, marketId: order.market.id, side: order.side, outcome: order.outcome, priceBps: order.priceBps, size: order.size })
        } else if (ev.type === "fill") {
          this.fills++
          this.volumeMicro += ev.size * ev.yesPriceBps * 100
        } else if (ev.type === "credited" && !ev.ref.startsWith("deposit:") && !ev.ref.startsWith("refund:")) {
          // Operator credits and LP rewards bring money in besides deposits (refunds undo a withdrawal).
          this.otherCreditsMicro += ev.amountMicro
          if (ev.ref.startsWith("rewards:")) this.rewardsPaidMicro += ev.amountMicro
        }
      }
    }
  }

  /** The full check; each problem becomes a run failure naming the virtual time. */
  check(): void {
    this.cluster?.check(`t=${this.world.scheduler.nowSec()}`)
    if (this.world.down) return
    this.stats.invariantChecks++
    const x = this.world.exchange
    const at = `t=${this.world.scheduler.nowSec()}`
    for (const v of findViolations(x.engine)) this.stats.fail(`${at} invariant: ${v}`)
    this.checkMoney(x, at)
    this.checkAcked(at)
    this.time.check(at)
    // Shipped scenarios reorg less deep than their confirmations: a halt there is a false alarm.
    const halt = this.world.guard.status().halt
    if (halt !== null) this.stats.fail(`${at} chain guard halted: ${halt.reason}`)
  }

  /** Ledger money = deposits credited − withdrawals debited (+ other credits); every credit is on the canonical chain; the vault and the forwarders (which can only pay the vault) cover it. */
  private checkMoney(x: Exchange, at: string): void {
    this.index.update()
    let creditedMicro = 0
    for (const d of x.deposits.byKey.values()) {
      if (d.stage !== "credited") continue
      creditedMicro += d.amountMicro
      if (!this.index.txBlock.has(d.txHash)) this.stats.fail(`${at} deposit ${d.key} credited but its transfer is not on the canonical chain`)
    }
    let withdrawnMicro = 0
    let owedOnChainMicro = 0
    for (const w of x.withdrawals.byId.values()) {
      const paid = this.index.payouts.has(w.id)
      if (w.status !== "refunded") withdrawnMicro += w.amountMicro
      if (w.status === "refunded" && paid) this.stats.fail(`${at} withdrawal ${w.id} refunded and also paid on chain`)
      if (w.status === "confirmed" && !paid) this.stats.fail(`${at} withdrawal ${w.id} confirmed but not paid on the canonical chain`)
      if ((w.status === "pending" || w.status === "sent") && !paid) owedOnChainMicro += w.amountMicro
    }
    const expected = creditedMicro - withdrawnMicro + this.otherCreditsMicro
    if (x.engine.netDepositsMicro !== expected) {
      this.stats.fail(`${at} money: ledger holds ${x.engine.netDepositsMicro} micro, deposits − withdrawals (+ credits) say ${expected}`)
    }
    // Deposits credit before their sweep is mined: a forwarder can only pay the vault, so its tokens count.
    const { token, vault } = this.world.chain.info
    let heldMicro = Number(this.world.chain.balance(token, vault))
    for (const address of x.watched.keys()) heldMicro += Number(this.world.chain.balance(token, address as typeof vault))
    if (heldMicro < x.engine.netDepositsMicro - this.otherCreditsMicro + owedOnChainMicro) {
      this.stats.fail(`${at} solvency: vault and forwarders hold ${heldMicro} micro, owe ${x.engine.netDepositsMicro - this.otherCreditsMicro} + ${owedOnChainMicro} in flight`)
    }
  }

  /** Every order an agent got an acknowledgement for was accepted, as the agent sent it (each checked once). */
  private checkAcked(at: string): void {
    for (const a of this.agents) {
      for (const [id, o] of a.newAcks.splice(0)) {
        this.allAcks.set(id, { agent: a, order: o })
        this.checkAck(at, a, id, o)
      }
    }
  }

  private checkAck(at: string, a: Agent, id: number, o: Agent["newAcks"][number][1]): void {
    const found = this.accepted.get(id)
    if (found === undefined) this.stats.fail(`${at} ${a.name}: acknowledged order ${id} is unknown to the exchange`)
    else if (found.user !== a.user || found.marketId !== o.marketId || found.side !== o.side || found.outcome !== o.outcome || found.priceBps !== o.price || found.size !== o.size) {
      this.stats.fail(`${at} ${a.name}: acknowledged order ${id} differs from what the exchange accepted`)
    }
  }

  /** After the drain: each connected agent's last portfolio frame equals the service's portfolio. */
  checkViews(): void {
    const x = this.world.exchange
    for (const a of this.agents) {
      if (a.ws === null || !a.ws.isOpen || a.portfolio === null) continue
      if (!sameJson(a.portfolio, portfolioState(x, a.user))) this.stats.fail(`end: ${a.name}: its last portfolio frame differs from the service's portfolio`)
    }
  }

  recovered(before: string, after: string): void {
    if (this.world.host !== null) return this.recoveredFromDisk()
    if (before !== after) this.stats.fail(`t=${this.world.scheduler.nowSec()} crash recovery: state hash ${after.slice(0, 12)} differs from before the crash ${before.slice(0, 12)}`)
  }

  /**
   * After a recovery on the simulated disk (the state before the crash may hold records
   * the disk never made durable, so it is no reference): the disk's journal holds every
   * record the dead process acknowledged, unchanged; the recovered state hashes as a full
   * replay of that journal; every order ever acknowledged has its id in the replay (ids are
   * never reused); money and invariants hold. The counters are rebuilt from the replay:
   * records lost unacknowledged never happened.
   */
  private recoveredFromDisk(): void {
    const host = this.world.host!
    const at = `t=${this.world.scheduler.nowSec()} recovery ${host.stats.recoveries}:`
    this.accepted.clear()
    this.otherCreditsMicro = 0
    this.fills = 0
    this.volumeMicro = 0
    this.rewardsPaidMicro = 0
    const replay = host.replay((x) => x.onApply(this.observe(x)))
    for (const [i, want] of host.acknowledged.entries()) {
      const got = replay.records[i]
      if (got === undefined) {
        this.stats.fail(`${at} acknowledged record seq ${want.seq} (${want.cmd.type}) lost: the journal on disk ends at seq ${replay.records.length}`)
        break
      }
      if (!sameJson(got, want)) {
        this.stats.fail(`${at} acknowledged record seq ${want.seq} (${want.cmd.type}) differs on disk (${got.cmd.type})`)
        break
      }
    }
    const recovered = exchangeHash(this.world.exchange)
    const full = exchangeHash(replay.exchange)
    if (recovered !== full) this.stats.fail(`${at} recovered state hash ${recovered.slice(0, 12)} differs from a full replay's ${full.slice(0, 12)} (snapshot ${host.lastRecovery?.snapshotSeq ?? "none"})`)
    for (const a of this.agents) for (const [id, order] of a.newAcks.splice(0)) this.allAcks.set(id, { agent: a, order })
    for (const [id, { agent, order }] of this.allAcks) this.checkAck(at, agent, id, order)
    this.check()
  }

  /**
   * After a takeover (and at the end) in a cluster: the leader's state hashes as a replay of the
   * whole log; the counters are rebuilt from that replay (a deposed leader's unacknowledged
   * records never happened); every order ever acknowledged to an agent is in it, as sent; then
   * the log's checks and the full check. Returns the replay's records.
   */
  private recoveredFromLog(at: string): ReadonlyArray<JournalRecord> {
    const cluster = this.world.cluster!
    this.accepted.clear()
    this.otherCreditsMicro = 0
    this.fills = 0
    this.volumeMicro = 0
    this.rewardsPaidMicro = 0
    const replay = cluster.replay((x) => x.onApply(this.observe(x, true)))
    const leader = exchangeHash(this.world.exchange)
    const full = exchangeHash(replay.exchange)
    if (leader !== full) this.stats.fail(`${at} the leader's state hash ${leader.slice(0, 12)} differs from a replay of the log's ${full.slice(0, 12)}`)
    for (const a of this.agents) for (const [id, order] of a.newAcks.splice(0)) this.allAcks.set(id, { agent: a, order })
    for (const [id, { agent, order }] of this.allAcks) this.checkAck(at, agent, id, order)
    this.check()
    return replay.records
  }

  /** The end of a cluster run: a leader, whose state and journal are the log's; the log's checks over everything. */
  checkClusterEnd(): void {
    const cluster = this.world.cluster!
    if (cluster.leader === null || this.world.down) {
      this.stats.fail("end: no sequencer leads")
      this.cluster!.end("end:")
      return
    }
    const records = this.recoveredFromLog("end:")
    const ours = journalHash(this.world.records)
    const logs = journalHash(records)
    if (ours !== logs) this.stats.fail(`end: the leader's journal (${this.world.records.length} records, ${ours.slice(0, 12)}) differs from the log's (${records.length} records, ${logs.slice(0, 12)})`)
    this.cluster!.end("end:")
  }
}
