// `npm run backtest -- [flags]` → what to load and how to run. Every bad flag is a
// BacktestInputError naming the flag, so the CLI prints one clear line and exits 2.
import { readFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { MICRO_PER_CONTRACT } from "../../src/engine/money.ts"
import { isPresetName, PRESET_NAMES } from "../../src/lp/presets.ts"
import { parseStrategySpec } from "../../src/lp/strategy-spec.ts"
import { type BacktestConfig, DEFAULT_CONFIG, QUEUE_MODELS, type QueueModelName } from "./config.ts"
import { BacktestInputError } from "./dataset.ts"
import { ORDERS_MODES, type OrdersMode } from "./load.ts"
import { applyKnobs, parseSet, parseSweep, type SweepAxis } from "./params.ts"
import { figureName, resolveFigure, SWEEP_FIGURES } from "./sweep.ts"
import { isQueueUrl } from "../queue/protocol.ts"
import { ARRIVAL_HORIZON_SEC } from "./response/edge.ts"
import { followingOnly, readResponseModel } from "./response/model.ts"
import { DEFAULT_INTERVAL, DEFAULT_RESPONSE_DRAWS, type IntervalSpec } from "./interval.ts"
import { type IntervalCalibration, readIntervalCalibration } from "./interval-calibration.ts"

export const DEFAULT_DATA = "fixtures/backtest/sample-trades.csv"
export const DEFAULT_OUT = "out/backtest"

export interface CliOptions {
  readonly data: string | null
  /** The market-response model file (--response), listed with the inputs in Reproduce. */
  readonly responsePath: string | null
  /** --interval-calibration: the backtest's errors measured on calibration seeds (npm run fidelity -- --calibrate-intervals), and their file. */
  readonly intervalCalibration: { readonly path: string; readonly calibration: IntervalCalibration } | null
  readonly snapshots: string | null
  /** How much of a tape's order-level events to use (flow: all; adds: the book only; none: L2 snapshots and the queue model). */
  readonly ordersMode: OrdersMode
  readonly synthetic: number | null
  readonly config: BacktestConfig
  /** How the run's interval for trading PnL and fills is made (a single run; sweeps have none). */
  readonly interval: IntervalSpec
  readonly sweeps: ReadonlyArray<SweepAxis>
  readonly workers: number
  /** The sweep runs on this JetStream work queue (`--queue nats://…`; npm run sim:worker runs it), not on local threads. */
  readonly workQueue: string | null
  /** The sweep table column the sweep index's heatmap shows. */
  readonly heatmap: string
  readonly out: string
  readonly json: boolean
  /** With --json: add the wall-clock figures (under `timings`); without it the JSON of two identical runs is identical. */
  readonly timings: boolean
  readonly html: boolean
  readonly help: boolean
}

export const USAGE = `usage: npm run backtest -- [options]
       npm run backtest -- fit-response --data DIR [DIR…] --out model.json [--horizon S|likelihood] [--json]
                                   (fit a market-response model from tapes; --horizon: the arrival's horizon,
                                   default ${ARRIVAL_HORIZON_SEC} s, likelihood: the candidate that explains the arrival times best)

input (default: ${DEFAULT_DATA})
  --data DIR               a tape (npm run sim -- --tape DIR, npm run export): trades, book snapshots, fees, rewards config
  --data FILE              trades, .csv or .parquet: ts_sec|ts_ms, market_id, price_bps, size, taker_side
  --snapshots FILE         optional book snapshots: ts_sec|ts_ms, market_id, side (bid|ask), price_bps, size
  --orders flow|adds|none  a tape's order-level events (orders.*): flow (default) replays every order as it
                           arrived; adds keeps only the book (trades replayed at the print); none uses the
                           book snapshots and --queue
  --synthetic N            N seeded synthetic trades (hidden-probability random walk) instead of a file
strategy (default: --preset balanced)
  --preset NAME            ${PRESET_NAMES.join(" | ")}
  --params FILE            strategy-spec JSON (docs/lp.md "Wire form"), simple or advanced
  --capital USDC           account capital (default 1000, or the params file's capital)
  --set NAME=VALUE         override one parameter (names as for --sweep), repeatable
models
  --seed S                 seed for every random draw (default 1)
  --queue MODEL            risk-averse | prob (default risk-averse); a nats:// value is the sweep's work queue (below)
  --queue-power N          prob model: P(cancel ahead) = front^N / (front^N + back^N) (default 3)
  --entry-latency-ms MS    order-entry latency base (default 50), --entry-jitter-ms MS exponential mean (default 20)
  --feed-latency-ms MS     market-data latency base (default 100), --feed-jitter-ms MS (default 50)
  --tick-ms MS             step the strategy every MS on the book as it stands, as the server-managed bot
                           (1000, on whole seconds; use with zero latencies), instead of on each event
  --levels N --depth N --churn PCT   synthetic depth: levels a side, top-level contracts, % of trades that redraw a level
  --rebate-bps N           maker rebate (default: the tape's, else the engine's 5), paid only out of taker fees
  --taker-fee-bps N        taker fee (default: the tape's, else the engine's 0)
  --rewards-pool-usdc N    daily LP rewards budget (default: the tape's, else the service's 1000)
  --book-move-fills        let rebuilt background orders trade with our quotes (off: they are post-only)
  --markets ID,ID          quote only these markets (the rest are replayed for the book and the rewards split)
  --start-sec T            the strategy starts at unix second T (default: with the data)
  --bots-ahead N           with --tick-ms 1000: the tape's server-managed bots (tape.json lp_bots) that the
                           runner steps ahead of ours each second, whose same-second quotes ours sees (default 0)
  --response FILE          a market-response model (npm run backtest -- fit-response): takers our quote
                           attracts when it betters the tape's touch, informed by the tape's own future mid
  --follow-makers          with --response (version 4): the tape's re-quoting makers follow the book our
                           quotes change (experimental: the book can drift far from the tape's, docs)
interval (a range for trading PnL and fills beside the run's own figures)
  --interval-level PCT     the interval's level, 50..99 (default 90)
  --block-sec S            bootstrap block length, a whole number of minutes in seconds (default 600)
  --resamples N            block-bootstrap resamples per draw (default 1000)
  --draws N                with --response: runs with the model's parameters drawn from their standard
                           errors and their own arrival stream, each bootstrapped (default ${DEFAULT_RESPONSE_DRAWS}; 0: the run only)
  --interval-calibration FILE   also a range from the backtest's own errors on calibration seeds: the run's
                           trading PnL plus, its fills times, the bounds in FILE (written by npm run fidelity --
                           --calibrate A..B --calibrate-intervals, as <out>/calibration/interval-calibration.json)
sweeps
  --sweep NAME=FROM..TO:STEP | NAME=V1,V2,...   repeatable (cartesian product); runs on worker threads
  --workers N              sweep workers (default: min(2, cores))
  --queue nats://HOST:PORT[,…]  run the sweep's combinations on a JetStream work queue instead
                           (npm run sim:worker on any machine runs them); the same table
  --heatmap FIGURE         the figure the sweep page's heatmap shows (default pnl): ${SWEEP_FIGURES.map((f) => figureName(f.key)).join(", ")}
output
  --out DIR                DuckDB file and HTML page (default ${DEFAULT_OUT}); a sweep writes sweep.html and runs/<run>/report.html
  --json                   stdout is one JSON object only (the summary goes to stderr); identical runs print
                           identical bytes
  --timings                with --json: add the wall-clock figures under "timings" (load, replay, interval,
                           wall ms, events/s)
  --no-html                skip the HTML page`

const VALUE_FLAGS = new Set([
  "--data", "--snapshots", "--orders", "--synthetic", "--preset", "--params", "--capital", "--set", "--seed", "--queue", "--queue-power",
  "--entry-latency-ms", "--entry-jitter-ms", "--feed-latency-ms", "--feed-jitter-ms", "--tick-ms", "--levels", "--depth", "--churn",
  "--rebate-bps", "--taker-fee-bps", "--rewards-pool-usdc", "--sweep", "--workers", "--heatmap", "--out", "--markets", "--start-sec", "--response", "--bots-ahead",
  "--interval-level", "--block-sec", "--resamples", "--draws", "--interval-calibration"
])
const BOOL_FLAGS = new Set(["--json", "--timings", "--no-html", "--help", "-h", "--book-move-fills", "--follow-makers"])

const int = (flag: string, text: string, lo: number, hi: number): number => {
  const v = Number(text.replaceAll("_", ""))
  if (!Number.isSafeInteger(v) || v < lo || v > hi) throw new BacktestInputError(`${flag}: expected an integer in ${lo}..${hi} (got "${text}")`)
  return v
}

/** Whole or decimal USDC (up to 6 decimals) → micro, exactly. */
export const usdcToMicro = (flag: string, text: string): number => {
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim())
  if (m === null) throw new BacktestInputError(`${flag}: expected an amount of USDC such as 1000 or 250.5 (got "${text}")`)
  const micro = Number(m[1]) * MICRO_PER_CONTRACT + Number((m[2] ?? "").padEnd(6, "0"))
  if (!Number.isSafeInteger(micro) || micro < MICRO_PER_CONTRACT) throw new BacktestInputError(`${flag}: must be at least 1 USDC`)
  return micro
}

export const readParamsFile = (path: string): { config: Pick<BacktestConfig, "strategy">; capitalMicro: number } => {
  let json: unknown
  try {
    json = JSON.parse(readFileSync(path, "utf8"))
  } catch (err) {
    throw new BacktestInputError(`params file ${path}: ${err instanceof Error ? err.message : String(err)}`)
  }
  const parsed = parseStrategySpec(json, "params")
  if (!parsed.ok) throw new BacktestInputError(`params file ${path}: ${parsed.field}: ${parsed.message}`)
  return { config: { strategy: { kind: "spec", spec: parsed.spec, params: parsed.params } }, capitalMicro: parsed.spec.capital_micro_usdc }
}

// One piece: the flag table read in order, each flag one or two lines (the same flags as USAGE above).
export const parseArgs = (argv: ReadonlyArray<string>): CliOptions => {
  const values = new Map<string, string[]>()
  const bools = new Set<string>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const eq = arg.indexOf("=")
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg
    if (BOOL_FLAGS.has(flag)) {
      bools.add(flag)
      continue
    }
    if (!VALUE_FLAGS.has(flag)) throw new BacktestInputError(`unknown argument "${arg}" (see --help)`)
    const value = eq > 0 && arg.startsWith("--") ? arg.slice(eq + 1) : argv[++i]
    if (value === undefined || value === "") throw new BacktestInputError(`${flag} needs a value`)
    values.set(flag, [...(values.get(flag) ?? []), value])
  }
  // --queue is two flags by its value: a nats:// URL is the sweep's work queue, anything else the queue-position model.
  const queueValues = values.get("--queue") ?? []
  const workQueues = queueValues.filter(isQueueUrl)
  if (workQueues.length > 1) throw new BacktestInputError("--queue nats://… given more than once")
  const models = queueValues.filter((v) => !isQueueUrl(v))
  if (models.length > 0) values.set("--queue", models)
  else values.delete("--queue")
  const one = (flag: string): string | undefined => {
    const v = values.get(flag)
    if (v !== undefined && v.length > 1 && flag !== "--set" && flag !== "--sweep") throw new BacktestInputError(`${flag} given more than once`)
    return v?.[0]
  }

  let config: BacktestConfig = DEFAULT_CONFIG
  const preset = one("--preset")
  const paramsPath = one("--params")
  if (preset !== undefined && paramsPath !== undefined) throw new BacktestInputError("--preset and --params are exclusive")
  if (preset !== undefined) {
    if (!isPresetName(preset)) throw new BacktestInputError(`--preset: unknown preset "${preset}"; known: ${PRESET_NAMES.join(", ")}`)
    config = { ...config, strategy: { kind: "preset", preset } }
  }
  if (paramsPath !== undefined) {
    const file = readParamsFile(paramsPath)
    config = { ...config, ...file.config, capitalMicro: file.capitalMicro }
  }
  const capital = one("--capital")
  if (capital !== undefined) config = { ...config, capitalMicro: usdcToMicro("--capital", capital) }
  const seed = one("--seed")
  if (seed !== undefined) config = { ...config, seed }
  const queue = one("--queue")
  if (queue !== undefined) {
    if (!(QUEUE_MODELS as ReadonlyArray<string>).includes(queue)) throw new BacktestInputError(`--queue: unknown model "${queue}"; known: ${QUEUE_MODELS.join(", ")}`)
    config = { ...config, queueModel: queue as QueueModelName }
  }
  const num = (flag: string, lo: number, hi: number, set: (v: number) => void): void => {
    const text = one(flag)
    if (text !== undefined) set(int(flag, text, lo, hi))
  }
  num("--queue-power", 1, 8, (v) => (config = { ...config, queuePower: v }))
  num("--entry-latency-ms", 0, 3_600_000, (v) => (config = { ...config, entryLatency: { ...config.entryLatency, baseMs: v } }))
  num("--entry-jitter-ms", 0, 3_600_000, (v) => (config = { ...config, entryLatency: { ...config.entryLatency, jitterMs: v } }))
  num("--feed-latency-ms", 0, 3_600_000, (v) => (config = { ...config, feedLatency: { ...config.feedLatency, baseMs: v } }))
  num("--feed-jitter-ms", 0, 3_600_000, (v) => (config = { ...config, feedLatency: { ...config.feedLatency, jitterMs: v } }))
  num("--tick-ms", 0, 3_600_000, (v) => (config = { ...config, feedLatency: { ...config.feedLatency, tickMs: v } }))
  num("--levels", 1, 50, (v) => (config = { ...config, bgLevels: v }))
  num("--depth", 1, 100_000_000, (v) => (config = { ...config, bgDepth: v }))
  num("--churn", 0, 100, (v) => (config = { ...config, bgChurnPct: v }))
  num("--rebate-bps", 0, 1000, (v) => (config = { ...config, makerRebateBps: v, provenance: { ...config.provenance, fees: "given" } }))
  num("--taker-fee-bps", 0, 1000, (v) => (config = { ...config, takerFeeBps: v, provenance: { ...config.provenance, fees: "given" } }))
  num("--start-sec", 0, 1e11, (v) => (config = { ...config, startSec: v }))
  num("--bots-ahead", 0, 1_000_000, (v) => (config = { ...config, botsAheadInPass: v }))
  const quote = one("--markets")
  if (quote !== undefined) config = { ...config, quoteMarkets: quote.split(",").map((m) => m.trim()).filter((m) => m !== "") }
  if (bools.has("--book-move-fills")) config = { ...config, bookMoveFills: true }
  const responsePath = one("--response")
  if (responsePath !== undefined) config = { ...config, response: followingOnly(readResponseModel(responsePath), bools.has("--follow-makers")) }
  if (bools.has("--follow-makers") && (config.response === null || config.response.follow === null)) {
    throw new BacktestInputError(`--follow-makers: give --response with a version 4 model that fitted re-quoting makers (npm run backtest -- fit-response on tapes with order events)`)
  }
  num("--rewards-pool-usdc", 0, 1_000_000_000, (v) => (config = { ...config, rewards: { ...config.rewards, dailyBudgetMicro: v * MICRO_PER_CONTRACT }, provenance: { ...config.provenance, rewards: "given" } }))
  const sets: Record<string, number> = {}
  for (const s of values.get("--set") ?? []) {
    const { name, value } = parseSet(s)
    sets[name] = value
  }
  config = applyKnobs(config, sets)

  let interval: IntervalSpec = { ...DEFAULT_INTERVAL, draws: config.response === null ? 0 : DEFAULT_RESPONSE_DRAWS }
  num("--interval-level", 50, 99, (v) => (interval = { ...interval, level: v / 100 }))
  num("--resamples", 100, 1_000_000, (v) => (interval = { ...interval, resamples: v }))
  num("--block-sec", 60, 86_400, (v) => {
    if (v % config.sampleSec !== 0) throw new BacktestInputError(`--block-sec: ${v} is not a whole number of ${config.sampleSec}-s samples`)
    interval = { ...interval, blockSec: v }
  })
  num("--draws", 0, 10_000, (v) => {
    if (config.response === null) throw new BacktestInputError("--draws: the draws are of the market-response model; give --response")
    interval = { ...interval, draws: v }
  })

  const calibrationPath = one("--interval-calibration")
  const intervalCalibration = calibrationPath === undefined ? null : { path: calibrationPath, calibration: readIntervalCalibration(calibrationPath) }

  const sweeps = (values.get("--sweep") ?? []).map(parseSweep)
  if (intervalCalibration !== null && sweeps.length > 0) throw new BacktestInputError("--interval-calibration: a sweep's runs have no interval; give it to a single run")
  const names = sweeps.map((s) => s.name)
  const dup = names.find((n, i) => names.indexOf(n) !== i)
  if (dup !== undefined) throw new BacktestInputError(`--sweep: parameter "${dup}" swept twice`)
  const workQueue = workQueues[0] ?? null
  if (workQueue !== null && sweeps.length === 0) throw new BacktestInputError("--queue nats://…: the work queue runs sweeps; give --sweep")

  const syntheticText = one("--synthetic")
  const synthetic = syntheticText === undefined ? null : int("--synthetic", syntheticText, 1, 100_000_000)
  const dataPath = one("--data")
  if (synthetic !== null && dataPath !== undefined) throw new BacktestInputError("--data and --synthetic are exclusive")
  const snapshots = one("--snapshots") ?? null
  const ordersText = one("--orders") ?? "flow"
  if (!(ORDERS_MODES as ReadonlyArray<string>).includes(ordersText)) throw new BacktestInputError(`--orders: expected one of ${ORDERS_MODES.join(", ")}, got "${ordersText}"`)
  const ordersMode = ordersText as OrdersMode
  if (synthetic !== null && snapshots !== null) throw new BacktestInputError("--snapshots needs --data (synthetic flow is trades only)")
  let workers = Math.max(1, Math.min(2, availableParallelism()))
  num("--workers", 1, 64, (v) => (workers = v))
  const heatmapText = one("--heatmap") ?? "pnl"
  const heatmap = resolveFigure(heatmapText)
  if (heatmap === null) throw new BacktestInputError(`--heatmap: unknown figure "${heatmapText}"; known: ${SWEEP_FIGURES.map((f) => figureName(f.key)).join(", ")}`)
  if (bools.has("--timings") && !bools.has("--json")) throw new BacktestInputError("--timings adds the wall-clock figures to --json's object; give --json (the console prints them anyway)")
  return {
    data: synthetic !== null ? null : (dataPath ?? DEFAULT_DATA),
    responsePath: responsePath ?? null,
    intervalCalibration,
    snapshots,
    ordersMode,
    synthetic,
    config,
    interval,
    sweeps,
    workers,
    workQueue,
    heatmap,
    out: one("--out") ?? DEFAULT_OUT,
    json: bools.has("--json"),
    timings: bools.has("--timings"),
    html: !bools.has("--no-html"),
    help: bools.has("--help") || bools.has("-h")
  }
}
