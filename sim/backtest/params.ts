// Named knobs for `--set name=value` and `--sweep name=from..to:step | name=v1,v2,…`:
// every strategy parameter (short name or its strategy-spec wire name) and a few model
// knobs. Values are integers; money in the strategy is micro-USDC, capital is whole USDC.
import { MICRO_PER_CONTRACT } from "../../src/engine/money.ts"
import type { StrategyParams } from "../../src/lp/strategy.ts"
import type { BacktestConfig } from "./config.ts"
import { BacktestInputError } from "./dataset.ts"

type Apply = (c: BacktestConfig, v: number) => BacktestConfig

const strategyParam = (key: keyof StrategyParams): Apply => (c, v) => ({ ...c, overrides: { ...c.overrides, [key]: v } })

/** name → [aliases, apply]. The first name is the canonical one (sweep table columns). */
const KNOBS: ReadonlyArray<readonly [ReadonlyArray<string>, Apply]> = [
  [["spread", "spread_bps"], strategyParam("spreadBps")],
  [["levels", "levels_per_side"], strategyParam("levelsPerSide")],
  [["step", "level_step_bps"], strategyParam("levelStepBps")],
  [["size", "contracts_per_level"], strategyParam("contractsPerLevel")],
  [["interval", "rebalance_interval_secs"], strategyParam("rebalanceIntervalSec")],
  [["max_inventory"], strategyParam("maxInventory")],
  [["lean", "skew_lean_bps"], strategyParam("skewLeanBps")],
  [["tolerance", "skew_tolerance_pct"], strategyParam("skewTolerancePct")],
  [["vol_widen", "vol_widen_pct"], strategyParam("volWidenPct")],
  [["stop_loss", "stop_loss_micro_usdc"], strategyParam("stopLossMicro")],
  [["take_profit", "take_profit_micro_usdc"], strategyParam("takeProfitMicro")],
  [["capital"], (c, v) => ({ ...c, capitalMicro: v * MICRO_PER_CONTRACT })],
  [["entry_latency_ms"], (c, v) => ({ ...c, entryLatency: { ...c.entryLatency, baseMs: v } })],
  [["feed_latency_ms"], (c, v) => ({ ...c, feedLatency: { ...c.feedLatency, baseMs: v } })],
  [["queue_power"], (c, v) => ({ ...c, queuePower: v })],
  [["depth"], (c, v) => ({ ...c, bgDepth: v })],
  [["churn"], (c, v) => ({ ...c, bgChurnPct: v })]
]

export const KNOB_NAMES: ReadonlyArray<string> = KNOBS.map(([names]) => names[0]!)

const findKnob = (name: string, flag: string): readonly [string, Apply] => {
  const hit = KNOBS.find(([names]) => names.includes(name))
  if (hit === undefined) throw new BacktestInputError(`${flag}: unknown parameter "${name}"; known: ${KNOB_NAMES.join(", ")}`)
  return [hit[0][0]!, hit[1]]
}

/** Bounds the knobs themselves need; strategy ranges are checked by validateParams later. */
const checkKnob = (name: string, v: number, flag: string): void => {
  const ranges: Record<string, readonly [number, number]> = {
    capital: [1, 1_000_000_000], entry_latency_ms: [0, 3_600_000], feed_latency_ms: [0, 3_600_000], queue_power: [1, 8], depth: [1, 100_000_000], churn: [0, 100]
  }
  const r = ranges[name]
  if (r !== undefined && (v < r[0] || v > r[1])) throw new BacktestInputError(`${flag}: ${name} must be in ${r[0]}..${r[1]} (got ${v})`)
}

const parseInteger = (text: string, flag: string, spec: string): number => {
  const v = Number(text.replaceAll("_", ""))
  if (text.trim() === "" || !Number.isSafeInteger(v)) throw new BacktestInputError(`${flag} "${spec}": "${text}" is not an integer`)
  return v
}

export interface SweepAxis {
  readonly name: string
  readonly values: ReadonlyArray<number>
}

export const MAX_SWEEP_COMBINATIONS = 10_000

/** `name=from..to:step` (inclusive) or `name=v1,v2,…`. */
export const parseSweep = (spec: string): SweepAxis => {
  const flag = "--sweep"
  const m = /^([a-z_]+)=(.+)$/.exec(spec.trim())
  if (m === null) throw new BacktestInputError(`${flag} "${spec}": expected name=from..to:step or name=v1,v2,…`)
  const [name] = findKnob(m[1]!, flag)
  const body = m[2]!
  let values: number[]
  const range = /^(-?[\d_]+)\.\.(-?[\d_]+):([\d_]+)$/.exec(body)
  if (range !== null) {
    const from = parseInteger(range[1]!, flag, spec)
    const to = parseInteger(range[2]!, flag, spec)
    const step = parseInteger(range[3]!, flag, spec)
    if (step <= 0) throw new BacktestInputError(`${flag} "${spec}": step must be positive`)
    if (from > to) throw new BacktestInputError(`${flag} "${spec}": from ${from} is above to ${to}`)
    if ((to - from) / step >= MAX_SWEEP_COMBINATIONS) throw new BacktestInputError(`${flag} "${spec}": too many values`)
    values = []
    for (let v = from; v <= to; v += step) values.push(v)
  } else if (body.includes("..")) {
    throw new BacktestInputError(`${flag} "${spec}": a range needs a step: name=from..to:step`)
  } else {
    values = body.split(",").map((t) => parseInteger(t, flag, spec))
  }
  for (const v of values) checkKnob(name, v, flag)
  return { name, values: [...new Set(values)] }
}

/** `name=value`, applied on top of the base config. */
export const parseSet = (spec: string): { name: string; value: number } => {
  const m = /^([a-z_]+)=(.+)$/.exec(spec.trim())
  if (m === null) throw new BacktestInputError(`--set "${spec}": expected name=value`)
  const [name] = findKnob(m[1]!, "--set")
  const value = parseInteger(m[2]!, "--set", spec)
  checkKnob(name, value, "--set")
  return { name, value }
}

export type Combination = Readonly<Record<string, number>>

/** The cartesian product of the axes, first axis slowest. */
export const combinations = (axes: ReadonlyArray<SweepAxis>): Combination[] => {
  let out: Array<Record<string, number>> = [{}]
  for (const axis of axes) {
    const next: Array<Record<string, number>> = []
    for (const c of out) for (const v of axis.values) next.push({ ...c, [axis.name]: v })
    out = next
    if (out.length > MAX_SWEEP_COMBINATIONS) throw new BacktestInputError(`--sweep: more than ${MAX_SWEEP_COMBINATIONS} combinations`)
  }
  return out
}

export const applyKnobs = (config: BacktestConfig, values: Combination): BacktestConfig => {
  let c = config
  for (const [name, v] of Object.entries(values)) c = findKnob(name, "--set")[1](c, v)
  return c
}
