// The clock-steps scenario (scenarios/clock-steps.json, docs/time.md): the simulated wall
// clock steps back and forward, across midnight, while the monotonic clock runs on. The run
// is clean, and the auditor catches each of the wall-clock defects when one is planted back:
// a rate limiter or an edge cache timed by the wall clock, rewards that credit the minutes a
// jump skipped, and journal time that follows the wall clock's steps (the old stamp).
import { describe, expect, it } from "vitest"
import { EdgeCache } from "../../src/api/cache.ts"
import { RateLimiter } from "../../src/usecase/rate-limit.ts"
import type { Exchange } from "../../src/service/exchange.ts"
import { MINUTE_SEC } from "../../src/service/rewards-book.ts"
import { runScenario, type RunOptions } from "../../sim/scenario/run.ts"
import type { World } from "../../sim/world/world.ts"
import { ciDurationSec, shippedScenarios } from "./support.ts"

const scenario = shippedScenarios().find((s) => s.scenario.name === "clock-steps")!.scenario
const run = (opts: RunOptions = {}) => runScenario(scenario, { seed: 20, durationSec: ciDurationSec(scenario), expectations: false, ...opts })

/** After every boot, swaps a part of the service's context for one built on the wall clock. */
const onWallClock =
  (part: "limiter" | "cache") =>
  (world: World): void =>
    world.onBoot(() => {
      const ctx = world.core.ctx as { limiter: RateLimiter; cache: EdgeCache }
      if (part === "limiter") ctx.limiter = new RateLimiter(world.nowMs)
      else ctx.cache = new EdgeCache(world.nowMs)
    })

/** The old accrual: a sample credits every minute since the previous one, however far the clock jumped. */
const creditSkippedMinutes = (x: Exchange): void => {
  const book = x.rewards
  const sample = book.sample.bind(book)
  book.sample = (tsSec, engine) => {
    const nowMin = Math.floor(tsSec / MINUTE_SEC)
    const skipped = book.cursorMin === null ? 1 : Math.max(1, nowMin - book.cursorMin)
    for (let i = 0; i < skipped; i++) sample(tsSec, engine)
  }
}

/** The stamp before issue 31 item 12: the wall clock, but never before the last record — it jumps with a step forward and stands still after. */
const oldStamp = (world: World): void =>
  world.onBoot((x) => {
    x.journalMs = () => Math.max(x.tsSec * 1000, world.nowMs())
  })

describe("clock steps in the simulator", () => {
  it("crosses midnight and steps both ways under load with every check clean, and pays rewards", async () => {
    const s = await run()
    expect(s.failures).toEqual([])
    expect(s.faults.filter((f) => f.kind === "clock_step").length).toBeGreaterThanOrEqual(8)
    expect(s.rewardsPaidMicro).toBeGreaterThan(0)
  }, 120_000)

  it("catches a rate limiter timed by the wall clock", async () => {
    const s = await run({ onWorld: onWallClock("limiter") })
    expect(s.failures.some((f) => /rate limit beyond the client's own rate/.test(f)), s.failures.join("\n")).toBe(true)
  }, 120_000)

  it("catches an edge cache timed by the wall clock", async () => {
    const s = await run({ onWorld: onWallClock("cache") })
    expect(s.failures.some((f) => /stale read/.test(f)), s.failures.join("\n")).toBe(true)
  }, 120_000)

  it("catches journal time that jumps with the wall clock and stands still after", async () => {
    const s = await run({ onWorld: oldStamp })
    const pace = s.failures.filter((f) => /journal time (jumped|stood still|advanced)/.test(f))
    expect(pace.some((f) => /journal time jumped/.test(f)), s.failures.join("\n")).toBe(true)
    expect(pace.some((f) => /journal time (stood still|advanced)/.test(f)), s.failures.join("\n")).toBe(true)
  }, 120_000)

  it("catches rewards credited for the minutes a jump skipped", async () => {
    const s = await run({ tamper: creditSkippedMinutes })
    expect(s.failures.some((f) => /rewards: day \d+ credits \d+ minutes, the journal holds \d+ samples/.test(f)), s.failures.join("\n")).toBe(true)
  }, 120_000)
})
