// The service's storage as a layer (docs/runtime.md): the journal, its snapshots and the DuckDB
// history store under DATA_DIR (`durableStoreLayer`), or an in-memory journal (`memoryStoreLayer`:
// tests, benches, the simulator's plain worlds). `open` is called once by `makeService`, inside its
// Scope, so what it acquires is released with the service, last (a final snapshot, the journal's
// close, the history store flushed through the journal's end).
import { Context, Effect, Layer, type Scope } from "effect"
import { type CheckpointStore, fileCheckpointStore, memoryCheckpointStore } from "../chain/guard.ts"
import { Exchange, memoryJournal } from "../service/exchange.ts"
import { dataDirLock } from "../store/data-dir-lock.ts"
import { type DurableExchange, openDurableExchange, snapshotDir } from "../store/durable.ts"
import { HistoryStore } from "../store/history-db.ts"
import { historyPath, rebuildHistory } from "../store/history-rebuild.ts"
import { nodeStorage, type Storage } from "../store/storage.ts"
import type { Logger } from "../ops/log.ts"
import { storageErrorFields } from "../ops/storage-health.ts"
import { join } from "node:path"

export interface HistoryStartup {
  /** The store's `projected_seq` when it was opened. */
  readonly projectedSeq: number
  /** Trades loaded from the store into the in-memory History. */
  readonly seededTrades: number
  /** Rows an interrupted write had left past `projected_seq`, deleted at open. */
  readonly discardedRows: number
  /** Why the store was rebuilt from the journal at start-up, when it was. */
  readonly rebuilt: string | null
}

/** What `open` hands the service. */
export interface OpenedStore {
  readonly exchange: Exchange
  /** Set in durable mode. */
  readonly durable: DurableExchange | null
  /** The history store (durable mode): the current one, since a start-up rebuild replaces it. */
  history(): HistoryStore | null
  readonly historyStartup: HistoryStartup | null
  /** Where the journal lives (durable mode): readiness probes it. */
  readonly dataDir: string | undefined
  /** Where the chain guard keeps its checkpoint: beside the journal when durable (docs/decisions.md § Chain guard). */
  readonly checkpoint: CheckpointStore
  /** Writes every durable journal record's rows to the history store (durable mode; nothing otherwise). */
  flushHistory(): Promise<void>
}

export interface OpenOptions {
  /** The wall clock: stamps commands (Exchange.journalMs). */
  readonly nowMs: () => number
  /** The monotonic clock: business time runs on with it across a wall-clock step (docs/time.md). */
  readonly monoMs: () => number
  /** Called when the journal cannot write: memory is ahead of disk, so the process must stop. */
  readonly onFatal: (err: unknown) => void
  /** Wraps the journal's disk to measure it (the ops layer); unmeasured when absent. */
  readonly meter?: (disk: Storage) => Storage
  /** Told of the last snapshot, taken at close (the periodic ones are logged by their worker). */
  readonly logger?: Logger
}

export interface ServiceStore {
  /** `dataDir` when durable (printed in start-up lines and errors); null in memory. */
  readonly dataDir: string | null
  open(o: OpenOptions): Effect.Effect<OpenedStore, never, Scope.Scope>
}

export class StoreService extends Context.Tag("twinbook/Store")<StoreService, ServiceStore>() {}

/** A store around `exchange` that keeps nothing of its own: no journal file, history or snapshots. */
export const storeOf = (exchange: Exchange) => ({
  exchange,
  durable: null,
  history: () => null,
  historyStartup: null,
  dataDir: undefined,
  checkpoint: memoryCheckpointStore(),
  flushHistory: () => Promise.resolve()
})

/** State in memory only: nothing survives the process. */
export const memoryStoreLayer: Layer.Layer<StoreService> = Layer.succeed(StoreService, {
  dataDir: null,
  open: (o) => Effect.sync(() => storeOf(new Exchange(o.nowMs, memoryJournal(), o.monoMs)))
})

/**
 * The journal, snapshots and history store in `dataDir`, behind the directory's lock (one
 * service per directory, refused before DuckDB or the journal open).
 */
export const durableStoreLayer = (dataDir: string, disk: Storage = nodeStorage): Layer.Layer<StoreService> =>
  Layer.succeed(StoreService, {
    dataDir,
    open: (o) =>
      Effect.gen(function* () {
        yield* Effect.orDie(dataDirLock(dataDir))
        const opened = yield* Effect.acquireRelease(
          Effect.promise(() => openDurableWithHistory(dataDir, { nowMs: o.nowMs, monoMs: o.monoMs }, o.onFatal, o.meter === undefined ? disk : o.meter(disk))),
          (x) => Effect.promise(() => closeDurable({ ...x, dataDir }, o.logger))
        )
        const durable = opened.durable
        return {
          exchange: durable.exchange,
          durable,
          history: opened.store,
          historyStartup: opened.startup,
          dataDir,
          checkpoint: fileCheckpointStore(join(dataDir, "chain-checkpoint.json")),
          // The store takes records only once the journal holds them: capture the seq, sync, flush through it.
          flushHistory: async () => {
            const upTo = durable.exchange.lastSeq
            await durable.journal.sync()
            await opened.store().flush(upTo)
          }
        }
      })
  })

/**
 * Durable start-up with the history store. The in-memory History must end up with
 * every trade exactly once, though the snapshot (seq S) carries no trades:
 *  - the store holds the trades of records 1..P (P = its projected_seq);
 *  - when P ≥ S, `beforeReplay` seeds the History with them and marks P, so the replay
 *    of S+1.. skips the fills of records ≤ P (History.seed) and the store's listener
 *    projects only records > P;
 *  - when P < S (the store lags the snapshot: deleted, or older than the snapshot) or
 *    P > the journal's end (journal records lost), the store cannot line up: it is
 *    rebuilt from the whole journal and the History re-seeded from it.
 * Snapshots flush the store through S first (`beforeSnapshot`), so P ≥ S in normal
 * running; the store only ever receives records the journal has made durable.
 */
const openDurableWithHistory = async (
  dataDir: string,
  clocks: { readonly nowMs: () => number; readonly monoMs: () => number },
  onFatal: (err: unknown) => void,
  storage?: Storage
): Promise<{ durable: DurableExchange; store: () => HistoryStore; startup: HistoryStartup }> => {
  const path = historyPath(dataDir)
  let store = await HistoryStore.open(path)
  const opened = { projectedSeq: store.projectedSeq, discardedRows: store.openReport.discardedRows }
  const seed = await store.trades()
  let seededTrades = 0
  let attached = false
  const listen = (x: Exchange): void => {
    attached = true
    // Reads `store` when called: a start-up rebuild swaps it.
    x.onApply((record, result) => store.record(record, result, x))
  }
  let durable: DurableExchange
  try {
    durable = await openDurableExchange(dataDir, clocks.nowMs, {
      onFatal,
      monoMs: clocks.monoMs,
      ...(storage === undefined ? {} : { storage }),
      beforeSnapshot: (seq) => store.flush(seq),
      beforeReplay: (x) => {
        if (store.projectedSeq < x.lastSeq) return
        x.history.seed(seed, store.projectedSeq)
        seededTrades = seed.length
        listen(x)
      }
    })
  } catch (err) {
    await store.close()
    throw err
  }
  seed.length = 0
  const x = durable.exchange
  let rebuilt: string | null = null
  if (!attached) rebuilt = `store at seq ${store.projectedSeq} is behind snapshot ${durable.recovery.snapshotSeq ?? 0}`
  else if (store.projectedSeq > x.lastSeq) rebuilt = `store at seq ${store.projectedSeq} is ahead of the journal (seq ${x.lastSeq})`
  if (rebuilt !== null) {
    await store.close()
    try {
      await rebuildHistory(dataDir, { path })
      store = await HistoryStore.open(path)
    } catch (err) {
      await durable.close()
      throw err
    }
    const trades = await store.trades()
    x.history.clear()
    x.history.seed(trades, store.projectedSeq)
    seededTrades = trades.length
    if (!attached) listen(x)
  }
  return { durable, store: () => store, startup: { ...opened, seededTrades, rebuilt } }
}

/**
 * A last snapshot, the journal closed, then every record it holds projected and the store closed.
 * A failing snapshot or history write does not stop the stop: the journal holds every record, so
 * the next start replays and re-projects what was skipped; each skip is one line saying so (with a
 * logger; without one, the simulator's, the first failure is thrown once the rest is done). Only
 * the journal's own close failing is the fail-stop's business and always thrown.
 */
const closeDurable = async (o: { durable: DurableExchange; store: () => HistoryStore; dataDir: string }, logger?: Logger): Promise<void> => {
  const skipped: string[] = []
  let firstError: unknown = null
  const skip = (what: string, file: string, action: string, err: unknown): void => {
    firstError ??= err
    skipped.push(what)
    logger?.error(`stop: ${what} skipped`, { file, ...storageErrorFields(err), action })
  }
  try {
    try {
      const taken = await o.durable.snapshot()
      logger?.info("snapshot", { seq: taken.seq, path: taken.path, reason: "stop" })
    } catch (err) {
      skip("the stop snapshot", snapshotDir(o.dataDir), "the journal holds every record: the next start replays them from the last snapshot", err)
    }
    await o.durable.close()
  } finally {
    // Projects every record the journal holds, then closes the file.
    const upTo = o.durable.exchange.lastSeq
    // The store takes only durable records: after a failed journal (thrown above) it takes none.
    const durable = await o.durable.journal.sync().then(
      () => true,
      () => false
    )
    try {
      if (durable) await o.store().flush(upTo)
    } catch (err) {
      skip("the history store's last write", historyPath(o.dataDir), `the next start re-projects it from the journal (through seq ${upTo})`, err)
    }
    try {
      await o.store().close()
    } catch (err) {
      skip("the history store's close", historyPath(o.dataDir), "the next start re-projects what it lacks from the journal", err)
    }
  }
  if (skipped.length > 0) logger?.warn("stop incomplete", { skipped: skipped.join("; "), detail: "nothing acknowledged is lost: the journal is closed whole" })
  if (logger === undefined && firstError !== null) throw firstError
}
