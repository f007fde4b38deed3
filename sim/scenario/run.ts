// Runs one scenario with one seed: builds the world, creates the markets, starts
// the agents and the fault schedule, audits on a cadence, drains, checks every
// agent's view, evaluates the expectations and returns the summary.
import { exchangeHash } from "../../src/service/exchange-snapshot.ts"
import type { Exchange } from "../../src/service/exchange.ts"
import { Agent, type AgentEnv, type AgentParams, type SimMarket } from "../agents/agent.ts"
import { CarelessClient, type Mistake, Spammer } from "../agents/hostile.ts"
import { LpBotAgent, LpStrategyAgent } from "../agents/lp.ts"
import { InformedTrader, MarketMaker, NoiseTrader } from "../agents/traders.ts"
import { Auditor } from "./auditor.ts"
import { scheduleClockSteps } from "../world/clock.ts"
import { scheduleFaults } from "./faults.ts"
import { journalHash } from "./journal-log.ts"
import { adminSetupCall } from "./operator.ts"
import type { AgentSpec, Scenario } from "./scenario.ts"
import { RunStats } from "../world/stats.ts"
import { Truth } from "../world/truth.ts"
import type { SigningMode } from "../world/signatures.ts"
import { World } from "../world/world.ts"
import type { StorageOptions, StorageRunStats } from "../world/storage-world.ts"
import type { Storage } from "../../src/store/storage.ts"
import type { ReplicatedLog } from "../../src/cluster/ports.ts"
import type { SimLogClient } from "../world/cluster-log.ts"
import type { ClusterOptions, ClusterRunStats } from "../world/cluster-world.ts"

/** Virtual time after the end for in-flight requests, confirmations and payouts to settle. */
export const DRAIN_SEC = 120
/** After the drain, with the background stopped: enough for any request to answer or time out. */
const QUIET_SEC = 30

export interface RunOptions {
  /** Overrides the scenario's seed. */
  readonly seed?: number
  /** Overrides the scenario's duration (seconds), e.g. a shorter CI run. */
  readonly durationSec?: number
  /** Test-only: wraps each booted exchange, e.g. a planted bug the auditor must catch. */
  readonly tamper?: (exchange: Exchange) => void
  /** Test-only: wraps the simulated disk each process sees (storage scenarios), e.g. sim/testing/ignore-bytes-written.ts. */
  readonly tamperStorage?: (storage: Storage) => Storage
  /** Test-only: wraps the replicated log each sequencer sees (cluster scenarios), e.g. sim/testing/no-expected-position.ts. */
  readonly tamperLog?: (log: SimLogClient) => ReplicatedLog
  /** Called now and then with the fraction of virtual time done (0..1). */
  readonly onProgress?: (fraction: number, virtualSec: number) => void
  /** Evaluate the scenario's `expect` block (default true; sized for full-length runs). */
  readonly expectations?: boolean
  /** Wall-clock milliseconds, for the summary only (the run itself never reads it). */
  readonly wallMs?: () => number
  /**
   * Agents left out of the world, by name (`lp_bot-0-1`): the counterfactual run. Every other
   * agent keeps its name, hence its seeds and network draws, so it acts exactly as with them
   * until the market itself differs.
   */
  readonly without?: ReadonlyArray<string>
  /** How the agents sign their orders: world tokens (default) or Ed25519 (sim/world/signatures.ts); the same journal either way. */
  readonly signing?: SigningMode
  /** Called with the world once it is built (before any agent starts): e.g. a tape recorder. */
  readonly onWorld?: (world: World, markets: ReadonlyArray<SimMarket>) => void
}

export interface Summary {
  readonly scenario: string
  readonly seed: number
  readonly ok: boolean
  readonly failures: ReadonlyArray<string>
  readonly virtualSec: number
  readonly wallMs: number | null
  readonly events: number
  readonly journalRecords: number
  readonly requests: number
  readonly responsesByStatus: Record<string, number>
  readonly timeouts: number
  readonly agents: number
  readonly agentsOnboarded: number
  readonly actions: number
  readonly ordersSent: number
  readonly ordersAcked: number
  readonly ordersQueued: number
  readonly fills: number
  readonly volumeUsdc: number
  readonly depositsCredited: number
  readonly withdrawalsConfirmed: number
  readonly withdrawalsRefunded: number
  readonly badInputsSent: number
  readonly wsFrames: number
  readonly wsReconnects: number
  readonly invariantChecks: number
  readonly faultsInjected: number
  readonly faults: ReadonlyArray<{ atSec: number; kind: string; detail: string }>
  readonly errorCodes: Record<string, number>
  readonly crashes: number
  readonly lpBotsStarted: number
  readonly lpBotChecks: number
  readonly rewardsPaidMicro: number
  readonly journalHash: string
  readonly stateHash: string
  /** The run's journal, for writing a replay log. */
  readonly records: ReadonlyArray<unknown>
  /** Storage scenarios: what the simulated disk did and what recovery printed; null otherwise. */
  readonly storage: (StorageRunStats & { readonly log: ReadonlyArray<string> }) | null
  /** Cluster scenarios: failovers, faults, what the log and the lease did, the sequencers' lines; null otherwise. */
  readonly cluster: (ClusterRunStats & { readonly log: ReadonlyArray<string> }) | null
  readonly startSec: number
}

const agentParams = (s: AgentSpec): AgentParams => ({ depositUsdc: s.deposit_usdc, intervalSec: s.interval, withdrawPct: s.withdraw_pct, websocket: s.websocket })

/** Every agent's name, in creation order: `<kind>-<group>-<index>`. */
export const agentNames = (scenario: Scenario): string[] => scenario.agents.flatMap((spec, g) => Array.from({ length: spec.count }, (_, i) => `${spec.kind}-${g}-${i}`))

const makeAgents = (scenario: Scenario, env: AgentEnv, without: ReadonlySet<string>): Agent[] => {
  const agents: Agent[] = []
  const rng = env.world.rng.fork("agents")
  for (const [g, spec] of scenario.agents.entries()) {
    const sharedIp = `10.99.${g}.1`
    for (let i = 0; i < spec.count; i++) {
      const name = `${spec.kind}-${g}-${i}`
      // Seeds come from the name, never the position: leaving one out shifts nobody else.
      if (without.has(name)) continue
      const r = rng.fork(name)
      const p = agentParams(spec)
      switch (spec.kind) {
        case "noise":
          agents.push(new NoiseTrader(name, env, r, p, spec.max_size))
          break
        case "informed":
          agents.push(new InformedTrader(name, env, r, p, spec.max_size, spec.edge_bps))
          break
        case "market_maker":
          agents.push(new MarketMaker(name, env, r, p, { spreadBps: spec.spread_bps, size: spec.size, levels: spec.levels, marketsPerAgent: spec.markets_per_agent }))
          break
        case "lp_strategy":
          agents.push(new LpStrategyAgent(name, env, r, p, { preset: spec.preset, capitalUsdc: spec.capital_usdc, marketsPerAgent: spec.markets_per_agent }))
          break
        case "lp_bot":
          agents.push(new LpBotAgent(name, env, r, p, { preset: spec.preset, capitalUsdc: spec.capital_usdc, marketsPerAgent: spec.markets_per_agent }))
          break
        case "careless":
          agents.push(new CarelessClient(name, env, r, p, spec.mistakes as ReadonlyArray<Mistake>))
          break
        case "spammer":
          agents.push(new Spammer(name, env, r, p, spec.burst, spec.share_ip ? sharedIp : undefined))
          break
      }
    }
  }
  return agents
}

const createMarkets = async (world: World, count: number, startSec: number): Promise<SimMarket[]> => {
  const markets: SimMarket[] = []
  for (let i = 0; i < count; i++) {
    const res = await adminSetupCall(world, "/v1/events", {
      question: `Simulated market ${i}: will it resolve YES?`,
      category: "Culture",
      slug: `sim-market-${i}`,
      expiry: startSec + 365 * 86_400
    })
    markets.push({ index: i, id: JSON.parse(res.body).outcomes[0].market_id as string })
  }
  return markets
}

// One piece: a scenario run in its order (world, agents, faults, clock, drain, audit, summary), each step a call; they share the world.
export const runScenario = async (scenario: Scenario, opts: RunOptions = {}): Promise<Summary> => {
  const wall0 = opts.wallMs?.() ?? null
  const known = new Set(agentNames(scenario))
  for (const name of opts.without ?? []) if (!known.has(name)) throw new RangeError(`--without ${name}: no such agent (agents are named <kind>-<group>-<index>, e.g. ${[...known][0]})`)
  const seed = opts.seed ?? scenario.seed
  const durationSec = opts.durationSec ?? scenario.duration
  const startSec = scenario.start_time
  const world = new World({
    seed: `twinbook-sim:${seed}`,
    startSec,
    network: {
      latencyMinMs: scenario.network.latency_ms[0],
      latencyMaxMs: scenario.network.latency_ms[1],
      dropPct: scenario.network.drop_pct,
      responseDropPct: scenario.network.response_drop_pct,
      timeoutMs: scenario.network.timeout * 1000
    },
    blockTimeSec: scenario.chain.block_time,
    confirmations: scenario.chain.confirmations,
    pollSec: scenario.chain.poll,
    ...(opts.signing === undefined ? {} : { signing: opts.signing }),
    ...(opts.tamper === undefined ? {} : { tamper: opts.tamper }),
    ...(scenario.storage === undefined ? {} : { storage: storageOptions(scenario.storage, opts.tamperStorage) }),
    ...(scenario.cluster === undefined ? {} : { cluster: clusterOptions(scenario.cluster, opts.tamperLog) })
  })
  await world.ready
  const stats = new RunStats()
  // The default taker fee, before the markets: each market takes the default in force when it is created.
  if (scenario.fees !== undefined) await adminSetupCall(world, "/v1/admin/fees", { taker_fee_bps: scenario.fees.taker_fee_bps, ...(scenario.fees.maker_rebate_bps === undefined ? {} : { maker_rebate_bps: scenario.fees.maker_rebate_bps }) })
  const markets = await createMarkets(world, scenario.markets.count, startSec)
  world.host?.disk.arm()
  const jumps = scenario.markets.jumps === undefined ? undefined : { perHour: scenario.markets.jumps.per_hour, size: scenario.markets.jumps.size }
  const truth = new Truth(world.scheduler, world.rng.fork("truth"), markets.length, scenario.markets.initial_bps, scenario.markets.volatility, jumps)
  const endMs = (startSec + durationSec) * 1000
  const env: AgentEnv = { world, stats, markets, truth, stopAtMs: endMs, takerFeeBps: scenario.fees?.taker_fee_bps ?? 0 }
  opts.onWorld?.(world, markets)
  const agents = makeAgents(scenario, env, new Set(opts.without ?? []))
  // Clock-step scenarios also read through the edge cache to check no read outlives its TTL.
  const auditor = new Auditor(world, stats, agents, { probeReads: scenario.clock !== undefined })
  const resolved = new Set<string>()
  scheduleFaults({ world, stats, rng: world.rng.fork("faults"), markets, truth, auditor, resolved }, { ...scenario, duration: durationSec })
  if (scenario.clock !== undefined) {
    const note = (atSec: number, bySec: number): void => void stats.faults.push({ atSec, kind: "clock_step", detail: `wall clock ${bySec < 0 ? "" : "+"}${bySec} s` })
    scheduleClockSteps(world.scheduler, world.rng.fork("clock"), startSec * 1000, durationSec, scenario.clock.steps, scenario.clock.random, note)
  }
  world.scheduler.every(scenario.audit.every * 1000, () => auditor.check())
  for (const a of agents) a.start()

  // Progress over all the virtual time a run simulates — its duration, the drain and the quiet tail
  // (a bar once read 100% at the drain's end, QUIET_SEC before the run's); 1 only once it is over.
  const totalMs = (durationSec + DRAIN_SEC + QUIET_SEC) * 1000
  let lastReport = 0
  const report = (nowMs: number): void => {
    if (opts.onProgress === undefined || world.scheduler.executed - lastReport < 2_000) return
    lastReport = world.scheduler.executed
    opts.onProgress(Math.min((nowMs - startSec * 1000) / totalMs, 0.999), nowMs / 1000 - startSec)
  }
  await world.scheduler.run(endMs + DRAIN_SEC * 1000, (nowMs) => {
    report(nowMs)
    // A failing run stops early: the first failures say what went wrong.
    return stats.failures.length < 20
  })
  // Quiet the background (blocks, polls, bots), then let in-flight requests and frames land.
  world.quiesce()
  await world.scheduler.run(world.scheduler.nowMs() + QUIET_SEC * 1000, report)
  auditor.check()
  auditor.checkViews()
  if (world.cluster !== null) auditor.checkClusterEnd()
  for (const err of world.errors) stats.fail(`service error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`)
  opts.onProgress?.(1, world.scheduler.nowSec() - startSec)

  const x = world.exchange
  const depositsCredited = [...x.deposits.byKey.values()].filter((d) => d.stage === "credited").length
  const ws = [...x.withdrawals.byId.values()]
  const byStatus: Record<string, number> = {}
  for (const [status, n] of [...world.network.stats.byStatus].sort((a, b) => a[0] - b[0])) byStatus[String(status)] = n
  const errorCodes: Record<string, number> = {}
  for (const [code, n] of [...stats.errorCodes].sort((a, b) => a[0].localeCompare(b[0]))) errorCodes[code] = n
  const base = {
    fills: auditor.fills,
    volumeUsdc: auditor.volumeMicro / 1e6,
    depositsCredited,
    withdrawalsConfirmed: ws.filter((w) => w.status === "confirmed").length,
    ordersQueued: stats.ordersQueued,
    redeemedMarkets: resolved.size,
    lpBotsStarted: stats.lpBotsStarted,
    rewardsPaidMicro: auditor.rewardsPaidMicro
  }
  if (opts.expectations ?? true) checkExpectations(scenario, base, byStatus, errorCodes, stats, durationSec)
  return {
    scenario: scenario.name,
    seed,
    ok: stats.failures.length === 0,
    failures: stats.failures,
    virtualSec: world.scheduler.nowSec() - startSec,
    wallMs: wall0 === null ? null : opts.wallMs!() - wall0,
    events: world.scheduler.executed,
    journalRecords: world.records.length,
    requests: world.network.stats.requests,
    responsesByStatus: byStatus,
    timeouts: world.network.stats.timeouts,
    agents: agents.length,
    agentsOnboarded: stats.agentsOnboarded,
    actions: stats.actions,
    ordersSent: stats.ordersSent,
    ordersAcked: stats.ordersAcked,
    ordersQueued: stats.ordersQueued,
    fills: base.fills,
    volumeUsdc: base.volumeUsdc,
    depositsCredited,
    withdrawalsConfirmed: base.withdrawalsConfirmed,
    withdrawalsRefunded: ws.filter((w) => w.status === "refunded").length,
    badInputsSent: stats.badInputsSent,
    wsFrames: stats.wsFrames,
    wsReconnects: stats.wsReconnects,
    invariantChecks: stats.invariantChecks,
    faultsInjected: stats.faults.length,
    faults: stats.faults,
    errorCodes,
    crashes: world.crashes,
    lpBotsStarted: stats.lpBotsStarted,
    lpBotChecks: stats.lpBotChecks,
    rewardsPaidMicro: auditor.rewardsPaidMicro,
    journalHash: journalHash(world.records),
    stateHash: exchangeHash(x),
    records: world.records,
    storage: world.host === null ? null : { ...world.host.runStats(), log: world.serviceLog },
    cluster: world.cluster === null ? null : { ...world.cluster.runStats(), log: world.serviceLog },
    startSec
  }
}

const storageOptions = (s: NonNullable<Scenario["storage"]>, tamper: RunOptions["tamperStorage"]): StorageOptions => ({
  faults: {
    shortWritePct: s.short_write_pct,
    enospcPct: s.enospc_pct,
    syncEioPct: s.sync_eio_pct,
    tornTailPct: s.torn_tail_pct,
    snapshotFlipPct: s.snapshot_flip_pct
  },
  snapshotEverySec: s.snapshot_every,
  restartAfterSec: s.restart_after,
  ...(tamper === undefined ? {} : { tamper })
})

const clusterOptions = (c: NonNullable<Scenario["cluster"]>, tamper: RunOptions["tamperLog"]): ClusterOptions => ({
  leaseTtlMs: c.lease_ttl * 1000,
  restartAfterMs: c.restart_after * 1000,
  log: { latencyMs: c.log_latency_ms, timeoutMs: c.request_timeout * 1000 },
  lease: { latencyMs: c.lease_latency_ms, timeoutMs: c.request_timeout * 1000 },
  probeEveryMs: c.probe_every * 1000,
  ...(tamper === undefined ? {} : { tamperLog: tamper })
})

/** The `expect` bounds that count steady activity, scaled to the run's length by --duration; the rest are per run. */
export const SCALED_EXPECT = ["min_fills", "min_volume_usdc", "min_withdrawals_confirmed", "min_orders_queued"] as const

/** The scenario's `expect` for a run of durationSec: activity bounds × durationSec / duration, rounded down. */
export const scaledExpect = (scenario: Scenario, durationSec: number): Scenario["expect"] => {
  if (durationSec === scenario.duration || scenario.duration <= 0) return scenario.expect
  const e: Record<string, unknown> = { ...scenario.expect }
  for (const k of SCALED_EXPECT) {
    const v = scenario.expect[k]
    if (v !== undefined) e[k] = Math.floor((v * durationSec) / scenario.duration)
  }
  return e as Scenario["expect"]
}

const checkExpectations = (
  scenario: Scenario,
  got: { fills: number; volumeUsdc: number; depositsCredited: number; withdrawalsConfirmed: number; ordersQueued: number; redeemedMarkets: number; lpBotsStarted: number; rewardsPaidMicro: number },
  byStatus: Record<string, number>,
  errorCodes: Record<string, number>,
  stats: RunStats,
  durationSec: number
): void => {
  const e = scaledExpect(scenario, durationSec)
  const atLeast = (what: string, value: number, min: number | undefined): void => {
    if (min === undefined || value >= min) return
    const written = (scenario.expect as Record<string, unknown>)[`min_${what}`]
    stats.fail(`expect: ${what} ${value} < ${min}${typeof written === "number" && written !== min ? ` (${written} scaled to ${durationSec} s of ${scenario.duration} s)` : ""}`)
  }
  atLeast("fills", got.fills, e.min_fills)
  atLeast("volume_usdc", got.volumeUsdc, e.min_volume_usdc)
  atLeast("deposits_credited", got.depositsCredited, e.min_deposits_credited)
  atLeast("withdrawals_confirmed", got.withdrawalsConfirmed, e.min_withdrawals_confirmed)
  atLeast("orders_queued", got.ordersQueued, e.min_orders_queued)
  atLeast("redeemed_markets", got.redeemedMarkets, e.min_redeemed_markets)
  atLeast("lp_bots_started", got.lpBotsStarted, e.min_lp_bots_started)
  atLeast("rewards_paid_micro", got.rewardsPaidMicro, e.min_rewards_paid_micro)
  for (const [status, min] of Object.entries(e.min_status ?? {})) atLeast(`responses with status ${status}`, byStatus[status] ?? 0, min)
  // engine_unreachable's 502 and not_leader's 503 (a failover: retry) are designed answers during those faults, not server errors.
  const fiveXx = Object.entries(byStatus).reduce((n, [s, c]) => n + (Number(s) >= 500 ? c : 0), 0) - (errorCodes.engine_unreachable ?? 0) - (errorCodes.not_leader ?? 0)
  if (fiveXx > e.max_5xx) stats.fail(`expect: ${fiveXx} 5xx responses (max ${e.max_5xx})`)
  for (const code of e.error_codes ?? []) if ((errorCodes[code] ?? 0) === 0) stats.fail(`expect: error code ${code} never seen`)
}
