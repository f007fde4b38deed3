// The service's workers are fibers on a Schedule in the service's Scope (src/runtime/workers.ts):
// one pass at a time whatever the period, the first one a period after start, and closing the Scope
// waits for the pass in flight before the finalizers acquired earlier (the journal's close) run.
// Driven by Effect's TestClock, so nothing here waits on the wall clock.
import { it } from "@effect/vitest"
import { Clock, Deferred, Effect, Exit, Fiber, Scope, TestClock } from "effect"
import { describe, expect } from "vitest"
import { forkWorker, stepWorker } from "../../src/runtime/workers.ts"

/** A step whose passes end only when the test says so; records starts, ends and the most running at once. */
const gatedStep = () => {
  const log: string[] = []
  let running = 0
  let maxRunning = 0
  let release: (() => void) | null = null
  const step = () =>
    new Promise<void>((resolve) => {
      running++
      maxRunning = Math.max(maxRunning, running)
      log.push("start")
      release = () => {
        running--
        log.push("end")
        resolve()
      }
    })
  return { log, step, maxRunning: () => maxRunning, release: () => release?.() }
}

/** The TestClock's reading as the workers' monotonic clock (the service passes MonoClockService's). */
const testMonoMs = Effect.map(TestClock.testClock(), (test) => () => test.unsafeCurrentTimeMillis())

/** Lets the fibers run what is ready (promise continuations included). */
const settle = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve))).pipe(Effect.zipRight(Effect.yieldNow()))

describe("workers as scoped fibers", () => {
  it.effect("one pass at a time: a pass longer than the period is never overlapped, and the next follows it within a period", () =>
    Effect.gen(function* () {
      const g = gatedStep()
      const scope = yield* Scope.make()
      yield* forkWorker(stepWorker("t", 100, g.step), () => {}, yield* testMonoMs).pipe(Scope.extend(scope))
      yield* settle
      expect(g.log).toEqual([])
      yield* TestClock.adjust("100 millis")
      yield* settle
      expect(g.log).toEqual(["start"])
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(g.log).toEqual(["start"])
      g.release()
      yield* settle
      expect(g.log).toEqual(["start", "end"])
      yield* TestClock.adjust("100 millis")
      yield* settle
      expect(g.log).toEqual(["start", "end", "start"])
      expect(g.maxRunning()).toBe(1)
      g.release()
      yield* Scope.close(scope, Exit.void)
    })
  )

  it.effect("closing the Scope waits for the pass in flight, then runs the finalizers acquired before the worker", () =>
    Effect.gen(function* () {
      const g = gatedStep()
      const scope = yield* Scope.make()
      yield* Scope.addFinalizer(scope, Effect.sync(() => g.log.push("journal closed")))
      yield* forkWorker(stepWorker("t", 100, g.step), () => {}, yield* testMonoMs).pipe(Scope.extend(scope))
      yield* TestClock.adjust("100 millis")
      yield* settle
      expect(g.log).toEqual(["start"])
      const closed = yield* Deferred.make<void>()
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.zipRight(Deferred.succeed(closed, undefined)), Effect.fork)
      yield* settle
      expect(yield* Deferred.isDone(closed)).toBe(false)
      g.release()
      yield* Fiber.join(closing)
      expect(g.log).toEqual(["start", "end", "journal closed"])
      // No pass after the close.
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(g.log).toEqual(["start", "end", "journal closed"])
    })
  )

  it.effect("a failing pass is reported and the worker keeps its schedule", () =>
    Effect.gen(function* () {
      const errors: unknown[] = []
      let passes = 0
      const scope = yield* Scope.make()
      const step = () => (++passes === 1 ? Promise.reject(new Error("rpc down")) : Promise.resolve())
      yield* forkWorker(stepWorker("t", 50, step), (e) => errors.push(e), yield* testMonoMs).pipe(Scope.extend(scope))
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust("50 millis")
        yield* settle
      }
      expect(passes).toBe(3)
      expect(errors.map((e) => (e as Error).message)).toEqual(["rpc down"])
      yield* Scope.close(scope, Exit.void)
    })
  )

  // Schedule.fixed computes each next pass from the Clock's reading; the service hands its workers
  // the monotonic clock, so a wall-clock jump is not taken for an hour of lateness followed by an
  // immediate extra pass. Here the Clock's reading is the TestClock's time plus a wall offset that
  // jumps an hour, while its sleeps (elapsed time) stay the TestClock's.
  for (const withMono of [false, true]) {
    it.effect(`a wall-clock jump forward ${withMono ? "does not make" : "makes (control: the schedule reads the wall)"} an extra pass`, () =>
      Effect.gen(function* () {
        const test = yield* TestClock.testClock()
        let wallOffsetMs = 0
        const wallMs = () => test.unsafeCurrentTimeMillis() + wallOffsetMs
        const wall: Clock.Clock = {
          [Clock.ClockTypeId]: Clock.ClockTypeId,
          unsafeCurrentTimeMillis: wallMs,
          currentTimeMillis: Effect.sync(wallMs),
          unsafeCurrentTimeNanos: () => BigInt(wallMs()) * 1_000_000n,
          currentTimeNanos: Effect.sync(() => BigInt(wallMs()) * 1_000_000n),
          sleep: (d) => test.sleep(d)
        }
        let passes = 0
        const step = () => Promise.resolve(void passes++)
        const scope = yield* Scope.make()
        const monoMs = () => test.unsafeCurrentTimeMillis()
        yield* forkWorker(stepWorker("t", 100, step), () => {}, withMono ? monoMs : wallMs).pipe(Effect.withClock(wall), Scope.extend(scope))
        yield* settle
        yield* TestClock.adjust("100 millis")
        yield* settle
        expect(passes).toBe(1)
        wallOffsetMs = 3_600_000
        yield* TestClock.adjust("100 millis")
        yield* settle
        yield* TestClock.adjust("0 millis")
        yield* settle
        expect(passes).toBe(withMono ? 2 : 3)
        yield* Scope.close(scope, Exit.void)
      })
    )
  }
})
