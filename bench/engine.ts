// Engine suite: throughput and per-command latency of `Engine.apply` on a
// seeded exchange-like workload, the same order flow through nodejs-order-book
// as a peer, and resident memory with 1M resting orders.
//
// Flags: --seed=N  --commands=N (measured)  --warmup=N  --rounds=N  --resting=N (memory)
import { availableParallelism, loadavg } from "node:os"
import { performance } from "node:perf_hooks"
import { Engine } from "../src/engine/index.ts"
import { measureEngineMemory } from "./engine-memory.ts"
import { newPeerBooks, peerDepth, runPeer, timePeer, translateForPeer } from "./engine-peer.ts"
import {
  CLASS_CANCEL,
  CLASS_CROSSING,
  CLASS_PASSIVE,
  DEFAULT_WORKLOAD,
  generateWorkload,
  type Workload
} from "./engine-workload.ts"
import { type BenchResult, gcMeter, numberFlag, percentile, round, type Suite, timerOverheadNs, tryGc } from "./lib.ts"

const TARGET_OPS_PER_SEC = 1_000_000
const TARGET_RATIO_VS_PEER = 3
const TARGET_P99_US = 5

interface Figures {
  opsPerSec: number
  opsPerSecMin: number
  opsPerSecMax: number
  p50Us: number
  p99Us: number
  p999Us: number
  maxUs: number
  rejects: number
}

/** A fresh engine brought to the start of the measured window, untimed. */
const primedEngine = (w: Workload): Engine => {
  const e = new Engine()
  const cmds = w.commands
  for (let i = 0; i < w.measuredFrom; i++) e.apply(cmds[i]!)
  return e
}

interface Timed {
  opsPerSec: number
  /** performance.now() bounds of the timed loop, to attribute GC pauses. */
  from: number
  to: number
}

const engineThroughput = (w: Workload): Timed & { rejects: number; engine: Engine } => {
  const e = primedEngine(w)
  tryGc()
  const cmds = w.commands
  const end = cmds.length
  let rejects = 0
  const from = performance.now()
  const t0 = process.hrtime.bigint()
  for (let i = w.measuredFrom; i < end; i++) {
    // A rejection is always a single `rejected` event; accepted commands never start with one.
    if (e.apply(cmds[i]!)[0]!.type === "rejected") rejects++
  }
  const ns = Number(process.hrtime.bigint() - t0)
  return { opsPerSec: ((end - w.measuredFrom) * 1e9) / ns, from, to: performance.now(), rejects, engine: e }
}

const engineLatency = (w: Workload, overheadNs: number): Float64Array => {
  const e = primedEngine(w)
  tryGc()
  const cmds = w.commands
  const samples = new Float64Array(cmds.length - w.measuredFrom)
  for (let i = w.measuredFrom; i < cmds.length; i++) {
    const c = cmds[i]!
    const t0 = process.hrtime.bigint()
    e.apply(c)
    samples[i - w.measuredFrom] = Math.max(0, Number(process.hrtime.bigint() - t0) - overheadNs)
  }
  return samples
}

const summarise = (runs: number[], samples: Float64Array, rejects: number): Figures => {
  const sorted = [...runs].sort((a, b) => a - b)
  samples.sort()
  const us = (ns: number): number => round(ns / 1000, 3)
  return {
    opsPerSec: Math.round(sorted[Math.floor(sorted.length / 2)]!),
    opsPerSecMin: Math.round(sorted[0]!),
    opsPerSecMax: Math.round(sorted.at(-1)!),
    p50Us: us(percentile(samples, 50)),
    p99Us: us(percentile(samples, 99)),
    p999Us: us(percentile(samples, 99.9)),
    maxUs: us(samples[samples.length - 1]!),
    rejects
  }
}

/** p50/p99 per command class: the headline p99 hides which kind is slow. */
const byClass = (w: Workload, samples: Float64Array): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [label, cls] of [["Passive", CLASS_PASSIVE], ["Crossing", CLASS_CROSSING], ["Cancel", CLASS_CANCEL]] as const) {
    const picked: number[] = []
    for (let i = 0; i < samples.length; i++) if (w.kind[w.measuredFrom + i] === cls) picked.push(samples[i]!)
    const sorted = Float64Array.from(picked).sort()
    out[`p50${label}Us`] = round(percentile(sorted, 50) / 1000, 3)
    out[`p99${label}Us`] = round(percentile(sorted, 99) / 1000, 3)
  }
  return out
}

/** Full depth of every book, best first, as one comparable string per market. */
const engineDepth = (e: Engine, marketIds: ReadonlyArray<string>): string[] =>
  marketIds.map((id) => {
    const m = e.markets.get(id)!
    return JSON.stringify({ bids: m.bids.depth(10_001), asks: m.asks.depth(10_001) })
  })

export const engineSuite: Suite = async ({ args, report, log }) => {
  const options = {
    ...DEFAULT_WORKLOAD,
    seed: numberFlag(args, "seed", DEFAULT_WORKLOAD.seed),
    measuredCommands: numberFlag(args, "commands", DEFAULT_WORKLOAD.measuredCommands),
    warmupCommands: numberFlag(args, "warmup", DEFAULT_WORKLOAD.warmupCommands)
  }
  const rounds = Math.max(1, numberFlag(args, "rounds", 3))
  const resting = numberFlag(args, "resting", 1_000_000)

  log(`seed ${options.seed}: generating ${options.warmupCommands + options.measuredCommands} commands…`)
  let t = Date.now()
  const w = generateWorkload(options)
  const s = w.stats
  log(
    `generated in ${Date.now() - t} ms: ${s.places} places, ${s.cancels} cancels, ${s.fills} fills, ${s.rejects} rejects ` +
      `in the measured window; ${s.restingAtEnd} resting, ~${s.levelsPerBookAtEnd} levels per book at the end`
  )
  const measured = w.commands.length - w.measuredFrom
  const o = w.options
  const workload: BenchResult = {
    name: "engine.workload",
    seed: o.seed,
    users: o.users,
    markets: o.markets,
    targetRestingPerMarket: o.targetRestingPerMarket,
    warmupCommands: o.warmupCommands,
    measuredCommands: measured,
    ...s,
    crossingShareOfPlaces: round(s.crossing / s.places, 4),
    cancelShare: round(s.cancels / measured, 4),
    rounds,
    node: process.version,
    cpus: availableParallelism(),
    // Two busy cores halve these figures: compare runs only at similar load.
    loadAvg1m: round(loadavg()[0]!, 2)
  }
  report(workload)
  if (loadavg()[0]! > availableParallelism() / 2) log(`warning: load average ${loadavg()[0]} on ${availableParallelism()} cpus`)
  const overheadNs = timerOverheadNs()

  const gc = gcMeter()
  const gcShares: number[] = []
  const runs: number[] = []
  let rejects = 0
  let engine: Engine | undefined
  for (let r = 0; r < rounds; r++) {
    const res = engineThroughput(w)
    runs.push(res.opsPerSec)
    gcShares.push(await gc.share(res.from, res.to))
    rejects = res.rejects
    engine = res.engine
    log(`engine round ${r + 1}/${rounds}: ${Math.round(res.opsPerSec).toLocaleString("en-US")} ops/s`)
  }
  const ourDepth = engineDepth(engine!, w.marketIds)
  engine = undefined
  const ourSamples = engineLatency(w, overheadNs)
  const ourClasses = byClass(w, ourSamples)
  const ours = summarise(runs, ourSamples, rejects)
  log(`engine latency: p50 ${ours.p50Us} µs, p99 ${ours.p99Us} µs`)

  t = Date.now()
  const ops = translateForPeer(w)
  log(`peer ops translated in ${Date.now() - t} ms (${ops.length} ops)`)
  const peerRuns: number[] = []
  const peerGcShares: number[] = []
  let peerRefused = 0
  let booksMatch = true
  for (let r = 0; r < rounds; r++) {
    const books = newPeerBooks(w.marketIds.length)
    runPeer(books, ops, 0, ops.measuredFrom)
    tryGc()
    const from = performance.now()
    const t0 = process.hrtime.bigint()
    peerRefused = runPeer(books, ops, ops.measuredFrom, ops.length)
    const ns = Number(process.hrtime.bigint() - t0)
    peerRuns.push(((ops.length - ops.measuredFrom) * 1e9) / ns)
    peerGcShares.push(await gc.share(from, performance.now()))
    log(`peer round ${r + 1}/${rounds}: ${Math.round(peerRuns.at(-1)!).toLocaleString("en-US")} ops/s`)
    // Same flow in, same books out: proof the peer really ran the equivalent workload.
    if (r === 0) booksMatch = books.every((b, i) => peerDepth(b) === ourDepth[i])
  }
  const latencyBooks = newPeerBooks(w.marketIds.length)
  runPeer(latencyBooks, ops, 0, ops.measuredFrom)
  tryGc()
  const peer = summarise(peerRuns, timePeer(latencyBooks, ops, ops.measuredFrom, ops.length, overheadNs), peerRefused)
  gc.stop()
  const mean = (xs: number[]): number => round(xs.reduce((a, b) => a + b, 0) / xs.length, 3)

  const ratio = round(ours.opsPerSec / peer.opsPerSec, 2)
  report({
    name: "engine.apply",
    ...ours,
    ...ourClasses,
    rejectRate: round(ours.rejects / measured, 5),
    gcShareOfTime: mean(gcShares),
    timerOverheadNs: overheadNs,
    ratioVsPeer: ratio,
    targetOpsPerSec: TARGET_OPS_PER_SEC,
    targetRatioVsPeer: TARGET_RATIO_VS_PEER,
    targetP99Us: TARGET_P99_US,
    meetsTarget: ours.opsPerSec >= TARGET_OPS_PER_SEC && ratio >= TARGET_RATIO_VS_PEER && ours.p99Us < TARGET_P99_US
  })
  report({
    name: "engine.peer.nodejs-order-book",
    ...peer,
    rejectRate: round(peer.rejects / (ops.length - ops.measuredFrom), 5),
    gcShareOfTime: mean(peerGcShares),
    booksMatchEngine: booksMatch
  })

  log(`memory: ${resting.toLocaleString("en-US")} resting orders in a child process…`)
  report(measureEngineMemory(resting, o.seed))
}
