// The simulator's own noise floor for per-run figures (docs/backtesting.md "The noise floor"):
// `npm run fidelity -- --noise-floor noise-2-11` runs each judged seed's live world once more with
// one agent left out (one noise trader of twelve: a small change to the flow, which no backtest
// input would ever record) and compares every bot's realised outcome there with its realised
// outcome in the live world, by the per-run figures the backtest is judged by. Two live worlds
// that differ by one small trader are as close as a counterfactual can come to the world it
// stands for, so no backtest should be expected to agree with the realised outcome per run more
// often than they agree with each other.
import type { JournalRecord } from "../../src/service/commands.ts"
import { runScenario } from "../scenario/run.ts"
import type { Scenario } from "../scenario/scenario.ts"
import type { BotRun, Side } from "./fidelity.ts"
import { botAgents, type Realised, realisedOf, realisedTradingPnlAt, userOfAgent } from "./realised.ts"
import { type BiasFigures, biasFigures, biasLines } from "./bias.ts"
import { type PerRunFigures, perRunFigures } from "./figures.ts"
import { type MarksApart, marksApart, marksApartText } from "./marks.ts"
import { ratioText, signed } from "./format.ts"

/** The live world of `seed` once more without `without`: every bot's realised outcome there. */
export const runPerturbed = async (scenario: Scenario, seed: number, without: string, durationSec?: number): Promise<Realised[]> => {
  const summary = await runScenario(scenario, { seed, expectations: false, without: [without], ...(durationSec === undefined ? {} : { durationSec }) })
  const bots = botAgents(scenario).map((agent) => ({ agent, user: userOfAgent(seed, agent) }))
  return realisedOf(summary.records as ReadonlyArray<JournalRecord>, bots)
}

/** The agent a noise floor may leave out: any agent of the scenario but an LP bot (each bot is a judged run). */
export const noiseFloorAgentError = (agents: ReadonlyArray<string>, name: string): string | null =>
  !agents.includes(name)
    ? `--noise-floor ${name}: no such agent (agents are named <kind>-<group>-<index>: ${agents.filter((a) => !a.startsWith("lp_bot-")).slice(0, 3).join(", ")}, …)`
    : name.startsWith("lp_bot-")
      ? `--noise-floor ${name}: an LP bot is a judged run; leave out another agent (a noise trader: a small change to the flow)`
      : null

/** A realised outcome as a side of the comparison, over the reward days the judged run compares, at its own world's final marks. */
const sideOf = (r: Realised, rewardDays: ReadonlyArray<number>): Side => ({
  fills: r.fills,
  filledContracts: r.filledContracts,
  rewardsMicro: rewardDays.reduce((s, d) => s + (r.rewardsByDay[String(d)] ?? 0), 0),
  rebatesMicro: r.rebatesMicro,
  tradingPnlMicro: realisedTradingPnlAt(r, new Map(Object.entries(r.liveMarksBps)))
})

export interface NoiseFloor {
  /** The agent left out of the second live world. */
  readonly without: string
  /** Bot-runs compared (a bot that did not start in both worlds is left out). */
  readonly runs: number
  /** The per-run figures with "backtest" read as the second live world: how often two live worlds agree run by run. */
  readonly figures: Pick<PerRunFigures, "per_run_in_band" | "pooled_ratio" | "pooled_sums" | "pnl_error_usdc" | "sign_agreement" | "pnl_correlation"> & {
    /** Which differences between the two worlds are systematic (removing a trader removes flow) and which their noise. */
    readonly bias: BiasFigures
    /** How far the two live worlds' final marks stand apart, per bot-run market. */
    readonly final_marks_apart_bps: MarksApart
  }
}

/** The judged runs' realised outcomes against the same bots' in the perturbed live worlds. */
export const noiseFloorOf = (runs: ReadonlyArray<BotRun>, perturbed: ReadonlyMap<number, ReadonlyArray<Realised>>, without: string): NoiseFloor => {
  const pairs = runs.flatMap((run) => {
    const other = perturbed.get(run.seed)?.find((r) => r.agent === run.agent)
    if (other === undefined) return []
    return [{ seed: run.seed, realised: run.realised, backtest: sideOf(other, run.rewardDays), realisedTradingPnlAtCounterfactualMarksMicro: run.realised.tradingPnlMicro, marks: { a: run.marks.live, b: other.liveMarksBps } }]
  })
  const f = perRunFigures(pairs)
  return {
    without, runs: pairs.length,
    figures: {
      per_run_in_band: f.per_run_in_band, pooled_ratio: f.pooled_ratio, pooled_sums: f.pooled_sums, pnl_error_usdc: f.pnl_error_usdc, sign_agreement: f.sign_agreement,
      pnl_correlation: f.pnl_correlation, bias: biasFigures(pairs), final_marks_apart_bps: marksApart(pairs.map((p) => p.marks))
    }
  }
}

/** The text table's lines: the same per-run figures between two live worlds, beside the backtest's. */
export const noiseFloorLines = (n: NoiseFloor | null): string[] => {
  if (n === null) return []
  const f = n.figures
  const b = f.per_run_in_band.counts
  const e = f.pnl_error_usdc
  return [
    `noise floor: the same bots in the live world without ${n.without}, against the live world (${n.runs} bot-runs; what no backtest can be expected to beat run by run):`,
    `  ratio in 0.8–1.25: fills ${b.fills.in_band}/${b.fills.rated}, contracts ${b.filled_contracts.in_band}/${b.filled_contracts.rated}; pooled trading PnL ${ratioText(f.pooled_ratio.trading_pnl)} (${f.pooled_sums.backtest.trading_pnl_usdc.toFixed(2)} vs ${f.pooled_sums.realised.trading_pnl_usdc.toFixed(2)} USDC)`,
    `  PnL difference (USDC): q10 ${signed(e.q10)}, q50 ${signed(e.q50)}, q90 ${signed(e.q90)} (min ${signed(e.min)}, max ${signed(e.max)}); within 10 USDC ${e.within_10_usdc.runs}/${e.runs}; sign agrees ${f.sign_agreement.agree}/${f.sign_agreement.rated}; PnL correlation ${f.pnl_correlation === null ? "-" : f.pnl_correlation.toFixed(2)}`,
    `  final marks apart (each world's last mid of the others' book): ${marksApartText(f.final_marks_apart_bps)}`,
    ...biasLines(f.bias, "  ")
  ]
}
