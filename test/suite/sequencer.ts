// The order in which `npm test` starts its files: longest first, so that two workers end together.
// A fresh clone has no vitest cache, and vitest then starts the largest sources first: the two
// CPU-heaviest files (sim/sweep, sim/determinism; small sources) started last, side by side, and
// the run's last 100 s was those two (issue 35, run 38). Each file's weight is the duration
// recorded in test/suite/durations.json (`npm run test:durations -- <vitest JSON report>`), else a
// guess from its source (test/suite/slow-files.ts): the same order on every machine, whatever
// vitest cached. A stale record only changes the order, never a result. A file that mostly waits
// (its line `// suite: mostly waits`) is kept from starting beside another such file.
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"
import { mostlyWaits, plannedOrder, recordedDurations, weightOf } from "./durations.ts"

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const recorded = recordedDurations()
    // Each file is read once, for both its guessed weight and its "mostly waits" line.
    const sources = new Map<TestSpecification, string>()
    const source = (spec: TestSpecification): string => sources.get(spec) ?? sources.set(spec, readFileSync(spec.moduleId, "utf8")).get(spec)!
    return plannedOrder(
      files,
      (spec) => weightOf(relative(root, spec.moduleId), recorded, () => source(spec)),
      (spec) => mostlyWaits(source(spec)),
      (spec) => relative(root, spec.moduleId),
      this.ctx.config.poolOptions?.forks?.maxForks === undefined ? 2 : Number(this.ctx.config.poolOptions.forks.maxForks)
    )
  }
}
