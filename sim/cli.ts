// `npm run sim -- scenarios/<file> [--seed N] [--seeds A..B [--queue nats://…]] [--duration 1h] [--json] [--log path|--no-log]
//   [--tape DIR [--tape-interval 1s|0|none] [--tape-format csv|parquet]] [--without AGENT]... [--signatures token|ed25519]`
import { mkdirSync, writeFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { runScenario, type Summary } from "./scenario/run.ts"
import { loadScenario, ScenarioError } from "./scenario/scenario.ts"
import { inSeedOrder, runSweep, seedLine, seedOk, type SweepResult, type SweepSummary, sweepMarkdown, writeSummaryLog } from "./sweep/sweep.ts"
import { progressBar } from "./progress.ts"
import { type Args, parseArgs, reproduceCommand } from "./cli-args.ts"
import { writeRunTape } from "./scenario/tape.ts"
import { plantNeeds, plantOptions } from "./testing/plants.ts"
import { type StorageRunStats, sumStorageStats } from "./world/storage-world.ts"
import { type ClusterRunStats, sumClusterStats } from "./world/cluster-world.ts"
import { QueueInterrupted, QueueRefused, QueueUnreachable } from "./queue/caller.ts"
import { queueProgress } from "./queue/progress.ts"
import { runSweepOnQueue } from "./sweep/queue-sweep.ts"

const USAGE =
  "usage: npm run sim -- <scenario.json> [--seed N | --seeds A..B [--queue nats://host:4222[,…]]] [--duration 30m] [--json] [--log <path> | --no-log]\n" +
  "         [--tape DIR [--tape-interval 1s|0|none] [--tape-format csv|parquet]] [--without AGENT]...   (agents: <kind>-<group>-<index>)\n" +
  "         [--signatures token|ed25519]   (how agents sign orders: world tokens, or real Ed25519; the same journal)"

const fmt = (n: number): string => n.toLocaleString("en-US")

const printSummary = (s: SweepSummary, logPath: string | null, reproduce: string | null): void => {
  const w = (line: string): boolean => process.stdout.write(`${line}\n`)
  w(`scenario ${s.scenario}, seed ${s.seed}: ${s.ok ? "OK" : "FAILED"}`)
  w(`  virtual ${fmt(s.virtualSec)} s in ${s.wallMs === null ? "?" : fmt(Math.round(s.wallMs))} ms wall (${s.wallMs ? fmt(Math.round((s.virtualSec * 1000) / s.wallMs)) : "?"}× real time)`)
  w(`  events ${fmt(s.events)}, journal records ${fmt(s.journalRecords)}, requests ${fmt(s.requests)} (timeouts ${fmt(s.timeouts)})`)
  w(`  responses ${Object.entries(s.responsesByStatus).map(([k, v]) => `${k}:${fmt(v)}`).join(" ")}`)
  w(`  agents ${s.agentsOnboarded}/${s.agents} onboarded, actions ${fmt(s.actions)}, orders ${fmt(s.ordersAcked)}/${fmt(s.ordersSent)} acknowledged, ${fmt(s.ordersQueued)} queued`)
  w(`  fills ${fmt(s.fills)}, volume ${fmt(Math.round(s.volumeUsdc))} USDC, deposits credited ${s.depositsCredited}, withdrawals confirmed ${s.withdrawalsConfirmed} (refunded ${s.withdrawalsRefunded})`)
  w(`  ws frames ${fmt(s.wsFrames)} (reconnects ${s.wsReconnects}), bad inputs ${fmt(s.badInputsSent)}, invariant checks ${fmt(s.invariantChecks)}, crashes ${s.crashes}`)
  w(`  faults injected ${s.faultsInjected}${s.faults.length > 0 ? `: ${s.faults.map((f) => `${f.kind}@${f.atSec}`).slice(0, 8).join(", ")}${s.faults.length > 8 ? ", ..." : ""}` : ""}`)
  if (s.lpBotsStarted > 0 || s.rewardsPaidMicro > 0) w(`  lp bots started ${s.lpBotsStarted} (status checks ${fmt(s.lpBotChecks)}), rewards paid ${fmt(s.rewardsPaidMicro / 1e6)} USDC`)
  if (s.storage != null) w(`  ${storageLine(s.storage)}`)
  if (s.cluster != null) w(`  ${clusterLine(s.cluster)}`)
  const codes = Object.entries(s.errorCodes)
  if (codes.length > 0) w(`  error codes ${codes.map(([k, v]) => `${k}:${fmt(v)}`).join(" ")}`)
  for (const f of s.failures) w(`  FAILURE ${f}`)
  if (reproduce !== null) w(`  reproduce: ${reproduce}`)
  if (logPath !== null) w(`  log ${logPath} (npm run replay -- ${logPath})`)
  w(`journalHash ${s.journalHash}`)
  w(`stateHash ${s.stateHash}`)
}

/** What the simulated disk did and how recovery coped (storage scenarios). */
const storageLine = (t: StorageRunStats): string =>
  `storage: ${t.failStops} fail-stops, ${t.recoveries} recoveries audited (${t.snapshotsSkipped} snapshots skipped, ${t.fullReplays} full replays, ${t.tornTailsCut} torn tails cut); ` +
  `disk faults: ${t.shortWrites} short writes, ${t.enospc} ENOSPC, ${t.syncEio} EIO on fdatasync, ${t.tornTails} tails torn at a crash, ${t.snapshotFlips} snapshots flipped`

/** What the sequencer pair went through (cluster scenarios). */
const clusterLine = (c: ClusterRunStats): string => {
  const lost = Object.entries(c.lost).map(([k, v]) => `${k} ${v}`).join(", ") || "none"
  return (
    `cluster: ${c.leaderships} terms led, leaderships lost: ${lost}; ` +
    `faults: ${c.leaderCrashes} leader crashes, ${c.zombies} zombies (${c.zombieRaces} resumed at the takeover), ${c.leaseExpiries} lease expiries, ${c.logOutages} log outages; ` +
    `${c.restarts} restarts, ${c.electionExits} election exits, longest without a leader ${(c.longestNoLeaderMs / 1000).toFixed(1)} s; ` +
    `log: ${c.batches} batches, ${c.stream.fenced} appends fenced (${c.markersRefused} term markers), ${c.stream.landedLate} committed late, ${c.stream.lostInOutage} lost in outages; ` +
    `lease: ${c.lease.acquired} acquired, ${c.lease.refused} renewals refused, ${c.lease.lostRenewals} lost, ${c.lease.delayedRenewals} delayed`
  )
}

// One piece: the CLI's steps in order (parse, load, single run or sweep, print), each a few lines with its exit code.
const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  let args: Args
  try {
    args = parseArgs(argv)
  } catch (err) {
    process.stderr.write(`sim: ${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  let scenario
  try {
    scenario = loadScenario(args.file)
  } catch (err) {
    if (err instanceof ScenarioError) {
      process.stderr.write(`sim: ${err.message}\n`)
      return 2
    }
    throw err
  }
  // A planted bug in a part the scenario does not run would change nothing and pass silently.
  if (args.plant !== undefined && scenario[plantNeeds(args.plant)] === undefined) {
    process.stderr.write(`sim: --plant ${args.plant}: ${scenario.name} has no ${plantNeeds(args.plant)} block to plant it in\n`)
    return 2
  }
  const tty = process.stderr.isTTY === true && !args.json
  if (args.seeds !== undefined) {
    const seeds = args.seeds
    // On the queue the progress (jobs done, workers seen) is on stderr whatever it is; locally a bar on terminals.
    const queued = args.queue === undefined ? null : queueProgress(`sweep ${scenario.name}`)
    const bar = tty && queued === null ? progressBar(`sweep ${scenario.name}`) : null
    // --log DIR: where each seed's log and the sweep table go (default out/sim); --no-log: the table only.
    const outDir = args.log ?? "out/sim"
    const logDir = args.log === null ? null : outDir
    // The command a single run of the seed prints: the same function, so the two cannot drift apart.
    const reproduce = (seed: number): string => reproduceCommand(args, seed)
    // One line per seed, in seed order, as soon as every earlier seed is in.
    const print = inSeedOrder(seeds, (r) => {
      if (args.json) return
      if (bar !== null) process.stderr.write("\r\x1b[K")
      queued?.clear()
      process.stdout.write(`${seedLine(r)}\n`)
    })
    const onResult = (r: SweepResult, done: number): void => {
      print(r)
      bar?.update(done / seeds.length, `${done}/${seeds.length} seeds`)
    }
    let results: SweepResult[]
    let conflicts: ReadonlyArray<string> = []
    if (args.queue === undefined || queued === null) {
      results = await runSweep(args.file, seeds, args.durationSec, onResult, undefined, logDir, args.plant)
      bar?.done()
    } else {
      try {
        ;({ results, conflicts } = await runSweepOnQueue({ servers: args.queue, file: args.file, seeds, durationSec: args.durationSec, plant: args.plant, logDir, onResult, progress: queued }))
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err)
        process.stderr.write(`sim: queue: ${message}\n`)
        return err instanceof QueueInterrupted ? 130 : err instanceof QueueRefused || err instanceof QueueUnreachable ? 2 : 1
      }
    }
    const failing = results.filter((r) => !seedOk(r))
    const rows = failing.map((r) => ({ seed: r.seed, reason: r.error ?? r.summary!.failures[0] ?? "", reproduce: reproduce(r.seed) }))
    const tablePath = join(args.log ?? "out/sim", `${basename(args.file, ".json")}-sweep-${seeds[0]}-${seeds.at(-1)}.md`)
    mkdirSync(dirname(tablePath), { recursive: true })
    writeFileSync(tablePath, sweepMarkdown(scenario.name, results, reproduce))
    if (args.json) {
      const perSeed = results.map((r) => ({ seed: r.seed, ok: seedOk(r), journalHash: r.summary?.journalHash ?? null, stateHash: r.summary?.stateHash ?? null, log: r.log ?? null }))
      process.stdout.write(`${JSON.stringify({ scenario: scenario.name, seeds: results.length, passed: results.length - failing.length, failing: rows, results: perSeed, table: tablePath })}\n`)
    } else {
      process.stdout.write(`sweep ${scenario.name}: ${results.length - failing.length}/${results.length} seeds passed, ${failing.length} failed\n`)
      // Storage scenarios: the disk's faults and the recoveries, summed over the seeds.
      const disks = results.flatMap((r) => (r.summary?.storage == null ? [] : [r.summary]))
      if (disks.length > 0) {
        const total = sumStorageStats(disks.map((d) => d.storage!))
        process.stdout.write(`  over ${disks.length} seeds: ${disks.reduce((n, d) => n + d.crashes, 0)} crashes; ${storageLine(total)}\n`)
      }
      // Cluster scenarios: the failovers and what the log and the lease did, summed (the longest outage: the worst seed's).
      const pairs = results.flatMap((r) => (r.summary?.cluster == null ? [] : [r.summary.cluster]))
      if (pairs.length > 0) process.stdout.write(`  over ${pairs.length} seeds: ${clusterLine(sumClusterStats(pairs))}\n`)
      for (const row of rows) process.stdout.write(`  seed ${row.seed} FAILED: ${row.reason.split("\n")[0]}\n    reproduce: ${row.reproduce}\n`)
      process.stdout.write(`table ${tablePath}\n`)
    }
    // Two runs of one seed that disagree: said on stderr (so --json keeps its shape), and the sweep fails.
    for (const c of conflicts) process.stderr.write(`sim: queue: CONFLICT ${c}\n`)
    return failing.length === 0 && conflicts.length === 0 ? 0 : 1
  }
  const bar = tty ? progressBar(`${scenario.name} seed ${args.seed ?? scenario.seed}`) : null
  let summary: Summary
  try {
    summary = await runScenario(scenario, {
      ...(args.seed === undefined ? {} : { seed: args.seed }),
      without: args.without,
      ...(args.signing === undefined ? {} : { signing: args.signing }),
      ...plantOptions(args.plant),
      ...(args.durationSec === undefined ? {} : { durationSec: args.durationSec }),
      onProgress: (f, v) => bar?.update(f, `${fmt(Math.round(v))} s virtual`),
      wallMs: () => performance.now() // live-only: wall time for the summary; the run never reads it
    })
  } catch (err) {
    if (!(err instanceof RangeError)) throw err
    process.stderr.write(`sim: ${err.message}\n`)
    return 2
  }
  bar?.done()
  if (args.tape !== undefined) {
    const { tape, files } = await writeRunTape(summary, { dir: args.tape, intervalSec: args.tapeIntervalSec, format: args.tapeFormat }, args.without)
    process.stderr.write(`tape: ${tape.meta.trades} trades, ${tape.meta.snapshots} book snapshots → ${files.join(", ")}\n`)
  }
  const logPath = args.log === null ? null : (args.log ?? `out/sim/${basename(args.file, ".json")}-seed${summary.seed}.log`)
  if (logPath !== null) writeSummaryLog(logPath, summary)
  const { records: _records, ...rest } = summary
  // A failed run names the command that reruns it (a planted bug's included).
  const reproduce = summary.ok ? null : reproduceCommand(args, summary.seed)
  if (args.json) process.stdout.write(`${JSON.stringify({ ...rest, log: logPath, ...(reproduce === null ? {} : { reproduce }) })}\n`)
  else printSummary(rest, logPath, reproduce)
  return summary.ok ? 0 : 1
}

process.exitCode = await main(process.argv.slice(2))
