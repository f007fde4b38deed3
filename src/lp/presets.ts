// Simple mode (SPEC §1): capital plus a risk preset. A preset fixes the shape of the ladder
// and the risk limits as fractions of capital; paramsFromPreset turns that into absolute,
// integer StrategyParams. The numbers are documented in docs/lp.md ("Presets").
import { MAX_AMOUNT_MICRO, MAX_ORDER_SIZE, MAX_PRICE_BPS, MICRO_PER_BPS, MICRO_PER_CONTRACT, mulDivFloor } from "../engine/money.ts"
import { DEFAULT_REBALANCE_INTERVAL_SEC, MAX_INVENTORY_CONTRACTS, type StrategyParams } from "./strategy.ts"

export type PresetName = "conservative" | "balanced" | "aggressive"
export const PRESET_NAMES: ReadonlyArray<PresetName> = ["conservative", "balanced", "aggressive"]

export interface Preset {
  readonly spreadBps: number
  readonly levelsPerSide: number
  readonly levelStepBps: number
  readonly rebalanceIntervalSec: number
  /** Kept below half the spread, so the unwinding side never reaches through mid. */
  readonly skewLeanBps: number
  readonly skewTolerancePct: number
  readonly volWidenPct: number
  /** Share of capital the whole ladder may tie up. A bid contract at p plus an ask contract (as buy NO at 10000−p) costs < 1 USDC, so levels·contractsPerLevel·1 USDC bounds it. */
  readonly deployPct: number
  /** Share of capital the full-lean inventory is worth at the dearer outcome's price (1 USDC/contract without a mid). */
  readonly maxInventoryPct: number
  readonly stopLossPct: number
  /** 0 = no take-profit. */
  readonly takeProfitPct: number
}

export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  conservative: {
    spreadBps: 400, levelsPerSide: 2, levelStepBps: 200, rebalanceIntervalSec: DEFAULT_REBALANCE_INTERVAL_SEC,
    skewLeanBps: 150, skewTolerancePct: 60, volWidenPct: 100,
    deployPct: 30, maxInventoryPct: 40, stopLossPct: 5, takeProfitPct: 10
  },
  balanced: {
    spreadBps: 200, levelsPerSide: 3, levelStepBps: 100, rebalanceIntervalSec: DEFAULT_REBALANCE_INTERVAL_SEC,
    skewLeanBps: 75, skewTolerancePct: 80, volWidenPct: 50,
    deployPct: 50, maxInventoryPct: 60, stopLossPct: 10, takeProfitPct: 20
  },
  aggressive: {
    spreadBps: 100, levelsPerSide: 5, levelStepBps: 50, rebalanceIntervalSec: DEFAULT_REBALANCE_INTERVAL_SEC,
    skewLeanBps: 35, skewTolerancePct: 100, volWidenPct: 25,
    deployPct: 80, maxInventoryPct: 80, stopLossPct: 20, takeProfitPct: 40
  }
}

export const isPresetName = (u: unknown): u is PresetName =>
  typeof u === "string" && (PRESET_NAMES as ReadonlyArray<string>).includes(u)

/**
 * Absolute params for `capitalMicro` (a positive safe integer; throws otherwise: callers validate input).
 *   contractsPerLevel = floor(capital · deployPct/100 / (levelsPerSide · 1,000,000)), at least the
 *                       non-dust size at `midBps` (ceil(100 / min(mid, 10000−mid)); 1 without a mid), at most 1e8
 *   maxInventory      = floor(capital · maxInventoryPct/100 / (max(mid, 10000−mid) · 100)), at least contractsPerLevel
 *   stopLossMicro     = floor(capital · stopLossPct/100), at least 1 so it is never silently off
 *   takeProfitMicro   = floor(capital · takeProfitPct/100), at least 1 (0 when the preset has none)
 *   (both capped at 1e15 micro, the largest amount the engine accepts)
 * `midBps` (optional) is rounded and clamped into 1..9999.
 */
export const paramsFromPreset = (preset: PresetName, capitalMicro: number, midBps?: number): StrategyParams => {
  const s = PRESETS[preset]
  if (!Number.isSafeInteger(capitalMicro) || capitalMicro < 1) throw new RangeError(`capitalMicro must be a positive integer (got ${capitalMicro})`)
  const mid = midBps === undefined || !Number.isFinite(midBps) ? null : Math.min(Math.max(Math.round(midBps), 1), MAX_PRICE_BPS - 1)
  const cheaperBps = mid === null ? MAX_PRICE_BPS : Math.min(mid, MAX_PRICE_BPS - mid)
  const dearerBps = mid === null ? MAX_PRICE_BPS : Math.max(mid, MAX_PRICE_BPS - mid)
  const minSize = mid === null ? 1 : Math.ceil(100 / cheaperBps)
  const perLevel = mulDivFloor(capitalMicro, s.deployPct, 100 * s.levelsPerSide * MICRO_PER_CONTRACT)
  const contractsPerLevel = Math.min(Math.max(perLevel, minSize), MAX_ORDER_SIZE)
  const inventory = mulDivFloor(capitalMicro, s.maxInventoryPct, 100 * dearerBps * MICRO_PER_BPS)
  const maxInventory = Math.min(Math.max(inventory, contractsPerLevel), MAX_INVENTORY_CONTRACTS)
  const pctOf = (pct: number): number => (pct === 0 ? 0 : Math.min(Math.max(1, mulDivFloor(capitalMicro, pct, 100)), MAX_AMOUNT_MICRO))
  return {
    spreadBps: s.spreadBps,
    levelsPerSide: s.levelsPerSide,
    levelStepBps: s.levelStepBps,
    contractsPerLevel,
    rebalanceIntervalSec: s.rebalanceIntervalSec,
    maxInventory,
    skewLeanBps: s.skewLeanBps,
    skewTolerancePct: s.skewTolerancePct,
    volWidenPct: s.volWidenPct,
    stopLossMicro: pctOf(s.stopLossPct),
    takeProfitMicro: pctOf(s.takeProfitPct)
  }
}
