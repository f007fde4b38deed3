// Live entry point: the configuration from the environment (src/runtime/config.ts, README's
// variable table), then the program its ROLE names; Ctrl-C releases everything in order. What
// ends the process is decided here, never inside the runtime.
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, type Scope } from "effect"
import { type Configuration, configuration } from "./runtime/config.ts"
import { clusterProgram } from "./runtime/cluster-main.ts"
import { singleProgram } from "./runtime/single-main.ts"
import { DATA_DIR_IN_USE_EXIT } from "./store/data-dir-lock.ts"
import { STORAGE_FAILURE_EXIT, storageFailureLine } from "./store/storage.ts"

// Logging never takes the service down (docs/metrics.md "Logs"): a failed write to stderr or stdout
// (a full disk, a file-size limit, a closed pipe) arrives as the stream's 'error' event, which
// unheard would end the process; the logger counts the lines it dropped. A file-size limit's
// signal would kill the process outright: heard and ignored, writes past the limit fail with EFBIG
// where they are handled (the journal's fail-stop with its line, dropped log lines).
process.stderr.on("error", () => {})
process.stdout.on("error", () => {})
process.on("SIGXFSZ", () => {})

/**
 * Fail-stop (docs/durability.md): the journal could not write, so memory is ahead of disk. Nothing
 * unwritten was acknowledged and a restart recovers what was; no finalizer runs (a last snapshot
 * would persist what the journal never held).
 */
const storageFailed = (dataDir: string) => (err: unknown): void => {
  console.error(storageFailureLine(dataDir, err))
  process.exit(STORAGE_FAILURE_EXIT) // live-only: the process ends here, at once
}

/** A start refused with one line and its own exit code. */
const refuse = (code: number) => (e: { readonly message: string }) =>
  Console.error(`twinbook: ${e.message}`).pipe(Effect.andThen(Effect.sync(() => process.exit(code)))) // live-only: a refused start ends the process

/** The program the configuration's ROLE names. */
const program = (c: Configuration): Effect.Effect<never, Effect.Effect.Error<ReturnType<typeof singleProgram | typeof clusterProgram>>, Scope.Scope> =>
  c.role === "single" ? singleProgram(c, { onFatal: storageFailed(c.single.dataDir) }) : clusterProgram(c)

NodeRuntime.runMain(
  Effect.scoped(Effect.flatMap(configuration, program)).pipe(
    // Another service holds DATA_DIR: one line naming it and its PID, and a distinct exit code.
    Effect.catchTag("DataDirInUse", refuse(DATA_DIR_IN_USE_EXIT)),
    // A cluster role that cannot start as configured (an embedded chain, say): its one line.
    Effect.catchTag("ClusterStartRefused", refuse(1))
  )
)
