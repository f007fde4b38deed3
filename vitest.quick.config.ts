// `npm run test:quick`: the inner loop's suite (issue 35 item 6) — every test file that runs in
// this process alone. A file is left to `npm test` when its source starts another process, a
// chain, a NATS cluster or a browser, or runs whole simulated scenarios (test/suite/slow-files.ts);
// the rule reads each file, so a new test lands on the right side without a list to keep.
import { defineConfig, mergeConfig } from "vitest/config"
import { slowFiles } from "./test/suite/slow-files.ts"
import base from "./vitest.config.ts"

export default mergeConfig(base, defineConfig({ test: { exclude: [...slowFiles(import.meta.dirname), "**/node_modules/**"], isolate: false } }))
