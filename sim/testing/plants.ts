// Every planted bug by name (`--plant`), as the run options that switch it on: one table for the
// single run, the sweep's threads and the work queue's jobs, so a sweep plants what a run plants.
import type { RunOptions } from "../scenario/run.ts"
import { STORAGE_PLANTS } from "./ignore-bytes-written.ts"
import { LOG_PLANTS } from "./no-expected-position.ts"

export const PLANT_NAMES: ReadonlyArray<string> = [...Object.keys(STORAGE_PLANTS), ...Object.keys(LOG_PLANTS)]

/** Which block of a scenario a plant needs ("cluster" for a log plant, "storage" for a disk plant). */
export const plantNeeds = (name: string): "cluster" | "storage" => (Object.hasOwn(LOG_PLANTS, name) ? "cluster" : "storage")

/** The run options of `name` (none when undefined); throws on an unknown name. */
export const plantOptions = (name: string | undefined): Pick<RunOptions, "tamperStorage" | "tamperLog"> => {
  if (name === undefined) return {}
  if (Object.hasOwn(LOG_PLANTS, name)) return { tamperLog: LOG_PLANTS[name]! }
  if (Object.hasOwn(STORAGE_PLANTS, name)) return { tamperStorage: STORAGE_PLANTS[name]! }
  throw new Error(`unknown planted bug ${name}: known ${PLANT_NAMES.join(", ")}`)
}
