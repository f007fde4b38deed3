// Journal suite: durable throughput of Exchange.submit with group commit (many
// concurrent submitters, each awaiting `durable`), the latency fsync batching
// adds (submit → durable); and, as its own suite (`recovery`), recovery time of a
// 1,000,000-record journal replayed from genesis (no snapshot) against the engine alone.
//
// Flags: --seed=N  --submitters=N  --commands=N (throughput run)  --light-submitters=N
//        --records=N (recovery)
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { type FileHandle, open } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import bs58 from "bs58"
import { demoCatalog } from "../fixtures/catalog.ts"
import { Engine } from "../src/engine/engine.ts"
import { stateHash as engineStateHash } from "../src/engine/snapshot.ts"
import type { Command as EngineCommand, EngineEvent } from "../src/engine/types.ts"
import type { ServiceCommand } from "../src/service/commands.ts"
import type { Exchange } from "../src/service/exchange.ts"
import { journalDir, openDurableExchange, recoverExchange } from "../src/store/durable.ts"
import { listSegments, readJournal } from "../src/store/file-journal.ts"
import { mulberry32 } from "./engine-workload.ts"
import { mb, numberFlag, percentile, round, type Suite, tryGc } from "./lib.ts"

const TARGET_DURABLE_CMDS_PER_SEC = 50_000
const TARGET_RECOVERY_SEC = 10
/** The journal's time stamps come from this fixed clock: the bench measures I/O and replay, not time. */
const T0_MS = 1_795_305_600_000

/**
 * A realistic command mix on a live Exchange: deposits, passive buys of YES and NO
 * a few ticks off the middle, ~10% crossing buys (mints against resting buys of
 * the other outcome; half IOC), and cancels of a random resting order of the
 * owner. The results of `submit` say which orders rest, so cancels always name a
 * live order; the resting population is steered towards `targetResting`.
 */
class Flow {
  private readonly random: () => number
  private readonly users: string[]
  private readonly nonces: Int32Array
  private readonly markets: string[]
  /** Resting order ids and their owners (swap-remove by index). */
  private readonly resting: number[] = []
  private readonly owner = new Map<number, string>()
  private readonly where = new Map<number, number>()
  private credits = 0

  constructor(
    x: Exchange,
    seed: number,
    userCount: number,
    private readonly targetResting: number
  ) {
    this.random = mulberry32(seed)
    this.users = Array.from({ length: userCount }, (_, i) => bs58.encode(createHash("sha256").update(`journal-bench-${i}`).digest()))
    this.nonces = new Int32Array(userCount)
    if (x.catalog.events.length === 0) for (const event of demoCatalog()) x.submit({ type: "create_event", event })
    this.markets = x.catalog.events.flatMap((e) => e.outcomes.map((o) => o.market_id))
  }

  /** Setup commands: every user's first deposit. */
  deposits(): ServiceCommand[] {
    return this.users.map((user) => this.credit(user))
  }

  private credit(user: string): ServiceCommand {
    return { type: "credit", user, amountMicro: 1_000_000_000_000, ref: `bench-deposit-${++this.credits}` }
  }

  private int(n: number): number {
    return Math.floor(this.random() * n)
  }

  next(): ServiceCommand {
    const r = this.random()
    const ui = this.int(this.users.length)
    const user = this.users[ui]!
    if (r < 0.02) return this.credit(user)
    const cancelShare = this.resting.length > this.targetResting ? 0.55 : 0.3
    if (r < 0.02 + cancelShare && this.resting.length > 0) {
      const orderId = this.resting[this.int(this.resting.length)]!
      return { type: "cancel_order", user: this.owner.get(orderId)!, orderId }
    }
    const crossing = this.random() < 0.1
    const d = 1 + this.int(crossing ? 60 : 400)
    return {
      type: "place_order",
      order: {
        user,
        marketId: this.markets[this.int(this.markets.length)]!,
        side: "buy",
        outcome: this.random() < 0.5 ? "yes" : "no",
        // Passive buys sit below 50%; a crossing buy pays above it and mints against the other outcome's bids.
        priceBps: crossing ? 5_000 + d : 5_000 - d,
        size: 1 + this.int(50),
        orderType: crossing && this.random() < 0.5 ? "ioc" : "gtc",
        nonce: ++this.nonces[ui]!
      }
    }
  }

  /** Tracks resting orders from a command's events. */
  observe(events: ReadonlyArray<EngineEvent>, cmd: ServiceCommand): void {
    for (const ev of events) {
      if (ev.type === "order_rested" && cmd.type === "place_order") this.add(ev.orderId, cmd.order.user)
      else if (ev.type === "order_cancelled") this.remove(ev.orderId)
      else if (ev.type === "fill" && ev.makerRemaining === 0) this.remove(ev.makerOrderId)
    }
  }

  private add(id: number, user: string): void {
    this.where.set(id, this.resting.length)
    this.resting.push(id)
    this.owner.set(id, user)
  }

  private remove(id: number): void {
    const i = this.where.get(id)
    if (i === undefined) return
    const last = this.resting.pop()!
    if (last !== id) {
      this.resting[i] = last
      this.where.set(last, i)
    }
    this.where.delete(id)
    this.owner.delete(id)
  }
}

/**
 * Counts journal batches process-wide (FileHandle is one class), to report the mean batch: one
 * writev each to the O_DSYNC segment (a short write's continuation would count again).
 */
const countBatchWrites = async (dir: string): Promise<{ count: () => number; restore: () => void }> => {
  const probe: FileHandle = await open(join(dir, "probe"), "w")
  const proto = Object.getPrototypeOf(probe) as { writev: (...args: unknown[]) => Promise<unknown> }
  await probe.close()
  const original = proto.writev
  let n = 0
  proto.writev = function (this: FileHandle, ...args: unknown[]) {
    n++
    return original.apply(this, args)
  }
  return { count: () => n, restore: () => void (proto.writev = original) }
}

const durableThroughput = async (seed: number, submitters: number, commands: number, name = "journal.durable_submit", target = true) => {
  const dir = mkdtempSync(join(tmpdir(), "twinbook-journal-bench-"))
  const syncs = await countBatchWrites(dir)
  try {
    const d = await openDurableExchange(dir, () => T0_MS, { onFatal: (err) => { throw err } })
    const x = d.exchange
    const flow = new Flow(x, seed, 1_000, 20_000)
    await Promise.all(flow.deposits().map((cmd) => x.submit(cmd).durable))
    const run = async (total: number, latencies: Float64Array | null): Promise<number> => {
      let issued = 0
      const worker = async (): Promise<void> => {
        while (issued < total) {
          const i = issued++
          const cmd = flow.next()
          const t0 = process.hrtime.bigint()
          const { result, durable } = x.submit(cmd)
          flow.observe(result.events, cmd)
          await durable
          if (latencies !== null) latencies[i] = Number(process.hrtime.bigint() - t0) / 1e6
        }
      }
      const start = process.hrtime.bigint()
      await Promise.all(Array.from({ length: submitters }, worker))
      return Number(process.hrtime.bigint() - start) / 1e9
    }
    // Warm-up: the same loop, untimed, so the JIT and the book are in steady state.
    await run(Math.min(50_000, Math.ceil(commands / 4)), null)
    tryGc()
    const latencies = new Float64Array(commands)
    const batches0 = syncs.count()
    const seconds = await run(commands, latencies)
    const batches = syncs.count() - batches0
    latencies.sort()
    await d.close()
    const cmdsPerSec = Math.round(commands / seconds)
    return {
      name,
      cmdsPerSec,
      p50AddedMs: round(percentile(latencies, 50), 2),
      p99AddedMs: round(percentile(latencies, 99), 2),
      maxAddedMs: round(latencies[latencies.length - 1]!, 2),
      commands,
      submitters,
      durableWrites: batches,
      meanBatch: round(commands / Math.max(1, batches), 1),
      targetCmdsPerSec: target ? TARGET_DURABLE_CMDS_PER_SEC : null,
      meetsTarget: target ? cmdsPerSec >= TARGET_DURABLE_CMDS_PER_SEC : null
    }
  } finally {
    syncs.restore()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Writes `records` journal records through the real journal (big group-committed batches). */
export const generateJournal = async (dir: string, seed: number, records: number): Promise<void> => {
  const d = await openDurableExchange(dir, () => T0_MS, { onFatal: (err) => { throw err } })
  const x = d.exchange
  const flow = new Flow(x, seed, 5_000, 100_000)
  const pending: Promise<void>[] = []
  for (const cmd of flow.deposits()) pending.push(x.submit(cmd).durable)
  while (x.lastSeq < records) {
    const cmd = flow.next()
    const { result, durable } = x.submit(cmd)
    flow.observe(result.events, cmd)
    pending.push(durable)
    if (pending.length >= 20_000) await Promise.all(pending.splice(0))
  }
  await Promise.all(pending)
  await d.close()
}

/** Recovery must run at this share of the engine's own apply rate on the same commands, measured in the same run (issue 15). */
const TARGET_RECOVERY_ENGINE_RATIO = 0.4

const cpuSec = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/** The engine commands a recovery applies, in order: recorded from one untimed recovery. */
const engineCommandsOf = (dir: string): EngineCommand[] => {
  const out: EngineCommand[] = []
  recoverExchange(dir, () => T0_MS, { append: () => Promise.resolve() }, {
    repair: false,
    beforeReplay: (x) => {
      const apply = x.engine.apply.bind(x.engine)
      x.engine.apply = (cmd) => {
        out.push(cmd)
        return apply(cmd)
      }
    }
  })
  return out
}

const recovery = async (seed: number, records: number, log: (m: string) => void) => {
  const dir = mkdtempSync(join(tmpdir(), "twinbook-recovery-bench-"))
  try {
    log(`writing a ${records.toLocaleString("en-US")}-record journal…`)
    const g0 = process.hrtime.bigint()
    await generateJournal(dir, seed, records)
    const generateSec = Number(process.hrtime.bigint() - g0) / 1e9
    const segments = listSegments(journalDir(dir))
    const bytes = segments.reduce((n, s) => n + statSync(s.path).size, 0)
    tryGc()
    log("recovering (no snapshot)…")
    const heap0 = process.memoryUsage().heapUsed
    const t0 = process.hrtime.bigint()
    const c0 = cpuSec()
    const { exchange, recovery: report } = recoverExchange(dir, () => T0_MS, { append: () => Promise.resolve() }, { repair: false })
    const recoveryCpuSec = cpuSec() - c0
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    const heapAfter = process.memoryUsage().heapUsed
    if (report.replayed !== records || exchange.lastSeq !== records) throw new Error(`recovered ${report.replayed} records, expected ${records}`)
    const stateHash = engineStateHash(exchange.engine)
    tryGc()
    // Where the time goes: reading and decoding alone (CRC + JSON), without applying.
    const r0 = process.hrtime.bigint()
    const read = readJournal(journalDir(dir), 1, { repair: false })
    const readSec = Number(process.hrtime.bigint() - r0) / 1e9
    if (read.records.length !== records) throw new Error("read back a different record count")
    tryGc()
    // The yardstick: a fresh engine applying the same engine commands, already decoded.
    log("the engine alone on the same commands…")
    const commands = engineCommandsOf(dir)
    tryGc()
    const engine = new Engine()
    const e0 = process.hrtime.bigint()
    const ec0 = cpuSec()
    for (const cmd of commands) engine.apply(cmd)
    const engineCpuSec = cpuSec() - ec0
    const engineSec = Number(process.hrtime.bigint() - e0) / 1e9
    if (engineStateHash(engine) !== stateHash) throw new Error("the engine alone reached a different state than the recovery")
    const recordsPerSec = Math.round(records / seconds)
    const engineCmdsPerSec = Math.round(commands.length / engineSec)
    // The ratio compares CPU seconds (this process's user + system time): other work on a shared
    // machine stretches wall time unevenly between the two phases, CPU time much less.
    const ratio = round(records / recoveryCpuSec / (commands.length / engineCpuSec), 3)
    return {
      name: "journal.recovery",
      records,
      recoverySec: round(seconds, 2),
      recordsPerSec,
      recoveryCpuSec: round(recoveryCpuSec, 2),
      readDecodeSec: round(readSec, 2),
      applySecApprox: round(seconds - readSec, 2),
      engineCommands: commands.length,
      engineApplySec: round(engineSec, 2),
      engineCmdsPerSec,
      engineCpuSec: round(engineCpuSec, 2),
      recoveryVsEngine: ratio,
      targetRecoveryVsEngine: TARGET_RECOVERY_ENGINE_RATIO,
      journalMb: mb(bytes),
      segments: segments.length,
      heapGrowthMb: mb(heapAfter - heap0),
      generateSec: round(generateSec, 1),
      targetRecoverySec: TARGET_RECOVERY_SEC,
      meetsTarget: seconds < TARGET_RECOVERY_SEC && ratio >= TARGET_RECOVERY_ENGINE_RATIO
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `npm run bench -- recovery [--records=N]`: the recovery figure alone. */
export const recoverySuite: Suite = async ({ args, report, log }) => {
  report(await recovery(numberFlag(args, "seed", 0x10c), numberFlag(args, "records", 1_000_000), log))
}

export const journalSuite: Suite = async ({ args, report, log }) => {
  const seed = numberFlag(args, "seed", 0x10c)
  const submitters = numberFlag(args, "submitters", 1_000)
  const commands = numberFlag(args, "commands", 300_000)
  log(`durable submit: ${commands.toLocaleString("en-US")} commands from ${submitters} concurrent submitters…`)
  report(await durableThroughput(seed, submitters, commands))
  tryGc()
  // For reference, no target: the same path lightly loaded, where a batch is a few
  // commands and the added latency is close to one durable (O_DSYNC) write.
  const light = numberFlag(args, "light-submitters", 16)
  log(`durable submit, light load: ${light} submitters…`)
  report(await durableThroughput(seed, light, Math.min(commands, 20_000), "journal.durable_submit_light", false))
}
