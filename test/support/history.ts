// Shared by the history-store suites: temp data dirs, a durable service on a test
// clock, a deterministic burst of trading that spans many candle buckets, and
// whole-history readers for the in-memory projection.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { demoCatalog } from "../../fixtures/catalog.ts"
import { keyFromLabel } from "../../src/client/keys.ts"
import { type Service, startService } from "../../src/runtime/boot.ts"
import { LOCK_FILE } from "../../src/store/data-dir-lock.ts"
import type { ServiceCommand } from "../../src/service/commands.ts"
import type { Exchange } from "../../src/service/exchange.ts"
import { type Candle, INTERVALS, type Interval, type TradeRecord } from "../../src/service/history.ts"

export const T0_MS = 1_795_305_600_000

export const tempDirs = (prefix: string): { fresh: () => string; cleanup: () => void } => {
  const dirs: string[] = []
  return {
    fresh: () => {
      const d = mkdtempSync(join(tmpdir(), prefix))
      dirs.push(d)
      return d
    },
    cleanup: () => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
    }
  }
}

export const clock = { ms: T0_MS }

/** The real service in durable mode; history flushes and snapshots only when a test asks. */
export const startDurable = (dataDir: string): Promise<Service> =>
  startService({
    host: "127.0.0.1",
    port: 0,
    secret: new Uint8Array(32).fill(7),
    catalog: demoCatalog().slice(0, 3),
    snapshotIntervalSec: 0,
    historyFlushMs: 0,
    // No LP-runner timer: `crash` leaves timers running, and a tick would write to the closed journal.
    lpTickMs: 0,
    onFatal: (err) => {
      throw err
    },
    config: {
      adminToken: "t",
      corsOrigins: new Set(),
      secureCookies: false,
      devCredit: true,
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
    },
    onError: (err) => console.error(err)
  }, {
    nowMs: () => clock.ms,
    // The test clock is time passing, never a step: the monotonic clock too, so business time is the test clock (docs/time.md).
    monoMs: () => clock.ms,
    dataDir
  })

/**
 * The process vanishes: transport and journal file closed, but no snapshot and no
 * history flush (whatever the store had not flushed is lost with the process).
 */
export const crash = async (s: Service, dataDir?: string): Promise<void> => {
  // A killed process's lock is stale and the next start takes it over; this process lives on, so
  // the lock it holds is dropped here instead (a script started next would otherwise see it held).
  if (dataDir !== undefined) rmSync(join(dataDir, LOCK_FILE), { force: true })
  await s.http.close()
  await s.ctx.verifier.close()
  await s.durable!.journal.sync()
  await s.durable!.close()
  const store = s.history()!
  // Drop unflushed rows as a dead process would, then release the file.
  await store.close()
}

const users = ["h-alice", "h-bob", "h-carol", "h-dave"].map((l) => keyFromLabel(l).user)
let nonce = 1

/**
 * Deterministic trading across the catalogue's first markets: deposits, resting and
 * crossing buys and sells of both outcomes (normal, mint and merge fills), IOCs and
 * cancels, with the clock stepping from under a second to hours so every candle
 * interval gets several buckets.
 */
export const trade = (x: Exchange, rounds: number, seed: number): Promise<void[]> => {
  const out: Promise<void>[] = []
  const submit = (cmd: ServiceCommand) => out.push(x.submit(cmd).durable)
  if (x.catalog.events.length === 0) for (const event of demoCatalog().slice(0, 3)) submit({ type: "create_event", event })
  const markets = x.catalog.events.flatMap((e) => e.outcomes.map((o) => o.market_id)).slice(0, 3)
  let s = seed >>> 0 || 1
  const rnd = (n: number): number => {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0
    return (s >>> 8) % n
  }
  for (const user of users) submit({ type: "credit", user, amountMicro: 200_000_000, ref: `dep-${user}-${seed}` })
  const steps = [300, 700, 4_000, 65_000, 700_000, 4_000_000]
  for (let i = 0; i < rounds; i++) {
    clock.ms += steps[rnd(steps.length)]!
    const user = users[rnd(users.length)]!
    const marketId = markets[rnd(markets.length)]!
    if (rnd(11) === 0) {
      submit({ type: "cancel_all", user })
      continue
    }
    const side = rnd(3) === 0 ? "sell" : "buy"
    const outcome = rnd(2) === 0 ? "yes" : "no"
    submit({
      type: "place_order",
      order: {
        user,
        marketId,
        side,
        outcome,
        priceBps: 4_400 + rnd(1_200),
        size: 1 + rnd(6),
        orderType: rnd(5) === 0 ? "ioc" : "gtc",
        nonce: nonce++
      }
    })
  }
  return Promise.all(out)
}

/** Every trade the in-memory History holds, in id order. */
export const historyTrades = (x: Exchange): TradeRecord[] => {
  const all: TradeRecord[] = []
  for (const e of x.catalog.events)
    for (const o of e.outcomes) all.push(...x.history.marketTrades(o.market_id, Number.MAX_SAFE_INTEGER).trades)
  return all.sort((a, b) => a.id - b.id)
}

export const marketIds = (x: Exchange): string[] => x.catalog.events.flatMap((e) => e.outcomes.map((o) => o.market_id))

/** Candles of every market and interval over all time, from the in-memory History. */
export const historyCandles = (x: Exchange): Record<string, Candle[]> => {
  const out: Record<string, Candle[]> = {}
  for (const m of marketIds(x)) for (const iv of Object.keys(INTERVALS) as Interval[]) out[`${m}|${iv}`] = x.history.candleRange(m, iv, 0, 2 ** 40)
  return out
}
