// The Earn tab's forms → the strategy's wire spec (docs/lp.md "Wire form"), validated by the
// very parser the server uses (src/lp/strategy-spec.ts), each error attached to the form field
// a person typed it in. Amounts are typed in dollars and cents and become integers here. Every
// error that concerns a number gives its allowed range, in the form's units.
import { isPresetName, type PresetName } from "../../../src/lp/presets.ts"
import { MAX_CAPITAL_MICRO, MIN_CAPITAL_MICRO, parseStrategySpec, type StrategySpec } from "../../../src/lp/strategy-spec.ts"
import { PARAM_RANGES, type StrategyParams } from "../../../src/lp/strategy.ts"
import { formatCents, formatUsd, parseCentsToBps, parseUsdToMicro } from "../format.ts"

export type AdvancedField = "capital" | "spread" | "levels" | "contracts" | "interval" | "skew" | "stopLoss" | "takeProfit"

export const ADVANCED_LABELS: Readonly<Record<AdvancedField, string>> = {
  capital: "Capital ($)",
  spread: "Spread (¢, innermost bid to ask)",
  levels: "Levels per side",
  contracts: "Contracts per level",
  interval: "Rebalance interval (s)",
  skew: "Skew tolerance (%)",
  stopLoss: "Stop-loss ($, 0 = off)",
  takeProfit: "Take-profit ($, 0 = off)"
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

/** Each field's valid range on the wire (the server's own bounds). */
const RANGES: Readonly<Record<AdvancedField, readonly [number, number]>> = {
  capital: [MIN_CAPITAL_MICRO, MAX_CAPITAL_MICRO],
  spread: PARAM_RANGES.spreadBps,
  levels: PARAM_RANGES.levelsPerSide,
  contracts: PARAM_RANGES.contractsPerLevel,
  interval: PARAM_RANGES.rebalanceIntervalSec,
  skew: PARAM_RANGES.skewTolerancePct,
  stopLoss: PARAM_RANGES.stopLossMicro,
  takeProfit: PARAM_RANGES.takeProfitMicro
}

export type FormResult =
  | { readonly ok: true; readonly spec: StrategySpec; readonly params: StrategyParams }
  | { readonly ok: false; readonly errors: Partial<Record<AdvancedField | "preset", string>> }

const wholeNumber = (s: string): number | null => (/^\s*\d{1,15}\s*$/.test(s) ? Number(s.trim()) : null)

/** "must be between 0.02¢ and 99.98¢": the field's range in the form's units. */
export const rangeText = (field: AdvancedField): string => {
  const [lo, hi] = RANGES[field]
  if (field === "spread") return `must be between ${formatCents(lo)} and ${formatCents(hi)}`
  if (field === "capital" || field === "stopLoss" || field === "takeProfit") return `must be between ${formatUsd(lo, { round: "up" })} and ${formatUsd(hi, { round: "down" })}`
  return `must be a whole number from ${lo} to ${hi}`
}

/** What to type, with the range, when the text is not a number of the field's kind. */
const notANumber = (field: AdvancedField): string => {
  const range = rangeText(field)
  if (field === "spread") return `${range} (cents, e.g. 2 or 1.5)`
  if (field === "capital") return `${range} (dollars, e.g. 100)`
  if (field === "stopLoss" || field === "takeProfit") return `${range} (dollars, 0 = off)`
  return range
}

/** The server reported an out-of-range value ("must be an integer in 2..9998"): say it in the form's units. */
const inFormUnits = (field: AdvancedField, message: string): string => (/\d+\.\.\d+/.test(message) ? rangeText(field) : message)

export const simpleForm = (capital: string, preset: string): FormResult => {
  const capitalMicro = parseUsdToMicro(capital)
  if (capitalMicro === null) return { ok: false, errors: { capital: notANumber("capital") } }
  if (!isPresetName(preset)) return { ok: false, errors: { preset: "choose a risk preset" } }
  const r = parseStrategySpec({ mode: "simple", capital_micro_usdc: capitalMicro, preset: preset as PresetName })
  if (r.ok) return r
  return { ok: false, errors: { [WIRE_TO_FIELD[r.field.replace(/^strategy\./, "")] ?? "capital"]: inFormUnits("capital", r.message) } }
}

export const advancedForm = (f: Readonly<Record<AdvancedField, string>>): FormResult => {
  const errors: Partial<Record<AdvancedField, string>> = {}
  const capital = parseUsdToMicro(f.capital)
  if (capital === null) errors.capital = notANumber("capital")
  const spread = parseCentsToBps(f.spread)
  if (spread === null) errors.spread = notANumber("spread")
  const ints = (["levels", "contracts", "interval", "skew"] as const).map((k) => {
    const v = wholeNumber(f[k])
    if (v === null) errors[k] = notANumber(k)
    return v
  })
  const stopLoss = parseUsdToMicro(f.stopLoss)
  if (stopLoss === null) errors.stopLoss = notANumber("stopLoss")
  const takeProfit = parseUsdToMicro(f.takeProfit)
  if (takeProfit === null) errors.takeProfit = notANumber("takeProfit")
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
