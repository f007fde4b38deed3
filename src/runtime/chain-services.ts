// The service's chain side, started beside the API when a Chain is configured:
// the deposit service on its own port, the deposit watcher and the payout worker,
// polled on a timer (the simulator calls `poll` itself instead). The chain guard checks every
// pass that the chain still holds what the ledger relies on, and halts both workers when not.
import { listen, type RunningServer } from "../api/node-server.ts"
import { RateLimiter } from "../usecase/rate-limit.ts"
import type { Chain } from "../chain/chain.ts"
import { ChainGuard, type CheckpointStore, memoryCheckpointStore } from "../chain/guard.ts"
import { PayoutWorker } from "../chain/payouts.ts"
import { DepositWatcher } from "../chain/watcher.ts"
import { makeDepositApp } from "../deposit/app.ts"
import { liveMonoClock } from "../time/clock.ts"
import type { Exchange } from "../service/exchange.ts"

export interface ChainServicesOptions {
  readonly chain: Chain
  readonly host: string
  /** The deposit service's port (DEPOSIT_PORT); 0 picks a free one. */
  readonly depositPort: number
  /** Blocks deep before a deposit credits; 0 on the embedded dev chain. */
  readonly confirmations: number
  /** Between polls of the watcher and the payout worker; 0 disables the timer. */
  readonly pollMs: number
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
}

export interface ChainServices {
  readonly deposit: RunningServer
  readonly watcher: DepositWatcher
  readonly payouts: PayoutWorker
  readonly guard: ChainGuard
  /** One watcher pass and one payout pass. */
  poll(): Promise<void>
  close(): Promise<void>
}

export const startChainServices = async (
  exchange: Exchange,
  o: ChainServicesOptions,
  onError: (err: unknown) => void
): Promise<ChainServices> => {
  const rules = { token: o.chain.info.token.toLowerCase(), minMicro: o.minUsdgMicro, maxPerTxMicro: o.maxPerTxMicro }
  const app = makeDepositApp(
    { exchange, chain: o.chain, limiter: new RateLimiter(o.monoMs ?? liveMonoClock.monoMs), config: { minUsdgMicro: o.minUsdgMicro, maxPerTxMicro: o.maxPerTxMicro, corsOrigins: o.corsOrigins } },
    onError
  )
  const deposit = await listen({ app, hub: null, host: o.host, port: o.depositPort, secret: new Uint8Array(32), nowMs: o.nowMs ?? (() => exchange.journalMs()), corsOrigins: o.corsOrigins })
  const guard = new ChainGuard({
    chain: o.chain,
    exchange,
    store: o.checkpoint ?? memoryCheckpointStore(),
    confirmations: o.confirmations,
    log: o.log ?? ((line) => console.error(line))
  })
  // Operational, not journaled: the operator route reads the guard's status through the exchange.
  exchange.chainGuard = guard
  const watcher = new DepositWatcher({ chain: o.chain, exchange, confirmations: o.confirmations, rules, onError, guard })
  const payouts = new PayoutWorker({ chain: o.chain, exchange, guard })
  // An RPC hiccup ends a pass early; the next one retries. Both passes always run, unless the
  // services are closing. `close` waits for passes in flight: the journal closes after them.
  let closing = false
  const inFlight = new Set<Promise<void>>()
  const poll = (): Promise<void> => {
    if (closing) return Promise.resolve()
    const run = (async () => {
      await watcher.poll().catch(onError)
      if (!closing) await payouts.poll().catch(onError)
    })()
    inFlight.add(run)
    void run.finally(() => inFlight.delete(run))
    return run
  }
  let busy = false
  const timer =
    o.pollMs > 0
      ? setInterval(() => {
          if (busy) return
          busy = true
          void poll().finally(() => (busy = false))
        }, o.pollMs)
      : null
  timer?.unref()
  return {
    deposit,
    watcher,
    payouts,
    guard,
    poll,
    close: async () => {
      if (timer !== null) clearInterval(timer)
      closing = true
      await deposit.close()
      await Promise.all(inFlight)
      if (exchange.chainGuard === guard) exchange.chainGuard = null
    }
  }
}
