// The auditor's time checks (docs/time.md), run with every audit:
//  * no well-behaved client is refused (429) although its own requests were within the
//    bucket's rate (each agent notes such refusals; hostile agents are left out);
//  * no read is staler than its TTL: the auditor reads a book and its trades through the
//    edge cache (when `probeReads`) and a body that differs from the live one may only be
//    served within the TTL of that market's last change, measured on the monotonic clock;
//  * rewards are paid over sampled minutes only: each day's credited minutes equal the
//    journal's `rewards_sample` records of that day, a paid day was sampled and is paid once
//    within its budget, and samples never outpace the (virtual) minutes that passed;
//  * journal time keeps pace with elapsed time in each process: it never stands still, lags or
//    jumps beyond the business clock's rates (sim/scenario/journal-pace.ts), whatever the wall clock does.
// Money conservation is the main auditor's ledger check.
import { TTL_SEC } from "../../src/api/cache.ts"
import type { HttpResponse } from "../../src/api/http.ts"
import { dayOfSec } from "../../src/service/rewards-book.ts"
import { bookView } from "../../src/service/views.ts"
import type { Agent } from "../agents/agent.ts"
import { JournalPace } from "./journal-pace.ts"
import { CarelessClient, Spammer } from "../agents/hostile.ts"
import type { RunStats } from "../world/stats.ts"
import type { World } from "../world/world.ts"

const PROBE_IP = "10.255.255.254"

export class TimeAudit {
  /** Monotonic (virtual) time of each market's last change, from the records applied. */
  private readonly changedMs = new Map<string, number>()
  private readonly startMs: number
  /** `rewards_sample` records per journal day, counted over world.records[0, counted). */
  private samplesByDay = new Map<number, number>()
  private samples = 0
  private counted = 0
  private countedBoot = -1
  private readonly pace = new JournalPace()
  /** What `pace` found since the last audit. */
  private readonly paceFailures: string[] = []

  constructor(
    private readonly world: World,
    private readonly stats: RunStats,
    private readonly agents: ReadonlyArray<Agent>,
    private readonly probeReads: boolean
  ) {
    this.startMs = world.scheduler.nowMs()
    world.onBoot((x) => {
      this.pace.restart()
      x.onApply((record, result) => {
        const now = world.scheduler.nowMs()
        // A dead process's late applies are not this process's pace.
        if (world.exchange === x) for (const f of this.pace.observe(now, record.tsSec)) this.paceFailures.push(`record ${record.seq} (${record.cmd.type}): ${f}`)
        // Status and surface changes may touch every book: count them as a change everywhere.
        if (record.cmd.type === "set_market_status" || record.cmd.type === "set_trading") for (const id of x.engine.markets.keys()) this.changedMs.set(id, now)
        for (const ev of result.events) {
          const id = (ev as { marketId?: unknown }).marketId
          if (typeof id === "string") this.changedMs.set(id, now)
        }
      })
    })
  }

  check(at: string): void {
    for (const a of this.agents) {
      if (a instanceof Spammer || a instanceof CarelessClient) continue
      for (const line of a.refusedWithinRate.splice(0)) this.stats.fail(`${at} rate limit beyond the client's own rate: ${line}`)
    }
    for (const f of this.paceFailures.splice(0)) this.stats.fail(`${at} ${f}`)
    this.checkRewards(at)
    if (this.probeReads) this.probe(at)
  }

  private checkRewards(at: string): void {
    const w = this.world
    if (this.countedBoot !== w.boots || this.counted > w.records.length) {
      // A recovery may have replaced the journal view: count again from the start.
      this.samplesByDay = new Map()
      this.samples = 0
      this.counted = 0
      this.countedBoot = w.boots
    }
    for (; this.counted < w.records.length; this.counted++) {
      const r = w.records[this.counted]!
      if (r.cmd.type !== "rewards_sample") continue
      this.samples++
      const day = dayOfSec(r.tsSec)
      this.samplesByDay.set(day, (this.samplesByDay.get(day) ?? 0) + 1)
    }
    const rewards = w.exchange.rewards
    for (const [day, state] of rewards.days) {
      const journaled = this.samplesByDay.get(day) ?? 0
      if (state.minutes !== journaled) this.stats.fail(`${at} rewards: day ${day} credits ${state.minutes} minutes, the journal holds ${journaled} samples of it`)
    }
    const seen = new Set<number>()
    for (const p of rewards.paid) {
      if (seen.has(p.day)) this.stats.fail(`${at} rewards: day ${p.day} paid twice`)
      seen.add(p.day)
      if ((this.samplesByDay.get(p.day) ?? 0) === 0) this.stats.fail(`${at} rewards: day ${p.day} paid without a sample of it in the journal`)
      const budget = rewards.config?.dailyBudgetMicro ?? 0
      if (p.paidMicro > budget) this.stats.fail(`${at} rewards: day ${p.day} paid ${p.paidMicro} micro, over its budget ${budget}`)
    }
    // One sample per monotonic minute per process, plus one at each boot.
    const minutes = Math.floor((w.scheduler.nowMs() - this.startMs) / 60_000)
    if (this.samples > minutes + w.boots + 1) this.stats.fail(`${at} rewards: ${this.samples} samples in ${minutes} minutes of time`)
  }

  /** Reads market 0's book and trades through the edge cache and checks their age. */
  private probe(at: string): void {
    const w = this.world
    if (w.down) return
    const x = w.exchange
    const marketId = [...x.engine.markets.keys()].sort()[0]
    if (marketId === undefined) return
    const get = (path: string): Promise<HttpResponse> => w.core.app({ method: "GET", path, query: new URLSearchParams(), headers: {}, body: "", ip: PROBE_IP })
    const stale = (what: string, ttlSec: number, served: unknown, live: unknown): void => {
      if (JSON.stringify(served) === JSON.stringify(live)) return
      const ageMs = w.scheduler.nowMs() - (this.changedMs.get(marketId) ?? -Infinity)
      if (ageMs >= ttlSec * 1000) this.stats.fail(`${at} stale read: ${what} of ${marketId} differs from the live one ${Math.round(ageMs)} ms after its last change (TTL ${ttlSec} s)`)
    }
    const withoutTs = (body: string): unknown => {
      const { ts: _ts, ...rest } = JSON.parse(body) as Record<string, unknown>
      return rest
    }
    void get(`/v1/markets/${marketId}/book`).then((res) => {
      if (res.status !== 200) return
      const { ts: _ts, ...live } = bookView(x, marketId, 0) as unknown as Record<string, unknown>
      stale("the book", TTL_SEC.book, withoutTs(res.body), live)
    })
    void get(`/v1/markets/${marketId}/trades`).then((res) => {
      if (res.status !== 200) return
      stale("the trades", TTL_SEC.trades, JSON.parse(res.body), x.history.marketTrades(marketId, 50, 0))
    })
  }
}
