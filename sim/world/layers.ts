// The simulated process's layers (docs/runtime.md "Tags and layers"): what `makeService` takes from
// its context inside a world, in place of node:http, DATA_DIR and the real clocks. The service is
// built by the same `makeService` as `npm start`; only these differ.
import { Effect, Layer } from "effect"
import type { Chain } from "../../src/chain/chain.ts"
import { ChainService } from "../../src/chain/chain.ts"
import type { ServiceContext } from "../../src/runtime/boot.ts"
import type { Logger } from "../../src/ops/log.ts"
import { loggerLayer, monoClockLayer, type Served, silentLoggerLayer, TransportService, verifierLayer, wallClockLayer } from "../../src/runtime/services.ts"
import { type OpenedStore, StoreService } from "../../src/runtime/store.ts"
import type { SimNetwork } from "./network.ts"
import type { SignatureMemo } from "./signatures.ts"
import type { Scheduler } from "./scheduler.ts"

/** A process the world may have killed: a dead one's frames never leave. */
export type Alive = () => boolean

/**
 * The in-process network as the transport: `serve` routes the app to the network host named by
 * `host` ("api", "deposit"), and the hub's frames leave at a scheduler event of the current instant
 * (live: the next `setImmediate`). A crash re-routes the hosts (World.crash); nothing here closes.
 */
export const simTransportLayer = (network: SimNetwork, scheduler: Scheduler, alive: Alive): Layer.Layer<TransportService> =>
  Layer.succeed(TransportService, {
    serve: (o) =>
      Effect.sync((): Served => {
        network.route(o.host, o.app)
        const url = `http://${o.host}`
        return {
          port: o.port,
          url,
          wsUrl: `ws://${o.host}`,
          listening: true,
          drain: () => Promise.resolve(),
          pending: () => ({ requests: 0, sockets: 0 }),
          close: () => Promise.resolve()
        }
      }),
    later: (f) => void scheduler.after(0, () => (alive() ? f() : undefined), true)
  })

/**
 * The process's store, already opened by the world's supervisor (the journal survives the process:
 * in memory, replayed at each boot, or the real journal on the simulated disk, recovered at each
 * boot). Nothing is released when the process ends: a crash leaves the disk as it was.
 */
export const openedStoreLayer = (opened: OpenedStore): Layer.Layer<StoreService> =>
  Layer.succeed(StoreService, { dataDir: null, open: () => Effect.succeed(opened) })

/**
 * The process's event lines, read the way an operator reads them: only the periodic snapshots are
 * counted (the storage-fault report's "snapshots written"); nothing is printed.
 */
export const snapshotCountingLogger = (onSnapshot: () => void): Logger => ({
  level: "info",
  enabled: (level) => level === "info",
  debug: () => {},
  info: (msg) => (msg === "snapshot" ? onSnapshot() : undefined),
  warn: () => {},
  error: () => {},
  droppedLines: () => 0
})

export interface SimProcessParts {
  readonly nowMs: () => number
  readonly monoMs: () => number
  readonly network: SimNetwork
  readonly scheduler: Scheduler
  readonly chain: Chain
  readonly opened: OpenedStore
  readonly alive: Alive
  /** The agents' own signatures, known good: the process's verifier checks everything else with node:crypto. */
  readonly signatures: SignatureMemo
  /** Told of each periodic snapshot the process takes (on the simulated disk); none without one. */
  readonly onSnapshot?: () => void
}

/** Every layer a simulated process needs: virtual clocks, the inline verifier (its agents' own signatures remembered), the in-process network, its store, the simulated chain, no log lines printed. */
export const simProcessLayers = (p: SimProcessParts): Layer.Layer<ServiceContext | ChainService> =>
  Layer.mergeAll(
    wallClockLayer(p.nowMs),
    monoClockLayer(p.monoMs),
    verifierLayer(p.signatures.verifier),
    openedStoreLayer(p.opened),
    simTransportLayer(p.network, p.scheduler, p.alive),
    p.onSnapshot === undefined ? silentLoggerLayer : loggerLayer(snapshotCountingLogger(p.onSnapshot)),
    Layer.succeed(ChainService, p.chain)
  )
