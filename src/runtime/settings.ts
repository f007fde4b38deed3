// What a live process adds around the service, the same in every role: its logger on stderr and
// the bound on a stop. The settings themselves are declared in ./config.ts.
import { batchedSink, type Logger, makeLogger } from "../ops/log.ts"
import type { CommonSettings } from "./config.ts"

/**
 * The process's logger on stderr: lines batched per turn, a failed write dropped and counted,
 * never fatal (docs/metrics.md "Logs"); lines of the last turn still go out on any exit.
 */
export const stderrLogger = (settings: CommonSettings["log"], nowMs: () => number): Logger => {
  const sink = batchedSink((text, failed) => {
    // A stream that failed once is destroyed: later lines are dropped (and counted) at once.
    if (process.stderr.destroyed) return failed(new Error("stderr is closed"))
    process.stderr.write(text, (err) => (err == null ? undefined : failed(err)))
  })
  process.once("exit", sink.flush)
  return makeLogger({ level: settings.level, format: settings.format, nowMs, write: sink.write, droppedLines: sink.droppedLines })
}

/**
 * The bound on a stop: from the first SIGTERM/SIGINT, the drain and every release after it have
 * `timeoutSec` seconds; past that the process exits DRAIN_TIMEOUT_EXIT naming the step it was
 * waiting for (the embedded Anvil is still stopped by its exit hook and watchdog).
 */
export const DRAIN_TIMEOUT_EXIT = 124
export const armStopDeadline = (timeoutSec: number, waitingFor: () => string): void => {
  const arm = (): void => {
    process.removeListener("SIGTERM", arm)
    process.removeListener("SIGINT", arm)
    // live-only: the bound on a stop is real time, whatever the Clock says
    setTimeout(() => {
      console.error(`twinbook: stop timed out after ${timeoutSec} s (DRAIN_TIMEOUT_SEC), still waiting for ${waitingFor()}; exiting ${DRAIN_TIMEOUT_EXIT}`)
      process.exit(DRAIN_TIMEOUT_EXIT)
    }, timeoutSec * 1000).unref()
  }
  process.once("SIGTERM", arm)
  process.once("SIGINT", arm)
}
