// One draw of a market-response model's parameters from their stated standard errors, for the
// backtest's interval (sim/backtest/interval.ts; docs/backtesting.md "Intervals and coverage").
// It reads the model as plain data and knows no form: every finite number `x` whose object also
// holds a positive `<x>_se`, or `<stem>_se` for a name `<stem>_<unit>` (a_per_sec ↔ a_se), is
// redrawn, and everything else is copied as it is, so a model that gains a field or a new
// arrival form keeps working (its parameters are drawn when they carry standard errors).
// Rates (`…_per_sec`, positive) are drawn on the log scale, as the fit estimates them (a's
// standard error is the delta method's, a·se(log a)); any other number on its own scale. The
// applied informed share is drawn with the standard error of the markout at its horizon and
// kept in 0..1. Parameters are drawn independently: the file carries no covariances.
import type { Rng } from "../../world/random.ts"
import type { ResponseModel } from "./model.ts"

type Json = unknown

/** The standard error stated for `key` in `obj`, or null: `<key>_se`, else `<stem>_se` for `<stem>_<unit>`. */
const seOf = (obj: Record<string, Json>, key: string): number | null => {
  if (key.endsWith("_se")) return null
  const cut = key.indexOf("_")
  for (const name of [`${key}_se`, cut > 0 ? `${key.slice(0, cut)}_se` : null]) {
    if (name === null || name === key) continue
    const se = obj[name]
    if (typeof se === "number" && Number.isFinite(se) && se > 0) return se
  }
  return null
}

const drawOne = (key: string, x: number, se: number, rng: Rng): number => {
  const z = rng.normal()
  // A rate is positive and was estimated as log a: draw it there (a·exp(z·se/a)), so it stays positive.
  if (key.endsWith("_per_sec") && x > 0) return x * Math.exp((z * se) / x)
  return x + z * se
}

/** Walks the plain data in key order (a fixed order: the same model and stream draw the same values). */
const walk = (node: Json, rng: Rng): Json => {
  if (Array.isArray(node)) return node.map((x) => walk(x, rng))
  if (typeof node !== "object" || node === null) return node
  const obj = node as Record<string, Json>
  const out: Record<string, Json> = {}
  for (const key of Object.keys(obj)) {
    const v = obj[key]
    const se = typeof v === "number" && Number.isFinite(v) ? seOf(obj, key) : null
    out[key] = se === null ? walk(v, rng) : drawOne(key, v as number, se, rng)
  }
  return out
}

/** A model with its parameters drawn once from their standard errors; the input is not changed. */
export const drawResponseModel = (model: ResponseModel, rng: Rng): ResponseModel => {
  const drawn = walk(model, rng) as ResponseModel
  const info = model.information as ResponseModel["information"] | undefined
  if (info === undefined || typeof info.informed_share !== "number") return drawn
  const applied = Array.isArray(info.markouts) ? info.markouts.find((k) => k.horizon_sec === info.horizon_sec) : undefined
  const se = applied?.informed_share_se
  if (typeof se !== "number" || !Number.isFinite(se) || se <= 0) return drawn
  const share = Math.min(1, Math.max(0, info.informed_share + rng.normal() * se))
  return { ...drawn, information: { ...drawn.information, informed_share: share } }
}
