// A simulated day runs on the scheduler's virtual time alone: no real setTimeout, setInterval or
// setImmediate callback, and no process.nextTick (the scheduler's drain relies on being its only
// user), scheduled by src/ or sim/ code (or by Effect's runtime) may fire during it. The one use
// the simulation makes of them is the scheduler's own microtask drain (sim/world/scheduler.ts
// `drainMicrotasks`), which only resolves a promise; it is counted, to show the wrapping saw the run.
// The controls show the check catches a timer planted in service code, and Effect's default
// scheduler falling back to setTimeout(0) after 2048 microtask hops — which the simulator's own
// Effect Scheduler (sim/world/effect-scheduler.ts, World.runEffect) avoids.
import { realpathSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { runScenario } from "../../sim/scenario/run.ts"
import { loadScenario } from "../../sim/scenario/scenario.ts"
import { World } from "../../sim/world/world.ts"
import { SCENARIO_DIR } from "./support.ts"

const root = join(import.meta.dirname, "..", "..")
// Stacks name the real path: node_modules may be a symlink (a git worktree sharing another checkout's).
const effectDir = realpathSync(join(root, "node_modules", "effect"))
const watched = [join(root, "src") + "/", join(root, "sim") + "/", effectDir + "/"]

interface Fired {
  readonly kind: string
  readonly stack: string
}

type Schedule = (cb: (...a: unknown[]) => void, ...rest: unknown[]) => unknown

/** Runs `fn` with the real timer globals and process.nextTick wrapped; returns the callbacks that fired and were scheduled from watched code. */
const realTimersDuring = async (fn: () => Promise<void>): Promise<{ fired: Fired[]; drains: number }> => {
  const fired: Fired[] = []
  let drains = 0
  const g = globalThis as unknown as Record<string, Schedule>
  const originals = { setTimeout: g.setTimeout!, setInterval: g.setInterval!, setImmediate: g.setImmediate! }
  const scheduler = join(root, "sim", "world", "scheduler.ts")
  const wrap =
    (kind: string, original: () => Schedule): Schedule =>
    (cb, ...rest) => {
      const stack = new Error().stack ?? ""
      // Frame 0 is "Error", frame 1 this wrapper, frame 2 the caller: the scheduler's microtask drain, or not.
      const isDrain = (kind === "setImmediate" || kind === "nextTick") && (stack.split("\n")[2] ?? "").includes(scheduler)
      const fromWatched = watched.some((dir) => stack.includes(dir))
      return original()((...args: unknown[]) => {
        if (isDrain) drains++
        else if (fromWatched) fired.push({ kind, stack })
        cb(...args)
      }, ...rest)
    }
  for (const kind of Object.keys(originals) as Array<keyof typeof originals>) g[kind] = wrap(kind, () => originals[kind])
  // vitest swaps process.nextTick for its own during each RPC (a console line) and puts back what it
  // found a tick later, which can leave its own in place: an accessor keeps ours in front whatever it sets.
  const descriptor = Object.getOwnPropertyDescriptor(process, "nextTick")!
  let underlying = process.nextTick as unknown as Schedule
  const nextTick = wrap("nextTick", () => underlying)
  Object.defineProperty(process, "nextTick", {
    configurable: true,
    get: () => nextTick,
    set: (v: Schedule) => {
      if (v !== nextTick) underlying = v
    }
  })
  try {
    await fn()
  } finally {
    Object.assign(g, originals)
    Object.defineProperty(process, "nextTick", descriptor)
  }
  return { fired, drains }
}

const describeFired = (fired: ReadonlyArray<Fired>): string[] => fired.slice(0, 3).map((f) => `${f.kind}\n${f.stack}`)

/** Enough yields to pass Effect's 2048 microtask hops before its default scheduler uses setTimeout(0). */
const busyFiber = Effect.forEach(Array.from({ length: 3000 }, (_, i) => i), () => Effect.yieldNow()).pipe(Effect.as("done"))

describe("no real timer fires in a simulated day", () => {
  it("liquidity-midnight (LP bots, rewards, chain polling, WebSockets) for half a virtual hour", async () => {
    const scenario = loadScenario(join(SCENARIO_DIR, "liquidity-midnight.json"))
    let records = 0
    const { fired, drains } = await realTimersDuring(async () => {
      const summary = await runScenario(scenario, { durationSec: 1_800, expectations: false })
      records = summary.journalRecords
    })
    expect(records).toBeGreaterThan(100)
    expect(drains).toBeGreaterThan(100)
    expect(describeFired(fired)).toEqual([])
  }, 120_000)

  it("storage-chaos (the real journal on the simulated disk, fail-stops and recoveries)", async () => {
    const scenario = loadScenario(join(SCENARIO_DIR, "storage-chaos.json"))
    const { fired, drains } = await realTimersDuring(async () => {
      await runScenario(scenario, { durationSec: 600, expectations: false })
    })
    expect(drains).toBeGreaterThan(100)
    expect(describeFired(fired)).toEqual([])
  }, 120_000)

  it("failover (the sequencer pair: the leader's journal on the simulated log, lease renewals, elections, takeovers)", async () => {
    const scenario = loadScenario(join(SCENARIO_DIR, "failover.json"))
    let takeovers = 0
    const { fired, drains } = await realTimersDuring(async () => {
      const summary = await runScenario(scenario, { durationSec: 600, expectations: false })
      takeovers = summary.cluster!.leaderships - 1
    })
    expect(takeovers).toBeGreaterThanOrEqual(1)
    expect(drains).toBeGreaterThan(100)
    expect(describeFired(fired)).toEqual([])
  }, 120_000)

  it("control: a real timer set from service code during the day is caught", async () => {
    const scenario = loadScenario(join(SCENARIO_DIR, "liquidity-midnight.json"))
    const { fired } = await realTimersDuring(async () => {
      await runScenario(scenario, {
        durationSec: 120,
        expectations: false,
        tamper: (x) => x.onApply(() => void setTimeout(() => {}, 0))
      })
      // Let the planted timers fire before the globals are restored.
      await new Promise((resolve) => setTimeout(resolve, 20))
    })
    expect(fired.length).toBeGreaterThan(0)
    expect(fired[0]!.stack).toContain(join(root, "src", "service"))
  }, 120_000)

  it("control: a process.nextTick from service code during the day is caught", async () => {
    const scenario = loadScenario(join(SCENARIO_DIR, "liquidity-midnight.json"))
    const { fired } = await realTimersDuring(async () => {
      await runScenario(scenario, { durationSec: 120, expectations: false, tamper: (x) => x.onApply(() => process.nextTick(() => {})) })
    })
    expect(fired.map((f) => f.kind)).toContain("nextTick")
    expect(fired.find((f) => f.kind === "nextTick")!.stack).toContain(join(root, "src", "service"))
  }, 120_000)

  it("an Effect run inside the world uses the simulator's Scheduler: Effect's default one would fire setTimeout(0)", async () => {
    const world = new World({ seed: "no-real-timers", startSec: 1_700_000_000 })
    await world.ready
    world.quiesce()
    let inSim: Promise<string> | null = null
    let onDefault: Promise<string> | null = null
    const sim = await realTimersDuring(async () => {
      world.scheduler.after(1_000, () => void (inSim = world.runEffect(busyFiber)))
      await world.scheduler.run(world.scheduler.nowMs() + 2_000)
      expect(await inSim!).toBe("done")
    })
    expect(describeFired(sim.fired)).toEqual([])
    // The same fiber on Effect's default scheduler, started from a scheduler event: caught.
    const dflt = await realTimersDuring(async () => {
      world.scheduler.after(1_000, () => void (onDefault = Effect.runPromise(busyFiber)))
      await world.scheduler.run(world.scheduler.nowMs() + 2_000)
      expect(await onDefault!).toBe("done")
    })
    expect(dflt.fired.map((f) => f.kind)).toContain("setTimeout")
    expect(dflt.fired[0]!.stack).toContain(effectDir)
  })
})
