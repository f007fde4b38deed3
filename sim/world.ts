// The simulated world: the real service core (exchange, feed hub, HTTP apps,
// deposit watcher, payout worker) with its layers swapped — the scheduler's
// virtual clock, the in-process network, simulated sockets, the in-memory chain
// and an in-memory journal. A crash throws the process away and boots a new one
// from the journal, exactly as a restart would.
import type { Clock } from "effect"
import type { AppConfig } from "../src/api/context.ts"
import { RateLimiter } from "../src/api/rate-limit.ts"
import { SimChain } from "../src/chain/sim.ts"
import { PayoutWorker } from "../src/chain/payouts.ts"
import { DepositWatcher } from "../src/chain/watcher.ts"
import { makeDepositApp } from "../src/deposit/app.ts"
import { assembleCore, type Core } from "../src/service/boot.ts"
import type { JournalRecord } from "../src/service/commands.ts"
import { Exchange, type JournalSink } from "../src/service/exchange.ts"
import { exchangeHash } from "../src/service/exchange-snapshot.ts"
import { schedulerClock } from "./clock.ts"
import { DEFAULT_NETWORK, type NetworkParams, SimNetwork } from "./network.ts"
import { Rng } from "./random.ts"
import { type Scheduled, Scheduler } from "./scheduler.ts"
import { SimWs, type SimWsHandlers } from "./sockets.ts"

export const ADMIN_TOKEN = "sim-admin-token"
export const API = "http://api"
export const DEPOSIT = "http://deposit"

export interface WorldOptions {
  readonly seed: string
  readonly startSec: number
  readonly network?: NetworkParams
  readonly blockTimeSec?: number
  readonly confirmations?: number
  readonly pollSec?: number
  /** Test-only: wraps each booted exchange (e.g. a planted bug the auditor must catch). */
  readonly tamper?: (exchange: Exchange) => void
  readonly onError?: (err: unknown) => void
  /** Enables the operator credit route (model tests fund users without the chain). */
  readonly devCredit?: boolean
}

/** A process's journal view: once the process has crashed it can write nothing more. */
const processJournal = (records: JournalRecord[], alive: () => boolean): JournalSink => ({
  append: (record) => {
    if (!alive()) return Promise.reject(new Error("process crashed"))
    records.push(record)
    return Promise.resolve()
  }
})

export class World {
  readonly scheduler: Scheduler
  readonly rng: Rng
  readonly chain: SimChain
  readonly network: SimNetwork
  /** The journal: survives crashes. */
  readonly records: JournalRecord[] = []
  readonly config: AppConfig
  exchange!: Exchange
  core!: Core
  watcher!: DepositWatcher
  payouts!: PayoutWorker
  /** Bumped by every boot; 0 before the first. */
  boots = 0
  crashes = 0
  down = false
  readonly errors: unknown[] = []
  private readonly sockets = new Set<SimWs>()
  private readonly bootListeners: Array<(x: Exchange) => void> = []
  private readonly secret: Uint8Array
  private polling = false
  private readonly background: Scheduled[] = []
  readonly confirmations: number

  constructor(readonly options: WorldOptions) {
    this.rng = new Rng(options.seed)
    this.scheduler = new Scheduler(options.startSec * 1000)
    this.clock = schedulerClock(this.scheduler)
    const nowSec = (): number => this.scheduler.nowSec()
    this.chain = new SimChain({ seed: `${options.seed}/chain`, now: nowSec, genesisTimeSec: options.startSec })
    this.network = new SimNetwork(this.scheduler, this.rng.fork("network"), options.network ?? DEFAULT_NETWORK)
    this.secret = this.rng.bytes32("session-secret")
    this.confirmations = options.confirmations ?? 2
    this.config = {
      adminToken: ADMIN_TOKEN,
      corsOrigins: new Set(),
      secureCookies: false,
      devCredit: options.devCredit ?? false,
      rewards: { dailyBudgetMicro: 1_000_000_000, bandSpreadBpsMax: 300, perWalletCapPct: 40 }
    }
    this.boot()
    const blockMs = (options.blockTimeSec ?? 2) * 1000
    this.background.push(
      this.scheduler.every(blockMs, () => void this.chain.mine(1), undefined, true),
      this.scheduler.every((options.pollSec ?? 2) * 1000, () => this.pollChain()),
      // The LP-bot runner and the daily rewards payout, ticked once a virtual second as live.
      this.scheduler.every(1_000, () => {
        if (!this.down) void this.core.lpBots.tick(this.nowMs()).catch((err) => this.errors.push(err))
      })
    )
  }

  /** The service reads time from this Clock, as `npm start` reads the live one. */
  readonly clock: Clock.Clock
  nowMs = (): number => this.clock.unsafeCurrentTimeMillis()

  /** Stops block production, chain polling and the LP runner: the world goes quiet for the final checks. */
  quiesce(): void {
    for (const b of this.background.splice(0)) b.cancel()
  }

  /** Called with each booted exchange (the first one and every one after a crash). */
  onBoot(listener: (x: Exchange) => void): void {
    this.bootListeners.push(listener)
    listener(this.exchange)
  }

  /** Boots a process: replays the journal into a fresh exchange and wires the core around it. */
  private boot(): void {
    const epoch = ++this.boots
    const x = new Exchange(this.nowMs, processJournal(this.records, () => this.boots === epoch && !this.down))
    for (const record of this.records) x.apply(record)
    this.options.tamper?.(x)
    const onError = (err: unknown): void => {
      this.errors.push(err)
      this.options.onError?.(err)
    }
    const core = assembleCore(x, { nowMs: this.nowMs, secret: this.secret, config: this.config, onError })
    let flushQueued = false
    core.hub.setFlushScheduler(() => {
      if (flushQueued) return
      flushQueued = true
      this.scheduler.after(
        0,
        () => {
          flushQueued = false
          if (this.boots === epoch && !this.down) core.hub.flush()
        },
        true
      )
    })
    const rules = { token: this.chain.info.token.toLowerCase(), minMicro: 1_000_000, maxPerTxMicro: 100_000_000_000 }
    const depositApp = makeDepositApp(
      { exchange: x, chain: this.chain, limiter: new RateLimiter(this.nowMs), config: { minUsdgMicro: rules.minMicro, maxPerTxMicro: rules.maxPerTxMicro, corsOrigins: new Set() } },
      onError
    )
    this.exchange = x
    this.core = core
    this.watcher = new DepositWatcher({ chain: this.chain, exchange: x, confirmations: this.confirmations, rules, onError: () => {} })
    this.payouts = new PayoutWorker({ chain: this.chain, exchange: x })
    this.network.route("api", core.app)
    this.network.route("deposit", depositApp)
    for (const l of this.bootListeners) l(x)
  }

  private pollChain(): void {
    if (this.polling || this.down) return
    this.polling = true
    const epoch = this.boots
    // RPC faults end a pass early; the next poll retries (as live).
    void (async () => {
      await this.watcher.poll().catch(() => {})
      if (this.boots === epoch && !this.down) await this.payouts.poll().catch(() => {})
    })().finally(() => (this.polling = false))
  }

  /** Opens a simulated WebSocket to the feed hub; `cookieUser` as proven by a session cookie. */
  connectWs(cookieUser: string | null, handlers: SimWsHandlers): SimWs | null {
    if (this.down) return null
    const ws = new SimWs(this.core.hub, this.scheduler, () => this.network.latencyMs(), cookieUser, {
      onFrame: handlers.onFrame,
      onClose: (code, reason) => {
        this.sockets.delete(ws)
        handlers.onClose(code, reason)
      }
    })
    this.sockets.add(ws)
    return ws
  }

  /** Drops a share of the open WebSocket connections (chosen by the fault stream). */
  dropSockets(fractionPct: number, rng: Rng): number {
    let n = 0
    for (const ws of [...this.sockets]) {
      if (rng.chance(fractionPct / 100)) {
        ws.drop(1006, "simulated disconnect")
        n++
      }
    }
    return n
  }

  /**
   * Kills the process: everything in flight is lost, sockets drop, nothing more is written.
   * After `downSec` a new process boots from the journal. Returns the state hash before the
   * crash and resolves with the recovered one, which the auditor compares.
   */
  crash(downSec: number, onRecovered: (before: string, after: string) => void): void {
    if (this.down) return
    const before = exchangeHash(this.exchange)
    this.crashes++
    this.down = true
    this.network.cut()
    this.network.route("api", unavailable)
    this.network.route("deposit", unavailable)
    for (const ws of [...this.sockets]) ws.drop(1006, "server crashed")
    this.scheduler.after(downSec * 1000, () => {
      this.down = false
      this.boot()
      onRecovered(before, exchangeHash(this.exchange))
    })
  }
}

/** A dead process: connections are refused, which a client sees as a timeout-like failure. */
const unavailable = (): Promise<never> => new Promise(() => {})
