// The wire form of a strategy: the `strategy` field of POST /v1/lp-bot/start and the
// parameter files of the backtester. Snake_case JSON, integers only; parsing is strict
// (unknown keys are rejected) so a typo never silently falls back to a default.
import { MAX_BALANCE_MICRO, MICRO_PER_CONTRACT } from "../engine/money.ts"
import { isPresetName, paramsFromPreset, PRESET_NAMES, type PresetName } from "./presets.ts"
import { MAX_INVENTORY_CONTRACTS, PARAM_RANGES, validateParams, type StrategyParams } from "./strategy.ts"

export interface SimpleStrategySpec {
  readonly mode: "simple"
  readonly capital_micro_usdc: number
  readonly preset: PresetName
}

export interface AdvancedStrategySpec {
  readonly mode: "advanced"
  readonly capital_micro_usdc: number
  readonly spread_bps: number
  readonly levels_per_side: number
  readonly contracts_per_level: number
  readonly rebalance_interval_secs: number
  readonly skew_tolerance_pct: number
  readonly stop_loss_micro_usdc: number
  readonly take_profit_micro_usdc: number
  readonly level_step_bps?: number
  readonly max_inventory?: number
  readonly skew_lean_bps?: number
  readonly vol_widen_pct?: number
}

export type StrategySpec = SimpleStrategySpec | AdvancedStrategySpec

export type ParseResult =
  | { readonly ok: true; readonly spec: StrategySpec; readonly params: StrategyParams }
  | { readonly ok: false; readonly field: string; readonly message: string }

/** 1 USDC: less cannot fund even one contract pair. */
export const MIN_CAPITAL_MICRO = MICRO_PER_CONTRACT
export const MAX_CAPITAL_MICRO = MAX_BALANCE_MICRO
export const DEFAULT_VOL_WIDEN_PCT = 50

type AdvancedKey = Exclude<keyof AdvancedStrategySpec, "mode" | "capital_micro_usdc">

/** Wire name → param name, in the order fields are checked (required first, then optional). */
const ADVANCED_FIELDS: ReadonlyArray<readonly [AdvancedKey, keyof StrategyParams, boolean]> = [
  ["spread_bps", "spreadBps", true],
  ["levels_per_side", "levelsPerSide", true],
  ["contracts_per_level", "contractsPerLevel", true],
  ["rebalance_interval_secs", "rebalanceIntervalSec", true],
  ["skew_tolerance_pct", "skewTolerancePct", true],
  ["stop_loss_micro_usdc", "stopLossMicro", true],
  ["take_profit_micro_usdc", "takeProfitMicro", true],
  ["level_step_bps", "levelStepBps", false],
  ["max_inventory", "maxInventory", false],
  ["skew_lean_bps", "skewLeanBps", false],
  ["vol_widen_pct", "volWidenPct", false]
]

const SIMPLE_KEYS: ReadonlyArray<string> = ["mode", "capital_micro_usdc", "preset"]
const ADVANCED_KEYS: ReadonlyArray<string> = ["mode", "capital_micro_usdc", ...ADVANCED_FIELDS.map(([w]) => w)]

/**
 * Defaults for the optional advanced fields, derived from the required ones:
 *   level_step_bps = max(1, floor(spread/2)); max_inventory = contracts_per_level · levels_per_side
 *   (one side fully filled = full lean); skew_lean_bps = floor(spread · 3/8) (¾ of the half-spread,
 *   so the unwinding side stays off mid); vol_widen_pct = 50.
 */
export const paramsFromAdvanced = (s: AdvancedStrategySpec): StrategyParams => ({
  spreadBps: s.spread_bps,
  levelsPerSide: s.levels_per_side,
  levelStepBps: s.level_step_bps ?? Math.max(1, Math.floor(s.spread_bps / 2)),
  contractsPerLevel: s.contracts_per_level,
  rebalanceIntervalSec: s.rebalance_interval_secs,
  maxInventory: s.max_inventory ?? Math.min(s.contracts_per_level * s.levels_per_side, MAX_INVENTORY_CONTRACTS),
  skewLeanBps: s.skew_lean_bps ?? Math.floor((s.spread_bps * 3) / 8),
  skewTolerancePct: s.skew_tolerance_pct,
  volWidenPct: s.vol_widen_pct ?? DEFAULT_VOL_WIDEN_PCT,
  stopLossMicro: s.stop_loss_micro_usdc,
  takeProfitMicro: s.take_profit_micro_usdc
})

export const paramsFromSpec = (s: StrategySpec): StrategyParams =>
  s.mode === "simple" ? paramsFromPreset(s.preset, s.capital_micro_usdc) : paramsFromAdvanced(s)

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const isIntIn = (x: unknown, lo: number, hi: number): x is number =>
  typeof x === "number" && Number.isSafeInteger(x) && x >= lo && x <= hi

const fail = (field: string, message: string): ParseResult => ({ ok: false, field, message })

/** `path` is the JSON path of the value itself, prefixed to every reported field. */
export const parseStrategySpec = (u: unknown, path = "strategy"): ParseResult => {
  if (!isObject(u)) return fail(path, "must be an object")
  const at = (k: string): string => `${path}.${k}`
  const mode = u["mode"]
  if (mode !== "simple" && mode !== "advanced") return fail(at("mode"), `must be "simple" or "advanced"`)
  const allowed = mode === "simple" ? SIMPLE_KEYS : ADVANCED_KEYS
  const unknown = Object.keys(u).find((k) => !allowed.includes(k))
  if (unknown !== undefined) return fail(at(unknown), `unknown field for mode "${mode}"`)
  const capital = u["capital_micro_usdc"]
  if (!isIntIn(capital, MIN_CAPITAL_MICRO, MAX_CAPITAL_MICRO)) {
    return fail(at("capital_micro_usdc"), `must be an integer in ${MIN_CAPITAL_MICRO}..${MAX_CAPITAL_MICRO}`)
  }

  if (mode === "simple") {
    const preset = u["preset"]
    if (!isPresetName(preset)) return fail(at("preset"), `must be one of ${PRESET_NAMES.join(", ")}`)
    const spec: SimpleStrategySpec = { mode, capital_micro_usdc: capital, preset }
    return { ok: true, spec, params: paramsFromPreset(preset, capital) }
  }

  const fields: Partial<Record<AdvancedKey, number>> = {}
  for (const [wire, param, required] of ADVANCED_FIELDS) {
    const v = u[wire]
    if (v === undefined && !required) continue
    const [lo, hi] = PARAM_RANGES[param]
    if (v === undefined) return fail(at(wire), `required: an integer in ${lo}..${hi}`)
    if (!isIntIn(v, lo, hi)) return fail(at(wire), `must be an integer in ${lo}..${hi}`)
    fields[wire] = v
  }
  const spec = { mode, capital_micro_usdc: capital, ...fields } as AdvancedStrategySpec
  const params = paramsFromAdvanced(spec)
  // Backstop for constraints that span fields or come from defaults; names the wire field.
  const error = validateParams(params)
  if (error !== null) {
    const param = error.split(" ")[0]
    const wire = ADVANCED_FIELDS.find(([, p]) => p === param)?.[0] ?? "mode"
    return fail(at(wire), error)
  }
  return { ok: true, spec, params }
}

/** The spec as plain JSON with keys in canonical order (stable for storage and hashing). */
export const specToJson = (s: StrategySpec): Record<string, string | number> => {
  if (s.mode === "simple") return { mode: s.mode, capital_micro_usdc: s.capital_micro_usdc, preset: s.preset }
  const out: Record<string, string | number> = { mode: s.mode, capital_micro_usdc: s.capital_micro_usdc }
  for (const [wire] of ADVANCED_FIELDS) {
    const v = s[wire]
    if (v !== undefined) out[wire] = v
  }
  return out
}

/** Fully explicit advanced spec for `params`: parseStrategySpec(paramsToJson(p, c)) gives back exactly p. */
export const paramsToJson = (p: StrategyParams, capitalMicro: number): AdvancedStrategySpec => ({
  mode: "advanced",
  capital_micro_usdc: capitalMicro,
  spread_bps: p.spreadBps,
  levels_per_side: p.levelsPerSide,
  contracts_per_level: p.contractsPerLevel,
  rebalance_interval_secs: p.rebalanceIntervalSec,
  skew_tolerance_pct: p.skewTolerancePct,
  stop_loss_micro_usdc: p.stopLossMicro,
  take_profit_micro_usdc: p.takeProfitMicro,
  level_step_bps: p.levelStepBps,
  max_inventory: p.maxInventory,
  skew_lean_bps: p.skewLeanBps,
  vol_widen_pct: p.volWidenPct
})
