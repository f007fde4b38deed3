// Backtest suite: historical events replayed per second through the balanced strategy
// on one core (the data in memory, everything else included: background book, queue and
// latency models, strategy, rewards sampling), and the wall time of a whole 1,000,000-trade
// backtest as the CLI runs it: Parquet read through DuckDB, replay, DuckDB report and HTML.
//
// Flags: --trades=N (default 1,000,000)  --seed=S  --rounds=N (replay rounds, best kept)
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { DuckDBInstance } from "@duckdb/node-api"
import { type BacktestConfig, DEFAULT_CONFIG } from "../sim/backtest/config.ts"
import { renderHtml } from "../sim/backtest/html.ts"
import { loadDataset } from "../sim/backtest/load.ts"
import { writeReportDb } from "../sim/backtest/output-db.ts"
import { runBacktest } from "../sim/backtest/runner.ts"
import { generateSynthetic, syntheticDataset } from "../sim/backtest/synthetic.ts"
import { numberFlag, round, type Suite, tryGc } from "./lib.ts"

const TARGET_EVENTS_PER_SEC = 500_000
const TARGET_WALL_SEC = 10

/** The synthetic trades as a Parquet file, through the Appender (setup, untimed). */
const writeParquet = async (path: string, trades: number, seed: string): Promise<void> => {
  const { trades: t } = generateSynthetic({ seed, trades })
  const db = await DuckDBInstance.create(":memory:")
  const conn = await db.connect()
  await conn.run("CREATE TABLE trades (ts_sec BIGINT, market_id VARCHAR, price_bps INTEGER, size INTEGER, taker_side VARCHAR)")
  const app = await conn.createAppender("trades")
  for (let i = 0; i < t.n; i++) {
    app.appendBigInt(BigInt(t.tMs[i]! / 1000))
    app.appendVarchar(t.marketNames[t.market[i]!]!)
    app.appendInteger(t.priceBps[i]!)
    app.appendInteger(t.size[i]!)
    app.appendVarchar(t.side[i] === 0 ? "buy" : "sell")
    app.endRow()
  }
  app.flushSync()
  app.closeSync()
  await conn.run(`COPY trades TO '${path.replaceAll("'", "''")}' (FORMAT parquet)`)
  conn.closeSync()
  db.closeSync()
}

export const backtestSuite: Suite = async ({ args, report, log }) => {
  const trades = numberFlag(args, "trades", 1_000_000)
  const rounds = numberFlag(args, "rounds", 2)
  const seedArg = args.find((a) => a.startsWith("--seed="))
  const seed = seedArg === undefined ? "bench" : seedArg.slice("--seed=".length)

  log(`generating ${trades.toLocaleString("en-US")} synthetic trades (seed ${seed})`)
  const data = syntheticDataset({ seed, trades })
  // Warm-up on a slice of a day, so the measured rounds run optimised code.
  runBacktest(syntheticDataset({ seed: `${seed}-warm`, trades: 100_000, durationSec: 6 * 3600 }), DEFAULT_CONFIG)

  // The balanced preset as shipped (its stops and inventory pause end quoting early in some
  // markets), and the same ladder made to quote all day (no stops, no pause, no lean).
  const configs: ReadonlyArray<readonly [string, BacktestConfig]> = [
    ["replay balanced (one core)", DEFAULT_CONFIG],
    ["replay always quoting (one core)", { ...DEFAULT_CONFIG, overrides: { stopLossMicro: 0, takeProfitMicro: 0, skewTolerancePct: 100, maxInventory: 10_000_000_000 } }]
  ]
  for (const [name, config] of configs) {
    let best = 0
    let commands = 0
    let fills = 0
    let requotes = 0
    for (let r = 0; r < rounds; r++) {
      tryGc()
      const t0 = performance.now()
      const result = runBacktest(data, config)
      const secs = (performance.now() - t0) / 1000
      const eps = data.count / secs
      log(`${name} round ${r + 1}: ${round(secs, 2)} s, ${Math.round(eps).toLocaleString("en-US")} events/s`)
      if (eps > best) best = eps
      commands = result.report.summary.engine_commands
      fills = result.report.summary.fills
      requotes = result.report.markets.reduce((sum, m) => sum + m.requotes, 0)
    }
    report({
      name,
      events: data.count,
      markets: data.markets.length,
      requotes,
      engine_commands: commands,
      commands_per_event: round(commands / data.count, 2),
      our_fills: fills,
      events_per_s: Math.round(best),
      target_events_per_s: TARGET_EVENTS_PER_SEC,
      ratio_to_target: round(best / TARGET_EVENTS_PER_SEC, 2)
    })
  }

  const dir = mkdtempSync(join(tmpdir(), "bench-backtest-"))
  try {
    const parquet = join(dir, "trades.parquet")
    log("writing the Parquet input (untimed)")
    await writeParquet(parquet, trades, seed)
    tryGc()
    const t0 = performance.now()
    const loaded = await loadDataset(parquet)
    const t1 = performance.now()
    const { report: rep } = runBacktest(loaded, DEFAULT_CONFIG)
    const t2 = performance.now()
    await writeReportDb(join(dir, "backtest.duckdb"), rep, JSON.stringify(DEFAULT_CONFIG))
    renderHtml(rep)
    const t3 = performance.now()
    const wall = (t3 - t0) / 1000
    report({
      name: `${trades.toLocaleString("en-US")}-trade backtest (wall)`,
      trades: loaded.trades,
      load_s: round((t1 - t0) / 1000, 2),
      replay_s: round((t2 - t1) / 1000, 2),
      report_s: round((t3 - t2) / 1000, 2),
      wall_s: round(wall, 2),
      target_wall_s: TARGET_WALL_SEC,
      ratio_to_target: round(TARGET_WALL_SEC / wall, 2)
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
