// Which test files are slow, by reading them (issue 35 item 6): `npm run test:quick` leaves
// them out, and the suite's order starts them early. There is no list to keep up to date.
import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { sourceFiles } from "../determinism/source-files.ts"

/** What makes a test file slow: another process, a real chain, cluster or browser, a whole scenario. */
export const SLOW_MARKERS = [
  /\bspawn(Sync)?\(/,
  /\bexecFile(Sync)?\b/,
  /\bfork\(/,
  /runProcess|startChildServer|spawnRole|startQueueWorker/,
  /startAnvil|startAnvilChain|startNatsCluster|startStand|launchChromium/,
  /\brunScenario\(|\brunSweep\(|\brunFidelity|\brunBotFidelity|scenarioHashes\(/
]

export const isSlowSource = (source: string): boolean => SLOW_MARKERS.some((re) => re.test(source))

/** The slow test files under `root`/test, relative to `root`. */
export const slowFiles = (root: string): string[] =>
  sourceFiles(join(root, "test"))
    .filter((f) => f.endsWith(".test.ts"))
    .filter((f) => isSlowSource(readFileSync(f, "utf8")))
    .map((f) => relative(root, f))
