// Shared helpers for simulator tests: load shipped scenarios, run them short.
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { loadScenario, type Scenario } from "../../sim/scenario/scenario.ts"

export const SCENARIO_DIR = join(import.meta.dirname, "../../scenarios")

export const shippedScenarios = (): Array<{ file: string; scenario: Scenario }> =>
  readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ file: join(SCENARIO_DIR, f), scenario: loadScenario(join(SCENARIO_DIR, f)) }))

/**
 * Virtual seconds each scenario runs in CI: long enough to pass its faults' start (so every
 * fault fires), short enough for the time budget. Expectations are sized for full runs, so
 * tests that shorten a run check invariants and hashes, not `expect`.
 */
export const ciDurationSec = (s: Scenario): number => {
  const lastFault = Math.max(0, ...s.faults.map((f) => f.at))
  const cap = s.agents.reduce((n, a) => n + a.count, 0) > 100 ? 900 : 1_800
  return Math.min(s.duration, Math.max(cap, lastFault + 60))
}
