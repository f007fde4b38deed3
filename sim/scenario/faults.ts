// Fault injection: named knobs applied on a schedule or at random (seeded), each
// through the layer it belongs to — the operator API, the chain, the network, the
// sockets, or the process itself.
import type { SimMethod } from "../../src/chain/sim.ts"
import type { Auditor } from "./auditor.ts"
import { adminCall } from "./operator.ts"
import type { Rng } from "../world/random.ts"
import type { FaultSpec, Scenario } from "./scenario.ts"
import type { RunStats } from "../world/stats.ts"
import type { Truth } from "../world/truth.ts"
import type { SimMarket } from "../agents/agent.ts"
import type { World } from "../world/world.ts"

export interface FaultEnv {
  readonly world: World
  readonly stats: RunStats
  readonly rng: Rng
  readonly markets: ReadonlyArray<SimMarket>
  readonly truth: Truth
  readonly auditor: Auditor
  /** Markets resolved so far (the runner expects redemption). */
  readonly resolved: Set<string>
}

const note = (env: FaultEnv, kind: string, detail: string): void => {
  env.stats.faults.push({ atSec: env.world.scheduler.nowSec() - env.world.options.startSec, kind, detail })
}

// One piece: one case per fault kind, each a few lines.
/** Applies one fault now; a fault with a duration undoes itself when it ends. */
export const inject = async (env: FaultEnv, f: FaultSpec): Promise<void> => {
  const { world } = env
  const later = (sec: number, undo: () => Promise<void> | void): void => {
    if (sec > 0) world.scheduler.after(sec * 1000, () => void Promise.resolve(undo()).catch((err) => env.stats.fail(`undo ${f.kind}: ${String(err)}`)))
  }
  const live = (): boolean => !world.down
  switch (f.kind) {
    case "trading_pause":
      if (!live()) return
      await adminCall(world, "/v1/admin/trading", { state: "paused" })
      note(env, f.kind, `for ${f.duration} s`)
      later(f.duration, () => retryUntilUp(env, () => adminCall(world, "/v1/admin/trading", { state: "open" })))
      return
    case "engine_unreachable":
      if (!live()) return
      await adminCall(world, "/v1/admin/engine-binding", { withdraw: "unreachable" })
      note(env, f.kind, `for ${f.duration} s`)
      later(f.duration, () => retryUntilUp(env, () => adminCall(world, "/v1/admin/engine-binding", { withdraw: "up" })))
      return
    case "market_halt": {
      if (!live()) return
      const m = env.markets[f.market]!
      await adminCall(world, `/v1/admin/markets/${m.id}/status`, { status: "halted" })
      note(env, f.kind, `market ${f.market}${f.duration > 0 ? ` for ${f.duration} s` : ""}`)
      later(f.duration, () => retryUntilUp(env, () => adminCall(world, `/v1/admin/markets/${m.id}/status`, { status: "active" })))
      return
    }
    case "market_resolve": {
      if (!live()) return
      const m = env.markets[f.market]!
      const winner = f.winner === "truth" ? (env.truth.bps(m.index) >= 5_000 ? "yes" : "no") : f.winner
      const res = await adminCall(world, `/v1/admin/markets/${m.id}/status`, { status: "resolved", winning_outcome: winner })
      env.resolved.add(m.id)
      note(env, f.kind, `market ${f.market} → ${winner}, ${JSON.parse(res.body).redeemed} holders redeemed`)
      return
    }
    case "rpc_errors": {
      const methods = f.methods as ReadonlyArray<SimMethod>
      for (const m of methods) world.chain.faultRate(m, f.rate_pct / 100)
      note(env, f.kind, `${f.rate_pct}% of ${methods.join(", ")} for ${f.duration} s`)
      later(f.duration, () => {
        for (const m of methods) world.chain.faultRate(m, 0)
      })
      return
    }
    case "reorg": {
      const dropped = world.chain.reorg(f.depth)
      note(env, f.kind, `depth ${f.depth}, ${dropped.length} txs back to the pool`)
      return
    }
    case "ws_disconnect":
      note(env, f.kind, `${world.dropSockets(f.fraction_pct, env.rng)} sockets dropped`)
      return
    case "crash":
      if (!live()) return
      note(env, f.kind, `down ${f.down} s, recovering from ${world.records.length} journal records`)
      world.crash(f.down, (before, after) => env.auditor.recovered(before, after))
      return
    case "network": {
      const before = world.network.params
      world.network.params = {
        ...before,
        ...(f.latency_ms === undefined ? {} : { latencyMinMs: f.latency_ms[0], latencyMaxMs: f.latency_ms[1] }),
        ...(f.drop_pct === undefined ? {} : { dropPct: f.drop_pct })
      }
      note(env, f.kind, `latency ${world.network.params.latencyMinMs}..${world.network.params.latencyMaxMs} ms, drop ${world.network.params.dropPct}%`)
      later(f.duration, () => void (world.network.params = before))
      return
    }
    case "leader_crash": {
      const who = world.cluster!.crashLeader(f.down * 1000)
      note(env, f.kind, who === null ? "no leader to kill" : `${who} killed; a standby in its slot ${f.down} s later`)
      return
    }
    case "zombie": {
      const who = world.cluster!.zombie(f.pause * 1000, f.until_takeover)
      note(env, f.kind, who === null ? "no leader to pause" : `${who} paused at its next append ${f.until_takeover ? `until just after the takeover (at most ${f.pause} s)` : `for ${f.pause} s`}`)
      return
    }
    case "lease_expiry": {
      const who = world.cluster!.disturbLease(f.duration * 1000)
      note(env, f.kind, who === null ? "no leader" : `${who}'s lease renewals lost or delayed for ${f.duration} s`)
      return
    }
    case "log_unavailable":
      world.cluster!.logOutage(f.duration * 1000, f.land_pct)
      note(env, f.kind, `for ${f.duration} s (${f.land_pct}% of the appends meanwhile commit late)`)
      return
  }
}

/** An undo that lands while the process is down waits for it to come back. */
const retryUntilUp = async (env: FaultEnv, action: () => Promise<unknown>): Promise<void> => {
  while (env.world.down) await env.world.scheduler.sleep(1_000)
  await action()
}

/** Schedules the scenario's faults, fixed and random. */
export const scheduleFaults = (env: FaultEnv, scenario: Scenario): void => {
  const startMs = env.world.scheduler.nowMs()
  const run = (f: FaultSpec): void => void inject(env, f).catch((err) => env.stats.fail(`fault ${f.kind}: ${String(err)}`))
  for (const f of scenario.faults) env.world.scheduler.at(startMs + f.at * 1000, () => run(f))
  const r = scenario.random_faults
  if (r === undefined || r.kinds.length === 0) return
  const endMs = startMs + scenario.duration * 1000
  let t = startMs
  for (;;) {
    t += env.rng.exponential(r.every * 1000)
    if (t >= endMs) break
    const kind = env.rng.pick(r.kinds)
    const at = (t - startMs) / 1000
    const f: FaultSpec =
      kind === "rpc_errors"
        ? { kind, at, duration: r.duration, rate_pct: 30, methods: ["head", "transfersTo", "sweep", "payout", "receipt"] }
        : kind === "reorg"
          ? { kind, at, depth: env.rng.int(1, 3) }
          : kind === "ws_disconnect"
            ? { kind, at, fraction_pct: 50 }
            : kind === "crash"
              ? { kind, at, down: 5 }
              : kind === "leader_crash"
                ? { kind, at, down: 5 }
                : kind === "zombie"
                  ? { kind, at, pause: r.duration, until_takeover: false }
                  : kind === "log_unavailable"
                    ? { kind, at, duration: r.duration, land_pct: 50 }
                    : { kind, at, duration: r.duration }
    env.world.scheduler.at(t, () => run(f))
  }
}
