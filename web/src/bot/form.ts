// The Earn tab's forms → the strategy's wire spec (docs/lp.md "Wire form"), validated by the
// very parser the server uses (src/lp/strategy-spec.ts), each error attached to the form field
// a person typed it in. Amounts are typed in USDC and cents and become integers here.
import { isPresetName, type PresetName } from "../../../src/lp/presets.ts"
import { parseStrategySpec, type StrategySpec } from "../../../src/lp/strategy-spec.ts"
import type { StrategyParams } from "../../../src/lp/strategy.ts"
import { parseCentsToBps, parseUsdToMicro } from "../format.ts"

export type AdvancedField = "capital" | "spread" | "levels" | "contracts" | "interval" | "skew" | "stopLoss" | "takeProfit"

export const ADVANCED_LABELS: Readonly<Record<AdvancedField, string>> = {
  capital: "Capital (USDC)",
  spread: "Spread (¢, innermost bid to ask)",
  levels: "Levels per side",
  contracts: "Contracts per level",
  interval: "Rebalance interval (s)",
  skew: "Skew tolerance (%)",
  stopLoss: "Stop-loss (USDC, 0 = off)",
  takeProfit: "Take-profit (USDC, 0 = off)"
}

const WIRE_TO_FIELD: Readonly<Record<string, AdvancedField>> = {
  capital_micro_usdc: "capital",
  spread_bps: "spread",
  levels_per_side: "levels",
  contracts_per_level: "contracts",
  rebalance_interval_secs: "interval",
  skew_tolerance_pct: "skew",
  stop_loss_micro_usdc: "stopLoss",
  take_profit_micro_usdc: "takeProfit"
}

export type FormResult =
  | { readonly ok: true; readonly spec: StrategySpec; readonly params: StrategyParams }
  | { readonly ok: false; readonly errors: Partial<Record<AdvancedField | "preset", string>> }

const wholeNumber = (s: string): number | null => (/^\s*\d{1,15}\s*$/.test(s) ? Number(s.trim()) : null)

/** Reads the range the server reports ("must be an integer in 2..9998") in the form's units. */
const inFormUnits = (field: AdvancedField, message: string): string => {
  const m = /(\d+)\.\.(\d+)/.exec(message)
  if (m === null) return message
  const lo = Number(m[1])
  const hi = Number(m[2])
  if (field === "spread") return `must be between ${lo / 100}¢ and ${hi / 100}¢`
  if (field === "capital" || field === "stopLoss" || field === "takeProfit") return `must be between ${lo / 1e6} and ${hi / 1e6} USDC`
  return `must be a whole number from ${lo} to ${hi}`
}

export const simpleForm = (capital: string, preset: string): FormResult => {
  const capitalMicro = parseUsdToMicro(capital)
  if (capitalMicro === null) return { ok: false, errors: { capital: "enter an amount in USDC, e.g. 100" } }
  if (!isPresetName(preset)) return { ok: false, errors: { preset: "choose a risk preset" } }
  const r = parseStrategySpec({ mode: "simple", capital_micro_usdc: capitalMicro, preset: preset as PresetName })
  if (r.ok) return r
  return { ok: false, errors: { [WIRE_TO_FIELD[r.field.replace(/^strategy\./, "")] ?? "capital"]: inFormUnits("capital", r.message) } }
}

export const advancedForm = (f: Readonly<Record<AdvancedField, string>>): FormResult => {
  const errors: Partial<Record<AdvancedField, string>> = {}
  const capital = parseUsdToMicro(f.capital)
  if (capital === null) errors.capital = "enter an amount in USDC, e.g. 100"
  const spread = parseCentsToBps(f.spread)
  if (spread === null) errors.spread = "enter cents, e.g. 2 or 1.5"
  const ints = (["levels", "contracts", "interval", "skew"] as const).map((k) => {
    const v = wholeNumber(f[k])
    if (v === null) errors[k] = "enter a whole number"
    return v
  })
  const stopLoss = parseUsdToMicro(f.stopLoss)
  if (stopLoss === null) errors.stopLoss = "enter an amount in USDC (0 = off)"
  const takeProfit = parseUsdToMicro(f.takeProfit)
  if (takeProfit === null) errors.takeProfit = "enter an amount in USDC (0 = off)"
  if (Object.keys(errors).length > 0) return { ok: false, errors }
  const r = parseStrategySpec({
    mode: "advanced",
    capital_micro_usdc: capital,
    spread_bps: spread,
    levels_per_side: ints[0],
    contracts_per_level: ints[1],
    rebalance_interval_secs: ints[2],
    skew_tolerance_pct: ints[3],
    stop_loss_micro_usdc: stopLoss,
    take_profit_micro_usdc: takeProfit
  })
  if (r.ok) return r
  const field = WIRE_TO_FIELD[r.field.replace(/^strategy\./, "")] ?? "spread"
  return { ok: false, errors: { [field]: inFormUnits(field, r.message) } }
}
