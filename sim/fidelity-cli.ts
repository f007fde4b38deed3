// `npm run fidelity -- [scenario.json] [--seeds 1..6] [--calibrate 201..206] [--calibrate-intervals] [--noise-floor AGENT] [--follow-makers] [--response-horizon S|likelihood] [--draws N] [--interval-level PCT] [--block-sec S] [--resamples N] [--duration 4h] [--snapshot-interval 0 (every change, default) | 1s | ...] [--workers N] [--out DIR] [--json]`
// How well a backtest predicts what the bot really did (sim/fidelity/fidelity.ts, docs/backtesting.md "Fidelity").
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import { type NoiseFloor, noiseFloorAgentError, noiseFloorLines, noiseFloorOf } from "./fidelity/noise-floor.ts"
import { agentNames } from "./scenario/run.ts"
import { type BotRun, HEADLINE, LATENCY_MODELS, QUEUE_MODELS, replayDirOf, tapeDirOf } from "./fidelity/fidelity.ts"
import { botAgents, type Realised } from "./fidelity/realised.ts"
import { type FidelitySummary, summarise } from "./fidelity/summary.ts"
import type { FidelityJob } from "./fidelity/worker.ts"
import { pool } from "./fidelity/pool.ts"
import { loadScenario, ScenarioError } from "./scenario/scenario.ts"
import { parseSeeds } from "./sweep/sweep.ts"
import { type Calibration, calibrationDirOf, calibrationLines, calibrationTapeDirOf, fitCalibration, overlapError } from "./fidelity/calibrate.ts"
import { type CalibratedFigures, calibratedLines, calibratedRangeText, type ErrorRun, type IntervalCalibration, intervalCalibrationFileOf, intervalCalibrationOf, withCalibratedIntervals } from "./fidelity/conformal.ts"
import { followingOnly, type ResponseModel } from "./backtest/response/model.ts"
import { coverageLines } from "./fidelity/coverage.ts"
import { biasLines } from "./fidelity/bias.ts"
import { marksApartText } from "./fidelity/marks.ts"
import { attributionText } from "./backtest/attribution.ts"
import { DEFAULT_INTERVAL, type IntervalSpec } from "./backtest/interval.ts"
import { ARRIVAL_HORIZON_SEC, type HorizonRule } from "./backtest/response/edge.ts"
import { BacktestInputError } from "./backtest/dataset.ts"
import { HORIZON_EXPECTED, parseHorizonRule } from "./backtest/response/fit-cli.ts"
import { ratioText, signed } from "./fidelity/format.ts"

const USAGE = `usage: npm run fidelity -- [scenario.json (default scenarios/liquidity-midnight.json)] [--seeds 1..6] [--calibrate 201..206 (fit the market-response model on these seeds' live tapes)] [--calibrate-intervals (with --calibrate: backtest the calibration seeds' bot-runs too and give each judged run a range from their errors; 90% needs 7 seeds)] [--noise-floor AGENT (e.g. noise-2-11: run each live world once more without it and compare the bots' realised outcomes by the same per-run figures)] [--follow-makers (with --calibrate: the tape's re-quoting makers follow the book, experimental)] [--response-horizon S|likelihood (with --calibrate: the response model's arrival horizon, default ${ARRIVAL_HORIZON_SEC} s)] [--draws N (with --calibrate: response-model draws per headline interval, default 10)] [--interval-level PCT (default 90)] [--block-sec S (default 600)] [--resamples N (default 1000)] [--duration 4h] [--snapshot-interval 0 (every change, default) | 1s | ...] [--workers N] [--out DIR] [--json]`
const DURATION = /^(\d+)(s|m|h|d)$/
const UNIT: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

interface Args { file: string; seeds: number[]; calibrate: number[] | null; calibrateIntervals: boolean; noiseFloor: string | null; followMakers: boolean; responseHorizon: HorizonRule | null; draws: number | null; interval: IntervalSpec; durationSec?: number; snapshotSec: number; workers: number; out: string; json: boolean }

/** Response-model draws per headline interval with --calibrate: 10 more backtests per bot-run (about 60 % more backtesting than the 17 it has). */
const FIDELITY_DRAWS = 10

const parseArgs = (argv: ReadonlyArray<string>): Args => {
  const out: Args = { file: "scenarios/liquidity-midnight.json", seeds: [1, 2, 3, 4, 5, 6], calibrate: null, calibrateIntervals: false, noiseFloor: null, followMakers: false, responseHorizon: null, draws: null, interval: DEFAULT_INTERVAL, snapshotSec: 0, workers: Math.max(1, Math.min(2, availableParallelism())), out: "out/fidelity", json: false }
  const dur = (flag: string, v: string): number => {
    const m = DURATION.exec(v)
    if (m === null) throw new Error(`${flag} ${v}: expected e.g. 1s, 30m, 4h`)
    return Number(m[1]) * UNIT[m[2]!]!
  }
  const whole = (flag: string, v: string, lo: number, hi: number): number => {
    const n = Number(v)
    if (!Number.isSafeInteger(n) || n < lo || n > hi) throw new Error(`${flag} ${v}: expected an integer in ${lo}..${hi}`)
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const value = (): string => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${a} needs a value`)
      return v
    }
    if (a === "--json") out.json = true
    else if (a === "--seeds") out.seeds = parseSeeds(value())
    else if (a === "--calibrate") out.calibrate = parseSeeds(value())
    else if (a === "--calibrate-intervals") out.calibrateIntervals = true
    else if (a === "--noise-floor") out.noiseFloor = value()
    else if (a === "--follow-makers") out.followMakers = true
    else if (a === "--response-horizon") {
      const v = value()
      const rule = parseHorizonRule(v)
      if (rule === null) throw new Error(`--response-horizon ${v}: ${HORIZON_EXPECTED}`)
      out.responseHorizon = rule
    }
    else if (a === "--duration") out.durationSec = dur(a, value())
    else if (a === "--draws") out.draws = whole(a, value(), 0, 10_000)
    else if (a === "--interval-level") out.interval = { ...out.interval, level: whole(a, value(), 50, 99) / 100 }
    else if (a === "--resamples") out.interval = { ...out.interval, resamples: whole(a, value(), 100, 1_000_000) }
    else if (a === "--block-sec") {
      const v = whole(a, value(), 60, 86_400)
      if (v % 60 !== 0) throw new Error(`--block-sec ${v}: expected a whole number of minutes in seconds (the backtest samples once a minute)`)
      out.interval = { ...out.interval, blockSec: v }
    }
    else if (a === "--snapshot-interval") {
      const v = value()
      out.snapshotSec = v === "0" ? 0 : dur(a, v)
    }
    else if (a === "--workers") out.workers = Math.max(1, Number(value()) | 0)
    else if (a === "--out") out.out = value()
    else if (a.startsWith("--")) throw new Error(`unknown option ${a}`)
    else out.file = a
  }
  if (out.draws !== null && out.calibrate === null) throw new Error("--draws: the draws are of the market-response model; give --calibrate")
  if (out.responseHorizon !== null && out.calibrate === null) throw new Error("--response-horizon: the horizon is the market-response model's; give --calibrate")
  if (out.followMakers && out.calibrate === null) throw new Error("--follow-makers: the slope comes from the market-response model; give --calibrate")
  if (out.calibrateIntervals && (out.calibrate === null || out.calibrate.length < 2)) {
    throw new Error("--calibrate-intervals: the intervals are calibrated on the calibration seeds' runs, each backtested with a model fitted on the others; give --calibrate with at least 2 seeds (90% needs 7)")
  }
  out.interval = { ...out.interval, draws: out.calibrate === null ? 0 : (out.draws ?? FIDELITY_DRAWS) }
  return out
}

const usdc = (micro: number): string => (micro / 1e6).toFixed(2)

const share = (x: { in_band: number; rated: number; excluded_zero_zero: number }): string =>
  `${x.in_band}/${x.rated}${x.excluded_zero_zero > 0 ? ` (${x.excluded_zero_zero} at 0/0 left out)` : ""}`

/** The headline model's per-run figures (sim/fidelity/figures.ts), under the medians. */
const perRunLines = (s: FidelitySummary): string[] => {
  const b = s.per_run_in_band.counts
  const p = s.pooled_ratio
  const g = s.sign_agreement
  const gc = s.sign_agreement_at_counterfactual_marks
  const sums = s.pooled_sums
  const [lo, hi] = s.per_run_in_band.band
  const quantiles = (e: FidelitySummary["pnl_error_usdc"]): string => `q10 ${signed(e.q10)}, q50 ${signed(e.q50)}, q90 ${signed(e.q90)} (min ${signed(e.min)}, max ${signed(e.max)})`
  const d = s.reward_days_one_side
  return [
    "per bot-run (headline model; realised PnL at the live market's final marks, and at the counterfactual's):",
    `  ratio in ${lo}–${hi}: fills ${share(b.fills)} runs, contracts ${share(b.filled_contracts)} runs`,
    `  pooled Σ backtest ÷ Σ realised: fills ${ratioText(p.fills)}, contracts ${ratioText(p.filled_contracts)}, rewards ${ratioText(p.rewards)}, rebates ${ratioText(p.rebates)} (${sums.backtest.rebates_usdc.toFixed(2)} vs ${sums.realised.rebates_usdc.toFixed(2)} USDC realised), trading PnL ${ratioText(p.trading_pnl)} (${sums.backtest.trading_pnl_usdc.toFixed(2)} vs ${sums.realised.trading_pnl_usdc.toFixed(2)} USDC realised)`,
    `  pooled trading PnL at the counterfactual's marks: ${ratioText(p.trading_pnl_at_counterfactual_marks)} (${sums.backtest.trading_pnl_usdc.toFixed(2)} vs ${sums.realised_trading_pnl_at_counterfactual_marks_usdc.toFixed(2)} USDC realised)`,
    `  PnL error backtest − realised (USDC): ${quantiles(s.pnl_error_usdc)}; within 10 USDC ${s.pnl_error_usdc.within_10_usdc.runs}/${s.pnl_error_usdc.runs} runs`,
    `  PnL error at the counterfactual's marks (USDC): ${quantiles(s.pnl_error_usdc_at_counterfactual_marks)}`,
    `  PnL sign agrees: ${g.agree}/${g.rated} runs${g.excluded_both_zero > 0 ? ` (${g.excluded_both_zero} with both at 0 left out)` : ""}; at the counterfactual's marks ${gc.agree}/${gc.rated}; PnL correlation backtest vs realised over the runs ${s.pnl_correlation === null ? "-" : s.pnl_correlation.toFixed(2)}`,
    `  final marks apart, the live market's against the counterfactual's (each the last mid of the others' book): ${marksApartText(s.final_marks_apart_bps)}`,
    ...biasLines(s.bias, "  "),
    ...attributionLines(s.pnl_attribution),
    ...coverageLines(s.coverage, s.runs),
    ...(d.runs > 0 ? [`  WARNING reward days paid by one side only (not compared): ${d.realised_only} by the service only, ${d.backtest_only} by the backtest only, in ${d.runs} run(s)`] : [])
  ]
}

/** The pooled trading PnL split (USDC): where the backtest's PnL differs from the realised. */
const attributionLines = (a: FidelitySummary["pnl_attribution"]): string[] =>
  a.realised === null || a.backtest === null ? [] : [
    "  trading PnL split, Σ over runs (USDC; edge at the fills against the mid before them, inventory after them to the final marks):",
    `    realised  ${attributionText(a.realised)}`,
    `    backtest  ${attributionText(a.backtest)}`,
    ...(a.replay === null ? [] : [`    replay    ${attributionText(a.replay)}`])
  ]

/** "<" or ">" when the realised value fell below or above the range (PnL in USDC, compared to the micro). */
const mark = (value: number, range: readonly [number, number]): string => (value < range[0] - 5e-7 ? " <" : value > range[1] + 5e-7 ? " >" : "")

const table = (s: FidelitySummary & CalibratedFigures & { noise_floor: NoiseFloor | null }, calibration: Calibration | null, followMakers: boolean): string => {
  const lines: string[] = []
  const h = (r: BotRun) => r.backtests.find((b) => b.queue === HEADLINE.queue && b.latency === HEADLINE.latency)!
  lines.push(`fidelity of ${s.scenario}: ${s.runs.length} bot-runs over seeds ${s.seeds.join(",")}, book snapshots ${s.snapshot_interval_sec === 0 ? "at every change" : `every ${s.snapshot_interval_sec} s`}; headline model queue ${s.headline.queue}, latency ${s.headline.latency}`)
  lines.push("")
  const header = ["seed", "bot", "fills r/b", "contracts r/b", "rewards r/b (USDC)", "rebates r/b (USDC)", "trading PnL r/b (USDC)", "r at cf marks", "book-move fills", "response fills", "queue decreases", "replay fills/contracts", "PnL range (USDC)", "fills range", ...(s.interval_calibration === null ? [] : ["calibrated PnL range"])]
  const rows = s.runs.map((r) => {
    const b = h(r)
    const oneSide = r.rewardDaysOneSide.realisedOnly.length + r.rewardDaysOneSide.backtestOnly.length > 0 ? "!" : ""
    return [String(r.seed), r.agent, `${r.realised.fills}/${b.fills}`, `${r.realised.filledContracts}/${b.filledContracts}`, `${usdc(r.realised.rewardsMicro)}/${usdc(b.rewardsMicro)}${oneSide}`,
      `${usdc(r.realised.rebatesMicro)}/${usdc(b.rebatesMicro)}`, `${usdc(r.realised.tradingPnlMicro)}/${usdc(b.tradingPnlMicro)}`, usdc(r.realisedTradingPnlAtCounterfactualMarksMicro),
      String(b.fillsFromBookMoves), String(b.fillsFromResponse ?? 0), String(b.queueDecreasesAtOurLevel),
      r.replay === null ? "-" : `${r.replay.fills}/${r.replay.filledContracts}`,
      r.interval == null ? "-" : `${r.interval.pnl_usdc[0].toFixed(2)}…${r.interval.pnl_usdc[1].toFixed(2)}${mark(r.realised.tradingPnlMicro / 1e6, r.interval.pnl_usdc)}`,
      r.interval == null ? "-" : `${r.interval.fills[0]}…${r.interval.fills[1]}${mark(r.realised.fills, r.interval.fills)}`,
      ...(s.interval_calibration === null ? [] : [calibratedRangeText(r)])]
  })
  const widths = header.map((x, c) => Math.max(x.length, ...rows.map((row) => row[c]!.length)))
  const fmt = (row: string[]): string => row.map((x, c) => x.padStart(widths[c]!)).join("  ")
  lines.push(fmt(header), ...rows.map(fmt))
  lines.push("(trading PnL: realised at the live market's final marks / the backtest at its own; \"r at cf marks\": realised at the counterfactual's final marks; \"!\": a reward day only one side paid, not compared; ranges: the headline backtest's interval, \"<\" / \">\" when the realised figure fell below / above it)", "")
  lines.push("medians of backtest ÷ realised (runs with 0 on both sides left out), and backtest − realised trading PnL (USDC per bot-run; realised at the live market's marks, and at the counterfactual's):")
  const mh = ["queue", "latency", "fills", "contracts", "rewards", "rebates", "PnL diff", "PnL diff cf marks"]
  const pnl = (x: number | null): string => (x === null ? "-" : x.toFixed(2))
  const mrows = s.by_model.map((m) => [m.queue, m.latency, ratioText(m.fills), ratioText(m.filled_contracts), ratioText(m.rewards), ratioText(m.rebates), pnl(m.pnl_diff_usdc), pnl(m.pnl_diff_usdc_at_counterfactual_marks)])
  const mw = mh.map((x, c) => Math.max(x.length, ...mrows.map((row) => row[c]!.length)))
  const mf = (row: string[]): string => row.map((x, c) => x.padStart(mw[c]!)).join("  ")
  lines.push(mf(mh), ...mrows.map(mf))
  const x = s.median_excluded_zero_zero
  lines.push(`left out of the headline medians as 0/0 (no ratio): fills ${x.fills}, contracts ${x.filled_contracts}, rewards ${x.rewards}, rebates ${x.rebates} of ${s.runs.length} runs`, "")
  if (s.replay !== null) {
    const r = s.replay
    lines.push(`replaying the live tape without the bot (headline model; the backtester's own error, no counterfactual): fills ${ratioText(r.fills)}, contracts ${ratioText(r.filled_contracts)}, rewards ${ratioText(r.rewards)}, rebates ${ratioText(r.rebates)}, PnL diff ${r.pnl_diff_usdc?.toFixed(2) ?? "-"} USDC`, "")
  }
  lines.push(...perRunLines(s), ...calibratedLines(s), "", ...noiseFloorLines(s.noise_floor), ...(s.noise_floor === null ? [] : [""]), ...calibrationLines(calibration, followMakers), "")
  const inRange = (x: number | null): boolean => x !== null && x >= s.target.ratio[0] && x <= s.target.ratio[1]
  const ok = inRange(s.median_ratio.fills) && inRange(s.median_ratio.filled_contracts) && inRange(s.median_ratio.rewards) && s.median_pnl_diff_usdc !== null && Math.abs(s.median_pnl_diff_usdc) <= s.target.pnl_diff_usdc
  lines.push(`headline: fills ${ratioText(s.median_ratio.fills)}, contracts ${ratioText(s.median_ratio.filled_contracts)}, rewards ${ratioText(s.median_ratio.rewards)}, rebates ${ratioText(s.median_ratio.rebates)}, PnL diff ${s.median_pnl_diff_usdc?.toFixed(2) ?? "-"} USDC at the live market's marks (${s.median_pnl_diff_usdc_at_counterfactual_marks?.toFixed(2) ?? "-"} at the counterfactual's) — target ratios 0.8–1.25 and |PnL diff| ≤ 10: ${ok ? "met" : "NOT met"}`)
  return lines.join("\n")
}

/** The fitted model as the backtests apply it: its makers follow the book only with --follow-makers. */
const applied = (args: Args, m: ResponseModel | null): ResponseModel | null => (m === null ? null : followingOnly(m, args.followMakers))

/** Phase 0 (with --calibrate): the calibration seeds' live worlds and tapes, then the fit on them alone. */
const calibrate = async (args: Args, log: (line: string) => void): Promise<{ calibration: Calibration; realised: Map<number, Realised[]> }> => {
  const jobs: FidelityJob[] = args.calibrate!.map((seed) => ({ kind: "calibrate", seed, dir: calibrationDirOf(args.out, seed) }) as const)
  const realised = new Map<number, Realised[]>()
  await pool(args, jobs, (job, result) => {
    realised.set(job.seed, (result as { realised: Realised[] }).realised)
    log(`fidelity: ${realised.size}/${jobs.length} calibration worlds (seed ${job.seed})`)
  })
  const c = await fitCalibration(args.out, args.calibrate!, args.responseHorizon ?? ARRIVAL_HORIZON_SEC)
  log(`fidelity: response model fitted on seeds ${c.seeds.join(",")}: ${c.model.arrival.arrivals} takers, arrival by edge against the mid ${c.model.edge?.horizon_sec ?? "-"} s later`)
  return { calibration: c, realised }
}

/**
 * Phase 0b (--calibrate-intervals): each calibration seed's worlds without each bot, and the
 * response model fitted without that seed; then each calibration bot-run backtested as a judged
 * run's headline is, and the errors written to `<out>/calibration/interval-calibration.json`.
 */
const calibrateIntervals = async (args: Args, bots: ReadonlyArray<string>, realised: Map<number, Realised[]>, log: (line: string) => void): Promise<IntervalCalibration> => {
  const seeds = args.calibrate!
  const jobs: FidelityJob[] = seeds.flatMap((seed) => [
    { kind: "fit-leaving-out", seed, out: args.out, seeds, horizon: args.responseHorizon ?? ARRIVAL_HORIZON_SEC } as const,
    ...bots.map((agent) => ({ kind: "without", seed, agent, dir: calibrationTapeDirOf(args.out, seed, agent) }) as const)
  ])
  const models = new Map<number, ResponseModel>()
  let done = 0
  await pool(args, jobs, (job, result) => {
    if (job.kind === "fit-leaving-out") models.set(job.seed, result as ResponseModel)
    log(`fidelity: ${++done}/${jobs.length} calibration pieces (${job.kind === "without" ? `seed ${job.seed} without ${job.agent}` : `response model without seed ${job.seed}`})`)
  })
  const btJobs: FidelityJob[] = seeds.flatMap((seed) => (realised.get(seed) ?? []).map((r) => ({
    kind: "calibration-backtest", seed, realised: r, dir: calibrationTapeDirOf(args.out, seed, r.agent), response: applied(args, models.get(seed) ?? null)
  }) as const))
  const errors: ErrorRun[] = []
  await pool(args, btJobs, (_job, result) => {
    errors.push(result as ErrorRun)
    log(`fidelity: ${errors.length}/${btJobs.length} calibration backtests (headline model)`)
  })
  errors.sort((a, b) => a.seed - b.seed || a.agent.localeCompare(b.agent))
  const c = intervalCalibrationOf(errors, args.interval.level, seeds, HEADLINE)
  writeFileSync(intervalCalibrationFileOf(args.out), `${JSON.stringify(c, null, 2)}\n`)
  return c
}

/** The response model's arrival horizon must leave the calibration worlds a window to fit on (each tape read up to its end − the horizon). */
const horizonWindowError = (args: Args, worldSec: number): string | null => {
  if (args.calibrate === null) return null
  const h = args.responseHorizon ?? ARRIVAL_HORIZON_SEC
  if (h === "likelihood" || h < worldSec) return null
  return `the response model's arrival horizon (${h} s${args.responseHorizon === null ? ", the default" : ""}) leaves no window to fit on in ${worldSec}-second calibration worlds (each tape is read up to its end − the horizon): give --response-horizon below ${worldSec}, e.g. ${Math.max(1, Math.floor(worldSec / 6))}, or a longer --duration`
}

// One piece: the CLI's steps in order (parse, load, run the seeds, print), each a few lines with its exit code.
const main = async (): Promise<number> => {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  let args: Args
  try {
    args = parseArgs(process.argv.slice(2))
  } catch (err) {
    process.stderr.write(`fidelity: ${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  // One line, no usage: the command was well formed, the seeds were not kept apart.
  const overlap = args.calibrate === null ? null : overlapError(args.seeds, args.calibrate)
  if (overlap !== null) {
    process.stderr.write(`fidelity: ${overlap}\n`)
    return 2
  }
  let scenario
  try {
    scenario = loadScenario(args.file)
  } catch (err) {
    if (err instanceof ScenarioError) {
      process.stderr.write(`fidelity: ${err.message}\n`)
      return 2
    }
    throw err
  }
  const bots = botAgents(scenario)
  if (bots.length === 0) {
    process.stderr.write(`fidelity: ${args.file} has no lp_bot agents\n`)
    return 2
  }
  const floorError = args.noiseFloor === null ? null : noiseFloorAgentError(agentNames(scenario), args.noiseFloor)
  if (floorError !== null) {
    process.stderr.write(`fidelity: ${floorError}\n`)
    return 2
  }
  const windowError = horizonWindowError(args, args.durationSec ?? scenario.duration)
  if (windowError !== null) {
    process.stderr.write(`fidelity: ${windowError}\n`)
    return 2
  }
  const log = (line: string): void => void process.stderr.write(`${line}\n`)
  let cal: Awaited<ReturnType<typeof calibrate>> | null = null
  let intervalCalibration: IntervalCalibration | null = null
  try {
    cal = args.calibrate === null ? null : await calibrate(args, log)
    intervalCalibration = cal === null || !args.calibrateIntervals ? null : await calibrateIntervals(args, bots, cal.realised, log)
  } catch (err) {
    // A fit the calibration tapes cannot give (no two-sided book a horizon apart): one line, as fit-response says it.
    if (!(err instanceof BacktestInputError)) throw err
    process.stderr.write(`fidelity: ${err.message}\n`)
    return 2
  }
  const calibration = cal?.calibration ?? null
  // Phase 1: the live worlds and the counterfactual tapes, on every worker.
  const realised = new Map<number, Realised[]>()
  const tapes = new Map<string, { dir: string; trades: number; snapshots: number }>()
  const simJobs: FidelityJob[] = args.seeds.flatMap((seed) => [
    { kind: "live", seed, out: args.out } as const,
    ...bots.map((agent) => ({ kind: "without", seed, agent, dir: tapeDirOf(args.out, seed, agent) }) as const),
    ...(args.noiseFloor === null ? [] : [{ kind: "perturbed", seed, without: args.noiseFloor } as const])
  ])
  const perturbed = new Map<number, Realised[]>()
  let done = 0
  await pool(args, simJobs, (job, result) => {
    done++
    if (job.kind === "live") realised.set(job.seed, result as Realised[])
    else if (job.kind === "without") tapes.set(`${job.seed}/${job.agent}`, result as { dir: string; trades: number; snapshots: number })
    else if (job.kind === "perturbed") perturbed.set(job.seed, result as Realised[])
    log(`fidelity: ${done}/${simJobs.length} worlds (${job.kind} seed ${job.seed}${job.kind === "without" ? ` without ${job.agent}` : job.kind === "perturbed" ? ` without ${job.without}` : ""})`)
  })
  // Phase 2: each bot that started, backtested on its counterfactual tape.
  const btJobs: FidelityJob[] = []
  for (const seed of args.seeds) {
    for (const r of realised.get(seed) ?? []) {
      const tape = tapes.get(`${seed}/${r.agent}`)
      if (tape !== undefined) btJobs.push({ kind: "backtest", seed, realised: r, tape, replayDir: replayDirOf(args.out, seed, r.agent), response: applied(args, calibration?.model ?? null), interval: args.interval })
    }
  }
  const runs: BotRun[] = []
  await pool(args, btJobs, (_job, result) => {
    runs.push(result as BotRun)
    log(`fidelity: ${runs.length}/${btJobs.length} backtests (${QUEUE_MODELS.length} queue × ${LATENCY_MODELS.length} latency models each)`)
  })
  runs.sort((a, b) => a.seed - b.seed || a.agent.localeCompare(b.agent))
  const noiseFloor = args.noiseFloor === null ? null : noiseFloorOf(runs, perturbed, args.noiseFloor)
  const s = withCalibratedIntervals({ ...summarise(scenario.name, args.seeds, args.snapshotSec, runs), calibration: calibration === null ? null : { ...calibration, follow_makers: args.followMakers }, noise_floor: noiseFloor }, intervalCalibration)
  mkdirSync(args.out, { recursive: true })
  writeFileSync(join(args.out, "fidelity.json"), `${JSON.stringify(s, null, 2)}\n`)
  writeFileSync(join(args.out, "fidelity.txt"), `${table(s, calibration, args.followMakers)}\n`)
  if (args.json) process.stdout.write(`${JSON.stringify(s)}\n`)
  else process.stdout.write(`${table(s, calibration, args.followMakers)}\nwrote ${join(args.out, "fidelity.json")} and fidelity.txt\n`)
  return 0
}

process.exitCode = await main()
