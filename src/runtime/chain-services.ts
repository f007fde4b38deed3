// The service's chain side, started beside the API when a Chain is configured:
// the deposit service on its own port, the deposit watcher and the payout worker,
// polled by a worker fiber (src/runtime/workers.ts; the simulator calls the passes itself instead). The chain guard checks every
// pass that the chain still holds what the ledger relies on, and halts both workers when not.
import { Effect, Ref, type Scope } from "effect"
import type { RequestObserver } from "../api/app.ts"
import { RateLimiter } from "../usecase/rate-limit.ts"
import type { Chain } from "../chain/chain.ts"
import { ChainGuard, type CheckpointStore, memoryCheckpointStore } from "../chain/guard.ts"
import { PayoutWorker } from "../chain/payouts.ts"
import { DepositWatcher } from "../chain/watcher.ts"
import { makeDepositApp } from "../deposit/app.ts"
import { liveMonoClock } from "../time/clock.ts"
import type { Exchange } from "../service/exchange.ts"
import { type Served, TransportService } from "./services.ts"
import { forkWorker, type Worker } from "./workers.ts"

export interface ChainServicesOptions {
  readonly chain: Chain
  readonly host: string
  /** The deposit service's port (DEPOSIT_PORT); 0 picks a free one. */
  readonly depositPort: number
  /** Blocks deep before a deposit credits; 0 on the embedded dev chain. */
  readonly confirmations: number
  /** Between polls of the watcher and the payout worker; 0 disables the timer. */
  readonly pollMs: number
  /**
   * Between reads of the chain's head (live: CHAIN_HEAD_POLL_MS): a new block starts a pass at once
   * instead of waiting for `pollMs`, which then only bounds the time between passes. 0 or absent:
   * passes every `pollMs` only (the simulator, where a read every 100 ms would be a scheduler event each).
   */
  readonly headPollMs?: number
  readonly minUsdgMicro: number
  readonly maxPerTxMicro: number
  readonly corsOrigins: ReadonlySet<string>
  /** The monotonic clock for the deposit service's rate limits (src/time/clock.ts); the live one when absent. */
  readonly monoMs?: () => number
  /** The wall clock (session cookies on its WebSocket upgrades); set by boot. */
  readonly nowMs?: () => number
  /** Where the chain checkpoint is kept (boot: DATA_DIR/chain-checkpoint.json); in memory when absent. */
  readonly checkpoint?: CheckpointStore
  /** The guard's halt and resume lines; stderr when absent. */
  readonly log?: (line: string) => void
  /** The deposit service's request hook (metrics and request lines; src/ops/requests.ts); none when absent. */
  readonly observe?: RequestObserver
  /** The service's bucket table, shared so /metrics counts the deposit service's refusals; one of its own when absent. */
  readonly limiter?: RateLimiter
  /** Errors of the chain passes (an RPC failure ends a pass early; the next one retries); the service's `onError` when absent. The simulator's RPC faults are expected, not errors. */
  readonly onPassError?: (err: unknown) => void
}

export interface ChainServices {
  readonly deposit: Served
  readonly watcher: DepositWatcher
  readonly payouts: PayoutWorker
  readonly guard: ChainGuard
  /** One watcher pass and one payout pass (after the one in flight, if any). */
  poll(): Promise<void>
}

/** The chain side's parts around one exchange: built here for the live service and the simulator alike. */
export interface ChainParts {
  readonly guard: ChainGuard
  /** The deposit service's routes (live: behind its own port; simulated: the in-process network's "deposit" host). */
  readonly depositApp: ReturnType<typeof makeDepositApp>
  readonly watcher: DepositWatcher
  readonly payouts: PayoutWorker
}

export interface ChainPartsOptions {
  readonly chain: Chain
  readonly confirmations: number
  readonly minUsdgMicro: number
  readonly maxPerTxMicro: number
  readonly corsOrigins: ReadonlySet<string>
  /** The monotonic clock of the deposit service's rate limits. */
  readonly monoMs: () => number
  readonly checkpoint: CheckpointStore
  /** The guard's halt and resume lines (none when absent). */
  readonly log?: (line: string) => void
  /** Errors of the deposit routes. */
  readonly onError: (err: unknown) => void
  /** Errors of the watcher's pass (its RPC failures end a pass early; the next one retries). */
  readonly onWatcherError: (err: unknown) => void
  /** The deposit routes' request hook (live only). */
  readonly observe?: RequestObserver
  /** The deposit routes' bucket table; one of its own (on `monoMs`) when absent. */
  readonly limiter?: RateLimiter
}

/**
 * Builds the guard, the deposit routes, the watcher and the payout worker, and sets the guard on
 * the exchange (operational, not journaled: the operator route reads its status from there).
 */
export const buildChainParts = (exchange: Exchange, o: ChainPartsOptions): ChainParts => {
  const rules = { token: o.chain.info.token.toLowerCase(), minMicro: o.minUsdgMicro, maxPerTxMicro: o.maxPerTxMicro }
  const guard = new ChainGuard({ chain: o.chain, exchange, store: o.checkpoint, confirmations: o.confirmations, ...(o.log === undefined ? {} : { log: o.log }) })
  exchange.chainGuard = guard
  const depositApp = makeDepositApp(
    { exchange, chain: o.chain, limiter: o.limiter ?? new RateLimiter(o.monoMs), config: { minUsdgMicro: o.minUsdgMicro, maxPerTxMicro: o.maxPerTxMicro, corsOrigins: o.corsOrigins } },
    o.onError,
    o.observe
  )
  const watcher = new DepositWatcher({ chain: o.chain, exchange, confirmations: o.confirmations, rules, onError: o.onWatcherError, guard })
  const payouts = new PayoutWorker({ chain: o.chain, exchange, guard, vaultFilling: () => watcher.vaultFilling })
  return { guard, depositApp, watcher, payouts }
}

/**
 * The chain side as scoped resources: the guard (unset from the exchange last), the deposit service
 * (closed after the passes), and the chain worker (watcher pass, then payout pass) as a fiber on a
 * `Schedule` when `pollMs` > 0. `poll()` (tests, benches) and the fiber take turns on one permit, so
 * passes never overlap; closing waits for the pass in flight and starts no other.
 */
export const makeChainServices = (
  exchange: Exchange,
  o: ChainServicesOptions,
  onError: (err: unknown) => void
): Effect.Effect<ChainServices, never, Scope.Scope | TransportService> =>
  Effect.gen(function* () {
    const passError = o.onPassError ?? onError
    const { guard, depositApp, watcher, payouts } = yield* Effect.acquireRelease(
      Effect.sync(() =>
        buildChainParts(exchange, {
          ...o,
          monoMs: o.monoMs ?? liveMonoClock.monoMs,
          checkpoint: o.checkpoint ?? memoryCheckpointStore(),
          log: o.log ?? ((line) => console.error(line)),
          onError,
          onWatcherError: passError
        })
      ),
      ({ guard }) => Effect.sync(() => void (exchange.chainGuard === guard ? (exchange.chainGuard = null) : undefined))
    )
    // Its own port, through the same transport as the API (a server without a feed hub answers upgrades 404).
    const transport = yield* TransportService
    const deposit = yield* transport.serve({ app: depositApp, hub: null, host: o.host, port: o.depositPort, secret: new Uint8Array(32), nowMs: o.nowMs ?? (() => exchange.journalMs()), corsOrigins: o.corsOrigins })
    // An RPC hiccup ends a pass early; the next one retries. Both passes run unless the scope is closing.
    const turn = yield* Effect.makeSemaphore(1)
    const open = yield* Ref.make(true)
    const pass = turn.withPermits(1)(
      Effect.gen(function* () {
        if (!(yield* Ref.get(open))) return
        yield* Effect.promise(() => watcher.poll().then(() => {}, passError))
        if (yield* Ref.get(open)) yield* Effect.promise(() => payouts.poll().then(() => {}, passError))
      })
    )
    // Closing: no new pass starts, and the one in flight (a direct `poll()`) finishes first.
    yield* Effect.addFinalizer(() => Ref.set(open, false).pipe(Effect.zipRight(turn.withPermits(1)(Effect.void))))
    // The pass runs in the worker's own fiber (in a simulated world: on its scheduler), not a runtime of its own.
    const monoMs = o.monoMs ?? liveMonoClock.monoMs
    const headPollMs = o.headPollMs ?? 0
    const worker: Worker =
      headPollMs > 0 && headPollMs < o.pollMs
        ? { name: "chain", pass: onNewHead(o.chain, pass, o.pollMs, monoMs), everyMs: headPollMs }
        : { name: "chain", pass, everyMs: o.pollMs }
    if (o.pollMs > 0) yield* forkWorker(worker, onError, monoMs)
    return { deposit, watcher, payouts, guard, poll: () => Effect.runPromise(pass) }
  })

/**
 * A pass run only when the chain's head is one no pass has started at yet, or when `pollMs` has
 * passed since the last one (payouts and re-checks still run on a quiet chain). A pass that fails
 * at a head is not retried at that head before the deadline, so a failing RPC is not asked (and its
 * error not logged) at every head read; a failed head read waits for the deadline too, where the
 * full pass reports the error.
 */
export const onNewHead = (chain: Chain, pass: Effect.Effect<void>, pollMs: number, monoMs: () => number): Effect.Effect<void> => {
  let lastPassMs = monoMs()
  let triedHead: bigint | null = null
  return Effect.gen(function* () {
    if (monoMs() - lastPassMs < pollMs) {
      const head = yield* Effect.promise(() => chain.head().catch(() => null))
      if (head === null || head === triedHead) return
      triedHead = head
    }
    lastPassMs = monoMs()
    yield* pass
  })
}
