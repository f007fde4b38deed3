// The service's side effects as Effect services (docs/runtime.md "Tags and layers"): one tag each,
// a live layer here, and the alternatives tests and the simulator provide instead. `makeService`
// reads them from its context; `src/main.ts` builds the live graph, `startService` builds one from
// plain options (tests, benches). The storage tag is in ./store.ts, the chain's is
// `ChainService` (src/chain/chain.ts).
import { Context, Effect, Layer, type Scope } from "effect"
import { listen, type NodeServerOptions, type RunningServer } from "../api/node-server.ts"
import { inlineVerifier, type Verifier, workerVerifier } from "../auth/verifier.ts"
import { type Logger, silentLogger } from "../ops/log.ts"
import { liveMonoClock, type MonoClock } from "../time/clock.ts"

/**
 * Wall time, which stamps commands and checks signed timestamps and nothing else (docs/time.md).
 * Not Effect's `Clock`: the worker fibers' schedules read that one, and they must follow elapsed
 * time, not a wall clock that an operator or NTP may step.
 */
export class WallClock extends Context.Tag("twinbook/WallClock")<WallClock, { readonly nowMs: () => number }>() {}

/** Live: src/main.ts hands it Effect's default Clock's reading; tests and the simulator their own. */
export const wallClockLayer = (nowMs: () => number): Layer.Layer<WallClock> => Layer.succeed(WallClock, { nowMs })

/** Durations: rate limits, cache TTLs, timeouts, latency figures (src/time/clock.ts). */
export class MonoClockService extends Context.Tag("twinbook/MonoClock")<MonoClockService, MonoClock>() {}

export const liveMonoClockLayer: Layer.Layer<MonoClockService> = Layer.succeed(MonoClockService, liveMonoClock)

export const monoClockLayer = (monoMs: () => number): Layer.Layer<MonoClockService> => Layer.succeed(MonoClockService, { monoMs })

/** Order signatures (src/auth/verifier.ts). Each layer closes its verifier when the service's Scope closes. */
export class VerifierService extends Context.Tag("twinbook/Verifier")<VerifierService, Verifier>() {}

const closing = (make: () => Verifier): Layer.Layer<VerifierService> =>
  Layer.scoped(
    VerifierService,
    Effect.acquireRelease(Effect.sync(make), (v) => Effect.promise(() => v.close()))
  )

/** Synchronous and deterministic: tests and the simulator. */
export const inlineVerifierLayer: Layer.Layer<VerifierService> = closing(inlineVerifier)

/** `workers` worker threads (VERIFY_WORKERS): live. */
export const workerVerifierLayer = (workers: number): Layer.Layer<VerifierService> => closing(() => workerVerifier(workers))

/** A verifier the caller made; closed with the service all the same. */
export const verifierLayer = (verifier: Verifier): Layer.Layer<VerifierService> => closing(() => verifier)

/** A served app as the service sees it, whatever carries its requests (node:http live, the in-process network simulated). */
export type Served = Omit<RunningServer, "server"> & {
  /** Whether it accepts connections (readiness of the deposit service). */
  readonly listening: boolean
}

/** How the service meets its clients: the HTTP + WebSocket servers, and when the hub's frames leave. */
export interface Transport {
  /** Serves an app (and its feed hub, if any) until the enclosing Scope closes; `o.host` names where (a bind address live, a network host simulated). */
  serve(o: NodeServerOptions): Effect.Effect<Served, never, Scope.Scope>
  /** Runs `f` once pending I/O has had its turn (live: `setImmediate`): the feed's frames are coalesced per turn. */
  later(f: () => void): void
}

export class TransportService extends Context.Tag("twinbook/Transport")<TransportService, Transport>() {}

/** A node server as a `Served`: `listening` read from its socket when asked. */
const served = (h: RunningServer): Served => ({
  port: h.port,
  url: h.url,
  wsUrl: h.wsUrl,
  drain: () => h.drain(),
  pending: () => h.pending(),
  close: () => h.close(),
  get listening() {
    return h.server.listening
  }
})

/** node:http and ws on real ports (src/api/node-server.ts). */
export const nodeTransportLayer: Layer.Layer<TransportService> = Layer.succeed(TransportService, {
  serve: (o) =>
    Effect.acquireRelease(
      Effect.promise(() => listen(o)).pipe(Effect.map(served)),
      (h) => Effect.promise(() => h.close())
    ),
  later: (f) => void setImmediate(f)
})

/** Request and event lines (src/ops/log.ts). */
export class LoggerService extends Context.Tag("twinbook/Logger")<LoggerService, Logger>() {}

export const loggerLayer = (logger: Logger): Layer.Layer<LoggerService> => Layer.succeed(LoggerService, logger)

/** No lines at all: tests that do not look at logs, benches. */
export const silentLoggerLayer: Layer.Layer<LoggerService> = loggerLayer(silentLogger)
