// `npm run test:quick`: the inner loop's suite (issue 35 item 6) — every test file that runs in
// this process alone. A file is left to `npm test` when its source starts another process, a
// chain, a NATS cluster or a browser, or runs whole simulated scenarios; the rule reads each
// file, so a new test lands on the right side without a list to keep.
import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { defineConfig, mergeConfig } from "vitest/config"
import { sourceFiles } from "./test/determinism/source-files.ts"
import base from "./vitest.config.ts"

/** What makes a test file slow: another process, a real chain, cluster or browser, a whole scenario. */
export const SLOW_MARKERS = [
  /\bspawn(Sync)?\(/,
  /\bexecFile(Sync)?\b/,
  /\bfork\(/,
  /runProcess|startChildServer|spawnRole|startQueueWorker/,
  /startAnvil|startAnvilChain|startNatsCluster|startStand|launchChromium/,
  /\brunScenario\(|\brunSweep\(|\brunFidelity|\brunBotFidelity|scenarioHashes\(/
]

const root = import.meta.dirname
export const slowFiles = (): string[] =>
  sourceFiles(join(root, "test"))
    .filter((f) => f.endsWith(".test.ts"))
    .filter((f) => SLOW_MARKERS.some((re) => re.test(readFileSync(f, "utf8"))))
    .map((f) => relative(root, f))

export default mergeConfig(base, defineConfig({ test: { exclude: [...slowFiles(), "**/node_modules/**"], isolate: false } }))
